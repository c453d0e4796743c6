"""A serving profile (`workloads[].serving`, issue 21): every rule refused with the key, the value and the fix before
anything is registered, and what the ScaledObject and the pod carry for it. The queries themselves run on a real
Prometheus in tests/test_serving_profile_metrics.py.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from capacity.config import read_stack_file
from offline.engine import Recording, record_stack
from renderers import dashboards, promql, rule_groups, serving_profile, serving_rules, workload_specs
from renderers.chart_values import prometheus_url
from renderers.recording_rules import recording_rules
from stackconfig import ConfigError, load_stack_config
from tests.prometheus_harness import dump_yaml, promtool, stack_config
from tests.test_config import apply_changes, problems
from tests.test_dashboards import RECORDED, exprs, recorded_names, substitute
from tests.test_serving import PROD_SECRETS, serving
from tests.vllm_history import PROFILE, prod_with_profile

URL = prometheus_url("monitoring")


def profiled(**changes: Any) -> dict[str, Any]:
    """tests/test_serving.py's vLLM workload on the serving profile instead of its own queue trigger."""
    raw = serving(**{"workloads.0.triggers": ..., "workloads.0.serving": copy.deepcopy(PROFILE),
                     "workloads.0.terminationGracePeriodSeconds": 160})
    return apply_changes(raw, changes)


def spec(**changes: Any) -> dict[str, Any]:
    return workload_specs.scaled_object_spec(load_stack_config(profiled(**changes)).workloads[0], URL)


def triggers(**changes: Any) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in spec(**changes)["triggers"]}


# --- config -----------------------------------------------------------------------------------------


def test_the_profile_is_valid_and_keeps_its_defaults() -> None:
    s = load_stack_config(profiled()).workloads[0].serving
    assert s is not None and s.engine == "vllm"
    assert (s.band.scale_up, s.band.scale_down, s.queue_per_replica, s.kv_cache_usage) == (0.6, 0.35, 5, 0.8)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        # An objective without an engine that exports the needed metrics.
        ({"workloads.0.serving.engine": ...},
         ["workloads[0].serving.engine", "(not set)", "TTFT and TPOT histograms", "set workloads[0].serving.engine"]),
        ({"workloads.0.serving.engine": "sglang"},
         ["workloads[0].serving.engine", "'sglang'", "known: vllm", "workloads[0].triggers"]),
        # A latency objective below what one GPU can deliver.
        ({"workloads.0.serving.latencyObjective.ttftP90": "30ms"},
         ["workloads[0].serving.latencyObjective.ttftP90", "'30ms'", "perGpu.ttftP90 = 40ms", "raise it above 40ms"]),
        ({"workloads.0.serving.latencyObjective.tpotP90": "7ms"},
         ["workloads[0].serving.latencyObjective.tpotP90", "'7ms'", "perGpu.tpotP90 = 7ms", "raise it above 7ms"]),
        ({"workloads.0.serving.perGpu": ...},
         ["workloads[0].serving.perGpu", "(not set)", "vllm bench serve", "tpotP90AtKnee"]),
        ({"workloads.0.serving.perGpu.tpotP90AtKnee": "5ms"},
         ["workloads[0].serving.perGpu.tpotP90AtKnee", "'5ms'", "at least tpotP90"]),
        ({"workloads.0.serving.latencyObjective": {}},
         ["workloads[0].serving.latencyObjective", "names no objective", "ttftP90, tpotP90 or both"]),
        ({"workloads.0.serving.latencyObjective.ttftP90": "500"},
         ["workloads[0].serving.latencyObjective.ttftP90", "'500'", "'500ms'"]),
        ({"workloads.0.serving.latencyObjective.ttftP90": "0s"},
         ["workloads[0].serving.latencyObjective.ttftP90", "'0s'", "above zero"]),
        # A missing ports/metrics for the profile.
        ({"workloads.0.ports": ..., "workloads.0.probes": ...},
         ["workloads[0].ports", "[]", "drains requests", "[{name: http, port: 8000}]"]),
        ({"workloads.0.metrics": ...},
         ["workloads[0].metrics", "(not set)", "nothing scrapes", "{port: http, path: /metrics}"]),
        # The rest of the profile.
        ({"workloads.0.serving.band": {"scaleUp": 0.4, "scaleDown": 0.5}},
         ["workloads[0].serving.band.scaleDown", "0.5", "flaps", "keep scaleDown below scaleUp"]),
        ({"workloads.0.serving.kvCacheUsage": 1.5}, ["workloads[0].serving.kvCacheUsage: 1.5 must be at most 1"]),
        ({"workloads.0.serving.kvCacheUsage": 80}, ["workloads[0].serving.kvCacheUsage: 80 looks like a percentage",
                                                    "Fix: write 0.8 for 80 %"]),
        ({"workloads.0.serving.queuePerReplica": 0}, ["workloads[0].serving.queuePerReplica", "0"]),
        ({"workloads.0.targetUtilization": 60},
         ["workloads[0].targetUtilization", "60", "guardrail", "remove workloads[0].targetUtilization"]),
        ({"workloads.0.terminationGracePeriodSeconds": 100},
         ["workloads[0].terminationGracePeriodSeconds", "100", "preStop waits 130 s", "at least 160"]),
        ({"workloads.0.serving.longestRequest": "5m"},
         ["workloads[0].terminationGracePeriodSeconds", "160", "preStop waits 310 s", "at least 340"]),
        ({"workloads.0.triggers": [{"name": "queue-depth", "metric": "vllm:num_requests_running", "threshold": 9}]},
         ["workloads[0].triggers[0].name", "'queue-depth'", "the serving profile adds"]),
        ({"workloads.0.serving.engin": "vllm"}, ["workloads[0].serving.engin"]),
    ],
)
def test_a_bad_profile_is_refused_with_key_value_and_fix(changes: dict[str, Any], expected: list[str]) -> None:
    message = problems(profiled(**changes))
    for part in expected:
        assert part in message, f"{part!r} not in:\n{message}"


def test_a_trigger_on_a_series_vllm_no_longer_exports_is_refused_with_its_new_name() -> None:
    """Without a profile too: `vllm:gpu_cache_usage_perc` is gone from the pinned vLLM, a query on it is empty."""
    message = problems(serving(**{"workloads.0.triggers.0.metric": "vllm:gpu_cache_usage_perc"}))
    assert "workloads[0].triggers[0].metric: 'vllm:gpu_cache_usage_perc'" in message
    assert "use vllm:kv_cache_usage_perc" in message


def test_a_bad_profile_registers_nothing() -> None:
    """`pulumi up` with an unreachable objective stops before the first resource, so nothing is half-created."""
    prod_with_profile()  # the same workload with a reachable objective is valid
    workloads = read_stack_file("prod")["workloads"]
    workloads[0] = {k: v for k, v in workloads[0].items() if k not in ("targetUtilization", "triggers")}
    workloads[0].update(serving={**PROFILE, "latencyObjective": {"ttftP90": "20ms"}}, terminationGracePeriodSeconds=160)
    into = Recording("prod")
    with pytest.raises(ConfigError, match=r"workloads\[0\]\.serving\.latencyObjective\.ttftP90: '20ms'"):
        record_stack("prod", overrides={"workloads": workloads}, secrets=PROD_SECRETS, into=into)
    assert into.resources == []


# --- the ScaledObject and the pod --------------------------------------------------------------------


def test_each_trigger_is_a_value_metric_with_an_activation_threshold() -> None:
    t = triggers()
    assert list(t) == ["gpu-utilization", "latency-objective", "queue-depth", "kv-cache"]
    for name in serving_profile.LATENCY_TRIGGER, serving_profile.QUEUE_TRIGGER, serving_profile.KV_TRIGGER:
        assert t[name]["metricType"] == "Value", name
        assert t[name]["metadata"]["threshold"] == "1", name
        assert t[name]["metadata"]["activationThreshold"] == "0", name
        assert t[name]["metadata"]["ignoreNullValues"] == "false", name
    # The GPU trigger stays, as a guardrail at 100 % per GPU (AverageValue: its ask never passes the replicas).
    assert "metricType" not in t["gpu-utilization"] or t["gpu-utilization"]["metricType"] == "AverageValue"
    assert t["gpu-utilization"]["metadata"]["threshold"] == "100"
    assert triggers(**{"workloads.0.gpusPerPod": 2})["gpu-utilization"]["metadata"]["threshold"] == "200"


def test_the_queries_read_the_pinned_vllms_series_of_the_workloads_pods_only() -> None:
    t = triggers()
    pods = f'namespace="serving",pod=~"{promql.pod_name_regex("llm")}"'
    latency = t["latency-objective"]["metadata"]["query"]
    assert f"vllm:time_to_first_token_seconds_bucket{{{pods}}}" in latency
    assert f"vllm:request_time_per_output_token_seconds_bucket{{{pods}}}" in latency
    assert "histogram_quantile(0.9," in latency and "/ 0.5," in latency and "/ 0.05," in latency
    assert f"vllm:num_requests_waiting{{{pods}}}" in t["queue-depth"]["metadata"]["query"]
    assert f"vllm:kv_cache_usage_perc{{{pods}}}" in t["kv-cache"]["metadata"]["query"]
    assert "/ 5," in t["queue-depth"]["metadata"]["query"] and t["kv-cache"]["metadata"]["query"].endswith("/ 0.8")


def test_only_the_objectives_set_enter_the_latency_query() -> None:
    latency = triggers(**{"workloads.0.serving.latencyObjective": {"ttftP90": "2s"}})["latency-objective"]
    query = latency["metadata"]["query"]
    assert "time_to_first_token" in query and "/ 2," in query
    assert "request_time_per_output_token" not in query
    assert "latency-objective" not in triggers(**{"workloads.0.serving.latencyObjective": ...})


def test_the_band_and_the_saturation_levels_reach_the_queries() -> None:
    t = triggers(**{"workloads.0.serving.band": {"scaleUp": 0.7, "scaleDown": 0.3},
                    "workloads.0.serving.queuePerReplica": 8, "workloads.0.serving.kvCacheUsage": 0.9})
    latency = t["latency-objective"]["metadata"]["query"]
    assert latency.startswith("clamp_min((") and ") / 0.7, 1) * clamp_max((" in latency
    assert latency.endswith(") / 0.3, 1)")
    assert "/ 8, 2)" in t["queue-depth"]["metadata"]["query"]
    assert t["kv-cache"]["metadata"]["query"].endswith("/ 0.9")


def test_the_latency_query_fits_a_preview_diff() -> None:
    """One line of a `pulumi preview` diff: the banded ratio computes the P90s twice, not once per branch."""
    assert len(triggers()["latency-objective"]["metadata"]["query"]) < 2000


def test_at_min_replicas_zero_every_profile_query_reads_zero_without_pods() -> None:
    t = triggers(**{"workloads.0.minReplicas": 0,
                    "workloads.0.wakeTrigger": {"query": "sum(gateway_pending)", "threshold": 5}})
    for name in ("latency-objective", "queue-depth", "kv-cache"):
        query = t[name]["metadata"]["query"]
        assert query == promql.zero_without_available_pods(
            dict(serving_profile.profile_queries(load_stack_config(profiled()).workloads[0]))[name], "llm", "serving")


def test_a_removed_pod_drains_its_longest_request_before_sigterm() -> None:
    w = load_stack_config(profiled(**{"workloads.0.serving.longestRequest": "90s",
                                      "workloads.0.terminationGracePeriodSeconds": 130})).workloads[0]
    container: dict[str, Any] = {"name": "llm"}
    workload_specs.serve_container(w, container)
    assert container["lifecycle"] == {"preStop": {"sleep": {"seconds": 100}}}, "10 s for the Service, 90 s in flight"


def test_the_stack_output_shows_every_trigger_not_only_the_guardrail() -> None:
    """The `workloads` output names what really scales a served model: its profile's triggers beside the GPU
    guardrail (100 % per GPU), each with the ScaledObject's query and target."""
    out = record_stack("dev", {"workloads": profiled()["workloads"]}).outputs["workloads"]["llm"]
    assert not {"query", "threshold", "targetUtilization"} & set(out)  # the GPU trigger's alone: removed
    got = {t["name"]: (t["metricType"], t["threshold"]) for t in out["triggers"]}
    assert got == {"gpu-utilization": ("AverageValue", "100"), "latency-objective": ("Value", "1"),
                   "queue-depth": ("Value", "1"), "kv-cache": ("Value", "1")}
    rendered = {name: t["metadata"]["query"] for name, t in triggers().items()}
    assert {t["name"]: t["query"] for t in out["triggers"]} == rendered


# --- recording rules and dashboards ------------------------------------------------------------------


def test_the_dashboard_reads_only_recorded_series_of_the_profile() -> None:
    cfg = prod_with_profile()
    recorded = recorded_names(rule_groups.rule_groups(cfg))
    titles = []
    for board in dashboards.dashboards(cfg).values():
        for title, expr in exprs(board):
            titles.append(title)
            missing = set(RECORDED.findall(substitute(expr))) - recorded
            assert not missing, f"panel {title!r} reads series no rule records: {missing}"
    assert {"Latency ratio (P90 / objective) and its band", "Replicas each serving trigger asks for",
            "Queue and KV cache per pod, against their saturation"} <= set(titles)
    assert "Latency ratio (P90 / objective) and its band" not in {
        t for board in dashboards.dashboards(load_stack_config(profiled(**{
            "workloads.0.serving.latencyObjective": ...}))).values() for t, _ in exprs(board)}


def test_one_recorded_value_per_trigger_is_exactly_keda_s_query() -> None:
    cfg = prod_with_profile()
    w = cfg.workloads[0]
    recorded = {r["labels"]["trigger"]: r["expr"] for r in recording_rules(cfg)
                if r["record"] == serving_rules.WL_TRIGGER_VALUE}
    keda = {t["name"]: t["metadata"]["query"] for t in workload_specs.scaled_object_spec(w, URL)["triggers"]
            if t["type"] == "prometheus"}
    assert recorded == {name: keda[name] for name in ("latency-objective", "queue-depth", "kv-cache")}
    # a workload without a profile records none (dev's, on GPU utilisation)
    assert not [r for r in recording_rules(stack_config("dev")) if r["record"].startswith("workload:serving")]


@pytest.mark.subprocess
def test_the_profile_s_rules_and_panels_parse(tmp_path: Path) -> None:
    cfg = prod_with_profile(minReplicas=0, wakeTrigger={"query": "sum(gateway_pending)", "threshold": 5})
    panels = [{"record": f"dashboard:query_{i}:check", "expr": substitute(expr)}
              for i, (_, expr) in enumerate(e for board in dashboards.dashboards(cfg).values() for e in exprs(board))]
    groups = [*rule_groups.rule_groups(cfg), {"name": "dashboard-queries", "rules": panels}]
    result = promtool("check", "rules", str(dump_yaml({"groups": groups}, tmp_path / "rules.yaml")))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.subprocess
def test_the_alert_fires_only_while_the_objective_is_missed(tmp_path: Path) -> None:
    """`promtool test rules` on the stack's own groups: vLLM's TTFT histogram for one `inference` pod, P90 at
    7.25 s (clamped ratio 2) against a healthy 0.235 s (ratio 0.47); the alert waits its `for` and names the
    workload."""
    from tests.test_alerts import render

    groups = rule_groups.rule_groups(prod_with_profile())
    (rule,) = [r for g in groups for r in g["rules"] if r.get("alert") == "ServingLatencyObjectiveMissed"]
    pod = 'namespace="inference",pod="inference-7c9d5b8f6d-abcde"'
    ttft = "vllm:time_to_first_token_seconds"

    def history(upper: str) -> list[dict[str, str]]:
        """40 requests every 15 s, all with a TTFT in the bucket that ends at `upper`."""
        return [{"series": f'{ttft}_bucket{{{pod},le="{le}"}}', "values": "0+40x120" if keep else "0+0x120"}
                for le, keep in (("0.1", False), (upper, True), ("+Inf", True))] + [
                {"series": f"{ttft}_count{{{pod}}}", "values": "0+40x120"}]

    labels = {"namespace": "inference", "workload": "inference", "severity": "warning"}
    firing = [{"exp_labels": labels,
               "exp_annotations": {k: render(v, labels, 2.0) for k, v in rule["annotations"].items()}}]
    tests = [
        {"name": "missed", "interval": "15s", "input_series": history("7.5"), "alert_rule_test": [
            {"eval_time": "9m", "alertname": rule["alert"], "exp_alerts": []},  # pending for its 10 minutes
            {"eval_time": "15m", "alertname": rule["alert"], "exp_alerts": firing}]},
        {"name": "healthy", "interval": "15s", "input_series": history("0.25"), "alert_rule_test": [
            {"eval_time": "15m", "alertname": rule["alert"], "exp_alerts": []}]},
    ]
    dump_yaml({"groups": groups}, tmp_path / "rules.yaml")
    dump_yaml({"rule_files": ["rules.yaml"], "evaluation_interval": "15s", "tests": tests}, tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.charts
def test_the_profiles_graph_passes_the_policy_pack_and_the_keda_crd(recordings: dict[str, Recording]) -> None:
    """The whole program with prod's `inference` on the profile: the policy pack passes on its graph, and its
    ScaledObject validates against the pinned KEDA chart's CRD (strict: a misspelt `metricType` key is refused)."""
    import jsonschema

    from delivery.render import unwrap
    from delivery.schema_check import strict_schema
    from tests.chart_cache import crd as chart_crd

    (version,) = [v for v in chart_crd(recordings["dev"], "keda", "scaledobjects.keda.sh")["spec"]["versions"]
                  if v["name"] == "v1alpha1"]
    schema = strict_schema(version["schema"]["openAPIV3Schema"])
    workloads = read_stack_file("prod")["workloads"]
    workloads[0] = {k: v for k, v in workloads[0].items() if k not in ("targetUtilization", "triggers")}
    workloads[0].update(serving=PROFILE, terminationGracePeriodSeconds=160)
    rec = record_stack("prod", overrides={"workloads": workloads}, secrets=PROD_SECRETS)
    from tests.test_policies_on_graph import run_pack

    assert run_pack(rec, "prod") == {}, "every policy of the pack passes on the graph with the profile"
    so = unwrap(dict(rec.get("inference-scaledobject").inputs))
    assert [t["name"] for t in so["spec"]["triggers"]][1:4] == ["latency-objective", "queue-depth", "kv-cache"]
    jsonschema.validate(so, schema)
    bad = copy.deepcopy(so)
    bad["spec"]["triggers"][1]["metricTyp"] = bad["spec"]["triggers"][1].pop("metricType")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
