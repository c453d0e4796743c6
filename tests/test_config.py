"""Every config rule: the bad value is refused with a message naming the key, the value and the fix."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from offline.engine import Recording
from stackconfig import ConfigError, load_stack_config

BASE: dict[str, Any] = {
    "cluster": {"name": "gpu-dev", "projectName": "Default", "regionName": "Luxembourg-2", "keypair": "team"},
    "gpuPool": {"flavor": "bm3-ai-1xlarge-h100-80-8", "minNodes": 1, "maxNodes": 2},
    "workloads": [{"name": "inference", "image": "registry.example.com/app:1.4.2", "maxReplicas": 8}],
}


def config(**changes: Any) -> dict[str, Any]:
    """BASE with dotted-path changes: config(**{"gpuPool.minNodes": 0}); a value of ... deletes the key."""
    return apply_changes(copy.deepcopy(BASE), changes)


def apply_changes(raw: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Set each dotted path (`workloads.0.minReplicas`) in `raw`, in place; a value of ... deletes the key."""
    for path, value in changes.items():
        node: Any = raw
        parts = [int(p) if p.isdigit() else p for p in path.split(".")]
        for part in parts[:-1]:
            node = node[part]
        if value is ...:
            del node[parts[-1]]
        else:
            node[parts[-1]] = value
    return raw


def problems(raw: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as exc:
        load_stack_config(raw)
    return str(exc.value)


def test_base_is_valid_and_derives_gpus_from_flavor() -> None:
    cfg = load_stack_config(BASE)
    assert cfg.pools[0].gpus == 8
    assert cfg.max_gpus == 16
    assert cfg.workloads[0].fallback == 1
    assert cfg.cluster.version == "v1.35.3"


def test_gpus_per_node_is_given_with_an_acknowledged_unlisted_flavor() -> None:
    unlisted = {"gpuPool.flavor": "bm4-ai-1xlarge-b200-180-8", "gpuPool.gpusPerNode": 8,
                "gpuPool.acceptUnlistedFlavor": True}
    assert load_stack_config(config(**unlisted)).pools[0].gpus == 8


def test_config_objects_are_frozen() -> None:
    cfg = load_stack_config(BASE)
    with pytest.raises(ValueError):
        cfg.pools[0].max_nodes = 100  # type: ignore[misc]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"cluster.name": "GPU_cluster"}, ["cluster.name", "'GPU_cluster'", "2-20 characters"]),
        ({"cluster.name": "a-much-too-long-cluster-name"}, ["cluster.name", "a-much-too-long-cluster-name"]),
        ({"cluster.version": "1.35.3"}, ["cluster.version", "'1.35.3'", "write 'v1.35.3'"]),
        ({"cluster.version": "v1.28.6"}, ["cluster.version", "'v1.28.6'", "not a version Gcore offers", "v1.35.3"]),
        ({"cluster.projectId": 1}, ["cluster.projectId/projectName", "exactly once"]),
        ({"cluster.regionName": ...}, ["cluster.regionId/regionName", "exactly once"]),
        ({"cluster.subnet": "subnet-1"}, ["cluster.subnet", "without cluster.network"]),
        ({"cluster.autoscaler": {"scale-down-unneded-time": "5m"}},
         ["cluster.autoscaler.scale-down-unneded-time", "not a Cluster Autoscaler option"]),
        ({"gpuPool.name": "GPU"}, ["gpuPool.name", "'GPU'"]),
        ({"gpuPool.minNodes": 0}, ["gpuPool.minNodes", "0", "≥ 1"]),
        ({"gpuPool.maxNodes": 1}, ["gpuPool.maxNodes", "1", "greater than gpuPool.minNodes (1)", "at least 2"]),
        ({"gpuPool.flavor": "g1-gpu-1xlarge-4"}, ["gpuPool.flavor", "'g1-gpu-1xlarge-4'", "bare-metal GPU flavor"]),
        ({"gpuPool.flavor": "bm3-ai-custom"}, ["gpuPool.flavor", "'bm3-ai-custom'", "not in the table",
                                                "gpuPool.acceptUnlistedFlavor: true"]),
        ({"gpuPool.taints": {"nvidia.com/gpu": "NoSchedule"}}, ["gpuPool.taints", "value:Effect"]),
        ({"gpuPool.labels": {"bad key!": "x"}}, ["gpuPool.labels", "'bad key!'"]),
        ({"systemPool": {"flavor": "bm3-ai-1xlarge-h100-80-8"}}, ["systemPool.flavor", "not a VM flavor"]),
        ({"systemPool": {"enabled": False}}, ["systemPool.enabled", "tainted GPU pool"]),
        ({"systemPool": {"name": "gpu"}}, ["systemPool.name", "GPU pool's name"]),
        ({"workloads.0.minReplicas": 9}, ["workloads[0].minReplicas", "9", "greater than maxReplicas (8)"]),
        ({"workloads.0.targetUtilization": 0}, ["workloads[0].targetUtilization", "0", "> 0"]),
        ({"workloads.0.targetUtilization": 101}, ["workloads[0].targetUtilization", "101", "≤ 100"]),
        ({"workloads.0.gpusPerPod": 9}, ["workloads[0].gpusPerPod", "9", "exceeds the GPUs of one pool node (8)"]),
        ({"workloads.0.maxReplicas": 17}, ["workloads[0].maxReplicas", "17", "lower maxReplicas to 16"]),
        ({"workloads.0.gpusPerPod": 3, "workloads.0.maxReplicas": 5},
         ["workloads[0].maxReplicas", "2 node(s) hold 2 pod(s) of 3 GPU(s) per node, 4 in all",
          "lower maxReplicas to 4"]),
        # A key with no value reads "(not set)", never Python's None.
        ({"gpuPool.flavor": "bm3-ai-9xlarge-x100-80-8", "gpuPool.acceptUnlistedFlavor": True},
         ["gpuPool.gpusPerNode: (not set) is required with gpuPool.acceptUnlistedFlavor"]),
        ({"workloads.0.image": "registry.example.com/app:latest"}, ["workloads[0].image", "tagged 'latest'"]),
        ({"workloads.0.image": "registry.example.com:5000/app"}, ["workloads[0].image", "has no tag"]),
        ({"workloads.0.image": "registry.example.com/app:LATEST"}, ["workloads[0].image", "tagged 'latest'"]),
        ({"workloads.0.image": "registry.example.com/app@sha256:abc"}, ["workloads[0].image", "64 lowercase hex"]),
        ({"workloads.0.minReplicas": 0}, ["workloads[0].minReplicas", "cannot wake", "workloads[0].wakeTrigger"]),
        ({"workloads.0.name": "Inference"}, ["workloads[0].name", "'Inference'", "DNS-1035", "'inference'"]),
        ({"workloads.0.name": "x" * 41}, ["workloads[0].name", "at most 40"]),
        ({"workloads.0.namespace": "kube-system"}, ["workloads[0].namespace", "created by Kubernetes itself"]),
        ({"workloads.0.fallbackReplicas": 9}, ["workloads[0].fallbackReplicas", "outside minReplicas..maxReplicas"]),
        ({"workloads.0.env": {"1BAD": "x"}}, ["workloads[0].env", "'1BAD'"]),
        ({"charts": {"keda": "2.17.0"}}, ["charts.keda", "'2.17.0'", "supports Kubernetes 1.30-1.32, not v1.35.3"]),
        ({"charts": {"keda": "2.12.0"}}, ["charts.keda", "no known compatibility matrix"]),
        ({"charts": {"keda": "2.20"}}, ["charts.keda", "not an exact chart version"]),
        ({"charts": {"gpuOperator": "v25.10.1"}, "cluster.version": "v1.36.1"},
         ["charts.gpuOperator", "'v25.10.1'", "supports Kubernetes 1.30-1.35, not v1.36.1"]),
        ({"charts": {"gpuOperator": "v23.9.1"}}, ["charts.gpuOperator", "'v23.9.1'", "no known compatibility matrix"]),
        ({"charts": {"kubePrometheusStack": "56.0.0"}}, ["charts.kubePrometheusStack", "not a supported major"]),
        ({"monitoring": {"retention": "15 days"}}, ["monitoring.retention", "'15 days'"]),
        ({"monitoring": {"storageSize": "200GB"}}, ["monitoring.storageSize", "'200GB'"]),
    ],
)
def test_bad_value_is_refused_with_key_value_and_fix(changes: dict[str, Any], expected: list[str]) -> None:
    message = problems(config(**changes))
    for fragment in expected:
        assert fragment in message, message
    assert "Fix:" in message


def test_no_workload_may_use_a_namespace_the_platform_creates(recordings: dict[str, Recording]) -> None:
    """A workload namespace is created by WorkloadNamespaces: one the platform creates too would be a second
    Namespace of the same name (with its own Pod Security level), which the cluster refuses mid-`pulumi up`."""
    for rec in recordings.values():
        workload_namespaces = set(rec.outputs["namespaces"]["workloads"])
        platform = {ns.inputs["metadata"]["name"] for ns in rec.of_type("kubernetes:core/v1:Namespace")}
        platform -= workload_namespaces
        assert {"gpu-operator", "keda", "monitoring", "node-exporter"} <= platform
        for namespace in sorted(platform):
            message = problems(config(**{"workloads.0.namespace": namespace}))
            assert f"workloads[0].namespace: '{namespace}'" in message, message


def test_kubernetes_1_36_is_refused_with_the_default_keda() -> None:
    message = problems(config(**{"cluster.version": "v1.36.1"}))
    assert "charts.keda" in message and "not v1.36.1" in message


def test_total_gpu_capacity_over_all_workloads() -> None:
    second = {"name": "batch", "image": "registry.example.com/batch:2.0", "gpusPerPod": 2, "maxReplicas": 5}
    message = problems(config(workloads=[*BASE["workloads"], second]))
    assert "workloads[*].maxReplicas" in message
    assert "18" in message and "capacity of 16" in message


def test_scale_to_zero_is_allowed_with_a_wake_trigger() -> None:
    cfg = load_stack_config(
        config(**{"workloads.0.minReplicas": 0,
                  "workloads.0.wakeTrigger": {"query": "sum(queue_depth)", "threshold": 10}})
    )
    assert cfg.workloads[0].min_replicas == 0
    assert cfg.workloads[0].fallback == 1


def test_duplicate_workload_names_are_refused() -> None:
    message = problems(config(workloads=[BASE["workloads"][0], BASE["workloads"][0]]))
    assert "workloads[1].name" in message and "already used by workloads[0]" in message


@pytest.mark.parametrize(
    ("raw", "key", "hint"),
    [
        ({**BASE, "gpupool": {}}, "gpupool", "did you mean 'gpuPool'"),
        (config(**{"gpuPool.flavour": "x"}), "gpuPool.flavour", "did you mean 'flavor'"),
        (config(**{"workloads.0.gpuPerPod": 2}), "workloads[0].gpuPerPod", "did you mean 'gpusPerPod'"),
        (config(**{"cluster.regoinName": "x"}), "cluster.regoinName", "did you mean 'regionName'"),
    ],
)
def test_unknown_keys_are_refused_with_a_suggestion(raw: dict[str, Any], key: str, hint: str) -> None:
    message = problems(raw)
    assert key in message and "not a known key" in message and hint in message


def test_missing_required_keys_are_named() -> None:
    message = problems(config(**{"cluster.keypair": ...}))
    assert "cluster.keypair" in message and "required" in message


def test_all_problems_are_reported_at_once() -> None:
    message = problems(config(**{"gpuPool.minNodes": 0, "workloads.0.image": "app:latest"}))
    assert "gpuPool.minNodes" in message and "workloads[0].image" in message
    message = problems(config(**{"gpuPool.maxNodes": 1, "workloads.0.minReplicas": 9}))
    assert "gpuPool.maxNodes" in message and "workloads[0].minReplicas" in message


def test_autoscaler_values_are_quoted_strings() -> None:
    cfg = load_stack_config(config(**{"cluster.autoscaler": {"scale-down-enabled": True, "max-empty-bulk-delete": 10}}))
    assert cfg.cluster.autoscaler == {"scale-down-enabled": "true", "max-empty-bulk-delete": "10"}


def test_bad_stack_config_registers_nothing(record: Callable[..., Recording]) -> None:
    seen = Recording("dev")
    with pytest.raises(ConfigError) as exc:
        record("dev", into=seen, gpuPool={"minNodes": 2, "maxNodes": 2})
    assert "gpuPool.maxNodes" in str(exc.value)
    assert seen.resources == []


def test_unknown_project_key_in_stack_file_is_refused(record: Callable[..., Recording]) -> None:
    with pytest.raises(ConfigError, match="workload.*did you mean 'workloads'"):
        record("dev", workload=[])
