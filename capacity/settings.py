"""The numbers the what-if simulator runs on, and the one function that reads them from a stack's config.

`SimSettings` is the simulator's own frozen view: every delay in seconds, every rule as a value. It is
built by `settings_from_config` from the very objects `pulumi up` uses: the validated `StackConfig`,
`renderers.workload_specs.scaled_object_spec` (the ScaledObject and its HPA behaviour as rendered), and
`renderers.gcore_cluster.autoscaler_config` (the Cluster Autoscaler flags as sent to Gcore). Nothing here
re-derives a formula of those functions; it parses what they return.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from capacity.service import ServiceModel
from renderers import dcgm
from stackconfig.gpu_pool import DEFAULT_PRICE_PER_GPU_HOUR
from stackconfig.units import go_duration_seconds as stackconfig_duration
from stackconfig.what_if import WhatIfConfig
from stacknames import AUTOSCALER_EXPENDABLE_CUTOFF, HEADROOM_PRIORITY

#: Cluster Autoscaler defaults for the flags the stack does not set (kubernetes/autoscaler,
#: cluster-autoscaler/FAQ.md "What are the parameters to CA?", @55c37cd5): scan-interval 10s,
#: scale-down-unneeded-time 10m, scale-down-delay-after-add 10m, -after-delete 0s, -after-failure 3m,
#: max-node-provision-time 15m, expendable-pods-priority-cutoff -10, max-empty-bulk-delete 10,
#: scale-down-gpu-utilization-threshold 0.5 (not settable on Gcore), initial-node-group-backoff-duration 5m.
CA_DEFAULTS: dict[str, str] = {
    "scan-interval": "10s",
    "scale-down-unneeded-time": "10m",
    "scale-down-delay-after-add": "10m",
    "scale-down-delay-after-delete": "0s",
    "scale-down-delay-after-failure": "3m",
    "max-node-provision-time": "15m",
    "expendable-pods-priority-cutoff": str(AUTOSCALER_EXPENDABLE_CUTOFF),
    "max-empty-bulk-delete": "10",
    "scale-down-enabled": "true",
}
CA_GPU_UTILIZATION_THRESHOLD = 0.5
CA_NODE_GROUP_BACKOFF_SECONDS = 300
#: The HPA's default tolerance (--horizontal-pod-autoscaler-tolerance) and sync period
#: (kubernetes pkg/controller/podautoscaler/config/v1alpha1/defaults.go: HorizontalPodAutoscalerSyncPeriod = 15s).
HPA_TOLERANCE = 0.1
HPA_SYNC_SECONDS = 15
#: KEDA's defaults for a ScaledObject that sets neither (keda-docs reference/scaledobject-spec.md).
KEDA_POLLING_INTERVAL = 30
KEDA_COOLDOWN_PERIOD = 300


def go_duration_seconds(value: str) -> float:
    """Seconds of an autoscaler flag ("35m", "1h30m", "10s"), parsed by the config model's own rule."""
    seconds = stackconfig_duration(value.strip())
    if seconds is None:
        raise ValueError(f"not a Go duration: {value!r}")
    return seconds


def prom_duration_seconds(value: str) -> float:
    """Prometheus durations as the project writes them ("15s", "1m")."""
    return go_duration_seconds(value)


def _ca_seconds(flag: str) -> int:
    return round(go_duration_seconds(CA_DEFAULTS[flag]))


def seconds_range(minutes: tuple[float, float]) -> tuple[int, int]:
    """A `[low, high]` range in minutes (the what-if's provisioning draws) in whole seconds."""
    return round(minutes[0] * 60), round(minutes[1] * 60)


#: The what-if section's defaults, for a simulation built without a stack.
_WHAT_IF = WhatIfConfig()


@dataclass(frozen=True)
class Policy:
    """One HPA scaling policy: `type` Pods or Percent, `value`, over `period` seconds."""

    type: str
    value: int
    period: int


@dataclass(frozen=True)
class Behavior:
    """One direction of `spec.behavior` of the HPA (autoscaling/v2 HPAScalingRules)."""

    stabilization: int
    policies: tuple[Policy, ...]
    select: str = "Max"

    @classmethod
    def parse(cls, rules: dict[str, Any]) -> Behavior:
        return cls(
            stabilization=int(rules.get("stabilizationWindowSeconds", 0)),
            policies=tuple(
                Policy(p["type"], int(p["value"]), int(p["periodSeconds"])) for p in rules.get("policies", [])
            ),
            select=str(rules.get("selectPolicy", "Max")),
        )


@dataclass(frozen=True)
class CronWindow:
    """A KEDA cron trigger's window (`start`, `end` 5-field cron, IANA `timezone`) holding `value`.

    For workload schedules `value` is the minimum replicas inside the window; for headroom schedules it is
    the GPUs the placeholders hold inside it.
    """

    start: str
    end: str
    timezone: str
    value: int


@dataclass(frozen=True)
class SimSettings:
    """Everything the simulator needs, in seconds, GPUs and replicas."""

    # GPU pool
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    # workload
    gpus_per_pod: int
    min_replicas: int
    max_replicas: int
    #: Per-replica AverageValue target of the utilisation trigger (target% x gpusPerPod).
    threshold: float
    scale_up: Behavior
    scale_down: Behavior
    tolerance: float = HPA_TOLERANCE
    hpa_sync: int = HPA_SYNC_SECONDS
    polling_interval: int = KEDA_POLLING_INTERVAL
    cooldown_period: int = KEDA_COOLDOWN_PERIOD
    replica_windows: tuple[CronWindow, ...] = ()
    #: GPUs held by the other workloads of the stack (at their minReplicas) on the same pool.
    reserved_pods: tuple[int, ...] = ()
    # metric path (renderers/dcgm.py)
    exporter_refresh: int = round(dcgm.EXPORTER_COLLECT_INTERVAL_MS / 1000)
    scrape_interval: int = round(prom_duration_seconds(dcgm.SCRAPE_INTERVAL))
    query_window: int = round(prom_duration_seconds(dcgm.QUERY_WINDOW))
    # cluster autoscaler (its defaults, CA_DEFAULTS)
    scan_interval: int = _ca_seconds("scan-interval")
    max_node_provision: int = _ca_seconds("max-node-provision-time")
    scale_down_unneeded: int = _ca_seconds("scale-down-unneeded-time")
    scale_down_delay_after_add: int = _ca_seconds("scale-down-delay-after-add")
    scale_down_delay_after_delete: int = _ca_seconds("scale-down-delay-after-delete")
    scale_down_delay_after_failure: int = _ca_seconds("scale-down-delay-after-failure")
    scale_down_enabled: bool = CA_DEFAULTS["scale-down-enabled"] == "true"
    max_empty_bulk_delete: int = int(CA_DEFAULTS["max-empty-bulk-delete"])
    gpu_utilization_threshold: float = CA_GPU_UTILIZATION_THRESHOLD
    expendable_cutoff: int = AUTOSCALER_EXPENDABLE_CUTOFF
    node_group_backoff: int = CA_NODE_GROUP_BACKOFF_SECONDS
    # provisioning (drawn uniformly from these ranges with the run's seed; defaults: WhatIfConfig's)
    node_ready_range: tuple[int, int] = seconds_range(_WHAT_IF.node_ready_minutes)
    gpu_ready_range: tuple[int, int] = seconds_range(_WHAT_IF.gpu_ready_minutes)
    pod_start: int = _WHAT_IF.pod_start_seconds
    # headroom: placeholder pods (priority `placeholder_priority`) holding `headroom_gpus` in pods of
    # `placeholder_gpus`, preempted by real pods; `headroom_windows` change the GPUs held inside cron windows.
    headroom_gpus: int = 0
    placeholder_gpus: int = 1
    placeholder_priority: int = HEADROOM_PRIORITY
    headroom_windows: tuple[CronWindow, ...] = ()
    # money and clock
    price_per_gpu_hour: float = DEFAULT_PRICE_PER_GPU_HOUR
    start: datetime = field(default_factory=lambda: datetime.fromisoformat(_WHAT_IF.start))
    #: Simulation step (s); every control-loop period must be a multiple of it.
    tick: int = 5
    #: A serving profile's service model (capacity/service.py): the run reports latency-objective attainment
    #: and goodput; with `scale_on_service` the HPA also follows the profile's triggers.
    service: ServiceModel | None = None
    scale_on_service: bool = False
    #: Whether the autoscaler counts a registered node as coming until its GPUs are allocatable (it knows the
    #: node's GPU label, kubernetes/autoscaler PR #461, or a start-up taint holds the node until the GPU Operator
    #: validated it). False replays the duplicate scale-ups of NVIDIA/gpu-operator#708: a Ready node with no
    #: allocatable GPU looks full, and the Pending pods order another.
    gpu_aware_autoscaler: bool = True

    def as_json(self) -> dict[str, Any]:
        """The effective values, camelCase, for the result's `settings`."""
        def camel(name: str) -> str:
            head, *rest = name.split("_")
            return head + "".join(p.title() for p in rest)

        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if isinstance(value, datetime):
                value = value.isoformat()
            out[camel(key)] = value
        return out
