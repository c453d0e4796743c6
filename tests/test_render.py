"""The three pinned charts rendered with the values the program really passes, checked as the cluster would.

Renders come from the chart cache (`.cache/charts/`, filled by scripts/test.sh: delivery/charts.py) and are
cached per process (delivery/render.py), so every test here after the first costs milliseconds.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from delivery import placed_objects, render, render_check, schema_check, values_sweep
from delivery.placed_objects import Finding
from delivery.render import RELEASE_TYPE
from offline.engine import Recording
from renderers import dcgm
from renderers.chart_values import GRAFANA_ADMIN_SECRET
from stacknames import NODE_EXPORTER_NAMESPACE
from tests.chart_cache import rendered_stack

pytestmark = pytest.mark.charts


def with_values(rec: Recording, release: str, edit: Callable[[dict[str, Any]], None]) -> Recording:
    """A copy of `rec` whose release `release` gets its values changed by `edit` (the recording is shared)."""
    out = Recording(rec.stack, resources=list(rec.resources))
    res = rec.get(release, RELEASE_TYPE)
    values = copy.deepcopy(dict(res.inputs["values"]))
    edit(values)
    out.resources[out.resources.index(res)] = dataclasses.replace(res, inputs={**res.inputs, "values": values})
    return out


def findings(rec: Recording, check: str | None = None) -> list[Finding]:
    out = render_check.check(rec, rendered_stack(rec), values_read=False)
    return [f for f in out if check in (None, f.check)]


# --- the stacks as configured pass every check ---------------------------------------------------------------


def test_every_check_passes_on_the_rendered_stack(rec: Recording) -> None:
    assert [str(f) for f in findings(rec)] == []


def test_the_render_uses_the_graphs_releases(rec: Recording) -> None:
    stack = rendered_stack(rec)
    by_chart = {r.release.chart: r.release for r in stack.releases}
    assert set(by_chart) == {"gpu-operator", "keda", "kube-prometheus-stack"}
    for res in rec.of_type(RELEASE_TYPE):
        r = by_chart[res.inputs["chart"]]
        assert (r.name, r.namespace, r.version) == (res.inputs["name"], res.inputs["namespace"], res.inputs["version"])
    assert stack.kube_version == "v1.35.3"
    # Capabilities: the CRDs the releases install, so `.Capabilities.APIVersions.Has` sees the ServiceMonitor kind.
    assert "monitoring.coreos.com/v1/ServiceMonitor" in stack.releases[0].api_versions
    assert "keda.sh/v1alpha1/ScaledObject" in stack.releases[0].api_versions
    # Helm puts objects without a namespace in the release's: e.g. kube-prometheus-stack's Prometheus.
    placed = placed_objects.everything(rec, stack)
    (prometheus,) = [p for p in placed if p.obj["kind"] == "Prometheus"]
    assert prometheus.namespace == "monitoring"


def test_every_values_key_is_read_by_a_template(recordings: dict[str, Recording]) -> None:
    """Each leaf we set, changed to a sentinel, changes the render (prod only re-checks what differs from dev)."""
    dev_leaves = {r.release.chart: dict(values_sweep.leaves(r.release.values))
                  for r in rendered_stack(recordings["dev"]).releases}
    problems = []
    for stack in ("dev", "prod"):
        for rel in rendered_stack(recordings[stack]).releases:
            seen = dev_leaves[rel.release.chart] if stack == "prod" else {}

            def checked_in_dev(path: tuple[str, ...], value: Any, seen: dict[tuple[str, ...], Any] = seen) -> bool:
                return seen.get(path, object()) == value

            problems += [str(f) for f in values_sweep.unread_values(rel, checked_in_dev)]
    assert problems == []


# --- each check fails when the decision it guards is reverted -------------------------------------------------


@pytest.mark.parametrize(("release", "chart", "path"), [
    # The guide's trap: the selector switch at the top level instead of under prometheus.prometheusSpec.
    ("monitoring-release", "kube-prometheus-stack", ("serviceMonitorSelectorNilUsesHelmValues",)),
    # The guide's GPU Operator key, removed in 25.3.0 (the chart has no values.schema.json to refuse it).
    ("gpu-operator-release", "gpu-operator", ("operator", "defaultRuntime")),
])
def test_an_unread_values_key_is_reported(
    recordings: dict[str, Recording], release: str, chart: str, path: tuple[str, ...]
) -> None:
    def add(values: dict[str, Any]) -> None:
        node = values
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = False

    rec = with_values(recordings["dev"], release, add)
    (rel,) = [r for r in rendered_stack(rec).releases if r.release.chart == chart]
    (finding,) = values_sweep.unread_values(rel, lambda p, value: p != path)
    assert f"{'.'.join(path)}=False is read by no template" in finding.detail


def test_the_node_exporter_as_main_had_it_is_refused_by_baseline(recordings: dict[str, Recording]) -> None:
    """Main before this change: node-exporter in `monitoring` (enforce: baseline) never gets its pods."""
    rec = with_values(recordings["prod"], "monitoring-release", lambda v: v.pop("prometheus-node-exporter"))
    refused = [f.detail for f in findings(rec, "pod-security")]
    assert refused, "node-exporter in monitoring must be refused"
    assert all("namespace monitoring enforces baseline" in d for d in refused)
    assert any("hostNetwork=true" in d for d in refused)
    assert any("hostPID=true" in d for d in refused)
    assert any("hostPath /proc" in d for d in refused)


def test_node_exporter_runs_alone_in_its_privileged_namespace(rec: Recording) -> None:
    placed = placed_objects.everything(rec, rendered_stack(rec))
    labels = placed_objects.namespace_labels(placed)
    assert labels["monitoring"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert labels[NODE_EXPORTER_NAMESPACE]["pod-security.kubernetes.io/enforce"] == "privileged"
    pods = [p for p in placed if p.namespace == NODE_EXPORTER_NAMESPACE and p.obj["kind"] in
            ("Pod", "Deployment", "DaemonSet", "StatefulSet", "Job", "CronJob")]
    assert [(p.obj["kind"], p.obj["metadata"]["name"]) for p in pods] == [
        ("DaemonSet", "kube-prometheus-stack-prometheus-node-exporter")]
    # Its ServiceMonitor follows it, and Prometheus looks in every namespace.
    monitors = [p for p in placed if p.obj["kind"] == "ServiceMonitor" and "node-exporter" in p.obj["metadata"]["name"]]
    assert [m.namespace for m in monitors] == [NODE_EXPORTER_NAMESPACE]


def test_a_privileged_pod_in_a_workload_namespace_is_refused(recordings: dict[str, Recording]) -> None:
    """The program's own objects are checked too: by iterating the graph, not a list of names."""
    rec = recordings["dev"]
    (deployment,) = [r for r in rec.of_type("kubernetes:apps/v1:Deployment")][:1]
    inputs = copy.deepcopy(dict(deployment.inputs))
    inputs["spec"]["template"]["spec"]["hostNetwork"] = True
    broken = Recording(rec.stack, resources=list(rec.resources))
    broken.resources[broken.resources.index(deployment)] = dataclasses.replace(deployment, inputs=inputs)
    (finding,) = findings(broken, "pod-security")
    assert finding.where.startswith("program: Deployment") and "hostNetwork=true" in finding.detail


def test_the_gpu_operator_operands_need_its_privileged_namespace(recordings: dict[str, Recording]) -> None:
    stack = rendered_stack(recordings["dev"])
    placed = placed_objects.everything(recordings["dev"], stack)
    exporter = [p for p in placed
                if p.obj["kind"] == "DaemonSet" and p.obj["metadata"]["name"] == "nvidia-dcgm-exporter"]
    assert [p.namespace for p in exporter] == ["gpu-operator"]
    from delivery import pod_security

    pod = pod_security.pod_template(exporter[0].obj)
    assert pod is not None
    refused = pod_security.check(pod, "baseline")
    assert {v.rule for v in refused} >= {"privileged", "hostPath volumes"}


def test_honor_labels_off_is_reported(recordings: dict[str, Recording]) -> None:
    rec = with_values(recordings["dev"], "gpu-operator-release",
                      lambda v: v["dcgmExporter"]["serviceMonitor"].update(honorLabels=False))
    assert any("honorLabels is not true" in f.detail for f in findings(rec, "dcgm"))


def test_a_second_dcgm_scrape_path_is_reported(recordings: dict[str, Recording]) -> None:
    rec = with_values(recordings["dev"], "monitoring-release", lambda v: v["prometheus"]["prometheusSpec"].update(
        additionalScrapeConfigs=[{"job_name": "gpu-metrics", "static_configs": [{"targets": ["x:9400"]}]}]))
    assert any("2 scrape paths" in f.detail for f in findings(rec, "dcgm"))


def test_the_dcgm_refresh_reaches_the_exporter(recordings: dict[str, Recording]) -> None:
    stack = rendered_stack(recordings["dev"])
    (ds,) = [o for o in stack.operands if o["kind"] == "DaemonSet"]
    (exporter,) = [c for c in ds["spec"]["template"]["spec"]["containers"] if c["name"] == "nvidia-dcgm-exporter"]
    env = {e["name"]: e.get("value") for e in exporter["env"]}
    assert env["DCGM_EXPORTER_INTERVAL"] == "5000" == str(dcgm.EXPORTER_COLLECT_INTERVAL_MS)
    rec = with_values(recordings["dev"], "gpu-operator-release", lambda v: v["dcgmExporter"].pop("env"))
    assert any("DCGM_EXPORTER_INTERVAL=None" in f.detail for f in findings(rec, "dcgm"))


def test_the_operator_service_monitor_carries_our_settings(recordings: dict[str, Recording]) -> None:
    stack = rendered_stack(recordings["dev"])
    (monitor,) = [o for o in stack.operands if o["kind"] == "ServiceMonitor"]
    (endpoint,) = monitor["spec"]["endpoints"]
    want = dcgm.service_monitor_values()
    assert endpoint["honorLabels"] is True and endpoint["interval"] == want["interval"]
    assert endpoint["relabelings"] == want["relabelings"]
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["gpu-operator"]}


@pytest.mark.parametrize("switch", ["serviceMonitorSelectorNilUsesHelmValues", "podMonitorSelectorNilUsesHelmValues",
                                    "ruleSelectorNilUsesHelmValues"])
def test_a_selector_switch_reverted_is_reported(recordings: dict[str, Recording], switch: str) -> None:
    rec = with_values(recordings["dev"], "monitoring-release",
                      lambda v: v["prometheus"]["prometheusSpec"].update({switch: True}))
    (finding,) = findings(rec, "prometheus")
    assert switch.removesuffix("SelectorNilUsesHelmValues") + "Selector=" in finding.detail


def test_grafana_without_the_existing_secret_is_reported(recordings: dict[str, Recording]) -> None:
    rec = with_values(recordings["dev"], "monitoring-release", lambda v: v["grafana"].pop("admin"))
    details = [f.detail for f in findings(rec, "grafana")]
    assert any(f"want Secret {GRAFANA_ADMIN_SECRET}" in d for d in details)
    assert any("renders its own admin password" in d for d in details)


def test_keda_metrics_port_off_is_reported(recordings: dict[str, Recording]) -> None:
    rec = with_values(recordings["dev"], "keda-release", lambda v: v["prometheus"]["operator"].update(enabled=False))
    assert any("without a port named 'metrics'" in f.detail for f in findings(rec, "keda"))


def test_exposure_is_reported(recordings: dict[str, Recording]) -> None:
    rec = with_values(recordings["dev"], "monitoring-release", lambda v: v["grafana"].update(
        ingress={"enabled": True}, service={"type": "LoadBalancer"}))
    details = [f.detail for f in findings(rec, "exposure")]
    assert any("an Ingress" in d for d in details) and any("type LoadBalancer" in d for d in details)


def test_a_field_the_crd_would_prune_is_reported(recordings: dict[str, Recording]) -> None:
    """ClusterPolicy: a field its CRD does not declare never reaches the operator."""
    rec = with_values(recordings["dev"], "gpu-operator-release",
                      lambda v: v["dcgmExporter"]["serviceMonitor"].update(honorLabel=True))
    details = [f.detail for f in findings(rec, "crd-schema")]
    assert any("honorLabel" in d and "dcgmExporter.serviceMonitor" in d for d in details)


def test_a_misspelt_field_of_a_builtin_kind_is_reported(recordings: dict[str, Recording]) -> None:
    rec = recordings["dev"]
    stack = rendered_stack(rec)
    placed = placed_objects.everything(rec, stack)
    target = next(p for p in placed if p.obj["kind"] == "Deployment" and p.origin != "program")
    broken = copy.deepcopy(dict(target.obj))
    broken["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    out = list(schema_check.check_schemas([dataclasses.replace(target, obj=broken)], stack))
    assert out and "imagePullPolicyy" in out[0].detail


def test_values_failing_a_charts_schema_are_reported(recordings: dict[str, Recording]) -> None:
    """node-feature-discovery (a GPU Operator subchart) ships a values.schema.json."""
    rec = with_values(recordings["dev"], "gpu-operator-release",
                      lambda v: v["node-feature-discovery"]["worker"].update(tolerations="all"))
    stack = rendered_stack(recordings["dev"])
    stack = dataclasses.replace(stack, releases=tuple(
        dataclasses.replace(r, release=next(x for x in render.releases(rec) if x.chart == r.release.chart))
        for r in stack.releases))
    assert [f.check for f in schema_check.check_values_schemas(stack)] == ["values-schema"]


# --- the command the fork review runs ------------------------------------------------------------------------


def test_render_check_cli_over_an_offline_plan(tmp_path: Any, recordings: dict[str, Recording]) -> None:
    from offline import plan

    rendered_stack(recordings["dev"])  # the cache is there (or this skips/fails with where it looked)
    plan_file = tmp_path / "dev.yaml"
    assert plan.main(["dev", "--out", str(plan_file), "--diagram", str(tmp_path / "dev.mmd")]) == 0
    out = tmp_path / "report.md"
    assert render_check.main(["--plan", str(plan_file), "--out", str(out)]) == 0
    assert "Render check — `dev`: **OK**" in out.read_text()
    text = plan_file.read_text().replace(f"namespaceOverride: {NODE_EXPORTER_NAMESPACE}", "namespaceOverride: ''")
    plan_file.write_text(text)
    broken = render_check.recording_from_plan(plan_file)
    assert any("enforces baseline; refused" in f.detail for f in findings(broken, "pod-security"))


def test_no_test_reads_outside_the_repository() -> None:
    """The chart cache replaced ../shared: a test that reads beside the checkout skips on every fresh clone."""
    from pathlib import Path

    tests = Path(__file__).parent
    offenders = [f"{p.name}:{n}" for p in sorted(tests.rglob("*.py")) if p.name != Path(__file__).name
                 for n, line in enumerate(p.read_text().splitlines(), 1)
                 if "ROOT.parent" in line or "../shared" in line or '"shared"' in line]
    assert offenders == []
