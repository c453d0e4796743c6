"""The scrape configs prometheus-operator generates for a ServiceMonitor, so a local Prometheus scrapes what the
cluster's would, with the program's own settings and relabelling.

`dcgm_service_monitor`: the ServiceMonitor the GPU Operator renders from the program's `dcgmExporter.serviceMonitor`
values; `service_monitor_scrape_configs`: what prometheus-operator makes of a ServiceMonitor (pkg/prometheus/
promcfg.go, golden files HonorLabelsOverriding / GenerateRelabelConfig). Kubernetes endpoint discovery is replaced
by targets carrying the `__meta_kubernetes_*` labels discovery would attach (static, or in a file that Prometheus'
file discovery re-reads when it changes), so the operator's relabelings and ours run for real.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from renderers import dcgm


def dcgm_service_monitor(values: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """The ServiceMonitor the GPU Operator creates from `dcgmExporter.serviceMonitor` values.

    Base object: assets/state-dcgm-exporter/0500_service_monitor.yaml (endpoint port `gpu-metrics`,
    path /metrics, jobLabel app, selector app=nvidia-dcgm-exporter, the operator's namespace); the
    operator copies interval, scrapeTimeout, honorLabels and relabelings into the endpoint and
    additionalLabels onto the object.
    """
    if not values.get("enabled"):
        return {}
    endpoint: dict[str, Any] = {"port": dcgm.EXPORTER_PORT_NAME, "path": "/metrics"}
    for key in ("interval", "scrapeTimeout", "honorLabels", "relabelings"):
        if key in values:
            endpoint[key] = values[key]
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {
            "name": dcgm.EXPORTER_SERVICE,
            "namespace": namespace,
            "labels": {"app": dcgm.EXPORTER_APP_LABEL, **values.get("additionalLabels", {})},
        },
        "spec": {
            "endpoints": [endpoint],
            "jobLabel": "app",
            "namespaceSelector": {"matchNames": [namespace]},
            "selector": {"matchLabels": {"app": dcgm.EXPORTER_APP_LABEL}},
        },
    }


_RELABEL_KEYS = {
    "sourceLabels": "source_labels",
    "targetLabel": "target_label",
    "separator": "separator",
    "regex": "regex",
    "replacement": "replacement",
    "modulus": "modulus",
    "action": "action",
}
_META_CHARS = re.compile(r"[^a-zA-Z0-9_]")


def relabel_config(relabeling: Mapping[str, Any]) -> dict[str, Any]:
    """A ServiceMonitor RelabelConfig (camelCase) as Prometheus' relabel_config; unknown keys refused."""
    unknown = set(relabeling) - set(_RELABEL_KEYS)
    if unknown:
        raise ValueError(f"relabeling keys the translation does not know: {sorted(unknown)}")
    out = {_RELABEL_KEYS[k]: v for k, v in relabeling.items()}
    if "action" in out:
        out["action"] = str(out["action"]).lower()
    return out


def _meta(name: str) -> str:
    return _META_CHARS.sub("_", name)


@dataclass(frozen=True)
class Target:
    """One endpoint as Kubernetes discovery (role endpoints) would report it."""

    address: str
    namespace: str
    service: str
    service_labels: Mapping[str, str]
    port_name: str
    pod: str
    container: str
    node: str
    phase: str = "Running"

    def meta_labels(self) -> dict[str, str]:
        labels = {
            "__meta_kubernetes_namespace": self.namespace,
            "__meta_kubernetes_service_name": self.service,
            "__meta_kubernetes_endpoint_port_name": self.port_name,
            "__meta_kubernetes_endpoint_address_target_kind": "Pod",
            "__meta_kubernetes_endpoint_address_target_name": self.pod,
            "__meta_kubernetes_pod_name": self.pod,
            "__meta_kubernetes_pod_container_name": self.container,
            "__meta_kubernetes_pod_node_name": self.node,
            "__meta_kubernetes_pod_phase": self.phase,
        }
        for key, value in self.service_labels.items():
            labels[f"__meta_kubernetes_service_label_{_meta(key)}"] = value
            labels[f"__meta_kubernetes_service_labelpresent_{_meta(key)}"] = "true"
        return labels


def service_monitor_scrape_configs(
    service_monitor: Mapping[str, Any], targets: Sequence[Target], targets_file: Path | None = None
) -> list[dict[str, Any]]:
    """What prometheus-operator generates for a ServiceMonitor: one scrape config per endpoint.

    Operator relabelings first (selector and port `keep`s, then the target labels `namespace`, `service`,
    `pod`, `container`, `job`, `endpoint`), the endpoint's own relabelings after them; sharding omitted. With
    `targets_file` the targets come from that file (`write_targets`), which Prometheus re-reads when it changes,
    as endpoint discovery follows pods that come and go.
    """
    meta, spec = service_monitor["metadata"], service_monitor["spec"]
    out = []
    for i, endpoint in enumerate(spec["endpoints"]):
        port = endpoint["port"]
        relabel: list[dict[str, Any]] = [{"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"}]
        for key, value in spec["selector"].get("matchLabels", {}).items():
            relabel.append({
                "action": "keep",
                "source_labels": [f"__meta_kubernetes_service_label_{_meta(key)}",
                                  f"__meta_kubernetes_service_labelpresent_{_meta(key)}"],
                "regex": f"({value});true",
            })
        relabel += [
            {"action": "keep", "source_labels": ["__meta_kubernetes_endpoint_port_name"], "regex": port},
            {"source_labels": ["__meta_kubernetes_endpoint_address_target_kind",
                               "__meta_kubernetes_endpoint_address_target_name"],
             "separator": ";", "regex": "Node;(.*)", "replacement": "${1}", "target_label": "node"},
            {"source_labels": ["__meta_kubernetes_endpoint_address_target_kind",
                               "__meta_kubernetes_endpoint_address_target_name"],
             "separator": ";", "regex": "Pod;(.*)", "replacement": "${1}", "target_label": "pod"},
            {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "service"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
            {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
            {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"},
            {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job", "replacement": "${1}"},
        ]
        discovery = ({"file_sd_configs": [{"files": [str(targets_file)]}]} if targets_file is not None else
                     {"static_configs": static_targets(targets)})
        out.append(_job(f"serviceMonitor/{meta['namespace']}/{meta['name']}/{i}", spec, "service", endpoint,
                        relabel, discovery))
    return out


def _job(name: str, spec: Mapping[str, Any], role: str, endpoint: Mapping[str, Any],
         relabel: list[dict[str, Any]], discovery: Mapping[str, Any]) -> dict[str, Any]:
    """The end every monitor's scrape config shares: the `jobLabel` (from the `role`'s labels), the `endpoint`
    target label, the endpoint's own relabelings, then path, honorLabels, interval and timeout."""
    if spec.get("jobLabel"):
        relabel.append({"source_labels": [f"__meta_kubernetes_{role}_label_{_meta(spec['jobLabel'])}"],
                        "target_label": "job", "regex": "(.+)", "replacement": "${1}"})
    relabel.append({"target_label": "endpoint", "replacement": endpoint["port"]})
    relabel += [relabel_config(r) for r in endpoint.get("relabelings", [])]
    config: dict[str, Any] = {
        "job_name": name,
        "honor_labels": bool(endpoint.get("honorLabels", False)),
        "metrics_path": endpoint.get("path", "/metrics"),
        **discovery,
        "relabel_configs": relabel,
    }
    if endpoint.get("interval"):
        config["scrape_interval"] = endpoint["interval"]
    if endpoint.get("scrapeTimeout"):
        config["scrape_timeout"] = endpoint["scrapeTimeout"]
    return config


def static_targets(targets: Sequence[Target | PodTarget]) -> list[dict[str, Any]]:
    return [{"targets": [t.address], "labels": t.meta_labels()} for t in targets]


def write_targets(path: Path, targets: Sequence[Target | PodTarget]) -> None:
    """The targets for `file_sd_configs`, replaced in one rename so Prometheus never reads half a file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(static_targets(targets)))
    os.replace(tmp, path)


@dataclass(frozen=True)
class PodTarget:
    """One container port of a pod as Kubernetes discovery (role pod) would report it."""

    address: str
    namespace: str
    pod: str
    pod_labels: Mapping[str, str]
    container: str
    port_name: str
    node: str
    phase: str = "Running"

    def meta_labels(self) -> dict[str, str]:
        labels = {
            "__meta_kubernetes_namespace": self.namespace,
            "__meta_kubernetes_pod_name": self.pod,
            "__meta_kubernetes_pod_container_name": self.container,
            "__meta_kubernetes_pod_container_port_name": self.port_name,
            "__meta_kubernetes_pod_node_name": self.node,
            "__meta_kubernetes_pod_phase": self.phase,
        }
        for key, value in self.pod_labels.items():
            labels[f"__meta_kubernetes_pod_label_{_meta(key)}"] = value
            labels[f"__meta_kubernetes_pod_labelpresent_{_meta(key)}"] = "true"
        return labels


def pod_monitor_scrape_configs(pod_monitor: Mapping[str, Any], targets_file: Path) -> list[dict[str, Any]]:
    """What prometheus-operator generates for a PodMonitor (pkg/prometheus/promcfg.go
    `generatePodMonitorConfig`): one scrape config per `podMetricsEndpoints` item, named
    `podMonitor/<namespace>/<name>/<i>`; pods in Failed or Succeeded dropped, the selector's labels and the port's
    name kept, then the target labels `namespace`, `container`, `pod`, `job` (`<namespace>/<name>`) and
    `endpoint` (the port's name), the endpoint's own relabelings after them. The targets come from
    `targets_file` (`write_targets`) in place of pod discovery."""
    meta, spec = pod_monitor["metadata"], pod_monitor["spec"]
    out = []
    for i, endpoint in enumerate(spec["podMetricsEndpoints"]):
        port = endpoint["port"]
        relabel: list[dict[str, Any]] = [
            {"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"},
            {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"},
        ]
        for key, value in spec["selector"].get("matchLabels", {}).items():
            relabel.append({
                "action": "keep",
                "source_labels": [f"__meta_kubernetes_pod_label_{_meta(key)}",
                                  f"__meta_kubernetes_pod_labelpresent_{_meta(key)}"],
                "regex": f"({value});true",
            })
        relabel += [
            {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": port},
            {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
            {"target_label": "job", "replacement": f"{meta['namespace']}/{meta['name']}"},
        ]
        out.append(_job(f"podMonitor/{meta['namespace']}/{meta['name']}/{i}", spec, "pod", endpoint, relabel,
                        {"file_sd_configs": [{"files": [str(targets_file)]}]}))
    return out

