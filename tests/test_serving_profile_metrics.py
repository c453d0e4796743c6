"""A serving profile on a real Prometheus: each trigger's query on vLLM's own metric families, and the HPA's
arithmetic on the values, for a rising load, a healthy steady state inside the band, and zero load.

The history (tests/vllm_history.py) is four of prod's `inference` pods and two look-alikes (the sibling Deployment
`inference-canary` and an `inference` Deployment in another namespace, both far worse on every signal), 5 minutes
per phase, backfilled into a TSDB by promtool and served by the Debian `prometheus`. The queries are the
ScaledObject's as renderers/workload_specs.py renders it for prod's `inference` with the profile
(tests/vllm_history.py `prod_with_profile`); the arithmetic is capacity/hpa.py's (the HPA's own, per
metric type). Expected values are worked by hand from histogram_quantile's linear interpolation in the bucket
that holds the 90th percentile.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from capacity import hpa
from capacity.keda import prometheus_trigger_active
from renderers import serving_rules, workload_specs
from renderers.chart_values import prometheus_url
from tests.prometheus_harness import PROMETHEUS, PrometheusServer, require, values_of
from tests.vllm_history import STEP, Available, Phase, Pod, prod_with_profile, write_blocks

pytestmark = pytest.mark.subprocess

PHASE = 300
#: Steady: every request's TTFT in (0.1 s, 0.25 s], TPOT in (10 ms, 25 ms]: P90s 0.235 s and 23.5 ms.
STEADY = Phase(PHASE, ttft={0.25: 30}, tpot={0.025: 30}, waiting=1, running=20, kv_cache=0.5, gpu_util=60)
#: Rising: TTFT in (0.5 s, 0.75 s], TPOT in (25 ms, 50 ms]: P90s 0.725 s and 47.5 ms; queues of 12 per pod.
RISING = Phase(PHASE, ttft={0.75: 30}, tpot={0.05: 30}, waiting=12, running=64, kv_cache=0.9, gpu_util=100)
#: Zero: no request finishes, nothing waits, the KV cache is empty, the GPUs idle.
ZERO = Phase(PHASE)
#: A look-alike serves terrible numbers the whole time: a selector that caught it would show.
AWFUL = Phase(3 * PHASE, ttft={10.0: 300}, tpot={1.0: 300}, waiting=100, running=256, kv_cache=1.0, gpu_util=100)
OURS = [Pod("inference", f"inference-7c9d5b8f6d-{c * 5}", (STEADY, RISING, ZERO)) for c in "abcd"]
#: kube-state-metrics: the 4 pods available through the three phases, then none for 5 minutes (scaled to zero).
AVAILABLE = [Available("inference", "inference", ((3 * PHASE, 4), (PHASE, 0)))]
LOOKALIKES = [Pod("inference", "inference-canary-5f6d7c8b9a-zzzzz", (AWFUL,)),
              Pod("other-team", "inference-7c9d5b8f6d-yyyyy", (AWFUL,))]


@pytest.fixture(scope="module")
def triggers() -> Mapping[str, Mapping[str, Any]]:
    spec = workload_specs.scaled_object_spec(prod_with_profile().workloads[0], prometheus_url("monitoring"))
    return {t["name"]: t for t in spec["triggers"]}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[PrometheusServer, float]]:
    require(PROMETHEUS, "prometheus")
    start = math.floor((time.time() - 1200) / STEP) * STEP  # 20 minutes ago, on the scrape grid
    workdir = Path(tmp_path_factory.mktemp("serving-profile"))
    write_blocks([*OURS, *LOOKALIKES], start, workdir / "tsdb", AVAILABLE)
    server = PrometheusServer({"global": {"scrape_interval": "15s"}}, workdir)
    try:
        server.start()
        server.wait_ready()
        yield server, start
    finally:
        server.stop()


def _at(start: float, phase: int) -> float:
    """The last scrape of a phase (0 steady, 1 rising, 2 zero): every window reaches back inside it."""
    return start + (phase + 1) * PHASE - STEP


def _value(server: PrometheusServer, trigger: Mapping[str, Any], at: float) -> float:
    result = server.query(trigger["metadata"]["query"], at=at)
    assert len(result) == 1, f"{trigger['name']}: KEDA needs exactly one element, got {result}"
    return values_of(result)[0]


def _metrics(server: PrometheusServer, triggers: Mapping[str, Mapping[str, Any]], at: float
             ) -> list[tuple[str, float, float]]:
    """Every Prometheus trigger as the HPA sees it: (metric type, value, target)."""
    return [(t["metricType"], _value(server, t, at), float(t["metadata"]["threshold"]))
            for t in triggers.values() if t["type"] == "prometheus"]


def test_the_profile_renders_four_prometheus_triggers(triggers: Mapping[str, Mapping[str, Any]]) -> None:
    assert list(triggers) == ["gpu-utilization", "latency-objective", "queue-depth", "kv-cache", "schedule-0"]
    for name in ("latency-objective", "queue-depth", "kv-cache"):
        t = triggers[name]
        assert t["metricType"] == "Value", "sized by ready pods: pods still starting count as capacity"
        assert t["metadata"]["threshold"] == "1" and t["metadata"]["activationThreshold"] == "0"
        assert t["metadata"]["ignoreNullValues"] == "false"
    # GPU utilisation is the guardrail: 100 % per GPU, so it never asks for more replicas than run.
    assert triggers["gpu-utilization"]["metadata"]["threshold"] == "100"
    query = triggers["latency-objective"]["metadata"]["query"]
    assert "vllm:time_to_first_token_seconds_bucket" in query and "vllm:request_time_per_output_token_seconds" in query
    assert "vllm:kv_cache_usage_perc" in triggers["kv-cache"]["metadata"]["query"]
    assert "gpu_cache_usage_perc" not in str(triggers), "the name vLLM removed in 0.12"


def test_rising_load_asks_for_more_replicas_sized_by_the_ready_pods(
    history: tuple[PrometheusServer, float], triggers: Mapping[str, Mapping[str, Any]]
) -> None:
    server, start = history
    at = _at(start, 1)
    # P90 TTFT 0.5 + 0.25 × 0.9 = 0.725 s over 500 ms = 1.45; P90 TPOT 25 + 25 × 0.9 = 47.5 ms over 50 ms = 0.95.
    # The larger, 1.45, is above the band's top 0.6: the value is 1.45 / 0.6.
    assert _value(server, triggers["latency-objective"], at) == pytest.approx(1.45 / 0.6)
    assert _value(server, triggers["queue-depth"], at) == pytest.approx(2.0), "12 waiting / 5 = 2.4, clamped at 2"
    assert _value(server, triggers["kv-cache"], at) == pytest.approx(0.9 / 0.8)
    assert _value(server, triggers["gpu-utilization"], at) == pytest.approx(400.0), "4 GPUs at 100 %, not 6"
    metrics = _metrics(server, triggers, at)
    # 4 replicas, all ready: ceil(2.4167 × 4) = 10 (latency), ceil(2 × 4) = 8 (queue), ceil(1.125 × 4) = 5 (KV),
    # the guardrail holds 4 (400 / 100 per replica is exactly its target). The HPA takes the largest.
    assert hpa.hpa_desired_replicas_mixed(metrics, 4, 4) == 10
    # Six of those ten still load the model: the same signals from the same four ready pods ask for the same
    # ten, so no second round is ordered while the first starts.
    assert hpa.hpa_desired_replicas_mixed(metrics, 10, 4) == 10
    # Had the latency trigger been AverageValue on replicas × ratio, it would count the starting pods as load.
    ratio = 1.45
    assert hpa.hpa_desired_replicas(10 * ratio, 0.6, 10) == 25


def test_healthy_latency_inside_the_band_holds_the_replica_count(
    history: tuple[PrometheusServer, float], triggers: Mapping[str, Mapping[str, Any]]
) -> None:
    server, start = history
    at = _at(start, 0)
    # P90 TTFT 0.1 + 0.15 × 0.9 = 0.235 s / 0.5 s = 0.47, TPOT 23.5 ms / 50 ms = 0.47: inside [0.35, 0.6].
    assert _value(server, triggers["latency-objective"], at) == pytest.approx(1.0)
    metrics = _metrics(server, triggers, at)
    # Queue 1 / 5 asks for 2, KV 0.5 / 0.8 for 5, GPUs at 60 % for 5: the band's 1 holds all 8, ready or not.
    assert hpa.hpa_desired_replicas_mixed(metrics, 8, 8) == 8
    assert hpa.hpa_desired_replicas_mixed(metrics, 8, 6) == 8


def test_zero_load_reads_zero_and_deactivates_every_trigger(
    history: tuple[PrometheusServer, float], triggers: Mapping[str, Mapping[str, Any]]
) -> None:
    server, start = history
    at = _at(start, 2)
    metrics = _metrics(server, triggers, at)
    # No request finished in the window: the P90s are NaN, which reads as 0 (no load), not as an error.
    assert [v for _, v, _ in metrics] == [0.0, 0.0, 0.0, 0.0]
    assert hpa.hpa_desired_replicas_mixed(metrics, 8, 8) == 0  # the HPA then holds minReplicas (prod: 4)
    for t in triggers.values():
        if t["type"] == "prometheus":
            value = _value(server, t, at)
            assert not prometheus_trigger_active(value, float(t["metadata"].get("activationThreshold", "0")))
    # With minReplicas 0 and every trigger inactive for cooldownPeriod, KEDA takes the workload to zero.


def test_no_series_at_all_is_an_error_not_zero_load(
    history: tuple[PrometheusServer, float], triggers: Mapping[str, Mapping[str, Any]]
) -> None:
    """Before the history starts nothing was scraped: every serving query is empty, which KEDA turns into an
    error (ignoreNullValues false) and the fallback, never into 0 and a scale-in."""
    server, start = history
    for name in ("latency-objective", "queue-depth", "kv-cache"):
        assert server.query(triggers[name]["metadata"]["query"], at=start - 600) == [], name


def test_the_recorded_p90s_are_the_engines_quantiles_the_dashboard_shows(
    history: tuple[PrometheusServer, float],
) -> None:
    """The recording rules' expressions, run as instant queries over the same history (what each rule records)."""
    server, start = history
    exprs = {r["record"]: r["expr"] for r in serving_rules.serving_rules(prod_with_profile().workloads[0])
             if r["record"] != serving_rules.WL_TRIGGER_VALUE}
    expected = {
        0: {serving_rules.WL_TTFT_P90: 0.235, serving_rules.WL_TPOT_P90: 0.0235,
            serving_rules.WL_LATENCY_RATIO: 0.47, serving_rules.WL_WAITING_PER_POD: 1, serving_rules.WL_KV_CACHE: 0.5},
        1: {serving_rules.WL_TTFT_P90: 0.725, serving_rules.WL_TPOT_P90: 0.0475,
            serving_rules.WL_LATENCY_RATIO: 1.45, serving_rules.WL_WAITING_PER_POD: 12, serving_rules.WL_KV_CACHE: 0.9},
    }
    for phase, values in expected.items():
        got = {name: values_of(server.query(expr, at=_at(start, phase)))[0] for name, expr in exprs.items()}
        assert got == pytest.approx(values), phase
    # Zero load: no request finished, so there is no quantile to record (NaN); the ratio reads 0.
    idle = server.query(exprs[serving_rules.WL_LATENCY_RATIO], at=_at(start, 2))
    assert values_of(idle) == [0.0]


def test_at_min_replicas_zero_a_workload_without_pods_reads_zero_and_stays_asleep(
    history: tuple[PrometheusServer, float], triggers: Mapping[str, Mapping[str, Any]],
) -> None:
    """minReplicas 0: the same profile's queries, wrapped so that no pod available (kube-state-metrics says 0)
    reads 0, not an error: every trigger inactive (activationThreshold 0), so KEDA keeps it at zero until the
    wakeTrigger fires. While pods serve, the wrapped queries read what the plain ones read."""
    server, start = history
    w = prod_with_profile(minReplicas=0, wakeTrigger={"query": "sum(gateway_pending)", "threshold": 5}).workloads[0]
    wrapped = {t["name"]: t for t in workload_specs.scaled_object_spec(w, prometheus_url("monitoring"))["triggers"]
               if t["name"] in ("latency-objective", "queue-depth", "kv-cache")}
    assert all("kube_deployment_status_replicas_available" in t["metadata"]["query"] for t in wrapped.values())
    asleep = start + 4 * PHASE - STEP  # two minutes and more after the last pod sample, every window empty
    for name, t in wrapped.items():
        assert server.query(triggers[name]["metadata"]["query"], at=asleep) == [], "unwrapped: empty, an error"
        value = _value(server, t, asleep)
        assert value == 0.0, name
        assert not prometheus_trigger_active(value, float(t["metadata"]["activationThreshold"])), name
    assert _value(server, wrapped["latency-objective"], _at(start, 1)) == pytest.approx(1.45 / 0.6)
    assert _value(server, wrapped["kv-cache"], _at(start, 1)) == pytest.approx(0.9 / 0.8)
