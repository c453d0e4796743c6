"""A workload that scales to zero (minReplicas 0, issue 17): while it has no pod its triggers read 0, not an empty
result that KEDA turns into a scaler error on every poll, and idle GPUs do not keep it from reaching zero.

The queries run on promtool (Prometheus' own PromQL engine) over synthetic kube-state-metrics and DCGM series.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from renderers import chart_values as cv
from renderers import dcgm, promql
from renderers import recording_rules as recorded
from renderers import workload_specs as specs
from stackconfig import WorkloadConfig, load_stack_config
from tests.prometheus_harness import dump_yaml, promtool
from tests.test_config import config

WAKE = {"query": "sum(queue_depth)", "threshold": 10}


def to_zero(**changes: Any) -> WorkloadConfig:
    raw = config(**{"workloads.0.minReplicas": 0, "workloads.0.wakeTrigger": WAKE,
                    **{f"workloads.0.{k}": v for k, v in changes.items()}})
    return load_stack_config(raw).workloads[0]


def triggers(w: WorkloadConfig) -> dict[str, dict[str, str]]:
    return {t["name"]: t["metadata"] for t in specs.scaled_object_spec(w, "http://p:9090")["triggers"]}


def test_the_gpu_trigger_of_a_scale_to_zero_workload_has_an_activation_threshold() -> None:
    """Active iff value > activationThreshold (default 0): without it a stray 1 % reading keeps it from zero."""
    one = triggers(to_zero())["gpu-utilization"]
    assert one["activationThreshold"] == "5"  # 5 % of one GPU
    assert triggers(to_zero(gpusPerPod=4, maxReplicas=4))["gpu-utilization"]["activationThreshold"] == "20"
    # Still an error (and the fallback) when pods run but no GPU reports: ignoreNullValues stays false.
    assert one["ignoreNullValues"] == "false"


def test_a_workload_that_never_scales_to_zero_keeps_its_query() -> None:
    w = load_stack_config(config()).workloads[0]
    gpu = triggers(w)["gpu-utilization"]
    assert gpu["query"] == promql.gpu_utilization_query(w.name, w.namespace)
    assert "activationThreshold" not in gpu


def test_outputs_rules_and_dashboards_show_the_query_keda_runs() -> None:
    """The recording rule is 'exactly the value KEDA reads', the stack output names the query: the same string."""
    w = to_zero()
    query = triggers(w)["gpu-utilization"]["query"]
    cfg = load_stack_config(config(**{"workloads.0.minReplicas": 0, "workloads.0.wakeTrigger": WAKE}))
    rules = {r["record"]: r["expr"] for r in recorded.recording_rules(cfg) if r.get("labels", {}).get("workload")}
    assert rules[recorded.WL_UTIL_SUM] == query
    from offline.engine import record_stack

    stack = record_stack("dev", {"workloads": config(**{"workloads.0.minReplicas": 0,
                                                        "workloads.0.wakeTrigger": WAKE})["workloads"]})
    outputs = {t["name"]: t for t in stack.outputs["workloads"][w.name]["triggers"]}
    assert outputs["gpu-utilization"]["query"] == query
    assert outputs["demand"]["activationThreshold"] == triggers(w)["demand"]["activationThreshold"]


def _available(w: WorkloadConfig, values: str) -> dict[str, str]:
    labels = f'job="{cv.KSM_JOB}",namespace="{w.namespace}",deployment="{w.name}"'
    return {"series": f"kube_deployment_status_replicas_available{{{labels}}}", "values": values}


def _gpu(w: WorkloadConfig, values: str) -> dict[str, str]:
    labels = (f'namespace="{w.namespace}",pod="{w.name}-7d9f8b6c5d-x2x4q",{dcgm.GPU_ID_LABEL}="GPU-0",'
              'gpu="0",Hostname="node-1"')
    return {"series": f"{dcgm.GPU_UTIL_METRIC}{{{labels}}}", "values": values}


@pytest.mark.subprocess
def test_the_query_reads_zero_without_pods_and_stays_empty_when_running_pods_do_not_report(tmp_path: Path) -> None:
    """Three minutes of series, evaluated by promtool:
    - no pod available (kube-state-metrics says 0), no GPU series: 0, so KEDA has no error to report;
    - a pod available but no GPU series (a broken scrape): empty, i.e. a scaler error and KEDA's fallback;
    - a pod available and its GPU at 40 %: 40;
    - kube-state-metrics silent: empty (no positive reading of zero pods, so no made-up zero)."""
    w = to_zero()
    gpu_query = triggers(w)["gpu-utilization"]["query"]
    cases = {
        "asleep": ([_available(w, "0x10")], [{"labels": "{}", "value": 0}]),
        "broken-scrape": ([_available(w, "1x10")], []),
        "busy": ([_available(w, "1x10"), _gpu(w, "40x10")], [{"labels": "{}", "value": 40}]),
        "no-kube-state-metrics": ([], []),
    }
    tests = [{"interval": "1m", "input_series": series or [{"series": "up", "values": "1x10"}],
              "promql_expr_test": [{"expr": gpu_query, "eval_time": "5m", "exp_samples": samples}]}
             for series, samples in cases.values()]
    dump_yaml({"groups": []}, tmp_path / "rules.yaml")
    dump_yaml({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}, tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.subprocess
def test_a_serving_trigger_of_a_sleeping_workload_reads_zero(tmp_path: Path) -> None:
    w = to_zero(ports=[{"name": "http", "port": 8000}], metrics={"port": "http"},
                triggers=[{"name": "waiting", "metric": "vllm:num_requests_waiting", "threshold": 5}])
    query = triggers(w)["waiting"]["query"]
    test = {"interval": "1m", "input_series": [_available(w, "0x10")],
            "promql_expr_test": [{"expr": query, "eval_time": "5m", "exp_samples": [{"labels": "{}", "value": 0}]}]}
    dump_yaml({"groups": []}, tmp_path / "rules.yaml")
    dump_yaml({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [test]}, tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
