"""Cluster Autoscaler flags derived from the GPU pool and the workloads (renderers/gcore_cluster.py)."""

from __future__ import annotations

from typing import Any

from renderers.gcore_cluster import autoscaler_config
from stackconfig import load_stack_config

CLUSTER = {"name": "gpu-dev", "projectName": "Default", "regionName": "Luxembourg-2", "keypair": "team"}


def derived(workloads: list[dict[str, Any]], **pool: Any) -> dict[str, str]:
    cfg = load_stack_config({"cluster": CLUSTER, "gpuPool": pool, "workloads": workloads})
    return autoscaler_config(cfg.pools, cfg.workloads, cfg.cluster.autoscaler)


def workload(**extra: Any) -> dict[str, Any]:
    return {"name": "w", "image": "registry.example.com/w:1", "maxReplicas": 4, **extra}


def test_provision_time_covers_bare_metal_boot() -> None:
    flags = derived([workload()])
    assert flags["max-node-provision-time"] == "35m"
    assert derived([workload()], provisionMinutes=50)["max-node-provision-time"] == "50m"


def test_nodes_outlive_the_longest_scale_down_window() -> None:
    assert derived([workload()])["scale-down-unneeded-time"] == "10m"
    # 15 min of HPA stabilisation: the node waits 15 + 5 minutes before it counts as unneeded.
    assert derived([workload(scaleDownStabilizationSeconds=900)])["scale-down-unneeded-time"] == "20m"
    # Scale to zero adds KEDA's cooldown on top of the HPA window.
    to_zero = workload(minReplicas=0, cooldownPeriod=600, scaleDownStabilizationSeconds=600,
                       wakeTrigger={"query": "sum(queue)", "threshold": 5})
    assert derived([to_zero])["scale-down-unneeded-time"] == "25m"


def test_fresh_nodes_are_not_judged_before_their_gpus_appear() -> None:
    assert derived([workload()])["scale-down-delay-after-add"] == "17m"
    assert derived([workload()], provisionMinutes=25)["scale-down-delay-after-add"] == "15m"


def test_explicit_flags_win() -> None:
    cfg = load_stack_config(
        {"cluster": {**CLUSTER, "autoscaler": {"scale-down-unneeded-time": "30m", "scan-interval": "20s"}},
         "workloads": [workload()]}
    )
    flags = autoscaler_config(cfg.pools, cfg.workloads, cfg.cluster.autoscaler)
    assert flags["scale-down-unneeded-time"] == "30m"
    assert flags["scan-interval"] == "20s"
    assert all(isinstance(v, str) for v in flags.values()), "Gcore's autoscaler_config is string -> string"
