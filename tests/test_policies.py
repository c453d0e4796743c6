"""Each policy of the pack, called directly: one case where it passes and the cases where it reports.

Props reach the policies the way the analyzer hands them over (pulumi_policy/policy.py `Analyze`): numbers
as floats (protobuf Struct), wrapped in `unknown_checking_proxy` (lists become a `Sequence`, not `list`).
`policy/__main__.py` is never imported: `PolicyPack(...)` starts a gRPC server and blocks forever.
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from policy import gpu_policies as gp  # noqa: E402
from tests.conftest import STACKS  # noqa: E402

CLUSTER = "gcore:index/k8sv2:K8sv2"
RELEASE = "kubernetes:helm.sh/v3:Release"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
H100_BM = "bm3-ai-1xlarge-h100-80-8"


# ---------------------------------------------------------------------------------------------------------------
# Running a policy like the analyzer does


def engine(value: Any) -> Any:
    """Numbers as the engine delivers them (floats), everything else unchanged."""
    if isinstance(value, dict):
        return {k: engine(v) for k, v in value.items()}
    if isinstance(value, list):
        return [engine(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def options(protect: bool = False) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=protect,
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
    )


def urn(resource_type: str, name: str) -> str:
    return f"urn:pulumi:dev::gpu-autoscaling::{resource_type}::{name}"


def _collect(policy: Any, args: Any) -> list[tuple[str, str | None]]:
    reported: list[tuple[str, str | None]] = []
    def report(message: str, urn: str | None = None) -> None:
        reported.append((message, urn))

    result = policy.validate(args, report)
    assert not inspect.isawaitable(result), "policies here are synchronous"
    return reported


def check(
    policy: Policy,
    resource_type: str,
    props: dict[str, Any],
    *,
    name: str = "res",
    config: dict[str, Any] | None = None,
    protect: bool = False,
) -> list[str]:
    """Messages a resource policy reports for one resource."""
    args = ResourceValidationArgs(
        resource_type,
        unknown_checking_proxy(engine(copy.deepcopy(props))),
        urn(resource_type, name),
        name,
        options(protect),
        None,
        config,
    )
    return [message for message, _ in _collect(policy, args)]


def check_stack(policy: Policy, resources: list[tuple[str, str, dict[str, Any]]]) -> list[tuple[str, str | None]]:
    """(message, urn) a stack policy reports for (type, name, props) resources."""
    stack = [
        PolicyResource(t, unknown_checking_proxy(engine(copy.deepcopy(p))), urn(t, n), n, options(), None, None, [], {})
        for t, n, p in resources
    ]
    return _collect(policy, StackValidationArgs(stack))


# ---------------------------------------------------------------------------------------------------------------
# Builders: valid resources shaped like the program's (components/workload.py, gpu_platform/cluster.py)


def gpu_deployment(**container_overrides: Any) -> dict[str, Any]:
    container = {
        "name": "inference",
        "image": "registry.example.com/gpu-app:1.4.2",
        "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1", "cpu": "8"}},
        **container_overrides,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "inference", "namespace": "inference"},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": "inference"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "inference"}},
                "spec": {
                    "containers": [container],
                    "nodeSelector": {"platform.gcore-gpu/pool": "gpu"},
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
                    ],
                },
            },
        },
    }


def prometheus_trigger(name: str = "gpu-utilization", **metadata: Any) -> dict[str, Any]:
    return {
        "type": "prometheus",
        "name": name,
        "metricType": "AverageValue",
        "metadata": {
            "serverAddress": "http://kube-prometheus-stack-prometheus.monitoring:9090",
            "query": 'sum(max by (UUID) (avg_over_time(DCGM_FI_DEV_GPU_UTIL{namespace="inference"}[1m])))',
            "threshold": "60",
            "ignoreNullValues": "false",
            **metadata,
        },
    }


def scaled_object(**spec_overrides: Any) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "inference", "namespace": "inference"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "inference"},
            "minReplicaCount": 4,
            "maxReplicaCount": 16,
            "fallback": {"failureThreshold": 3, "replicas": 4, "behavior": "currentReplicasIfHigher"},
            "triggers": [prometheus_trigger()],
            **spec_overrides,
        },
    }


def cluster(
    gpu_max_nodes: int = 4, gpu_autohealing: bool = False, gpu_taints: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "name": "gpu-prod",
        "keypair": "platform-team",
        "version": "v1.35.3",
        "pools": [
            {
                "name": "system",
                "flavorId": "g1-standard-4-8",
                "minNodeCount": 2,
                "maxNodeCount": 4,
                "autoHealingEnabled": True,  # VM pool: autohealing is fine and wanted
                "servergroupPolicy": "anti-affinity",
                "bootVolumeSize": 50,
            },
            {
                "name": "gpu",
                "flavorId": H100_BM,
                "minNodeCount": 2,
                "maxNodeCount": gpu_max_nodes,
                "autoHealingEnabled": gpu_autohealing,
                "isPublicIpv4": False,
                "labels": {"platform.gcore-gpu/pool": "gpu"},
                "taints": {"nvidia.com/gpu": "present:NoSchedule"} if gpu_taints is None else gpu_taints,
            },
        ],
    }


def release(version: Any = "2.20.2", chart: str = "keda") -> dict[str, Any]:
    props: dict[str, Any] = {
        "chart": chart,
        "name": "keda",
        "namespace": "keda",
        "repositoryOpts": {"repo": "https://kedacore.github.io/charts"},
    }
    if version is not None:
        props["version"] = version
    return props


# ---------------------------------------------------------------------------------------------------------------
# helm-release-pins-chart-version


@pytest.mark.parametrize("version", ["2.20.2", "v26.7.0", "88.5.3", "1.0.0-rc.1"])
def test_helm_release_with_exact_version_passes(version: str) -> None:
    assert check(gp.helm_chart_pinned, RELEASE, release(version)) == []


def test_helm_release_without_version_is_reported() -> None:
    (message,) = check(gp.helm_chart_pinned, RELEASE, release(None), name="keda")
    assert "Helm release `keda` (chart `keda`) has no chart `version`" in message


@pytest.mark.parametrize("version", ["^2.20.0", "~2.20", "2.x", ">=2.0.0", "latest", "2.20"])
def test_helm_release_with_a_range_is_reported(version: str) -> None:
    (message,) = check(gp.helm_chart_pinned, RELEASE, release(version))
    assert f"pins `version: {version}`, which is a range or not a version" in message


def test_helm_chart_from_a_local_directory_needs_no_version() -> None:
    assert check(gp.helm_chart_pinned, RELEASE, release(None, chart="./charts/platform")) == []


# ---------------------------------------------------------------------------------------------------------------
# container-image-pinned


@pytest.mark.parametrize(
    "image",
    ["registry.example.com/gpu-app:1.4.2", "nvcr.io/nvidia/cuda@sha256:" + "3f" * 32, "localhost:5000/app:2025.1"],
)
def test_pinned_images_pass(image: str) -> None:
    assert check(gp.container_image_pinned, DEPLOYMENT, gpu_deployment(image=image)) == []


@pytest.mark.parametrize(
    ("image", "reason"),
    [
        ("registry.example.com/gpu-app", "has no tag (`registry.example.com/gpu-app` means `latest`)"),
        ("localhost:5000/gpu-app", "has no tag"),
        ("registry.example.com/gpu-app:latest", "uses the `latest` tag"),
        ("registry.example.com/gpu-app@sha256:abc", "has a malformed digest"),
        ("", "has no image"),
    ],
)
def test_unpinned_images_are_reported(image: str, reason: str) -> None:
    (message,) = check(gp.container_image_pinned, DEPLOYMENT, gpu_deployment(image=image))
    assert message.startswith("Container `inference` of inference/inference ")
    assert reason in message


def test_init_containers_and_cronjobs_are_checked_too() -> None:
    job_template = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}}
    cronjob = {"metadata": {"name": "cleanup", "namespace": "ops"}, "spec": {"jobTemplate": job_template}}
    assert check(gp.container_image_pinned, "kubernetes:batch/v1:CronJob", cronjob) == []

    pod_spec = job_template["spec"]["template"]["spec"]
    pod_spec["initContainers"] = [{"name": "fetch", "image": "curlimages/curl:latest"}]
    (message,) = check(gp.container_image_pinned, "kubernetes:batch/v1:CronJob", cronjob)
    assert "Container `fetch` of ops/cleanup uses the `latest` tag" in message


def test_every_kind_that_creates_pods_is_checked() -> None:
    """The pack reads the same table of pod templates as the render check (podspec.py): a ReplicationController's
    pods run `latest` as surely as a Deployment's."""
    template = {"spec": {"containers": [{"name": "c", "image": "busybox:latest"}]}}
    rc = {"metadata": {"name": "legacy", "namespace": "ops"}, "spec": {"template": template}}
    (message,) = check(gp.container_image_pinned, "kubernetes:core/v1:ReplicationController", rc)
    assert "Container `c` of ops/legacy uses the `latest` tag" in message


# ---------------------------------------------------------------------------------------------------------------
# gpu-container-sets-gpu-limit


def test_gpu_container_with_equal_request_and_limit_passes() -> None:
    assert check(gp.gpu_container_limits, DEPLOYMENT, gpu_deployment()) == []


def test_gpu_request_without_limit_is_reported() -> None:
    props = gpu_deployment(resources={"requests": {"nvidia.com/gpu": "1"}})
    messages = check(gp.gpu_container_limits, DEPLOYMENT, props)
    assert any(
        "requests `nvidia.com/gpu: 1` without a limit: Kubernetes rejects extended-resource requests" in m
        for m in messages
    )


def test_gpu_request_different_from_limit_is_reported() -> None:
    props = gpu_deployment(resources={"requests": {"nvidia.com/gpu": 2}, "limits": {"nvidia.com/gpu": "1"}})
    (message,) = check(gp.gpu_container_limits, DEPLOYMENT, props)
    assert "requests 2 but limits 1 `nvidia.com/gpu`: Kubernetes requires the two to be equal" in message


# ---------------------------------------------------------------------------------------------------------------
# gpu-pool-workload-sets-gpu-limit (stack policy: the GPU pool's taints and labels come from the cluster)

CUSTOM_TAINT = "gpu.example.com/dedicated"
NO_GPU_LIMIT = {"resources": {"requests": {"cpu": "2"}}}


def tolerating(key: str, **container_overrides: Any) -> dict[str, Any]:
    """A Deployment that reaches the GPU pool only through a toleration of `key` (no node selector)."""
    props = gpu_deployment(**container_overrides)
    spec = props["spec"]["template"]["spec"]
    del spec["nodeSelector"]
    spec["tolerations"] = [{"key": key, "operator": "Exists", "effect": "NoSchedule"}]
    return props


def placed(workload: dict[str, Any], pool: dict[str, Any] | None = None) -> list[tuple[str, str | None]]:
    """What the stack policy reports for one Deployment, in a stack with the cluster `pool` (None: no cluster)."""
    resources = [(CLUSTER, "gpu-prod", pool)] if pool is not None else []
    return check_stack(gp.gpu_pool_workloads, [*resources, (DEPLOYMENT, "inference", workload)])


def test_gpu_pool_workload_with_gpu_limit_passes() -> None:
    assert placed(gpu_deployment(), cluster()) == []


def test_workload_on_the_gpu_pool_without_gpu_limit_is_reported() -> None:
    ((message, where),) = placed(gpu_deployment(**NO_GPU_LIMIT), cluster())

    assert "inference/inference runs on the GPU pool (tolerates its taint `nvidia.com/gpu`)" in message
    assert "no container sets `resources.limits[nvidia.com/gpu]`" in message
    assert where == urn(DEPLOYMENT, "inference")


def test_the_pool_taint_is_learned_from_the_cluster() -> None:
    """A custom `gpuPool.taints` key: tolerating it puts pods on the GPU pool, `nvidia.com/gpu` no longer does."""
    custom = cluster(gpu_taints={CUSTOM_TAINT: "true:NoSchedule"})

    ((message, where),) = placed(tolerating(CUSTOM_TAINT, **NO_GPU_LIMIT), custom)

    assert f"inference/inference runs on the GPU pool (tolerates its taint `{CUSTOM_TAINT}`)" in message
    assert where == urn(DEPLOYMENT, "inference")
    assert placed(tolerating(CUSTOM_TAINT), custom) == []  # with its GPU limit
    assert placed(tolerating("nvidia.com/gpu", **NO_GPU_LIMIT), custom) == []  # a taint this pool does not carry


def test_without_a_cluster_in_the_stack_the_default_taint_is_assumed() -> None:
    ((message, _),) = placed(tolerating("nvidia.com/gpu", **NO_GPU_LIMIT))
    assert "(tolerates its taint `nvidia.com/gpu`)" in message
    assert placed(tolerating(CUSTOM_TAINT, **NO_GPU_LIMIT)) == []


@pytest.mark.parametrize(
    ("selector", "reason"),
    [
        ({"platform.gcore-gpu/pool": "gpu"}, "selects its label `platform.gcore-gpu/pool=gpu`"),
        ({"nvidia.com/gpu.present": "true"}, "selects the GPU node label `nvidia.com/gpu.present`"),
    ],
)
def test_selecting_the_gpu_pools_labels_places_pods_there(selector: dict[str, str], reason: str) -> None:
    props = gpu_deployment(**NO_GPU_LIMIT)
    spec = props["spec"]["template"]["spec"]
    spec["nodeSelector"], spec["tolerations"] = selector, []
    ((message, _),) = placed(props, cluster())
    assert f"({reason})" in message


def test_selecting_another_value_of_the_pool_label_is_not_the_gpu_pool() -> None:
    props = gpu_deployment(**NO_GPU_LIMIT)
    spec = props["spec"]["template"]["spec"]
    spec["nodeSelector"], spec["tolerations"] = {"platform.gcore-gpu/pool": "system"}, []
    assert placed(props, cluster()) == []


def test_daemonsets_may_tolerate_the_gpu_taint_without_gpus() -> None:
    daemonset = ("kubernetes:apps/v1:DaemonSet", "exporter", gpu_deployment(resources={}))
    assert check_stack(gp.gpu_pool_workloads, [(CLUSTER, "gpu-prod", cluster()), daemonset]) == []


# ---------------------------------------------------------------------------------------------------------------
# scaledobject-safe-fallback


def test_scaled_object_with_fallback_and_strict_triggers_passes() -> None:
    cpu = {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}
    assert check(gp.scaled_object_safe, SCALED_OBJECT, scaled_object(triggers=[prometheus_trigger(), cpu])) == []


def test_scaled_object_without_fallback_is_reported() -> None:
    props = scaled_object()
    del props["spec"]["fallback"]
    (message,) = check(gp.scaled_object_safe, SCALED_OBJECT, props)
    assert "ScaledObject inference/inference has no `spec.fallback`" in message
    assert "(≥ 4)" in message


def test_fallback_without_serving_capacity_is_reported() -> None:
    props = scaled_object(minReplicaCount=0, fallback={"failureThreshold": 0, "replicas": 0})
    messages = check(gp.scaled_object_safe, SCALED_OBJECT, props)
    assert len(messages) == 2
    assert "`spec.fallback.failureThreshold` must be a number ≥ 1, got 0" in messages[0]
    assert "`spec.fallback.replicas` is 0" in messages[1]
    assert "max(1, minReplicaCount) = 1" in messages[1]


@pytest.mark.parametrize("value", [None, "true", True, "False"])
def test_prometheus_trigger_that_reads_missing_data_as_zero_is_reported(value: Any) -> None:
    trigger = prometheus_trigger()
    if value is None:
        del trigger["metadata"]["ignoreNullValues"]
    else:
        trigger["metadata"]["ignoreNullValues"] = value
    (message,) = check(gp.scaled_object_safe, SCALED_OBJECT, scaled_object(triggers=[trigger]))
    assert 'trigger gpu-utilization: `metadata.ignoreNullValues` must be the string "false"' in message
    assert "keda#3065" in message


def test_trigger_metric_name_is_reported() -> None:
    trigger = prometheus_trigger(metricName="gpu_util")
    (message,) = check(gp.scaled_object_safe, SCALED_OBJECT, scaled_object(triggers=[trigger]))
    assert "`metadata.metricName` was removed in KEDA 2.12" in message


# ---------------------------------------------------------------------------------------------------------------
# gpu-pool-autohealing-off


def test_gpu_pool_without_autohealing_passes_even_if_the_vm_pool_heals() -> None:
    assert check(gp.gpu_pool_autohealing_off, CLUSTER, cluster()) == []


def test_gpu_pool_with_autohealing_is_reported() -> None:
    (message,) = check(gp.gpu_pool_autohealing_off, CLUSTER, cluster(gpu_autohealing=True))
    assert f"GPU pool `gpu` ({H100_BM}) has autohealing on" in message


# ---------------------------------------------------------------------------------------------------------------
# production-cluster-protected


def test_protected_cluster_passes_when_protection_is_required() -> None:
    assert check(gp.cluster_protected, CLUSTER, cluster(), config={"requireProtect": True}, protect=True) == []
    # dev: not required
    assert check(gp.cluster_protected, CLUSTER, cluster(), config={"requireProtect": False}) == []
    assert check(gp.cluster_protected, CLUSTER, cluster()) == []


def test_unprotected_cluster_is_reported_when_protection_is_required() -> None:
    (message,) = check(gp.cluster_protected, CLUSTER, cluster(), name="gpu-prod", config={"requireProtect": True})
    assert "Cluster `gpu-prod` is not protected, but this stack requires it (`requireProtect`)" in message


# ---------------------------------------------------------------------------------------------------------------
# gpu-pool-hourly-budget

PROD_BUDGET = {"pricePerGpuHour": 4.0, "gpusPerNode": {H100_BM: 8}, "maxHourlyBudget": 160.0}


def test_gpu_pool_within_budget_passes() -> None:
    # 4 nodes × 32.00 = 128.00 ≤ 160.00; the system pool is not a GPU pool and not counted.
    assert check(gp.gpu_pool_budget, CLUSTER, cluster(gpu_max_nodes=4), config=PROD_BUDGET) == []
    # Without a budget there is nothing to compare.
    no_budget = {k: v for k, v in PROD_BUDGET.items() if k != "maxHourlyBudget"}
    assert check(gp.gpu_pool_budget, CLUSTER, cluster(gpu_max_nodes=50), config=no_budget) == []


def test_gpu_pool_over_budget_is_reported_with_the_numbers() -> None:
    (message,) = check(gp.gpu_pool_budget, CLUSTER, cluster(gpu_max_nodes=6), name="gpu-prod", config=PROD_BUDGET)
    assert "The GPU pools of `gpu-prod` can cost up to 192.00/hour" in message
    assert "pool `gpu` up to 6 nodes × 8 GPUs × 4.00/GPU-hour = 192.00/hour" in message
    assert "over the stack's budget of 160.00/hour (`maxHourlyBudget`)" in message


# ---------------------------------------------------------------------------------------------------------------
# gpu-scaled-workload-has-gpu-limit (stack policy)


def test_gpu_scaled_deployment_with_gpu_limit_passes() -> None:
    resources = [(DEPLOYMENT, "inference", gpu_deployment()), (SCALED_OBJECT, "inference", scaled_object())]
    assert check_stack(gp.gpu_scaled_workloads, resources) == []


def test_gpu_scaled_deployment_without_gpu_limit_is_reported_on_the_deployment() -> None:
    deployment = gpu_deployment(resources={"requests": {"cpu": "8"}})
    resources = [(DEPLOYMENT, "inference", deployment), (SCALED_OBJECT, "inference", scaled_object())]

    ((message, where),) = check_stack(gp.gpu_scaled_workloads, resources)

    assert "ScaledObject inference/inference scales Deployment inference/inference on DCGM GPU utilisation" in message
    assert "no container of it sets `resources.limits[nvidia.com/gpu]`" in message
    assert where == urn(DEPLOYMENT, "inference")


def test_gpu_scaled_object_without_its_deployment_is_reported() -> None:
    deployment = gpu_deployment()
    deployment["metadata"]["namespace"] = "batch"  # same name, other namespace: not the target
    resources = [(DEPLOYMENT, "inference", deployment), (SCALED_OBJECT, "inference", scaled_object())]

    ((message, where),) = check_stack(gp.gpu_scaled_workloads, resources)

    assert "no such Deployment is in this stack" in message
    assert where == urn(SCALED_OBJECT, "inference")


def test_scaled_objects_on_other_metrics_are_not_gpu_workloads() -> None:
    queue = prometheus_trigger("demand", query="sum(rabbitmq_queue_messages_ready)")
    deployment = gpu_deployment(resources={})
    deployment["spec"]["template"]["spec"] = {"containers": [deployment["spec"]["template"]["spec"]["containers"][0]]}
    resources = [(DEPLOYMENT, "inference", deployment), (SCALED_OBJECT, "inference", scaled_object(triggers=[queue]))]
    assert check_stack(gp.gpu_scaled_workloads, resources) == []


# ---------------------------------------------------------------------------------------------------------------
# The pack as a whole: names, enforcement, per-stack config files


def test_every_policy_is_mandatory_and_uniquely_named() -> None:
    names = [p.name for p in gp.POLICIES]
    assert len(names) == len(set(names)) == 11
    assert {p.enforcement_level for p in gp.POLICIES} == {EnforcementLevel.MANDATORY}


def test_pack_entry_point_builds_the_pack_from_the_importable_module() -> None:
    # Read, never import: PolicyPack(...) blocks forever.
    source = (ROOT / "policy" / "__main__.py").read_text()
    tree = ast.parse(source)
    (call,) = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "PolicyPack"]
    keywords = {k.arg: ast.unparse(k.value) for k in call.keywords}
    assert keywords["enforcement_level"] == "EnforcementLevel.MANDATORY"
    assert keywords["policies"] == "list(POLICIES)"
    assert "from gpu_policies import POLICIES" in source

    project = yaml.safe_load((ROOT / "policy" / "PulumiPolicy.yaml").read_text())
    assert project["runtime"] == "python" and project["description"]


@pytest.mark.parametrize("stack", STACKS)
def test_stack_policy_config_matches_the_policies_schemas(stack: str) -> None:
    config = json.loads((ROOT / "policy" / "config" / f"{stack}.json").read_text())
    by_name = {p.name: p for p in gp.POLICIES}

    assert config.pop("all") == "mandatory"
    for name, values in config.items():
        policy = by_name[name]  # a typo in a policy name would silently configure nothing
        assert policy.config_schema is not None, f"{name} takes no configuration"
        schema = {"type": "object", "properties": policy.config_schema.properties, "additionalProperties": False}
        jsonschema.validate(values, schema)


def test_production_requires_protection_and_dev_does_not() -> None:
    def load(stack: str) -> dict[str, Any]:
        return json.loads((ROOT / "policy" / "config" / f"{stack}.json").read_text())

    assert load("prod")["production-cluster-protected"]["requireProtect"] is True
    assert load("dev")["production-cluster-protected"]["requireProtect"] is False


def test_builders_are_valid_for_every_policy() -> None:
    """The passing fixtures above pass every resource policy, so each violation test isolates one rule."""
    cases = [
        (RELEASE, release()),
        (DEPLOYMENT, gpu_deployment()),
        (SCALED_OBJECT, scaled_object()),
        (CLUSTER, cluster()),
    ]
    config = PROD_BUDGET | {"requireProtect": True}
    for policy in gp.POLICIES:
        if isinstance(policy, ResourceValidationPolicy):
            for resource_type, props in cases:
                assert check(policy, resource_type, props, config=config, protect=True) == [], policy.name


@pytest.mark.subprocess
def test_pack_runs_in_the_real_analyzer_with_the_prod_config() -> None:
    """Start the pack the way the CLI does (`python -m pulumi.policy <engine> policy`) and call it over gRPC."""
    import grpc
    from google.protobuf import empty_pb2, json_format, struct_pb2
    from pulumi.runtime.proto import analyzer_pb2 as pb
    from pulumi.runtime.proto import analyzer_pb2_grpc as pb_grpc

    pack = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:0", "policy"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert pack.stdout is not None
    try:
        ready, _, _ = select.select([pack.stdout], [], [], 30)
        assert ready, "the policy pack did not print its port"
        port = int(pack.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            analyzer = pb_grpc.AnalyzerStub(channel)
            info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
            assert info.name == "gpu-platform-guardrails"
            assert [p.name for p in info.policies] == [p.name for p in gp.POLICIES]
            assert {p.enforcementLevel for p in info.policies} == {pb.MANDATORY}

            prod = json.loads((ROOT / "policy" / "config" / "prod.json").read_text())
            analyzer.Configure(
                pb.ConfigureAnalyzerRequest(
                    policyConfig={
                        name: pb.PolicyConfig(
                            enforcementLevel=pb.MANDATORY, properties=json_format.ParseDict(values, struct_pb2.Struct())
                        )
                        for name, values in prod.items()
                        if isinstance(values, dict)
                    }
                )
            )
            response = analyzer.Analyze(
                pb.AnalyzeRequest(
                    type=CLUSTER,
                    name="gpu-prod",
                    urn=urn(CLUSTER, "gpu-prod"),
                    properties=json_format.ParseDict(
                        cluster(gpu_max_nodes=6, gpu_autohealing=True), struct_pb2.Struct()
                    ),
                    options=pb.AnalyzerResourceOptions(protect=False),
                )
            )
    finally:
        pack.terminate()
        pack.wait(10)

    reported = {d.policyName: (d.enforcementLevel, d.message) for d in response.diagnostics}
    assert set(reported) == {"gpu-pool-autohealing-off", "production-cluster-protected", "gpu-pool-hourly-budget"}
    assert {level for level, _ in reported.values()} == {pb.MANDATORY}
    assert "can cost up to 192.00/hour" in reported["gpu-pool-hourly-budget"][1]
