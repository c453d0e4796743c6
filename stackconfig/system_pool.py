"""`systemPool`: the VM pool for the platform's own pods."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stackconfig.gpu_pool import MAX_NODES
from stackconfig.values import GcoreName, Model


class SystemPoolConfig(Model):
    """A small VM pool for the platform's own pods (operators, KEDA, Prometheus, Grafana, CoreDNS).

    The GPU pool is tainted, so without this pool those pods have nowhere to run; and a GPU node that
    hosts Prometheus (local storage, non-DaemonSet pods) can never be scaled down by the autoscaler.
    """

    enabled: bool = True
    name: GcoreName = "system"
    flavor: str = "g1-standard-4-8"
    min_nodes: int = Field(default=1, ge=1, le=MAX_NODES)
    max_nodes: int = Field(default=3, ge=1, le=MAX_NODES)
    #: Gcore requires a server-group policy and a boot volume for VM pools (and forbids both for bare metal).
    servergroup_policy: Literal["anti-affinity", "soft-anti-affinity", "affinity"] = "soft-anti-affinity"
    boot_volume_size: int = Field(default=50, ge=10)
    boot_volume_type: Literal["standard", "ssd_hiiops", "cold", "ultra"] = "standard"
