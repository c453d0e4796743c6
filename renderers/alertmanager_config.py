"""Where alerts go: the Alertmanager configuration rendered from the stack's `alerting` receivers.

Pure functions, no Pulumi: `__main__.py` feeds them the receivers' secret values inside an `Output.apply`,
so the rendered YAML is a secret Output and reaches the cluster only as a Kubernetes Secret that
kube-prometheus-stack's Alertmanager reads (`alertmanager.alertmanagerSpec.configSecret`, chart 88.5.3
values.yaml). Tests render it with fake values and run `amtool check-config` on it.

Routing (Alertmanager docs, configuration.md "route"): the always-firing `Watchdog` (kube-prometheus-stack
rule group general.rules) goes only to the heartbeat URL every `interval`, so a silent heartbeat service
pages when Prometheus, Alertmanager or the path between them dies (a dead-man's switch); `critical` pages
(PagerDuty) and also goes to chat and the webhook; `warning` goes to chat and the webhook; everything else
(`info`, the chart's InfoInhibitor) is kept in Alertmanager's UI only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from stackconfig import AlertingConfig

NULL = "null"


def _receivers(a: AlertingConfig, secrets: Mapping[str, str], pages: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if pages and a.pagerduty is not None:
        out["pagerduty_configs"] = [{"routing_key": secrets[a.pagerduty.routing_key_secret], "send_resolved": True}]
    if a.slack is not None:
        out["slack_configs"] = [{
            "api_url": secrets[a.slack.webhook_url_secret],
            "channel": a.slack.channel,
            "send_resolved": True,
            "title": '[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}',
            "text": '{{ range .Alerts }}{{ .Annotations.summary }}\n{{ .Annotations.description }}\n{{ end }}',
        }]
    if a.webhook is not None:
        out["webhook_configs"] = [{"url": secrets[a.webhook.url_secret], "send_resolved": True}]
    return out


def alertmanager_config(a: AlertingConfig, secrets: Mapping[str, str]) -> dict[str, Any]:
    """The whole Alertmanager configuration; `secrets` maps each `*Secret` key to its value."""
    receivers: list[dict[str, Any]] = [{"name": NULL}]
    routes: list[dict[str, Any]] = []
    if a.heartbeat is not None:
        receivers.append({"name": "heartbeat", "webhook_configs": [
            {"url": secrets[a.heartbeat.url_secret], "send_resolved": False}]})
        routes.append({"receiver": "heartbeat", "matchers": ['alertname = "Watchdog"'], "group_wait": "0s",
                       "group_interval": a.heartbeat.interval, "repeat_interval": a.heartbeat.interval})
    else:
        routes.append({"receiver": NULL, "matchers": ['alertname = "Watchdog"']})
    routes.append({"receiver": NULL, "matchers": ['alertname = "InfoInhibitor"']})
    for severity, pages in (("critical", True), ("warning", False)):
        body = _receivers(a, secrets, pages)
        if body:
            receivers.append({"name": severity, **body})
            routes.append({"receiver": severity, "matchers": [f'severity = "{severity}"']})
    return {
        "global": {"resolve_timeout": "5m"},
        "route": {
            "receiver": NULL,
            "group_by": ["alertname", "namespace"],
            "group_wait": "30s",
            "group_interval": "5m",
            "repeat_interval": "4h",
            "routes": routes,
        },
        # kube-prometheus-stack's own inhibitions (values.yaml 88.5.3, alertmanager.config.inhibit_rules): a
        # critical alert silences the same alert's warning and info, a warning its info, and InfoInhibitor
        # silences info alerts in its namespace.
        "inhibit_rules": [
            {"source_matchers": ['severity = "critical"'], "target_matchers": ['severity =~ "warning|info"'],
             "equal": ["namespace", "alertname"]},
            {"source_matchers": ['severity = "warning"'], "target_matchers": ['severity = "info"'],
             "equal": ["namespace", "alertname"]},
            {"source_matchers": ['alertname = "InfoInhibitor"'], "target_matchers": ['severity = "info"'],
             "equal": ["namespace"]},
            {"target_matchers": ['alertname = "InfoInhibitor"']},
        ],
        "receivers": receivers,
    }


def render(a: AlertingConfig, secrets: Mapping[str, str]) -> str:
    return yaml.safe_dump(alertmanager_config(a, secrets), sort_keys=False)
