"""Recording rules of a serving profile (issue 21): what the dashboards and alerts read about a model server.

Each workload with `serving` gets its P90 TTFT and TPOT (the objectives' quantities), the smoothed latency ratio
the `latency-objective` trigger bands, the waiting requests per pod, the KV-cache usage, and the exact value
KEDA reads from each of the profile's triggers (label `trigger`), so a dashboard shows what the HPA sees. KEDA
itself runs its own queries (renderers/serving_profile.py): a rule group that fails to evaluate must not stop
the scaling. Pure functions: renderers/recording_rules.py appends `serving_rules(w)` per workload.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from renderers import promql, serving_profile
from renderers.scaling_triggers import scaling_triggers
from stackconfig import StackConfig, WorkloadConfig
from stackconfig.serving import seconds
from stacknames import SERVING_TRIGGER_NAMES

WL_TTFT_P90 = "workload:ttft_p90:seconds"
WL_TPOT_P90 = "workload:tpot_p90:seconds"
WL_LATENCY_RATIO = "workload:latency_objective_ratio:max"
WL_WAITING_PER_POD = "workload:requests_waiting_per_pod:avg"
WL_KV_CACHE = "workload:kv_cache_usage:avg"
WL_TRIGGER_VALUE = "workload:serving_trigger:value"

#: How long the smoothed ratio stays above 1 before the alert fires: longer than the HPA needs to add replicas on
#: free GPUs (a sync, the rollout policies, a pod start), shorter than a node's 20-25 minutes, so a missed objective
#: that waits for a node is reported while it waits.
SERVING_MISSED_FOR = "10m"
#: What the alert's runbook (renderers/runbooks/ServingLatencyObjectiveMissed.txt) may say beyond rule_groups' values.
RUNBOOK_VALUES = {"SERVING_MISSED_FOR": SERVING_MISSED_FOR}


def labels(w: WorkloadConfig, **extra: str) -> dict[str, str]:
    return {"workload": w.name, "namespace": w.namespace, **extra}


def series(metric: str, w: WorkloadConfig, **extra: str) -> str:
    """A series recorded per workload (the recording rules' `workload` and `namespace` labels), of `w`."""
    matchers = ",".join(f'{k}="{v}"' for k, v in labels(w, **extra).items())
    return f"{metric}{{{matchers}}}"


def _record(name: str, expr: str, rule_labels: dict[str, str]) -> dict[str, Any]:
    return {"record": name, "expr": expr, "labels": rule_labels}


def serving_rules(w: WorkloadConfig) -> list[dict[str, Any]]:
    """The profile's recording rules for `w` (none without a profile)."""
    s = w.serving
    if s is None:
        return []
    e = serving_profile.engine(s)
    sel = promql.pods(w.name, w.namespace)
    window = f"[{serving_profile.RATE_WINDOW}]"
    out = [
        _record(name, f"histogram_quantile({serving_profile.QUANTILE}, sum by (le) "
                      f"(rate({histogram}_bucket{{{sel}}}{window})))", labels(w))
        for name, histogram in ((WL_TTFT_P90, e.ttft_histogram), (WL_TPOT_P90, e.tpot_histogram))
    ]
    if s.latency_objective is not None:
        out.append(_record(WL_LATENCY_RATIO, serving_profile.latency_ratio_query(w), labels(w)))
    waiting = f"avg_over_time({e.queue_gauge}{{{sel}}}{window})"
    out.append(_record(WL_WAITING_PER_POD, f"sum({waiting}) / count({waiting})", labels(w)))
    out.append(_record(WL_KV_CACHE, f"avg(avg_over_time({e.kv_cache_gauge}{{{sel}}}{window}))", labels(w)))
    for t in scaling_triggers(w):
        if t["name"] in SERVING_TRIGGER_NAMES:
            out.append(_record(WL_TRIGGER_VALUE, t["query"], labels(w, trigger=t["name"])))
    return out


def objective_seconds(w: WorkloadConfig) -> dict[str, float]:
    """The objectives set, in seconds, by the recorded series they bound."""
    s = w.serving
    if s is None or s.latency_objective is None:
        return {}
    o = s.latency_objective
    return {name: seconds(v) for name, v in ((WL_TTFT_P90, o.ttft_p90), (WL_TPOT_P90, o.tpot_p90)) if v is not None}


def serving_alerts(cfg: StackConfig, runbook: Callable[[str], str]) -> list[dict[str, Any]]:
    """One alert over every workload with a latency objective: its smoothed ratio above 1 (the objective missed)."""
    if not any(w.serving is not None and w.serving.latency_objective is not None for w in cfg.workloads):
        return []
    return [{
        "alert": "ServingLatencyObjectiveMissed",
        "expr": f"{WL_LATENCY_RATIO} > 1",
        "for": SERVING_MISSED_FOR,
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": "Workload {{ $labels.namespace }}/{{ $labels.workload }} misses its latency objective",
            "description": " ".join(runbook("ServingLatencyObjectiveMissed").split()),
        },
    }]
