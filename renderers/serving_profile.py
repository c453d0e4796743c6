"""A serving profile's KEDA triggers (issue 21): the engine's own latency, queue and KV cache, from its metrics.

Three triggers, each an External metric of type `Value` on the workload's HPA. With `Value` the HPA asks for
`ceil(value / target × ready pods)`, where *ready* counts only Running and Ready pods (kubernetes/kubernetes
pkg/controller/podautoscaler/replica_calculator.go, `GetExternalMetricReplicas` -> `getUsageRatioReplicaCount`
-> `getReadyPodsCount`), and holds the count while `|1 - value / target|` is within its tolerance (0.1). That is
the credit for pods still starting: the engine's signals are measured on the ready pods that serve, the ask is
sized by those ready pods, and the HPA compares it with all replicas, starting ones included. While a round of
pods loads a model, the ready pods and the clamped signal stay what they were, so the ask stays what it was and
no second round is ordered; an `AverageValue` trigger on `replicas × ratio` would grow with the starting pods
and race to maxReplicas every sync. The ask per sync is at most `CLAMP` × the ready pods.

- `latency-objective`: the P90 TTFT and TPOT (histogram_quantile over 1-minute bucket rates of the workload's
  pods) divided by their objectives, the larger of the two, clamped at `CLAMP` and averaged over `SMOOTHING`
  (one outlier sample at the queueing knee must not poison the average, llm-d guides/workload-autoscaling
  README.slo-aware.md). That ratio `s` is mapped onto the HPA's target 1 with a hysteresis band: above
  `band.scaleUp` the value is `s / scaleUp` (scale up in proportion), below `band.scaleDown` it is
  `s / scaleDown` (scale down in proportion), in between it is exactly 1 (hold). No requests in the window reads
  0 (zero load), a histogram that is not there at all stays empty (an error, then the fallback).
- `queue-depth`: waiting requests per reporting pod over `serving.queuePerReplica`, clamped at `CLAMP`.
- `kv-cache`: KV-cache usage per reporting pod over `serving.kvCacheUsage` (at most 1 / kvCacheUsage).

Each has `activationThreshold: 0`: with `minReplicas: 0` any traffic keeps the workload awake, and none lets
KEDA take it to zero after `cooldownPeriod` (waking it needs a `wakeTrigger`: an engine with no pod exports
nothing). GPU utilisation stays in the ScaledObject as a guardrail at 100 % per GPU
(WorkloadConfig.gpu_target_utilization). Pure functions: renderers/scaling_triggers.py renders the triggers,
capacity/ simulates the same arithmetic, tests/test_serving_profile_metrics.py runs the same strings on Prometheus.
"""

from __future__ import annotations

from renderers import promql
from stackconfig.engines import ENGINES, EngineMetrics
from stackconfig.serving import ServingConfig, seconds
from stackconfig.workloads import WorkloadConfig
from stacknames import SERVING_TRIGGER_NAMES

LATENCY_TRIGGER, QUEUE_TRIGGER, KV_TRIGGER = SERVING_TRIGGER_NAMES
#: The rate window of the histograms: four 15 s scrapes of the PodMonitor.
RATE_WINDOW = "1m"
#: Smoothing of the clamped latency ratio: a subquery over this window at the scrape step.
SMOOTHING = "1m"
SMOOTHING_STEP = "15s"
#: Cap of every ratio: a signal past it already means "add capacity at the highest rate" (llm-d uses 2.0).
CLAMP = 2.0
QUANTILE = 0.9
#: The HPA target of every serving trigger (metricType Value): 1 means "as many replicas as are ready".
TARGET = 1.0


def engine(s: ServingConfig) -> EngineMetrics:
    assert s.engine is not None, "validated: a serving profile names its engine"
    return ENGINES[s.engine]


def p90_ratio(histogram: str, objective_seconds: float, selector: str) -> str:
    """P90 of a latency histogram over its objective; 0 when no request finished in the window (NaN from
    histogram_quantile), empty when the histogram is not scraped at all."""
    rate = f"[{RATE_WINDOW}]"
    quantile = f"histogram_quantile({QUANTILE}, sum by (le) (rate({histogram}_bucket{{{selector}}}{rate})))"
    idle = f"sum(rate({histogram}_count{{{selector}}}{rate})) * 0"
    return f"((({quantile}) >= 0) or on () ({idle})) / {promql.format_number(objective_seconds)}"


def latency_ratio_query(w: WorkloadConfig) -> str:
    """`s`: the larger of P90 TTFT / objective and P90 TPOT / objective, clamped at CLAMP, smoothed."""
    s = w.serving
    assert s is not None and s.latency_objective is not None
    e, o, sel = engine(s), s.latency_objective, promql.pods(w.name, w.namespace)
    parts = []
    for label, histogram, objective in (("ttft", e.ttft_histogram, o.ttft_p90), ("tpot", e.tpot_histogram, o.tpot_p90)):
        if objective is not None:
            parts.append(f'label_replace({p90_ratio(histogram, seconds(objective), sel)}, "slo", "{label}", "", "")')
    worst = f"max({' or '.join(parts)})"
    return f"avg_over_time(clamp_max({worst}, {promql.format_number(CLAMP)})[{SMOOTHING}:{SMOOTHING_STEP}])"


def banded(ratio: str, scale_up: float, scale_down: float) -> str:
    """The HPA's value for a ratio `s` with a hysteresis band: s/scaleUp above it, s/scaleDown below it, 1 in it.

    Written as `max(s/scaleUp, 1) × min(s/scaleDown, 1)`: above the band the second factor is 1, below it the
    first is, inside it both are; so `s` appears twice, not once per branch (PromQL has no `let`), and the query
    stays short enough to read in a `pulumi preview` diff. 0 stays 0 and an empty `s` stays empty."""
    up, down = promql.format_number(scale_up), promql.format_number(scale_down)
    return f"clamp_min(({ratio}) / {up}, 1) * clamp_max(({ratio}) / {down}, 1)"


def profile_queries(w: WorkloadConfig) -> list[tuple[str, str]]:
    """(trigger name, query) of the profile's triggers, in the ScaledObject's order: the banded latency ratio, the
    waiting requests per pod that reports them and the KV-cache usage (0-1) averaged over the pods that report it,
    each over its saturation level."""
    s = w.serving
    if s is None:
        return []
    pods, clamp = promql.pods(w.name, w.namespace), promql.format_number(CLAMP)
    waiting = f"avg_over_time({engine(s).queue_gauge}{{{pods}}}[{RATE_WINDOW}])"
    kv_cache = f"avg_over_time({engine(s).kv_cache_gauge}{{{pods}}}[{RATE_WINDOW}])"
    latency = ([(LATENCY_TRIGGER, banded(latency_ratio_query(w), s.band.scale_up, s.band.scale_down))]
               if s.latency_objective is not None else [])
    return [*latency,
            (QUEUE_TRIGGER, f"clamp_max((sum({waiting}) / count({waiting})) / "
                            f"{promql.format_number(s.queue_per_replica)}, {clamp})"),
            (KV_TRIGGER, f"avg({kv_cache}) / {promql.format_number(s.kv_cache_usage)}")]
