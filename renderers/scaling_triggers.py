"""A workload's ScaledObject triggers, rendered here and nowhere else: the ScaledObject
(renderers/workload_specs.py), the `workloads` stack output (docs/outputs.md), the wanted-replicas and serving
recording rules and the component package's GpuWorkload all read this one list.

Order: the GPU trigger, the wake trigger, the workload's own triggers, a serving profile's, then the cron windows
of minimum replicas (the HPA takes the largest of all). Every Prometheus trigger has `ignoreNullValues: "false"`:
an empty result is an error and the ScaledObject's fallback, never zero load (kedacore/keda
pkg/scalers/prometheus_scaler.go). A workload at `minReplicas: 0` reads 0, not an error, from a query over its pods
while it has none (renderers/promql.py `zero_without_available_pods`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from renderers import promql, serving_profile
from stackconfig import ScheduleConfig, WorkloadConfig
from stackconfig.workloads import ServingTriggerConfig

#: With `minReplicas: 0`, GPUs at or below this utilisation (% per GPU, over one pod's GPUs) count as idle: the GPU
#: trigger is active only above it, so an idle pod's stray reading of 1 or 2 % does not keep the workload from ever
#: reaching zero (a Prometheus trigger is active iff its value > activationThreshold, default 0: kedacore/keda
#: v2.20.2 pkg/scalers/prometheus_scaler.go `GetMetricsAndActivity`). Busy GPUs stay active: scale-in to zero never
#: stops a pod that is still working, whatever the wake trigger says.
IDLE_GPU_UTILIZATION = 5


def _over_pods(w: WorkloadConfig, query: str) -> str:
    """A query over the workload's pods; 0 while a scale-to-zero workload has no pod."""
    return promql.zero_without_available_pods(query, w.name, w.namespace) if w.min_replicas == 0 else query


def gpu_query(w: WorkloadConfig) -> str:
    """The GPU trigger's query, as KEDA, the recording rules, the dashboards and the stack outputs show it."""
    return _over_pods(w, promql.gpu_utilization_query(w.name, w.namespace))


def serving_query(w: WorkloadConfig, t: ServingTriggerConfig) -> str:
    """One of the workload's own triggers: the sum over exactly its pods of one of their series, e.g.
    vllm:num_requests_waiting (the PodMonitor's targets carry the pod's `namespace` and `pod` labels)."""
    return _over_pods(w, f"sum(avg_over_time({t.metric}{{{promql.pods(w.name, w.namespace)}}}[{t.window}]))")


def _prometheus(name: str, metric_type: str, url: str, query: str, threshold: float,
                activation: float | None = None) -> dict[str, Any]:
    metadata = {"serverAddress": url, "query": query, "threshold": promql.format_number(threshold)}
    if activation is not None:
        metadata["activationThreshold"] = promql.format_number(activation)
    return {"type": "prometheus", "name": name, "metricType": metric_type,
            "metadata": {**metadata, "ignoreNullValues": "false", "unsafeSsl": "false"}}


def schedule_triggers(schedules: Sequence[ScheduleConfig]) -> list[dict[str, Any]]:
    """One KEDA `cron` trigger per window: from `start` to `end` (in `timezone`) the scaler reports
    `desiredReplicas`, and the HPA, taking the largest of its metrics, keeps at least that many replicas.
    Outside the window the trigger is inactive and the other triggers decide (keda.sh/docs/2.20/scalers/cron).
    """
    return [{"type": "cron", "name": f"schedule-{i}", "metadata": {
        "timezone": s.timezone, "start": s.start, "end": s.end, "desiredReplicas": str(s.min_replicas)}}
        for i, s in enumerate(schedules)]


def triggers(w: WorkloadConfig, prometheus_url: str) -> list[dict[str, Any]]:
    """The ScaledObject's `triggers`. The GPU trigger's threshold is per replica (`AverageValue`): the per-GPU
    target times GPUs per pod (renderers/promql.py). A serving profile's are `Value` triggers with target 1
    (renderers/serving_profile.py)."""
    zero = w.min_replicas == 0
    out = [_prometheus("gpu-utilization", "AverageValue", prometheus_url, gpu_query(w),
                       promql.threshold_value(w.gpu_target_utilization, w.gpus_per_pod),
                       promql.threshold_value(IDLE_GPU_UTILIZATION, w.gpus_per_pod) if zero else None)]
    if w.wake_trigger is not None:
        wake = w.wake_trigger
        out.append(_prometheus("demand", "AverageValue", prometheus_url, wake.query, wake.threshold,
                               wake.activation_threshold))
    out += [_prometheus(t.name, "AverageValue", prometheus_url, serving_query(w, t), t.threshold) for t in w.triggers]
    out += [_prometheus(name, "Value", prometheus_url, _over_pods(w, query), serving_profile.TARGET, 0)
            for name, query in serving_profile.profile_queries(w)]
    return out + schedule_triggers(w.schedules)


def scaling_triggers(w: WorkloadConfig) -> list[dict[str, Any]]:
    """The triggers without the Prometheus address, as the recording rules read them (`trigger_summary`)."""
    return trigger_summary(triggers(w, prometheus_url=""))


def trigger_summary(rendered: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A ScaledObject's triggers as the `workloads` stack output states them (docs/outputs.md).

    A `prometheus` trigger: `name`, `type`, `metricType`, `query`, `threshold` and `activationThreshold` (null when
    KEDA's default 0 applies), strings as in the ScaledObject. A `cron` window: `name`, `type`, `timezone`, `start`,
    `end`, `desiredReplicas`.
    """
    out: list[dict[str, Any]] = []
    for t in rendered:
        meta = t["metadata"]
        if t["type"] == "cron":
            out.append({"name": t["name"], "type": "cron",
                        **{k: meta[k] for k in ("timezone", "start", "end", "desiredReplicas")}})
        else:
            out.append({"name": t["name"], "type": t["type"], "metricType": t["metricType"], "query": meta["query"],
                        "threshold": meta["threshold"], "activationThreshold": meta.get("activationThreshold")})
    return out
