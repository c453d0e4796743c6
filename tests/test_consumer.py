"""examples/consumer: a second stack that deploys a GPU workload from the platform stack's outputs.

The consumer is evaluated under mocks with its own Pulumi.yaml and Pulumi.dev.yaml, and its StackReference
returns the outputs the platform program really exports (`ReferencedStack.of(record_stack("dev"))`), so a
change to the platform's output contract breaks these tests, not a team's deployment.
"""

from __future__ import annotations

import copy
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from offline.engine import (
    MOCK_KUBECONFIG,
    ROOT,
    RecordedResource,
    Recording,
    ReferencedStack,
    Secret,
    record_program,
)
from stackconfig import ConfigError

CONSUMER = ROOT / "examples" / "consumer"
CONFIG = yaml.safe_load((CONSUMER / "Pulumi.dev.yaml").read_text())["config"]
PLATFORM_STACK = CONFIG["gpu-consumer:platformStack"]
WORKLOAD = CONFIG["gpu-consumer:workload"]
PROVIDER = "platform-cluster"


@pytest.fixture(scope="module")
def platform(recordings: dict[str, Recording]) -> ReferencedStack:
    """The dev platform's outputs, as its program exports them (kubeconfig and Grafana password secret)."""
    return ReferencedStack.of(recordings["dev"])


def run(platform: ReferencedStack, into: Recording | None = None, **workload: Any) -> Recording:
    """The consumer's dev stack; keyword arguments change keys of its workload."""
    overrides = {"workload": {**WORKLOAD, **workload}} if workload else None
    return record_program(CONSUMER, "dev", overrides, stack_references={PLATFORM_STACK: platform}, into=into)


def with_outputs(platform: ReferencedStack, **changes: Any) -> ReferencedStack:
    outputs = copy.deepcopy(dict(platform.outputs))
    for key, value in changes.items():
        outputs[key] = {**outputs[key], **value} if isinstance(value, dict) else value
    return ReferencedStack(outputs, platform.secret_outputs)


@pytest.fixture(scope="module")
def consumer(platform: ReferencedStack) -> Recording:
    return run(platform)


def strings(value: Any, in_secret: bool = False) -> Iterator[tuple[str, bool]]:
    """Every string in a recorded value, and whether it sits inside a secret."""
    if isinstance(value, Secret):
        yield from strings(value.value, True)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v, in_secret)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v, in_secret)
    elif isinstance(value, str):
        yield value, in_secret


def k8s_resources(rec: Recording) -> list[RecordedResource]:
    return [r for r in rec.resources if r.type.startswith("kubernetes:")]


# ---------------------------------------------------------------------------------------------------------------
# What it creates, and through which provider


def test_the_workload_is_created_with_the_platform_component_through_the_consumers_provider(
    consumer: Recording,
) -> None:
    name = WORKLOAD["name"]
    provider = consumer.get(PROVIDER)
    assert provider.type == "pulumi:providers:kubernetes"
    assert consumer.get(name, "gpu-platform:workloads:GpuWorkload")
    assert {r.type for r in k8s_resources(consumer)} == {
        "kubernetes:core/v1:Namespace",
        "kubernetes:apps/v1:Deployment",
        "kubernetes:policy/v1:PodDisruptionBudget",
        "kubernetes:keda.sh/v1alpha1:ScaledObject",
    }
    for res in k8s_resources(consumer):
        assert res.provider_name == PROVIDER, f"{res.name} does not go through the platform's cluster"
    assert not [r for r in consumer.resources if r.type.startswith("gcore:")]  # the cluster is not this stack's
    deployment = consumer.get(f"{name}-deployment").inputs
    assert deployment["metadata"] == {
        "name": name,
        "namespace": WORKLOAD["namespace"],
        "labels": {"app.kubernetes.io/name": name, **deployment["metadata"]["labels"]},
    }
    assert consumer.get(f"{name}-scaledobject").depends_on(consumer.get(f"{name}-deployment"))
    assert consumer.outputs["workload"]["hpa"] == f"keda-hpa-{name}"
    # what its ScaledObject scales on, as the platform's `workloads` output states it
    rendered = consumer.get(f"{name}-scaledobject").inputs["spec"]["triggers"]
    (gpu,) = consumer.outputs["workload"]["triggers"]
    assert gpu == {"name": "gpu-utilization", "type": "prometheus", "metricType": "AverageValue",
                   "query": rendered[0]["metadata"]["query"], "threshold": "70",  # targetUtilization 70 × 1 GPU
                   "activationThreshold": None}


def test_the_kubeconfig_stays_secret_through_the_stack_reference(
    platform: ReferencedStack, consumer: Recording
) -> None:
    assert "kubeconfig" in platform.secret_outputs  # the platform exports it secret

    kubeconfig = consumer.get(PROVIDER).inputs["kubeconfig"]

    assert isinstance(kubeconfig, Secret)
    assert kubeconfig.value == platform.outputs["kubeconfig"] == MOCK_KUBECONFIG  # it came through the reference
    assert "kubeconfig" not in consumer.outputs and not consumer.secret_outputs
    recorded = [(s, secret) for r in consumer.resources for s, secret in strings(dict(r.inputs))]
    recorded += list(strings(consumer.outputs))
    assert [s for s, secret in recorded if "mock-token" in s and not secret] == []


def test_the_kubeconfig_stays_secret_even_if_the_platform_stopped_marking_it(platform: ReferencedStack) -> None:
    careless = ReferencedStack(platform.outputs, platform.secret_outputs - {"kubeconfig"})

    assert isinstance(run(careless).get(PROVIDER).inputs["kubeconfig"], Secret)


def test_scaled_object_and_pods_follow_the_platforms_outputs(platform: ReferencedStack) -> None:
    # Values the consumer cannot know from anywhere but the outputs.
    changed = with_outputs(
        platform,
        prometheusUrl="http://prometheus.observability.svc:9090",
        gpuPool={
            "labels": {"platform.gcore-gpu/pool": "gpu", "gpu.nvidia.com/model": "h100"},
            "taints": {"nvidia.com/gpu": "present:NoSchedule", "dedicated": "ml:NoExecute"},
        },
    )
    rec = run(changed)
    name = WORKLOAD["name"]

    (trigger,) = rec.get(f"{name}-scaledobject").inputs["spec"]["triggers"]
    assert trigger["metadata"]["serverAddress"] == "http://prometheus.observability.svc:9090"
    assert f'namespace="{WORKLOAD["namespace"]}",pod=~"{name}-' in trigger["metadata"]["query"]
    pods = rec.get(f"{name}-deployment").inputs["spec"]["template"]["spec"]
    assert pods["nodeSelector"] == {"platform.gcore-gpu/pool": "gpu", "gpu.nvidia.com/model": "h100"}
    assert pods["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoExecute"},
    ]


def test_a_namespace_the_platform_owns_is_used_but_not_created(platform: ReferencedStack) -> None:
    (platform_namespace,) = platform.outputs["namespaces"]["workloads"]

    rec = run(platform, namespace=platform_namespace)

    assert not rec.of_type("kubernetes:core/v1:Namespace")  # the consumer's destroy must not delete it
    assert rec.get(f"{WORKLOAD['name']}-deployment").inputs["metadata"]["namespace"] == platform_namespace
    assert rec.outputs["workload"]["namespaceOwner"] == "platform"


# ---------------------------------------------------------------------------------------------------------------
# What it refuses, before creating any workload resource


def test_the_workload_is_validated_by_the_platforms_model(platform: ReferencedStack) -> None:
    partial = Recording("dev")
    with pytest.raises(ConfigError) as exc:
        run(platform, into=partial, image="registry.example.com/reranker:latest", gpusPerpod=2)

    message = str(exc.value)
    assert "workload.image: 'registry.example.com/reranker:latest' is tagged 'latest'" in message
    assert "workload.gpusPerpod: 2 is not a known key" in message and "did you mean 'gpusPerPod'?" in message
    assert partial.resources == []


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        ({"maxReplicas": 40},
         "workload.maxReplicas: 40 cannot fit: 2 node(s) hold 8 pod(s) of 1 GPU(s) per node, 16 in all"),
        ({"gpusPerPod": 16}, "workload.gpusPerPod: 16 exceeds the GPUs of one pool node (8)"),
        ({"namespace": "keda"}, "workload.namespace: 'keda' belongs to the platform or Kubernetes"),
        (
            {"name": "inference", "namespace": "gpu-workloads"},
            "workload.name: 'inference' is a workload of the platform in namespace gpu-workloads",
        ),
    ],
    ids=["more-replicas-than-the-pool-holds", "pod-larger-than-a-node", "platform-namespace", "platform-workload"],
)
def test_a_workload_that_cannot_work_on_this_platform_is_refused(
    platform: ReferencedStack, workload: dict[str, Any], expected: str
) -> None:
    partial = Recording("dev")
    with pytest.raises(ConfigError, match="invalid stack configuration") as exc:
        run(platform, into=partial, **workload)

    assert expected in str(exc.value)
    assert k8s_resources(partial) == []  # no half-deployed workload


def test_a_platform_output_missing_from_the_contract_is_named(platform: ReferencedStack) -> None:
    broken = copy.deepcopy(dict(platform.outputs))
    del broken["gpuPool"]["taints"]

    with pytest.raises(Exception, match="lack 'taints'.*breaking change of its output contract"):
        run(ReferencedStack(broken, platform.secret_outputs))


def test_sharing_the_pool_beyond_its_capacity_is_a_warning(
    platform: ReferencedStack, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        run(platform)  # dev: the platform's inference may use all 16 GPUs, the reranker wants 4 more
    assert (
        "workload reranker: with the platform's workloads (16 GPUs at maxReplicas) it may want 20 of the pool's "
        "16 GPUs at peak" in caplog.text
    )

    caplog.clear()
    roomy = with_outputs(platform, gpuPool={"maxNodes": 3, "maxGpus": 24})
    with caplog.at_level(logging.WARNING):
        run(roomy)
    assert "may want" not in caplog.text


# ---------------------------------------------------------------------------------------------------------------
# The project finds the platform's code by itself


@pytest.mark.subprocess
def test_the_program_imports_the_platform_code_from_the_repository_root(platform: ReferencedStack) -> None:
    """`python -I`: neither the working directory nor PYTHONPATH is on sys.path, only what __main__.py adds."""
    script = f"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("engine", {str(ROOT / "offline" / "engine.py")!r})
engine = importlib.util.module_from_spec(spec)
sys.modules["engine"] = engine
spec.loader.exec_module(engine)
outputs, secret = json.load(sys.stdin)
ref = engine.ReferencedStack(outputs, frozenset(secret))
rec = engine.record_program(engine.Path({str(CONSUMER)!r}), "dev", stack_references={{{PLATFORM_STACK!r}: ref}})
print(json.dumps(sorted(r.type for r in rec.resources)))
"""
    stdin = json.dumps([dict(platform.outputs), sorted(platform.secret_outputs)])

    result = subprocess.run(
        [sys.executable, "-I", "-c", script], cwd="/", input=stdin, capture_output=True, text=True, check=False
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert "kubernetes:keda.sh/v1alpha1:ScaledObject" in json.loads(result.stdout.splitlines()[-1])
