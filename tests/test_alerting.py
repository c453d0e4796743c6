"""Alerts that reach someone: the Alertmanager configuration rendered by the program, checked by `amtool`.

`amtool` comes from Debian's `prometheus-alertmanager` package (scripts/test.sh installs it); CI sets
REQUIRE_AMTOOL=1 so that a missing binary fails instead of skipping. The configuration checked is the one
the prod graph really sends (the Secret's `alertmanager.yaml`, receivers' secret values filled in from the
stack's secret config), and the routing tree is asked where each kind of alert goes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from offline.engine import Recording, Secret, record_stack
from renderers import alertmanager_config
from renderers.chart_values import ALERTMANAGER_CONFIG_KEY, ALERTMANAGER_CONFIG_SECRET
from stackconfig import AlertingConfig, versions
from tests.chart_cache import chart_values
from tests.test_serving import PROD_SECRETS

AMTOOL = shutil.which("amtool")


def amtool(*args: str) -> subprocess.CompletedProcess[str]:
    if AMTOOL is None:
        reason = "amtool is not installed (Debian's prometheus-alertmanager package; scripts/test.sh installs it)"
        if os.environ.get("REQUIRE_AMTOOL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return subprocess.run([AMTOOL, *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def prod() -> Recording:
    return record_stack("prod", secrets=PROD_SECRETS)


@pytest.fixture(scope="module")
def prod_config(prod: Recording, tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = prod.get("monitoring-alertmanager-config").inputs["stringData"]
    assert isinstance(data, Secret), "the rendered configuration holds receiver URLs and keys: it must be secret"
    path = tmp_path_factory.mktemp("alertmanager") / "alertmanager.yaml"
    path.write_text(data.value[ALERTMANAGER_CONFIG_KEY])
    return path


def receiver_for(config: Path, *labels: str) -> str:
    result = amtool("config", "routes", "test", f"--config.file={config}", *labels)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.subprocess
def test_amtool_accepts_the_rendered_configuration(prod_config: Path) -> None:
    result = amtool("check-config", str(prod_config))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.subprocess
def test_amtool_rejects_a_broken_configuration(prod_config: Path, tmp_path: Path) -> None:
    """The check can fail: a route to a receiver that does not exist is refused."""
    broken = yaml.safe_load(prod_config.read_text())
    broken["route"]["routes"][0]["receiver"] = "nobody"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    assert amtool("check-config", str(path)).returncode != 0


@pytest.mark.parametrize(
    ("labels", "receiver"),
    [
        # The dead-man's switch: Watchdog goes to the heartbeat only, whatever its severity label says.
        (("alertname=Watchdog", "severity=none"), "heartbeat"),
        (("alertname=GpuNodeDown", "severity=critical"), "critical"),
        (("alertname=KedaScalerErrors", "severity=warning"), "warning"),
        (("alertname=SomethingInformative", "severity=info"), "null"),
        (("alertname=InfoInhibitor", "severity=none"), "null"),
    ],
)
@pytest.mark.subprocess
def test_alerts_are_routed_by_severity(prod_config: Path, labels: tuple[str, ...], receiver: str) -> None:
    assert receiver_for(prod_config, *labels) == receiver


def test_critical_pages_and_warnings_do_not(prod_config: Path) -> None:
    receivers = {r["name"]: r for r in yaml.safe_load(prod_config.read_text())["receivers"]}
    assert receivers["critical"]["pagerduty_configs"][0]["routing_key"] == PROD_SECRETS["secrets:pagerdutyRoutingKey"]
    assert "pagerduty_configs" not in receivers["warning"]
    for name in ("critical", "warning"):
        assert receivers[name]["slack_configs"][0]["api_url"] == PROD_SECRETS["secrets:slackWebhookUrl"]
        assert receivers[name]["slack_configs"][0]["channel"] == "#gpu-platform-alerts"
        assert receivers[name]["webhook_configs"][0]["url"] == PROD_SECRETS["secrets:alertWebhookUrl"]
    (heartbeat,) = receivers["heartbeat"]["webhook_configs"]
    assert heartbeat["url"] == PROD_SECRETS["secrets:heartbeatUrl"]
    watchdog = yaml.safe_load(prod_config.read_text())["route"]["routes"][0]
    assert watchdog["repeat_interval"] == "1m", "the heartbeat service must hear from Alertmanager every minute"


@pytest.mark.charts
def test_the_chart_uses_the_secret_and_keeps_the_watchdog(prod: Recording) -> None:
    release = prod.get("monitoring-release")
    spec = release.inputs["values"]["alertmanager"]["alertmanagerSpec"]
    assert spec == {"configSecret": ALERTMANAGER_CONFIG_SECRET, "useExistingSecret": True}
    secret = prod.get("monitoring-alertmanager-config")
    assert secret.inputs["metadata"]["name"] == ALERTMANAGER_CONFIG_SECRET
    assert release.depends_on(secret), "Alertmanager would start on a configuration Secret that is not there yet"
    # Watchdog is the chart's rule (general.rules, on by default): nothing of ours switches it off.
    defaults = chart_values(versions.KUBE_PROMETHEUS_STACK)
    assert defaults["defaultRules"]["rules"]["general"] is True
    assert "general" not in release.inputs["values"].get("defaultRules", {}).get("rules", {})


def test_a_stack_without_receivers_keeps_the_charts_configuration(recordings: dict[str, Recording]) -> None:
    dev = recordings["dev"]
    assert not [r for r in dev.resources if r.name == "monitoring-alertmanager-config"]
    assert "alertmanagerSpec" not in dev.get("monitoring-release").inputs["values"]["alertmanager"]


@pytest.mark.subprocess
def test_only_the_configured_receivers_are_rendered(tmp_path: Path) -> None:
    """PagerDuty only: critical pages, warnings stay in Alertmanager, Watchdog is dropped (no heartbeat)."""
    only_pd = AlertingConfig.model_validate({"pagerduty": {"routingKeySecret": "pd"}})
    path = tmp_path / "am.yaml"
    path.write_text(alertmanager_config.render(only_pd, {"pd": "0123456789abcdef0123456789abcdef"}))
    assert amtool("check-config", str(path)).returncode == 0
    assert receiver_for(path, "alertname=X", "severity=critical") == "critical"
    assert receiver_for(path, "alertname=X", "severity=warning") == "null"
    assert receiver_for(path, "alertname=Watchdog") == "null"
