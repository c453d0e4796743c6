"""The platform's Prometheus, for real, on loopback: what kube-prometheus-stack's Prometheus would scrape and
evaluate on the cluster, made from what `pulumi up` deployed.

Under kwok neither prometheus-operator nor Prometheus runs, so nothing turns the stack's ServiceMonitors and
PrometheusRules into a Prometheus configuration; this does, as prometheus-operator would
(localprom/scrape.py):
- the global scrape and evaluation intervals of the cluster's `Prometheus` object (the chart's);
- the DCGM ServiceMonitor the GPU Operator makes from the deployed release's `dcgmExporter.serviceMonitor` values
  (read from the stack's state), over the exporter stand-in's endpoints (e2e/gpu_load.py);
- the `keda-operator` ServiceMonitor the stack deployed, over the local KEDA operator's metrics endpoint, with the
  labels of the cluster's `keda-operator` Service;
- the stack's own PrometheusRule (`gpu-platform`: recording rules and alerts), unchanged.
KEDA's ScaledObjects query this Prometheus (the stack's `monitoring.queryUrl` points at it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from e2e.harness import Kube
from e2e.keda import OPERATOR
from localprom.scrape import Target, dcgm_service_monitor, service_monitor_scrape_configs
from localprom.server import PrometheusServer
from renderers import dcgm
from renderers.chart_values import KEDA_METRICS_PORT_NAME
from stackconfig.units import go_duration_seconds
from stacknames import GPU_OPERATOR_NAMESPACE, KEDA_NAMESPACE, MONITORING_NAMESPACE

#: The stack's own rules (components/monitoring.py), as opposed to the chart's defaults.
PLATFORM_RULES = "gpu-platform"


def release_values(state: Mapping[str, Any], release: str) -> dict[str, Any]:
    """The Helm values a release of the stack was deployed with (the engine's state)."""
    for resource in state["resources"]:
        if resource["urn"].endswith(f"::{release}"):
            return dict(resource["inputs"]["values"])
    raise LookupError(f"no resource {release} in the stack's state")


def exporter_refresh_seconds(gpu_operator_values: Mapping[str, Any]) -> float:
    """dcgm-exporter's collect interval as deployed (`DCGM_EXPORTER_INTERVAL`, ms), else its default 30 s
    (NVIDIA/dcgm-exporter pkg/cmd/app.go)."""
    env = {e["name"]: e.get("value") for e in gpu_operator_values["dcgmExporter"].get("env", [])}
    return int(env.get("DCGM_EXPORTER_INTERVAL") or 30_000) / 1000


def keda_operator_target(kube: Kube, metrics_address: str) -> Target:
    svc = kube.get("service", OPERATOR, "-n", KEDA_NAMESPACE)
    return Target(address=metrics_address, namespace=KEDA_NAMESPACE, service=OPERATOR,
                  service_labels=svc["metadata"].get("labels", {}), port_name=KEDA_METRICS_PORT_NAME,
                  pod=f"{OPERATOR}-local", container=OPERATOR, node="system-0")


def platform_prometheus(kube: Kube, state: Mapping[str, Any], workdir: Path, targets_file: Path, port: int,
                        keda_metrics: str, extra_jobs: Sequence[Mapping[str, Any]] = ()) -> PrometheusServer:
    """The platform's Prometheus (not started): intervals, scrape jobs and rules as the cluster would run them;
    `extra_jobs` are more scrape configs of the stack's own monitors (a workload's PodMonitor)."""
    prom = kube.get("prometheus", "-n", MONITORING_NAMESPACE)["items"][0]["spec"]
    values = release_values(state, "gpu-operator-release")["dcgmExporter"]["serviceMonitor"]
    dcgm_jobs = service_monitor_scrape_configs(dcgm_service_monitor(values, GPU_OPERATOR_NAMESPACE), [],
                                               targets_file=targets_file)
    keda_monitor = kube.get("servicemonitor", OPERATOR, "-n", MONITORING_NAMESPACE)
    keda_jobs = service_monitor_scrape_configs(keda_monitor, [keda_operator_target(kube, keda_metrics)])
    rules = kube.get("prometheusrule", PLATFORM_RULES, "-n", MONITORING_NAMESPACE)["spec"]["groups"]
    config = {"global": {"scrape_interval": prom.get("scrapeInterval", "30s"),
                         "evaluation_interval": prom.get("evaluationInterval", "30s")},
              "scrape_configs": [*dcgm_jobs, *keda_jobs, *extra_jobs]}
    return PrometheusServer(config, workdir, rules, port=port)


def keda_errors_prometheus(kube: Kube, workdir: Path, keda_metrics: str, factor: float) -> PrometheusServer:
    """A second Prometheus that keeps watching KEDA while the platform's is down: the stack's `keda-operator` scrape
    job and rules, the scrape interval divided by the time factor (so that its samples, stretched back by the
    factor, are the production series promtool evaluates the alert on), rules evaluated as often."""
    keda_monitor = kube.get("servicemonitor", OPERATOR, "-n", MONITORING_NAMESPACE)
    (job,) = service_monitor_scrape_configs(keda_monitor, [keda_operator_target(kube, keda_metrics)])
    interval = f"{max(1, round((go_duration_seconds(job.get('scrape_interval', '30s')) or 30) / factor))}s"
    job = {**job, "scrape_interval": interval, "scrape_timeout": interval}
    rules = kube.get("prometheusrule", PLATFORM_RULES, "-n", MONITORING_NAMESPACE)["spec"]["groups"]
    config = {"global": {"scrape_interval": interval, "evaluation_interval": interval}, "scrape_configs": [job]}
    return PrometheusServer(config, workdir, rules)


def dcgm_samples(prom: PrometheusServer, selector: str, window: str = "10m") -> dict[str, list[tuple[float, float]]]:
    """Every raw sample of the workload's GPU series in the last `window`: series (UUID) -> [(time, value)]."""
    out: dict[str, list[tuple[float, float]]] = {}
    for series in prom.query(f"{dcgm.GPU_UTIL_METRIC}{{{selector}}}[{window}]"):
        out[series["metric"][dcgm.GPU_ID_LABEL] + "/" + series["metric"].get("pod", "")] = [
            (float(t), float(v)) for t, v in series["values"]]
    return out


def dump(obj: Any, path: Path) -> Path:
    path.write_text(json.dumps(obj, indent=2))
    return path
