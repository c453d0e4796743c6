"""Chart values the program sends: every key is one the pinned chart reads, and the guide's traps are gone.

Charts without a values.schema.json ignore unknown keys silently (charts-keda.md §1.2), so a key that
is absent from the chart's default values.yaml at the pinned version is a bug we would never see.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from components import dcgm
from offline.engine import Recording
from stackconfig import versions
from tests.conftest import reference

CHARTS = {
    "gpu-operator-release": "gpu-operator",
    "keda-release": "keda",
    "monitoring-release": "kube-prometheus-stack",
}


#: Keys read by a subchart whose defaults the parent's values.yaml does not repeat, with where they are read.
SUBCHART_KEYS = {
    # prometheus-community/helm-charts charts/kube-state-metrics/values.yaml `metricLabelsAllowlist: []`
    "kube-state-metrics.metricLabelsAllowlist",
}
#: Keys the chart's templates read that its values.yaml only shows commented out, with where they are read.
COMMENTED_KEYS = {
    # kube-prometheus-stack templates/alertmanager/alertmanager.yaml `{{- if ...alertmanagerSpec.configSecret }}`;
    # values.yaml 88.5.3 line 1047 `# configSecret:`
    "alertmanager.alertmanagerSpec.configSecret",
}


def unknown_keys(ours: dict[str, Any], defaults: Any, path: str = "") -> list[str]:
    """Dotted paths we set that the chart's defaults do not declare (free-form maps are not descended)."""
    missing = []
    for key, value in ours.items():
        here = f"{path}.{key}" if path else key
        if here in SUBCHART_KEYS or here in COMMENTED_KEYS:
            continue
        if not isinstance(defaults, dict) or key not in defaults:
            missing.append(here)
        elif isinstance(value, dict) and isinstance(defaults[key], dict) and defaults[key]:
            missing += unknown_keys(value, defaults[key], here)
    return missing


@pytest.mark.parametrize("release_name", CHARTS)
def test_every_values_key_exists_in_the_pinned_chart(rec: Recording, release_name: str) -> None:
    release = rec.get(release_name, "kubernetes:helm.sh/v3:Release")
    chart = CHARTS[release_name]
    assert release.inputs["chart"] == chart
    defaults = yaml.safe_load(reference("charts", chart, f"values-{release.inputs['version']}.yaml").read_text())
    assert unknown_keys(release.inputs["values"], defaults) == []


def test_the_check_catches_the_guides_misplaced_keys() -> None:
    defaults = yaml.safe_load(reference("charts", "kube-prometheus-stack", "values-88.5.3.yaml").read_text())
    guide = {"serviceMonitorSelectorNilUsesHelmValues": False, "additionalScrapeConfigs": []}
    assert unknown_keys(guide, defaults) == ["serviceMonitorSelectorNilUsesHelmValues", "additionalScrapeConfigs"]


def test_pinned_defaults_are_the_versions_module(recordings: dict[str, Recording]) -> None:
    rec = recordings["dev"]  # dev states no chart versions: it gets the pins
    pinned = {
        "gpu-operator-release": versions.GPU_OPERATOR,
        "keda-release": versions.KEDA,
        "monitoring-release": versions.KUBE_PROMETHEUS_STACK,
    }
    for name, chart in pinned.items():
        release = rec.get(name)
        assert release.inputs["version"] == chart.default_version
        assert release.inputs["repositoryOpts"]["repo"] == chart.repo


def test_gpu_operator_values_fix_the_guide(rec: Recording) -> None:
    values = rec.get("gpu-operator-release").inputs["values"]
    assert values["driver"]["enabled"] is False
    assert "defaultRuntime" not in values.get("operator", {})
    assert values.get("operator", {}).get("logging", {}).get("level", "info") == "info"
    monitor = values["dcgmExporter"]["serviceMonitor"]
    assert monitor["enabled"] is True
    assert monitor["honorLabels"] is True, "otherwise the workload's pod label arrives as exported_pod"
    assert monitor == dcgm.service_monitor_values()
    # The operands must tolerate the pool's taints or no GPU is ever advertised.
    tolerated = {(t["key"], t["effect"]) for t in values["daemonsets"]["tolerations"]}
    cluster = next(r for r in rec.resources if r.type == "gcore:index/k8sv2:K8sv2")
    for key, spec in cluster.inputs["pools"][0]["taints"].items():
        assert (key, spec.rpartition(":")[2]) in tolerated


def test_prometheus_values_select_every_service_monitor_and_add_no_second_dcgm_path(rec: Recording) -> None:
    values = rec.get("monitoring-release").inputs["values"]
    assert "serviceMonitorSelectorNilUsesHelmValues" not in values
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["serviceMonitorSelectorNilUsesHelmValues"] is False
    assert spec["podMonitorSelectorNilUsesHelmValues"] is False
    assert spec["ruleSelectorNilUsesHelmValues"] is False
    assert not spec.get("additionalScrapeConfigs"), "a second DCGM scrape path doubles every GPU series"
    assert "serviceName" not in spec


def test_gcore_provider_pin_is_the_same_everywhere() -> None:
    """Pulumi.yaml must hold the pin for `pulumi install`; it has to agree with versions.py and the test double."""
    import json

    from offline.engine import ROOT, TESTDOUBLES

    package = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["packages"]["gcore"]
    assert package["source"] == "terraform-provider"
    assert package["parameters"] == ["g-core/gcore", versions.GCORE_PROVIDER_VERSION]
    assert package["version"] == versions.TERRAFORM_BRIDGE_VERSION
    assert versions.GCORE_PROVIDER_VERSION.startswith("0."), "v0 is the stable line; v2 pre-releases share the name"
    plugin = json.loads((TESTDOUBLES / "pulumi_gcore" / "pulumi-plugin.json").read_text())
    assert plugin["parameterization"]["version"] == versions.GCORE_PROVIDER_VERSION
