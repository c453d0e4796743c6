"""The what-if calibrated against the real chain, without the cluster: a recorded run of the autoscaling suite
(tests/fixtures/autoscaling/timeline.json, written by `bash scripts/e2e.sh autoscaling`) predicted again by the
simulator as it is now, and the query window's rule checked on the real Prometheus engine (promtool).

The recorded run: the dev stack's own objects on the local control plane, real Prometheus, KEDA, HPA controller,
kube-scheduler and cluster-autoscaler 1.35.2 (e2e/pool_autoscaler.py), kwok nodes; timings divided by the factor the
file states. docs/autoscaling-e2e.md has the whole story.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest

from capacity.metric_path import QueryWindow
from capacity.settings import prom_duration_seconds
from e2e.timeline import Scenario
from e2e.wrong_rules import WRONG_RULES
from renderers import dcgm, promql
from tests.prometheus_harness import dump_yaml, promtool

RECORDED = Path(__file__).parent / "fixtures" / "autoscaling" / "timeline.json"


def recorded() -> dict[str, Any]:
    return dict(json.loads(RECORDED.read_text()))


def scenarios() -> list[Scenario]:
    return [Scenario.from_json(doc) for doc in recorded()["scenarios"]]


def test_the_recording_is_a_run_of_the_chain_on_cluster_autoscaler_at_a_stated_factor() -> None:
    doc = recorded()
    assert doc["factor"] == 30
    names = [s.name for s in scenarios()]
    assert names == ["step", "scale-down", "cron-window", "burst", "prometheus-stopped"]
    events = [e["event"] for e in doc["clusterAutoscaler"]]
    assert {"ca-scale-up", "ca-scale-down", "node-ordered", "node-gpus"} <= set(events)


@pytest.mark.parametrize("name", [s.name for s in scenarios()])
def test_the_what_if_predicts_the_recorded_run_within_the_tolerance(name: str) -> None:
    sc = next(s for s in scenarios() if s.name == name)
    sc.predict()
    assert sc.compared, "nothing compared"
    real = sc.real_events()
    assert all(real[e] is not None for e in sc.compared), "the recording misses an event it compares"
    assert not sc.disagreements(), "\n".join(sc.disagreements())


@pytest.mark.parametrize("rule", sorted(WRONG_RULES))
def test_a_wrong_rule_of_the_simulator_fails_the_comparison(rule: str) -> None:
    wrong = []
    for sc in scenarios():
        sc.predict(WRONG_RULES[rule])
        wrong += sc.disagreements()
    assert wrong, f"the what-if with '{rule}' still agrees with the real run in every scenario"


# --- the query window's rule on the real Prometheus engine ---------------------------------------------------

#: The stack's scrape interval and query window (renderers/dcgm.py), in seconds.
SCRAPE = round(prom_duration_seconds(dcgm.SCRAPE_INTERVAL))
#: A moment between two scrapes, as an offset from the first.
BETWEEN = SCRAPE // 2 + 1
WINDOW = round(prom_duration_seconds(dcgm.QUERY_WINDOW))
#: Per scenario, each pod's value at each scrape (None: not exported then, so its series is stale, or does not
#: exist yet).
SCENARIOS: dict[str, dict[str, list[float | None]]] = {
    # Two pods at 25 %, then pod b removed (its series stale) and pod a carrying all of it.
    "a pod goes away": {"a": [25, 25, 25, 25, 50, 50, 50, 50, 50, 50], "b": [25, 25, 25, 25]},
    # Three pods with one history part ways: c restarts (0), b is gone for two scrapes and comes back within the
    # window (a gap in its series), d starts late, and the exporter's values often stay for several scrapes.
    "shared series part ways": {
        "a": [40, 40, 40, 60, 60, 60, 30, 30, 30, 30, *[45] * 14],
        "b": [40, 40, 40, 60, None, None, 30, 30, 30, 30, *[45] * 14],
        "c": [40, 40, 40, 0, 0, 60, 30, 30, 30, 30, *[45] * 14],
        "d": [None, None, None, None, None, 0, 0, 30, 30, 30, 45, None, None, None, None, None, None, None, None],
    },
}
#: Per scenario, the scrapes Prometheus missed (stopped for a scrape longer than the window, while the exporter went
#: on serving the same values): every series expires, and the next scrape starts them again.
OUTAGES: dict[str, set[int]] = {"shared series part ways": set(range(13, 14 + WINDOW // SCRAPE))}


def _input_series(series: dict[str, list[float | None]], outages: set[int]) -> list[dict[str, str]]:
    out = []
    length = max(len(v) for v in series.values())
    for pod, values in series.items():
        labels = (f'namespace="gpu-workloads",pod="inference-5d8f9c7b6-{pod}{pod}{pod}{pod}{pod}",'
                  f'{dcgm.GPU_ID_LABEL}="GPU-{pod}",gpu="0",Hostname="gpu-0"')
        padded = [*values, *[None] * (length - len(values))]
        seen = [any(v is not None for v in padded[: i + 1]) for i in range(length)]
        text = " ".join("_" if i in outages else str(v) if v is not None else "stale" if seen[i] else "_"
                        for i, v in enumerate(padded))
        out.append({"series": f"{dcgm.GPU_UTIL_METRIC}{{{labels}}}", "values": text})
    return out


def _window_at(series: dict[str, list[float | None]], outages: set[int], t: float) -> float | None:
    """The query window fed as the simulator feeds it: a new export only when the values change."""
    w = QueryWindow(WINDOW)
    served: dict[Hashable, float] | None = None
    for i in range(max(len(v) for v in series.values())):
        ts = i * SCRAPE
        if ts > t:
            break
        now: dict[Hashable, float] = {pod: v for pod, values in series.items()
                                      if i < len(values) and (v := values[i]) is not None}
        if now != served:
            w.export(now)
            served = now
        if i not in outages:
            w.scrape(ts)
        if ts + BETWEEN < t:
            w.value(ts + BETWEEN)  # asked between scrapes too, as the HPA does while Prometheus is stopped
    return w.value(t)


@pytest.mark.subprocess
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_query_window_reads_what_prometheus_reads(scenario: str, tmp_path: Path) -> None:
    """capacity/metric_path.py against the stack's own query on promtool: each series' average summed, a removed
    pod's series counting until its samples leave the window (above the 50 the remaining pod reads), series
    that shared their samples counted apart once their values differ, no answer while Prometheus is stopped for
    longer than the window, and every series back at the first scrape after it."""
    series, outages = SCENARIOS[scenario], OUTAGES.get(scenario, set())
    query = promql.gpu_utilization_query("inference", "gpu-workloads")
    scrapes = max(len(v) for v in series.values())
    # a second after each scrape (no sample on an edge), and between scrapes (samples leave without a scrape)
    times = sorted({i * SCRAPE + d for i in range(scrapes) for d in (1, BETWEEN)})
    expected = {t: _window_at(series, outages, t) for t in times}
    if scenario == "a pod goes away":
        gone = expected[(4 + 2) * SCRAPE + 1]
        assert gone is not None and gone > 50
    tests = [{"interval": f"{SCRAPE}s", "input_series": _input_series(series, outages),
              # to a thousandth: a mean of five samples may differ in its last bit with the order of the additions
              "promql_expr_test": [{"expr": f"round({query}, 0.001)", "eval_time": f"{t}s",
                                    "exp_samples": [] if v is None else [{"labels": "{}",
                                                                          "value": math.floor(v * 1000 + 0.5) / 1000}]}
                                   for t, v in expected.items()]}]
    dump_yaml({"groups": []}, tmp_path / "rules.yaml")
    dump_yaml({"rule_files": ["rules.yaml"], "evaluation_interval": f"{SCRAPE}s", "tests": tests},
              tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_query_adds_the_series_in_the_order_they_appeared() -> None:
    """The terms of the query's sum in the order the series first had a sample, whatever series share their samples
    (capacity/metric_path.py): floating-point sums depend on their order, and the what-if's figures must not move
    with how the window stores its series. Here a, c share a history and b has its own; a, b, c gives 1.3000000000000003
    where a, c, b gives 1.3."""
    w = QueryWindow(60)
    w.export({"a": 0.1, "b": 1.1, "c": 0.1})
    w.scrape(0.0)
    assert w.value(1.0) == (0.1 + 1.1) + 0.1 != (0.1 + 0.1) + 1.1


# --- the KedaScalerErrors alert's `for:` on the errors the real KEDA counted while Prometheus was stopped ---------


def _recorded_series(doc: dict[str, Any]) -> tuple[list[dict[str, str]], float, float, float]:
    """KEDA's error counters as the recorded run's watching Prometheus scraped them, as promtool input series:
    one sample per scrape interval (the last one scraped by then). Returns the series, the interval, and the
    outage's start and end (seconds from the first sample). Not stretched: KEDA counts an error per polling of
    its scaler, and its pollingInterval is not divided in the run, so the errors come as often as in production."""
    series = doc["notes"]["kedaErrorSeries"]
    stamps = sorted({float(t) for items in series.values() for s in items for t, _ in s["values"]})
    interval = sorted(b - a for a, b in zip(stamps, stamps[1:], strict=False))[len(stamps) // 2]
    first = stamps[0]
    steps = int((stamps[-1] - first) / interval) + 1
    out = []
    for name, items in series.items():
        for s in items:
            values = [(float(t), v) for t, v in s["values"]]
            text = []
            for k in range(steps):
                seen = [v for t, v in values if t <= first + k * interval + 1e-3]
                text.append(seen[-1] if seen else "_")
            labels = ",".join(f'{k}="{v}"' for k, v in s["labels"].items() if k != "__name__")
            out.append({"series": f"{name}{{{labels}}}", "values": " ".join(text)})
    return (out, interval, doc["extra"]["prometheus_stopped"] - first, doc["extra"]["prometheus_back"] - first)


def _first_true(inputs: list[dict[str, str]], interval: float, window: float) -> float:
    """The first evaluation at which `rate(counter[window]) > 0` holds for some series: an increase between two
    samples inside the window."""
    rows = [[float(v) if v != "_" else None for v in s["values"].split()] for s in inputs]
    for k in range(max(len(r) for r in rows)):
        lo = k - int(window // interval)
        for r in rows:
            inside = [v for v in r[max(0, lo + 1): k + 1] if v is not None]
            if len(inside) >= 2 and inside[-1] > inside[0]:
                return k * interval
    raise AssertionError("KEDA counted no scaler error in the recording")


@pytest.mark.subprocess
def test_keda_scaler_errors_fires_within_its_scaled_for_while_prometheus_is_stopped(tmp_path: Path) -> None:
    """The stack's KedaScalerErrors rule, evaluated by promtool on the error counters the real KEDA operator
    exposed while the platform's Prometheus was stopped in the recorded run (as the Prometheus that kept
    watching KEDA scraped them): its expression holds from KEDA's first failed poll to the end of the outage, so
    the alert is pending at the first evaluation and firing its `for:` later. The run's outage is 75 s, so the
    `for:` (5 min) is divided by the run's factor like every duration of the run that may be; the rule's
    5-minute rate window is not, and it spans the whole outage."""
    from renderers.rule_groups import rule_groups
    from stackconfig.units import go_duration_seconds
    from tests.prometheus_harness import stack_config
    from tests.test_alerts import render, rules_by_alert

    doc = next(d for d in recorded()["scenarios"] if d["scenario"] == "prometheus-stopped")
    inputs, interval, stopped, back = _recorded_series(doc)
    groups = rule_groups(stack_config("dev"))
    rule = rules_by_alert(groups)["KedaScalerErrors"]
    hold = (go_duration_seconds(rule["for"]) or 0) / recorded()["factor"]
    rule["for"] = f"{round(hold)}s"
    step = round(interval)
    true_at = round(_first_true(inputs, step, 300) / step) * step
    fires_at = true_at + round(hold / step) * step
    assert stopped <= true_at and fires_at + step <= back, (
        f"the expression held {true_at - stopped:.0f} s after Prometheus stopped; the alert would fire at "
        f"{fires_at - stopped:.0f} s of an outage of {back - stopped:.0f} s")
    labels = {"namespace": "gpu-workloads", "scaledObject": "inference", **rule["labels"]}
    firing = [{"exp_labels": labels,
               "exp_annotations": {k: render(v, labels, None) for k, v in rule["annotations"].items()}}]
    test = {"interval": f"{step}s", "input_series": inputs,
            "alert_rule_test": [
                {"eval_time": f"{true_at}s", "alertname": "KedaScalerErrors", "exp_alerts": []},
                {"eval_time": f"{fires_at - step}s", "alertname": "KedaScalerErrors", "exp_alerts": []},
                {"eval_time": f"{fires_at}s", "alertname": "KedaScalerErrors", "exp_alerts": firing},
                {"eval_time": f"{round(back) - step}s", "alertname": "KedaScalerErrors", "exp_alerts": firing}],
            "promql_expr_test": [{"expr": f"count({rule['expr']}) or vector(0)", "eval_time": f"{t}s",
                                  "exp_samples": [{"labels": "{}", "value": v}]}
                                 for t, v in ((true_at - step, 0), (true_at, 1))]}
    dump_yaml({"groups": groups}, tmp_path / "rules.yaml")
    dump_yaml({"rule_files": ["rules.yaml"], "evaluation_interval": f"{step}s", "tests": [test]},
              tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
