"""A stack file's cluster and pools as the arguments of the package's GpuCluster (gpu_platform/cluster.py): its keys
as the stack file gives them (what it did not set stays unset, so the component's rules see what the stack checks
saw), each pool named, and the Cluster Autoscaler's flags as the program derives them from the pools and the
workloads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from gpu_platform import GpuClusterArgs
from stackconfig import StackConfig


def cluster_args(cfg: StackConfig, autoscaler: Mapping[str, str]) -> GpuClusterArgs:
    cluster = cfg.cluster.model_dump(exclude_unset=True, exclude={"existing"})
    # A pool's headroom and price are the platform's (placeholders, cost), not the cluster's.
    pools = [{**p.model_dump(exclude_unset=True, exclude={"headroom", "price_per_gpu_hour"}), "name": p.name}
             for p in cfg.pools]
    return cast(GpuClusterArgs, {"cluster": {**cluster, "autoscaler": dict(autoscaler)}, "gpu_pools": pools,
                                 "system_pool": cfg.system_pool.model_dump(exclude_unset=True),
                                 "protect": cfg.protect})
