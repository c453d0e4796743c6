"""gpu_platform, the component package: its schema, and its GpuWorkload from a workload team's program.

The program below uses the package's GpuWorkload as a Python program can (import it; other languages get the same
component through `pulumi package add`, which generates their SDK from the schema `test_the_schema...` checks).
Its StackReference returns the dev platform's real outputs (`ReferencedStack.of`), and its workload is the dev
platform's own under another name: the objects must be the platform's, name for name.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import logging
import sys
import types
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.provider.experimental.analyzer import Analyzer

from gpu_platform import GpuWorkload
from offline.engine import (
    MOCK_KUBECONFIG,
    ROOT,
    RecordedResource,
    Recording,
    ReferencedStack,
    Secret,
    record_program,
    record_stack,
)
from stackconfig.stack import KNOWN_KEYS
from tests.secret_scan import plain_strings, secrets_in

PLATFORM_STACK = "organization/gpu-autoscaling/dev"
OWN = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]["gpu-autoscaling:workloads"][0]
PROGRAM = f'''
import pulumi
import pulumi_kubernetes as k8s
from pydantic.alias_generators import to_snake

from gpu_platform import GpuWorkload

platform = pulumi.StackReference({PLATFORM_STACK!r})
workload = pulumi.Config().require_object("workload")
gpu_pool = platform.require_output("gpuPool")
cluster = k8s.Provider("platform-cluster", kubeconfig=platform.require_output("kubeconfig"))
GpuWorkload(workload["name"], {{**{{to_snake(k): v for k, v in workload.items()}},
                                "pool": {{k: gpu_pool[f] for k, f in (("name", "name"), ("labels", "labels"),
                                          ("taints", "taints"), ("gpus_per_node", "gpusPerNode"),
                                          ("max_nodes", "maxNodes"))}},
                                "platform_workloads": platform.require_output("workloads"),
                                "prometheus_url": platform.require_output("prometheusUrl")}},
            opts=pulumi.ResourceOptions(providers={{"kubernetes": cluster}}))
'''
KINDS = ("kubernetes:apps/v1:Deployment", "kubernetes:keda.sh/v1alpha1:ScaledObject",
         "kubernetes:policy/v1:PodDisruptionBudget")


def program(tmp_path: Path, platform: ReferencedStack, workload: dict[str, Any],
            into: Recording | None = None) -> Recording:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text("name: workload-team\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": {"workload-team:workload": workload}}))
    (tmp_path / "__main__.py").write_text(PROGRAM)
    return record_program(tmp_path, "dev", stack_references={PLATFORM_STACK: platform}, into=into)


@pytest.fixture(scope="module")
def platform(recordings: dict[str, Recording]) -> ReferencedStack:
    return ReferencedStack.of(recordings["dev"])


def test_the_schema_takes_the_stack_files_workload_keys_and_the_platforms_outputs_as_inputs() -> None:
    """`pulumi package add` generates every language's SDK from this schema: the workload's keys under the stack
    file's names (which the component hands to the platform's model), the platform's outputs as Inputs."""
    schema = Analyzer("gpu-platform").analyze([GpuWorkload])
    component = schema["component_definitions"]["GpuWorkload"]
    platform_args = {"pool", "prometheusUrl", "priorityClassName", "platformWorkloads"}
    assert set(component.inputs) - platform_args <= set(KNOWN_KEYS["workloads[]"])
    assert {k for k, p in component.inputs.items() if not p.plain} == platform_args - {"pool"}
    # The pool's fields, each an Input (an Output of the platform stack): the pool itself is a plain object, as the
    # provider maps a nested type only when it is given as one (pulumi provider/experimental/component.py).
    assert {"schedules", "probes"} <= set(component.inputs)
    assert set(schema["type_definitions"]["Schedule"].properties) == {"start", "end", "minReplicas", "timezone"}
    pool = schema["type_definitions"]["Pool"]
    assert set(pool.properties) == {"name", "labels", "taints", "gpusPerNode", "maxNodes", "spot"}
    assert not any(p.plain for p in pool.properties.values())
    assert all(p.description for p in component.inputs.values())
    assert set(component.outputs) == {"deploymentName", "scaledObjectName", "namespace"}


def test_the_platforms_workload_from_a_teams_program_is_the_platforms_own(
        tmp_path: Path, platform: ReferencedStack, recordings: dict[str, Recording]) -> None:
    workload = {**OWN, "name": "inference-b", "priorityClassName": "gpu-workload"}
    ours = program(tmp_path, platform, workload)
    theirs = recordings["dev"]
    for kind in KINDS:
        mine: RecordedResource = ours.of_type(kind)[0]
        own = theirs.get(f"{OWN['name']}-{kind.rsplit(':', 1)[1].lower()}".replace(
            "poddisruptionbudget", "pdb"), kind)
        assert mine.inputs["spec"] == json.loads(json.dumps(own.inputs["spec"]).replace(OWN["name"], "inference-b"))
        assert mine.provider_name == "platform-cluster"


@pytest.mark.parametrize("bad, said", [
    ({"minReplicas": 3, "maxReplicas": 2}, "minReplicas: 3 is greater than maxReplicas (2)"),
    ({"targetUtilization": 0.6}, "targetUtilization: 0.6 looks like a fraction"),
    ({"gpusPerPod": 16}, "gpusPerPod: 16"),
    ({"namespace": "kube-system"}, "namespace: 'kube-system'"),
    # Server-side apply would adopt the platform's own objects, and this stack's destroy would delete them.
    ({"name": OWN["name"]}, f"name: '{OWN['name']}' is a workload of the platform in namespace gpu-workloads"),
    ({"ports": [{"name": "http", "port": 8000}], "probes": {"port": "web"}}, "probes.port: 'web'"),
    ({"cooldownPeriod": 600}, "cooldownPeriod: 600 only applies when scaling to zero"),
])
def test_a_bad_argument_is_refused_naming_it_before_anything_is_registered(
        tmp_path: Path, platform: ReferencedStack, bad: dict[str, Any], said: str) -> None:
    workload = {"name": "refused", "image": "registry.example.com/x:1.0", "maxReplicas": 4, **bad}
    rec = Recording("dev")
    with pytest.raises(Exception, match="invalid GpuWorkload arguments") as err:
        program(tmp_path, platform, workload, into=rec)
    assert said in str(err.value)
    assert not [r for r in rec.resources if r.type in KINDS]


def test_whole_numbers_arrive_as_the_provider_host_hands_them_and_fractions_are_refused(
        tmp_path: Path, platform: ReferencedStack) -> None:
    """Through `pulumi package add`, integer arguments reach the component as floats (the wire's numbers): 4.0
    replicas are 4, 4.5 are refused."""
    workload = {"name": "floats", "image": "registry.example.com/x:1.0", "maxReplicas": 4.0, "minReplicas": 1.0,
                "ports": [{"name": "http", "port": 8080.0}]}
    rec = program(tmp_path, platform, workload)
    spec = rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")[0].inputs["spec"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (1, 4)
    with pytest.raises(Exception, match=r"maxReplicas: 4\.5 is not a whole number"):
        program(tmp_path / "b", platform, {**workload, "maxReplicas": 4.5})


def test_schedules_and_probes_as_the_provider_host_hands_them_render_as_the_platforms_own(
        tmp_path: Path, platform: ReferencedStack) -> None:
    """Nested arguments arrive under their Python names with whole numbers as floats (the provider host); the
    ScaledObject's cron trigger and the container's probes are what the platform renders for the same workload."""
    own = {"name": "reranker", "image": "registry.example.com/reranker:2.1", "maxReplicas": 6,
           "ports": [{"name": "http", "port": 8000}],
           "schedules": [{"start": "0 8 * * 1-5", "end": "0 20 * * 1-5", "timezone": "Europe/Luxembourg",
                          "minReplicas": 3}],
           "probes": {"port": "http", "startupMinutes": 20, "periodSeconds": 5}}
    wire = {**own, "priorityClassName": "gpu-workload", "maxReplicas": 6.0, "ports": [{"name": "http", "port": 8000.0}],
            "schedules": [{"start": "0 8 * * 1-5", "end": "0 20 * * 1-5", "timezone": "Europe/Luxembourg",
                           "min_replicas": 3.0}],
            "probes": {"port": "http", "startup_minutes": 20.0, "period_seconds": 5.0}}
    ours = program(tmp_path, platform, wire)
    theirs = record_stack("dev", {"workloads": [own]})
    for kind, role in (("kubernetes:keda.sh/v1alpha1:ScaledObject", "scaledobject"),
                       ("kubernetes:apps/v1:Deployment", "deployment")):
        mine = ours.of_type(kind)[0].inputs["spec"]
        assert mine == theirs.get(f"reranker-{role}", kind).inputs["spec"], kind
    triggers = ours.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")[0].inputs["spec"]["triggers"]
    assert any(t["type"] == "cron" and t["metadata"]["desiredReplicas"] == "3" for t in triggers), triggers
    container = ours.of_type("kubernetes:apps/v1:Deployment")[0].inputs["spec"]["template"]["spec"]["containers"][0]
    assert container["startupProbe"]["periodSeconds"] == 5 and "readinessProbe" in container


def test_a_bad_nested_argument_is_named_in_the_stack_files_words(tmp_path: Path, platform: ReferencedStack) -> None:
    workload = {"name": "refused", "image": "registry.example.com/x:1.0", "maxReplicas": 4,
                "schedules": [{"start": "0 8 * * *", "end": "0 20 * * *", "min_replicas": 0.0}]}
    with pytest.raises(Exception, match="invalid GpuWorkload arguments") as err:
        program(tmp_path, platform, workload)
    assert "schedules[0].minReplicas" in str(err.value), str(err.value)


def with_a_secret(tmp_path: Path, platform: ReferencedStack, argument: str, key: str, value: str) -> Recording:
    """The team's program for one small workload with `argument` (Python source) reading `key` of its secret config."""
    (tmp_path / "Pulumi.yaml").write_text("name: workload-team\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(PROGRAM.replace(
        'workload = pulumi.Config().require_object("workload")',
        'workload = {"name": "summarizer", "image": "registry.example.com/summarizer:1.0", "maxReplicas": 2}')
        .replace('"prometheus_url": platform.require_output("prometheusUrl")}',
                 f'"prometheus_url": platform.require_output("prometheusUrl"), {argument}}}'))
    return record_program(tmp_path, "dev", stack_references={PLATFORM_STACK: platform},
                          secrets={f"workload-team:{key}": value})


def test_a_secret_variable_reaches_the_pod_through_a_secret_and_is_plain_nowhere(
        tmp_path: Path, platform: ReferencedStack) -> None:
    """`secretEnv` from the team's secret config: the value only in the Kubernetes Secret (marked secret), the pod
    reading it by reference, as the platform does for its own workloads (prod's inference and its HF_TOKEN)."""
    token = "hf_from_the_teams_secret_config"
    rec = with_a_secret(tmp_path, platform, '"secret_env": {"HF_TOKEN": pulumi.Config().require_secret("hfToken")}',
                        "hfToken", token)
    secret = rec.get("summarizer-env-secret")
    assert secrets_in(secret.inputs["stringData"]) == [{"HF_TOKEN": token}]
    assert not [r.name for r in rec.resources for text in plain_strings(dict(r.inputs)) if token in text]
    container = rec.get("summarizer-deployment").inputs["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret.inputs["metadata"]["name"],
                                                                "key": "HF_TOKEN"}}} in container["env"]


def with_outputs(platform: ReferencedStack, **changes: Any) -> ReferencedStack:
    """The platform's outputs with some fields of some outputs changed (None deletes one)."""
    outputs = copy.deepcopy(dict(platform.outputs))
    for output, fields in changes.items():
        for field, value in fields.items():
            if value is None:
                del outputs[output][field]
            else:
                outputs[output][field] = value
    return ReferencedStack(outputs, platform.secret_outputs)


def test_a_name_the_platform_uses_in_another_namespace_is_accepted(tmp_path: Path, platform: ReferencedStack) -> None:
    rec = program(tmp_path, platform, {**OWN, "namespace": "team-a"})
    assert rec.get(f"{OWN['name']}-deployment").inputs["metadata"]["namespace"] == "team-a"


def test_the_objects_follow_the_platforms_outputs(tmp_path: Path, platform: ReferencedStack) -> None:
    """Values a team's program can know only from the platform stack: its Prometheus, its pool's labels and taints."""
    labels = {"platform.gcore-gpu/pool": "gpu", "gpu.nvidia.com/model": "h100"}
    changed = with_outputs(platform, gpuPool={"labels": labels, "taints": {"dedicated": "ml:NoExecute"}})
    changed = ReferencedStack({**changed.outputs, "prometheusUrl": "http://prometheus.observability.svc:9090"},
                              changed.secret_outputs)
    rec = program(tmp_path, changed, {"name": "reranker", "image": "registry.example.com/x:1.0", "maxReplicas": 2})
    (trigger,) = rec.get("reranker-scaledobject").inputs["spec"]["triggers"]
    assert trigger["metadata"]["serverAddress"] == "http://prometheus.observability.svc:9090"
    pods = rec.get("reranker-deployment").inputs["spec"]["template"]["spec"]
    assert pods["nodeSelector"] == {"platform.gcore-gpu/pool": "gpu", "gpu.nvidia.com/model": "h100"}
    assert pods["tolerations"] == [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoExecute"}]


def test_a_platform_workloads_output_without_a_field_the_checks_read_is_named(
        tmp_path: Path, platform: ReferencedStack) -> None:
    broken = copy.deepcopy(dict(platform.outputs))
    broken["workloads"][OWN["name"]] = {"namespace": "gpu-workloads"}  # lacks maxReplicas
    rec = Recording("dev")
    with pytest.raises(Exception, match="invalid GpuWorkload arguments") as err:
        program(tmp_path, ReferencedStack(broken, platform.secret_outputs),
                {"name": "reranker", "image": "registry.example.com/x:1.0", "maxReplicas": 2}, into=rec)
    assert "platformWorkloads: " in str(err.value) and "lacks 'maxReplicas'" in str(err.value), str(err.value)
    assert not [r for r in rec.resources if r.type in KINDS]


def test_a_refusal_left_in_a_future_is_logged_without_a_traceback(
        tmp_path: Path, platform: ReferencedStack, caplog: pytest.LogCaptureFixture) -> None:
    """A refusal raised in an apply stays in futures nobody awaits, logged when collected, at any later moment:
    formatting a traceback then parses source, which breaks an `ast.parse` it interrupts on CPython 3.11
    (offline/engine.py `quiet_unretrieved_futures`; test_layout failed that way)."""
    with pytest.raises(Exception, match="invalid GpuWorkload arguments"):
        program(tmp_path, platform, {"name": OWN["name"], "image": "registry.example.com/x:1.0", "maxReplicas": 2})
    left = asyncio.get_event_loop().create_future()  # the loop the program ran on
    left.set_exception(ValueError("refused"))
    del left
    gc.collect()
    logged = [r for r in caplog.records if r.name == "asyncio"]
    assert logged and all(r.exc_info is None for r in logged), [r.exc_info for r in logged]


def test_sharing_the_pool_beyond_what_it_holds_is_a_warning(
        tmp_path: Path, platform: ReferencedStack, caplog: pytest.LogCaptureFixture) -> None:
    """dev: the platform's own workload may use all 16 GPUs of its pool; a team's 4 more are more than it holds."""
    workload = {"name": "reranker", "image": "registry.example.com/x:1.0", "maxReplicas": 4}
    with caplog.at_level(logging.WARNING):
        program(tmp_path, platform, workload)
    assert ("reranker: with the platform's workloads on its pool (16 GPUs at their maxReplicas), it may want 20 of "
            "the pool's 16 GPUs at peak") in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        program(tmp_path / "roomy", with_outputs(platform, gpuPool={"maxNodes": 3}), workload)
    assert "may want" not in caplog.text
    with caplog.at_level(logging.WARNING):  # the platform's workloads on other pools do not count
        program(tmp_path / "other", with_outputs(platform, gpuPool={"name": "other"}), workload)
    assert "may want" not in caplog.text


def test_the_kubeconfig_read_through_the_stack_reference_stays_secret(
        tmp_path: Path, platform: ReferencedStack) -> None:
    assert "kubeconfig" in platform.secret_outputs
    rec = program(tmp_path, platform, {"name": "reranker", "image": "registry.example.com/x:1.0", "maxReplicas": 2})
    kubeconfig = rec.get("platform-cluster").inputs["kubeconfig"]
    assert isinstance(kubeconfig, Secret) and kubeconfig.value == MOCK_KUBECONFIG
    assert not [r.name for r in rec.resources for text in plain_strings(dict(r.inputs)) if "mock-token" in text]


def test_the_python_example_deploys_with_its_teams_kubeconfig_kept_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/package-consumer itself, its generated SDK played by a module of the same names (the component's
    objects are the tests above'): its provider gets its team's kubeconfig, never the cluster's admin one, and
    keeps it secret even from a platform that exports it plain."""
    sdk = types.ModuleType("pulumi_gpu_platform")

    class GpuWorkload(pulumi.ComponentResource):
        def __init__(self, resource_name: str, opts: pulumi.ResourceOptions | None = None, **_: Any) -> None:
            super().__init__("gpu-platform:index:GpuWorkload", resource_name, None, opts)
            self.deployment_name = self.scaled_object_name = self.namespace = pulumi.Output.from_input(resource_name)

    sdk.GpuWorkload, sdk.PoolArgs = GpuWorkload, dict  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pulumi_gpu_platform", sdk)
    team = yaml.safe_load((ROOT / "examples" / "package-consumer" / "Pulumi.dev.yaml").read_text())["config"][
        "gpu-workload-team:team"]
    outputs = record_stack("dev", {"teams": [{"name": "other", "gpus": 8}, {"name": team, "gpus": 8}]}).outputs
    plain = ReferencedStack(outputs, frozenset())
    rec = record_program(ROOT / "examples" / "package-consumer", "dev",
                         stack_references={"acme/gpu-autoscaling/dev": plain})
    kubeconfig = rec.get("platform-cluster").inputs["kubeconfig"]
    assert kubeconfig == Secret(outputs["teamKubeconfigs"][team])
    assert yaml.safe_load(kubeconfig.value)["contexts"][0]["context"]["namespace"] == team


def test_own_triggers_and_a_wake_trigger_from_zero_render_as_the_platforms_own(
        tmp_path: Path, platform: ReferencedStack) -> None:
    """A queue trigger beside the GPU one, and scale-to-zero woken by a gateway's queue: the ScaledObject the
    platform renders for the same workload, from arguments as the provider host hands them over."""
    own = {"name": "reranker", "image": "registry.example.com/reranker:2.1", "maxReplicas": 6, "minReplicas": 0,
           "ports": [{"name": "http", "port": 8000}], "metrics": {"port": "http"},
           "triggers": [{"name": "queue-depth", "metric": "vllm:num_requests_waiting", "threshold": 5}],
           "wakeTrigger": {"query": "sum(gateway_pending)", "threshold": 10, "activationThreshold": 1}}
    wire: dict[str, Any] = {**own, "priorityClassName": "gpu-workload", "maxReplicas": 6.0, "minReplicas": 0.0,
                            "ports": [{"name": "http", "port": 8000.0}],
                            "triggers": [{"name": "queue-depth", "metric": "vllm:num_requests_waiting",
                                          "threshold": 5.0}],
                            "wakeTrigger": {"query": "sum(gateway_pending)", "threshold": 10.0,
                                            "activation_threshold": 1.0}}
    ours = program(tmp_path, platform, wire)
    theirs = record_stack("dev", {"workloads": [own]})
    kind = "kubernetes:keda.sh/v1alpha1:ScaledObject"
    spec = ours.of_type(kind)[0].inputs["spec"]
    assert spec == theirs.get("reranker-scaledobject", kind).inputs["spec"]
    assert [t["name"] for t in spec["triggers"]] == ["gpu-utilization", "demand", "queue-depth"]
    with pytest.raises(Exception, match=r"minReplicas: 0"):  # without a wake trigger nothing would wake it
        program(tmp_path / "b", platform, {k: v for k, v in wire.items() if k != "wakeTrigger"})
    bad = {**wire, "wakeTrigger": {**wire["wakeTrigger"], "activation_threshold": -1.0}}
    with pytest.raises(Exception, match=r"wakeTrigger\.activationThreshold: -1 must be at least 0"):
        program(tmp_path / "c", platform, bad)  # named in the stack file's words


def test_registry_credentials_reach_the_pods_through_a_secret_and_the_password_is_plain_nowhere(
        tmp_path: Path, platform: ReferencedStack) -> None:
    password = "registry-token-from-the-teams-secret-config"
    rec = with_a_secret(tmp_path, platform, '"image_pull_secret": {"server": "registry.example.com", "username": '
                        '"team", "password": pulumi.Config().require_secret("registryPassword")}',
                        "registryPassword", password)
    secret = rec.get("summarizer-registry-secret")
    assert secret.inputs["type"] == "kubernetes.io/dockerconfigjson"
    (config,) = secrets_in(secret.inputs["stringData"])
    assert json.loads(config[".dockerconfigjson"])["auths"]["registry.example.com"]["password"] == password
    assert not [r.name for r in rec.resources for text in plain_strings(dict(r.inputs)) if password in text]
    pods = rec.get("summarizer-deployment").inputs["spec"]["template"]["spec"]
    assert pods["imagePullSecrets"] == [{"name": secret.inputs["metadata"]["name"]}]
    theirs = record_stack("dev", {"workloads": [{"name": "summarizer", "image": "registry.example.com/summarizer:1.0",
                                                 "maxReplicas": 2, "imagePullSecret": {
                                                     "server": "registry.example.com", "username": "team",
                                                     "passwordSecret": "registryPassword"}}]})
    assert pods["imagePullSecrets"] == theirs.get("summarizer-deployment").inputs["spec"]["template"]["spec"][
        "imagePullSecrets"]


def test_a_served_model_with_a_shared_cache_renders_as_the_platforms_own(
        tmp_path: Path, platform: ReferencedStack) -> None:
    """The serving profile (triggers on the engine's own series) and an NFS model cache, from arguments as the
    provider host hands them over: the ScaledObject and the Deployment the platform renders for the same workload."""
    own = {"name": "chat", "image": "registry.example.com/vllm:0.14.0", "maxReplicas": 4,
           "ports": [{"name": "http", "port": 8000}], "metrics": {"port": "http"},
           "probes": {"port": "http"}, "terminationGracePeriodSeconds": 160,
           "serving": {"engine": "vllm", "latencyObjective": {"ttftP90": "500ms", "tpotP90": "50ms"},
                       "perGpu": {"ttftP90": "40ms", "tpotP90": "7ms", "tpotP90AtKnee": "40ms"},
                       "band": {"scaleUp": 0.7}},
           "modelCache": {"type": "nfs", "server": "10.0.0.5", "path": "/share/models"}}
    wire: dict[str, Any] = {
        **own, "priorityClassName": "gpu-workload", "maxReplicas": 4.0, "terminationGracePeriodSeconds": 160.0,
        "ports": [{"name": "http", "port": 8000.0}],
        "serving": {"engine": "vllm", "latency_objective": {"ttft_p90": "500ms", "tpot_p90": "50ms"},
                    "per_gpu": {"ttft_p90": "40ms", "tpot_p90": "7ms", "tpot_p90_at_knee": "40ms"},
                    "band": {"scale_up": 0.7}},
        "model_cache": {"type": "nfs", "server": "10.0.0.5", "path": "/share/models"}}
    ours = program(tmp_path, platform, wire)
    theirs = record_stack("dev", {"workloads": [own]})
    for kind, role in (("kubernetes:keda.sh/v1alpha1:ScaledObject", "scaledobject"),
                       ("kubernetes:apps/v1:Deployment", "deployment")):
        assert ours.of_type(kind)[0].inputs["spec"] == theirs.get(f"chat-{role}", kind).inputs["spec"], kind
    triggers = ours.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")[0].inputs["spec"]["triggers"]
    assert [t["name"] for t in triggers] == ["gpu-utilization", "latency-objective", "queue-depth", "kv-cache"]
    with pytest.raises(Exception, match=r"band\.scaleDown: 0\.9 .*scaleUp"):  # named in the stack file's words
        program(tmp_path / "b", platform, {**wire, "serving": {**wire["serving"], "band": {"scale_down": 0.9}}})
    with pytest.raises(Exception, match=r"modelCache\.type: 'hostPath' needs the namespace at Pod Security"):
        program(tmp_path / "c", platform, {**wire, "model_cache": {"type": "hostPath"}})
