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
    # The shortest lead time a pool may state (25 min), so that the window's floor can show above it.
    assert derived([workload(scaleDownStabilizationSeconds=900)], provisionMinutes=25)[
        "scale-down-unneeded-time"] == "25m"
    # 25 min of HPA stabilisation: the node waits 25 + 5 minutes before it counts as unneeded.
    assert derived([workload(scaleDownStabilizationSeconds=1500)], provisionMinutes=25)[
        "scale-down-unneeded-time"] == "30m"
    # Scale to zero adds KEDA's cooldown on top of the HPA window.
    to_zero = workload(minReplicas=0, cooldownPeriod=900, scaleDownStabilizationSeconds=900,
                       wakeTrigger={"query": "sum(queue)", "threshold": 5})
    assert derived([to_zero], provisionMinutes=25)["scale-down-unneeded-time"] == "35m"


def test_idle_nodes_stay_as_long_as_a_replacement_takes() -> None:
    """Rent or buy: an idle node stays for the pool's lead time, since removing it and ordering it again costs at
    least that much billed boot (renderers/gcore_cluster.py)."""
    assert derived([workload()])["scale-down-unneeded-time"] == "35m"  # the default lead time, 25 + 10
    assert derived([workload()], provisionMinutes=50)["scale-down-unneeded-time"] == "50m"
    # Several pools: the flag is the cluster's, so the slowest pool's lead time.
    cfg = load_stack_config({"cluster": CLUSTER, "workloads": [workload(pool="gpu-a")], "gpuPools": [
        {"name": "gpu-a", "flavor": "bm3-ai-1xlarge-h100-80-8", "maxNodes": 2, "provisionMinutes": 30},
        {"name": "gpu-b", "flavor": "bm3-ai-1xlarge-h100-80-8", "maxNodes": 2, "provisionMinutes": 45}]})
    assert autoscaler_config(cfg.pools, cfg.workloads, {})["scale-down-unneeded-time"] == "45m"


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
