"""The what-if calibrated against the real chain, without the cluster: a recorded run of the autoscaling suite
(tests/fixtures/autoscaling/timeline.json, written by `bash scripts/e2e.sh autoscaling`) predicted again by the
simulator as it is now, and the query window's rule checked on the real Prometheus engine (promtool).

The recorded run: the dev stack's own objects on the local control plane, real Prometheus, KEDA, HPA controller
and kube-scheduler, kwok nodes, and the STAND-IN node autoscaler (e2e/standin_autoscaler.py, not
cluster-autoscaler); timings divided by the factor the file states. docs/autoscaling-e2e.md has the whole story.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capacity.metric_path import QueryWindow
from e2e.timeline import Scenario
from e2e.wrong_rules import WRONG_RULES
from renderers import dcgm, promql
from tests.prometheus_harness import dump_yaml, promtool

RECORDED = Path(__file__).parent / "fixtures" / "autoscaling" / "timeline.json"


def recorded() -> dict[str, Any]:
    return dict(json.loads(RECORDED.read_text()))


def scenarios() -> list[Scenario]:
    return [Scenario.from_json(doc) for doc in recorded()["scenarios"]]


def test_the_recording_is_a_run_of_the_stand_in_chain_at_a_stated_factor() -> None:
    doc = recorded()
    assert doc["factor"] == 30
    names = [s.name for s in scenarios()]
    assert "step" in names
    events = [e["event"] for e in doc["standInAutoscaler"]]
    assert "node-ordered" in events and "node-gpus" in events


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

#: Two pods at 25 %, then pod b removed (its series stale) and pod a carrying all of it: 15 s scrapes.
SERIES = {"a": [25, 25, 25, 25, 50, 50, 50, 50, 50, 50], "b": [25, 25, 25, 25]}
SCRAPE = 15


def _input_series() -> list[dict[str, str]]:
    out = []
    for pod, values in SERIES.items():
        labels = (f'namespace="gpu-workloads",pod="inference-5d8f9c7b6-{pod}{pod}{pod}{pod}{pod}",'
                  f'{dcgm.GPU_ID_LABEL}="GPU-{pod}",gpu="0",Hostname="gpu-0"')
        text = " ".join(str(v) for v in values) + (" stale" if len(values) < len(SERIES["a"]) else "")
        out.append({"series": f"{dcgm.GPU_UTIL_METRIC}{{{labels}}}", "values": text})
    return out


def _window_at(t: float) -> float | None:
    w = QueryWindow(60)
    for i in range(len(SERIES["a"])):
        ts = i * SCRAPE
        if ts > t:
            break
        w.export({pod: values[i] for pod, values in SERIES.items() if i < len(values)})
        w.scrape(ts)
    return w.value(t)


@pytest.mark.subprocess
def test_the_query_window_reads_what_prometheus_reads_while_a_pod_goes_away(tmp_path: Path) -> None:
    """capacity/metric_path.py against the stack's own query on promtool: each series' average summed, a removed
    pod's series counting until its samples leave the window (68.75 = 43.75 + 25 three scrapes after)."""
    query = promql.gpu_utilization_query("inference", "gpu-workloads")
    times = [i * SCRAPE + 1 for i in range(len(SERIES["a"]))]  # a second after each scrape: no sample on an edge
    expected = {t: _window_at(t) for t in times}
    assert expected[4 * SCRAPE + 1 + 2 * SCRAPE] == 68.75
    tests = [{"interval": f"{SCRAPE}s", "input_series": _input_series(),
              "promql_expr_test": [{"expr": query, "eval_time": f"{t}s",
                                    "exp_samples": [] if v is None else [{"labels": "{}", "value": v}]}
                                   for t, v in expected.items()]}]
    dump_yaml({"groups": []}, tmp_path / "rules.yaml")
    dump_yaml({"rule_files": ["rules.yaml"], "evaluation_interval": "15s", "tests": tests}, tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
