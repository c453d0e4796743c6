"""`gpuPools` (or the single `gpuPool` of older stacks): the bare-metal GPU pools, their spare GPUs (`headroom`)
and their scheduled windows."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from stackconfig import flavors
from stackconfig.values import Cron, GcoreName, Labels, Model, Taints, TimeZone, invalid
from stacknames import (
    GPU_READY_TAINT_KEY,
    GPU_READY_TAINT_SPEC,
    GPU_RESOURCE,
    POOL_LABEL,
    SPOT_TAINT_KEY,
    SPOT_TAINT_SPEC,
)

#: Default price estimate per GPU-hour: policy/config/*.json `pricePerNodeHour` 32.0 / 8 GPUs.
DEFAULT_PRICE_PER_GPU_HOUR = 4.0
DEFAULT_POOL_NAME = "gpu"
#: Bounds of every count in a pool, checked before a rule lists them (`headroom.gpus: 1000000000` ran out of memory).
MAX_NODES, MAX_GPUS_PER_NODE = 200, 16
MAX_POOL_GPUS = MAX_NODES * MAX_GPUS_PER_NODE
DEFAULT_POOL_TAINTS = {GPU_RESOURCE: "present:NoSchedule"}
#: Gcore: a new bare-metal GPU node takes "up to 20–25 minutes" until it is Ready, and its GPUs become allocatable
#: 5–10 minutes later (Gcore docs, "Configure GPU autoscaling for Kubernetes",
#: https://gcore.com/docs/cloud/kubernetes/clusters/autoscaling/configure-gpu-autoscaling-for-kubernetes).
BARE_METAL_READY_MINUTES = 25
GPUS_ALLOCATABLE_MINUTES = 10
DEFAULT_PROVISION_MINUTES = BARE_METAL_READY_MINUTES + GPUS_ALLOCATABLE_MINUTES


def _provision_minutes(value: int) -> int:
    """The floor is the node's own boot, not a guess: `max-node-provision-time` is set from this value, and the
    Cluster Autoscaler deletes a node that has not registered by then and backs the pool off (kubernetes/autoscaler
    cluster-autoscaler/FAQ.md, `--max-node-provision-time`). Below Gcore's 25 minutes every bare-metal node that
    takes the documented time would be deleted while it boots, and the pool would never grow."""
    if value < BARE_METAL_READY_MINUTES:
        raise invalid(
            f"is shorter than a bare-metal GPU node takes to boot (Gcore: up to 20–25 minutes until Ready, GPUs "
            f"allocatable {GPUS_ALLOCATABLE_MINUTES} minutes later); the autoscaler's max-node-provision-time is "
            "set from it and would delete every node still booting, so the pool would never grow",
            f"use at least {BARE_METAL_READY_MINUTES} (default {DEFAULT_PROVISION_MINUTES}), or remove the key",
        )
    return value


ProvisionMinutes = Annotated[int, Field(le=120), AfterValidator(_provision_minutes)]


class ScheduleConfig(Model):
    """A recurring window of minimum capacity, rendered as a KEDA `cron` trigger.

    From `start` until `end` (both cron, in `timezone`) the target holds at least `minReplicas` replicas:
    for a workload its pods, for `gpuPool.headroom` its placeholder pods (each `podGpus` GPUs).
    """

    start: Cron
    end: Cron
    timezone: TimeZone = "UTC"
    min_replicas: int = Field(ge=1, le=MAX_POOL_GPUS)


class HeadroomConfig(Model):
    """Spare GPUs held by low-priority placeholder pods, so that a burst starts in seconds, not 30 minutes.

    `gpus` are held at all times (0 with `schedules`: only in their windows); each placeholder pod holds
    `podGpus` GPUs (default: the largest `gpusPerPod` of the workloads, see `StackConfig.headroom_pod_gpus`).
    """

    gpus: int = Field(ge=0, le=MAX_POOL_GPUS)
    pod_gpus: int | None = Field(default=None, ge=1, le=MAX_GPUS_PER_NODE)
    schedules: list[ScheduleConfig] = Field(default_factory=list)


def _spot_default(data: dict[str, Any]) -> bool:
    """Spot when the flavor table says so: a spot flavor is spot capacity whether or not the stack says it."""
    return bool(flavors.is_spot(str(data.get("flavor", ""))))


def _labels_default(data: dict[str, Any]) -> dict[str, str]:
    """`{platform.gcore-gpu/pool: <name>}`: one label per pool, so each pool's workloads select only its nodes (the
    single pool of older stacks is named `gpu`, so its label is what it always was)."""
    return {POOL_LABEL: str(data.get("name", DEFAULT_POOL_NAME))}


def _taints_default(data: dict[str, Any]) -> dict[str, str]:
    """`nvidia.com/gpu: present:NoSchedule` (only GPU pods land on a GPU pool); a spot pool also carries the spot
    taint, which only the workloads that tolerate interruption tolerate."""
    spot = data.get("spot")
    return {**DEFAULT_POOL_TAINTS, **({SPOT_TAINT_KEY: SPOT_TAINT_SPEC} if spot else {})}


class GpuPoolConfig(Model):
    """A bare-metal GPU pool; its keys are documented in gpu_platform/cluster.py `GpuPool` (the component's schema).
    Changing flavor or publicIpv4 RECREATES the pool (20-25 min, billed)."""

    name: GcoreName = DEFAULT_POOL_NAME
    flavor: str = "bm3-ai-1xlarge-h100-80-8"
    gpus_per_node: int | None = Field(default=None, ge=1, le=MAX_GPUS_PER_NODE)
    spot: bool = Field(default_factory=_spot_default)
    min_nodes: int = Field(default=1, ge=1, le=MAX_NODES)
    max_nodes: int = Field(default=2, ge=1, le=MAX_NODES)
    public_ipv4: bool = False
    labels: Labels = Field(default_factory=_labels_default)
    taints: Taints = Field(default_factory=_taints_default)
    provision_minutes: ProvisionMinutes = DEFAULT_PROVISION_MINUTES
    accept_unlisted_flavor: bool = False
    #: Nodes register with the start-up taint `GPU_READY_TAINT_KEY` and the gate DaemonSet removes it once all their
    #: GPUs are allocatable, so the Cluster Autoscaler counts a Ready node still installing its GPU stack as coming
    #: instead of ordering another (docs/gpu-pools.md, "The GPU-ready gate"). On by default: without it every scale-up
    #: risks a duplicate 8-GPU node unless Gcore's autoscaler knows the pool's GPU label, which is unverified. Off
    #: for a pool whose nodes Gcore would re-taint while they run (also unverified).
    gpu_ready_gate: bool = True
    #: Spare GPUs held by placeholder pods (issue 8); none by default.
    headroom: HeadroomConfig | None = None
    #: Estimated price of one GPU-hour (billing currency); prices the headroom in the stack outputs.
    price_per_gpu_hour: float = Field(default=DEFAULT_PRICE_PER_GPU_HOUR, gt=0)

    @property
    def node_taints(self) -> dict[str, str]:
        """The taints Gcore registers the pool's nodes with: the pool's own (which its pods tolerate) and, with the
        gate, the start-up taint that no workload tolerates and the gate removes."""
        gate = {GPU_READY_TAINT_KEY: GPU_READY_TAINT_SPEC} if self.gpu_ready_gate else {}
        return {**self.taints, **gate}

    @property
    def gpus(self) -> int:
        """GPUs per node: explicit, else from the flavor table (stackconfig/flavors.py), never from the id."""
        if self.gpus_per_node is not None:
            return self.gpus_per_node
        return flavors.gpus_of(self.flavor) or 0


class GpuPoolItem(GpuPoolConfig):
    """One item of `gpuPools`: a pool's name is required there (it is how workloads choose it, and the name Gcore
    matches pools by)."""

    name: GcoreName
