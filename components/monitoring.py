"""Monitoring: kube-prometheus-stack, where KEDA reads GPU utilisation, plus the platform's rules, dashboards,
ServiceMonitors and Alertmanager configuration (values: renderers/chart_values.py). node-exporter runs in a
namespace of its own (stacknames.py NODE_EXPORTER_NAMESPACE); Grafana's admin password is generated here and handed
to the chart as an existing Secret."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kube import namespace, pinned_release
from renderers.chart_values import (
    ALERTMANAGER_CONFIG_KEY,
    ALERTMANAGER_CONFIG_SECRET,
    DASHBOARD_LABEL,
    GRAFANA_ADMIN_SECRET,
    GRAFANA_PASSWORD_KEY,
    GRAFANA_USER_KEY,
    alertmanager_secret_values,
    deep_merge,
    monitoring_values,
    prometheus_url,
)
from stackconfig import versions
from stacknames import MONITORING_NAMESPACE, NODE_EXPORTER_NAMESPACE, PLATFORM_LABELS


@dataclass(frozen=True)
class MonitoringArgs:
    version: str
    retention: str = "15d"
    #: Prometheus volume (renderers/chart_values.py `storage_spec`); None keeps the TSDB on an emptyDir.
    storage: Mapping[str, Any] | None = None
    namespace: str = MONITORING_NAMESPACE
    #: Where node-exporter runs: a namespace of its own at Pod Security `privileged` (it reads the host).
    node_exporter_namespace: str = NODE_EXPORTER_NAMESPACE
    #: PrometheusRule `spec.groups` (alerts and recording rules).
    rule_groups: Sequence[Mapping[str, Any]] = field(default_factory=list)
    #: Grafana dashboards: file name -> dashboard JSON.
    dashboards: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Extra ServiceMonitors: name -> spec (e.g. KEDA's operator metrics).
    service_monitors: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Extra chart values merged over ours (e.g. kube-state-metrics label allow-lists for alerts).
    extra_values: Mapping[str, Any] = field(default_factory=dict)
    #: Rendered Alertmanager configuration (a secret Output, renderers/alertmanager_config.py); None keeps the chart's
    #: own, which routes every alert to its "null" receiver.
    alertmanager_config: pulumi.Input[str] | None = None
    #: The Prometheus KEDA queries when it is not this release's (`monitoring.queryUrl`).
    query_url: str | None = None
    #: `charts.mirror`: where the chart comes from instead of its repository.
    mirror: str | None = None


class Monitoring(pulumi.ComponentResource):
    release: k8s.helm.v3.Release
    namespace: pulumi.Output[str]
    prometheus_url: pulumi.Output[str]
    grafana_password: pulumi.Output[str]

    def __init__(self, name: str, args: MonitoringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:addons:Monitoring", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        ns = namespace(f"{name}-ns", args.namespace, self)
        self.namespace = ns.metadata.name
        node_exporter_ns = namespace(
            f"{name}-node-exporter-ns", args.node_exporter_namespace, self, pod_security="privileged"
        )
        # Drawn once, kept in the state: a Stash returns the value it stored on its first `up`, and ignoring changes
        # to its input keeps every later run's new draw from showing as a diff (pulumi/pulumi pkg/resource/deploy/
        # builtins.go: the engine's own `pulumi:index:Stash`, no provider plugin to install).
        password = pulumi.Stash(
            f"{name}-grafana-password",
            input=pulumi.Output.secret(secrets.token_urlsafe(24)),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["input"]),
        )
        self.grafana_password = pulumi.Output.secret(password.output)
        admin = k8s.core.v1.Secret(
            f"{name}-grafana-admin",
            metadata={"name": GRAFANA_ADMIN_SECRET, "namespace": self.namespace, "labels": PLATFORM_LABELS},
            string_data={GRAFANA_USER_KEY: "admin", GRAFANA_PASSWORD_KEY: self.grafana_password},
            opts=child,
        )
        extra, before_release = dict(args.extra_values), [admin]
        if args.alertmanager_config is not None:
            before_release.append(k8s.core.v1.Secret(
                f"{name}-alertmanager-config",
                metadata={"name": ALERTMANAGER_CONFIG_SECRET, "namespace": self.namespace, "labels": PLATFORM_LABELS},
                string_data={ALERTMANAGER_CONFIG_KEY: pulumi.Output.secret(args.alertmanager_config)},
                opts=child,
            ))
            extra = deep_merge(extra, alertmanager_secret_values())
        # Grafana reads its admin Secret at start: create it first, delete it last.
        self.release = pinned_release(
            f"{name}-release", versions.KUBE_PROMETHEUS_STACK, args.version, self.namespace,
            monitoring_values(args.retention, args.namespace, extra, args.storage, args.node_exporter_namespace),
            parent=self, timeout=900, depends_on=[*before_release, node_exporter_ns], mirror=args.mirror,
        )
        self.prometheus_url = (pulumi.Output.from_input(args.query_url) if args.query_url
                               else self.namespace.apply(prometheus_url))
        # Custom resources below need the chart's CRDs: they wait for the release.
        after_release = pulumi.ResourceOptions(parent=self, depends_on=[self.release])
        if args.rule_groups:
            k8s.apiextensions.CustomResource(
                f"{name}-gpu-rules",
                api_version="monitoring.coreos.com/v1",
                kind="PrometheusRule",
                metadata={"name": "gpu-platform", "namespace": self.namespace, "labels": PLATFORM_LABELS},
                spec={"groups": [dict(g) for g in args.rule_groups]},
                opts=after_release,
            )
        for sm_name, spec in args.service_monitors.items():
            k8s.apiextensions.CustomResource(
                f"{name}-{sm_name}-monitor",
                api_version="monitoring.coreos.com/v1",
                kind="ServiceMonitor",
                metadata={"name": sm_name, "namespace": self.namespace, "labels": PLATFORM_LABELS},
                spec=dict(spec),
                opts=after_release,
            )
        for file_name, dashboard in args.dashboards.items():
            stem = file_name.removesuffix(".json")
            k8s.core.v1.ConfigMap(
                f"{name}-dashboard-{stem}",
                metadata={
                    "name": f"dashboard-{stem}",
                    "namespace": self.namespace,
                    "labels": {**PLATFORM_LABELS, DASHBOARD_LABEL[0]: DASHBOARD_LABEL[1]},
                },
                data={file_name: json.dumps(dashboard, indent=2, sort_keys=True)},
                opts=child,
            )
        self.register_outputs({"namespace": self.namespace, "prometheusUrl": self.prometheus_url})
