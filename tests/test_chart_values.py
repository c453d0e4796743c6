"""Chart values the program sends: the guide's traps gone, and the Gcore provider pinned alike everywhere.

The chart versions each stack installs are asserted with their values in tests/test_decisions.py; that every key we
set is one the pinned chart reads is proven on the rendered charts (tests/test_render.py: each values leaf changed
to a sentinel must change the render), not against the default values files.
"""

from __future__ import annotations

import yaml

from offline.engine import Recording
from stackconfig import versions


def test_gpu_operator_values_fix_the_guide(rec: Recording) -> None:
    values = rec.get("gpu-operator-release").inputs["values"]
    assert values["driver"]["enabled"] is False
    assert "defaultRuntime" not in values.get("operator", {})
    assert values.get("operator", {}).get("logging", {}).get("level", "info") == "info"
    monitor = values["dcgmExporter"]["serviceMonitor"]
    assert monitor["enabled"] is True
    assert monitor["honorLabels"] is True, "otherwise the workload's pod label arrives as exported_pod"
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
    """Pulumi.yaml must hold the pin for `pulumi install`; it has to agree with versions.py and the generated SDK."""
    import json

    from offline.engine import ROOT

    package = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["packages"]["gcore"]
    assert package["source"] == "terraform-provider"
    assert package["parameters"] == ["g-core/gcore", versions.GCORE_PROVIDER_VERSION]
    assert package["version"] == versions.TERRAFORM_BRIDGE_VERSION
    assert versions.GCORE_PROVIDER_VERSION.startswith("0."), "v0 is the stable line; v2 pre-releases share the name"
    plugin = json.loads((ROOT / "sdks" / "gcore" / "pulumi_gcore" / "pulumi-plugin.json").read_text())
    assert plugin["parameterization"]["version"] == versions.GCORE_PROVIDER_VERSION
