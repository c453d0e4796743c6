"""The numbers the what-if simulator runs on, and the one function that reads them from a stack's config.

`SimSettings` is the simulator's own frozen view: every delay in seconds, every rule as a value. It is
built by `settings_from_config` from the very objects `pulumi up` uses: the validated `StackConfig`,
`renderers.workload_specs.scaled_object_spec` (the ScaledObject and its HPA behaviour as rendered), and
`renderers.gcore_cluster.autoscaler_config` (the Cluster Autoscaler flags as sent to Gcore). Nothing here
re-derives a formula of those functions; it parses what they return.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from stackconfig.units import go_duration_seconds as stackconfig_duration
from stacknames import AUTOSCALER_EXPENDABLE_CUTOFF

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

def go_duration_seconds(value: str) -> float:
    """Seconds of an autoscaler flag ("35m", "1h30m", "10s"), parsed by the config model's own rule."""
    seconds = stackconfig_duration(value.strip())
    if seconds is None:
        raise ValueError(f"not a Go duration: {value!r}")
    return seconds


def prom_duration_seconds(value: str) -> float:
    """Prometheus durations as the project writes them ("15s", "1m")."""
    return go_duration_seconds(value)


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
    tolerance: float = 0.1
    #: HPA --horizontal-pod-autoscaler-sync-period default (kubernetes pkg/controller/podautoscaler/config/
    #: v1alpha1/defaults.go: HorizontalPodAutoscalerSyncPeriod = 15s).
    hpa_sync: int = 15
    polling_interval: int = 30
    cooldown_period: int = 300
    replica_windows: tuple[CronWindow, ...] = ()
    #: GPUs held by the other workloads of the stack (at their minReplicas) on the same pool.
    reserved_pods: tuple[int, ...] = ()
    # metric path
    exporter_refresh: int = 10
    scrape_interval: int = 15
    query_window: int = 60
    # cluster autoscaler
    scan_interval: int = 10
    max_node_provision: int = 900
    scale_down_unneeded: int = 600
    scale_down_delay_after_add: int = 600
    scale_down_delay_after_delete: int = 0
    scale_down_delay_after_failure: int = 180
    scale_down_enabled: bool = True
    max_empty_bulk_delete: int = 10
    gpu_utilization_threshold: float = CA_GPU_UTILIZATION_THRESHOLD
    expendable_cutoff: int = -10
    node_group_backoff: int = CA_NODE_GROUP_BACKOFF_SECONDS
    # provisioning (drawn uniformly from these ranges with the run's seed)
    node_ready_range: tuple[int, int] = (20 * 60, 25 * 60)
    gpu_ready_range: tuple[int, int] = (5 * 60, 10 * 60)
    pod_start: int = 180
    # headroom: placeholder pods (priority `placeholder_priority`) holding `headroom_gpus` in pods of
    # `placeholder_gpus`, preempted by real pods; `headroom_windows` change the GPUs held inside cron windows.
    headroom_gpus: int = 0
    placeholder_gpus: int = 1
    placeholder_priority: int = -10
    headroom_windows: tuple[CronWindow, ...] = ()
    # money and clock
    price_per_gpu_hour: float = 4.0
    start: datetime = field(default_factory=lambda: datetime(2026, 1, 5, tzinfo=UTC))
    #: Simulation step (s); every control-loop period must be a multiple of it.
    tick: int = 5

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
