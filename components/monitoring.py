"""Monitoring: kube-prometheus-stack, where KEDA reads GPU utilisation, plus our rules and dashboards.

Values follow prometheus-community/helm-charts charts/kube-prometheus-stack/values.yaml (88.5.3): the selector
switches live under `prometheus.prometheusSpec`
(the guide's top-level keys are silently ignored and nothing is ever scraped); no extra scrape job
(the GPU Operator's ServiceMonitor is the only DCGM path); Grafana's admin password is generated
here and handed to the chart as an existing Secret; every Service stays ClusterIP, no Ingress.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kube import PLATFORM_LABELS, namespace, pinned_release
from stackconfig import versions

#: Short, stable object names: services become `kps-prometheus`, `kps-grafana`, ...
FULLNAME = "kps"
PROMETHEUS_PORT = 9090
GRAFANA_ADMIN_SECRET = "grafana-admin"
GRAFANA_USER_KEY = "admin-user"
GRAFANA_PASSWORD_KEY = "admin-password"
DASHBOARD_LABEL = ("grafana_dashboard", "1")
#: Secret with `alertmanager.yaml` that the operator mounts instead of the chart's (alertmanagerSpec.configSecret).
ALERTMANAGER_CONFIG_SECRET = "alertmanager-gpu-platform"
ALERTMANAGER_CONFIG_KEY = "alertmanager.yaml"
#: node-exporter reads the host (hostNetwork, hostPID, hostPath `/`, `/proc`, `/sys`), which Pod Security
#: `baseline` refuses: it runs alone in this namespace, the only `privileged` one besides the GPU Operator's,
#: so `monitoring` (Prometheus, Grafana, Alertmanager, operators) stays `baseline`.
NODE_EXPORTER_NAMESPACE = "node-exporter"


def prometheus_url(namespace_name: str) -> str:
    """In-cluster URL of the Service the chart creates for Prometheus (`<fullname>-prometheus`)."""
    return f"http://{FULLNAME}-prometheus.{namespace_name}.svc.cluster.local:{PROMETHEUS_PORT}"


def storage_spec(size: str, storage_class: str | None) -> dict[str, Any]:
    """A PersistentVolumeClaim template for Prometheus: retention means nothing on an emptyDir."""
    claim: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if storage_class:
        claim["storageClassName"] = storage_class
    return {"volumeClaimTemplate": {"spec": claim}}


def monitoring_values(
    retention: str,
    namespace_name: str,
    extra: Mapping[str, Any] | None = None,
    storage: Mapping[str, Any] | None = None,
    node_exporter_namespace: str = NODE_EXPORTER_NAMESPACE,
) -> dict[str, Any]:
    values: dict[str, Any] = {
        "fullnameOverride": FULLNAME,
        # The subchart's own namespace (prometheus-community/helm-charts, charts/prometheus-node-exporter
        # templates/_helpers.tpl `prometheus-node-exporter.namespace`): DaemonSet, Service, ServiceMonitor.
        "prometheus-node-exporter": {"namespaceOverride": node_exporter_namespace},
        "prometheus": {
            "service": {"type": "ClusterIP", "port": PROMETHEUS_PORT},
            "ingress": {"enabled": False},
            "prometheusSpec": {
                # Select ServiceMonitors/PodMonitors/rules from every release, not only this one's.
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "podMonitorSelectorNilUsesHelmValues": False,
                "ruleSelectorNilUsesHelmValues": False,
                "retention": retention,
                **({"storageSpec": dict(storage)} if storage else {}),
            },
        },
        "alertmanager": {"service": {"type": "ClusterIP"}, "ingress": {"enabled": False}},
        "grafana": {
            "admin": {
                "existingSecret": GRAFANA_ADMIN_SECRET,
                "userKey": GRAFANA_USER_KEY,
                "passwordKey": GRAFANA_PASSWORD_KEY,
            },
            "ingress": {"enabled": False},
            "sidecar": {
                "dashboards": {
                    "enabled": True,
                    "label": DASHBOARD_LABEL[0],
                    "labelValue": DASHBOARD_LABEL[1],
                    "searchNamespace": namespace_name,
                }
            },
        },
    }
    return _deep_merge(values, extra or {})


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _deep_merge(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), dict) \
            else value
    return out


@dataclass(frozen=True)
class MonitoringArgs:
    version: str
    retention: str = "15d"
    #: Prometheus volume (`storage_spec(...)`); None keeps the TSDB on an emptyDir.
    storage: Mapping[str, Any] | None = None
    namespace: str = "monitoring"
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
    #: Rendered Alertmanager configuration (a secret Output, components/alerting.py); None keeps the chart's
    #: own, which routes every alert to its "null" receiver.
    alertmanager_config: pulumi.Input[str] | None = None


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
            # useExistingSecret: the chart then renders no config Secret of its own (values.yaml 88.5.3).
            spec = {"configSecret": ALERTMANAGER_CONFIG_SECRET, "useExistingSecret": True}
            extra = _deep_merge(extra, {"alertmanager": {"alertmanagerSpec": spec}})
        # Grafana reads its admin Secret at start: create it first, delete it last.
        self.release = pinned_release(
            f"{name}-release", versions.KUBE_PROMETHEUS_STACK, args.version, self.namespace,
            monitoring_values(args.retention, args.namespace, extra, args.storage, args.node_exporter_namespace),
            parent=self, timeout=900, depends_on=[*before_release, node_exporter_ns],
        )
        self.prometheus_url = self.namespace.apply(prometheus_url)
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
