"""A workload's own serving metrics on a real Prometheus: PodMonitor -> scrape -> the second KEDA trigger.

Loopback "pods" serve `vllm:num_requests_waiting` as vLLM exposes it (vllm/engine/metrics.py: gauge
`vllm:num_requests_waiting{model_name=...}`): two pods of prod's `inference` workload (on GPU utilisation and its
own queue trigger, as before its serving profile: tests/test_serving.py `record_prod_on_its_queue`) and look-alikes (a
sibling Deployment `inference-canary` with its own PodMonitor, the same Deployment name in another
namespace). Prometheus scrapes them with the scrape config prometheus-operator generates from a PodMonitor
(pkg/prometheus/promcfg.go, generatePodMonitorConfig: keep on the selector's pod labels and the port name,
then `namespace`, `container`, `pod`, `job`, `endpoint` target labels). The program's waiting-requests query
must return one value, the sum over exactly the workload's pods; the GPU query runs on the same server over
dcgm-exporter series, and the HPA arithmetic (capacity/hpa.py) takes the larger recommendation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from capacity import hpa
from offline.engine import Recording
from tests.prometheus_harness import (
    PROMETHEUS,
    DcgmExporter,
    ExporterNode,
    Gpu,
    PrometheusServer,
    dcgm_service_monitor,
    require,
    serve_metrics,
    service_monitor_scrape_configs,
    stop_servers,
    values_of,
)
from tests.test_serving import record_prod_on_its_queue

pytestmark = pytest.mark.subprocess

SCRAPE = "1s"
WAITING = "vllm:num_requests_waiting"


def _meta(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


@dataclass(frozen=True)
class ServingPod:
    namespace: str
    name: str
    app: str  # app.kubernetes.io/name label (the Deployment's selector)
    waiting: float


def pod_monitor_scrape_configs(pod_monitor: Mapping[str, Any], pods: Sequence[tuple[ServingPod, str, str]],
                               ) -> list[dict[str, Any]]:
    """prometheus-operator's scrape config for a PodMonitor; `pods` are (pod, address, container port name)."""
    meta, spec = pod_monitor["metadata"], pod_monitor["spec"]
    out = []
    for i, endpoint in enumerate(spec["podMetricsEndpoints"]):
        relabel: list[dict[str, Any]] = [{"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"}]
        for key, value in spec["selector"]["matchLabels"].items():
            relabel.append({"action": "keep",
                            "source_labels": [f"__meta_kubernetes_pod_label_{_meta(key)}",
                                              f"__meta_kubernetes_pod_labelpresent_{_meta(key)}"],
                            "regex": f"({value});true"})
        relabel += [
            {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"],
             "regex": endpoint["port"]},
            {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
            {"target_label": "job", "replacement": f"{meta['namespace']}/{meta['name']}"},
            {"target_label": "endpoint", "replacement": endpoint["port"]},
        ]
        targets = [{
            "targets": [address],
            "labels": {
                "__meta_kubernetes_namespace": pod.namespace,
                "__meta_kubernetes_pod_name": pod.name,
                "__meta_kubernetes_pod_container_name": pod.app,
                "__meta_kubernetes_pod_container_port_name": port,
                "__meta_kubernetes_pod_label_app_kubernetes_io_name": pod.app,
                "__meta_kubernetes_pod_labelpresent_app_kubernetes_io_name": "true",
            },
        } for pod, address, port in pods]
        out.append({
            "job_name": f"podMonitor/{meta['namespace']}/{meta['name']}/{i}",
            "honor_labels": False,
            "metrics_path": endpoint.get("path", "/metrics"),
            "scrape_interval": SCRAPE,
            "scrape_timeout": SCRAPE,
            "static_configs": targets,
            "relabel_configs": relabel,
        })
    return out


class VllmPods:
    """One loopback server per pod, serving that pod's vLLM gauges."""

    def __init__(self, pods: Sequence[ServingPod], path: str) -> None:
        self.pods, self.path = list(pods), path
        self._servers: list[ThreadingHTTPServer] = []

    def __enter__(self) -> VllmPods:
        for pod in self.pods:
            body = (f"# HELP {WAITING} Number of requests waiting to be processed.\n# TYPE {WAITING} gauge\n"
                    f'{WAITING}{{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"}} {pod.waiting:g}\n'
                    ).encode()
            self._servers.append(serve_metrics(body, self.path))
        return self

    def __exit__(self, *exc: object) -> None:
        stop_servers(self._servers)

    def address(self, pod: ServingPod) -> str:
        return f"127.0.0.1:{self._servers[self.pods.index(pod)].server_address[1]}"


@dataclass(frozen=True)
class Rendered:
    pod_monitor: Mapping[str, Any]
    triggers: Mapping[str, Mapping[str, Any]]
    port: str


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    # prod's inference on GPU utilisation and its own queue trigger (it now has a serving profile instead)
    rec = record_prod_on_its_queue()
    pod_monitor = rec.get("inference-podmonitor").inputs
    triggers = {t["name"]: t for t in rec.get("inference-scaledobject").inputs["spec"]["triggers"]}
    return Rendered(pod_monitor, triggers, pod_monitor["spec"]["podMetricsEndpoints"][0]["port"])


@pytest.fixture(scope="module")
def prometheus(rendered: Rendered, recordings: dict[str, Recording], tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[PrometheusServer]:
    require(PROMETHEUS, "prometheus")
    ours = [ServingPod("inference", "inference-7c9d5b8f6d-aaaaa", "inference", 12),
            ServingPod("inference", "inference-7c9d5b8f6d-bbbbb", "inference", 7)]
    canary = ServingPod("inference", "inference-canary-5f6d7c8b9a-ccccc", "inference-canary", 100)
    elsewhere = ServingPod("other-team", "inference-7c9d5b8f6d-ddddd", "inference", 50)
    spec = rendered.pod_monitor["spec"]
    endpoint = spec["podMetricsEndpoints"][0]
    canary_monitor = {"metadata": {"namespace": "inference", "name": "inference-canary"},
                      "spec": {**spec, "selector": {"matchLabels": {"app.kubernetes.io/name": "inference-canary"}}}}
    other_monitor = {"metadata": {"namespace": "other-team", "name": "inference"}, "spec": spec}
    gpu_values = recordings["prod"].get("gpu-operator-release").inputs["values"]["dcgmExporter"]["serviceMonitor"]
    gpus = [Gpu(i, f"GPU-{i:02d}aa1c-5e8b-4c1d-9f3e-0001{i:08d}", u, p.namespace, p.name, p.app)
            for i, (p, u) in enumerate([(ours[0], 70.0), (ours[1], 80.0), (canary, 99.0), (elsewhere, 99.0)])]
    with VllmPods([*ours, canary, elsewhere], endpoint["path"]) as pods, \
            DcgmExporter([ExporterNode("gpu-node-1", gpus)]) as dcgm_exporter:
        def scraped(monitor: Mapping[str, Any], members: Sequence[ServingPod]) -> list[dict[str, Any]]:
            # The metrics port is a named container port; a pod also exposing another port is not scraped twice.
            return pod_monitor_scrape_configs(monitor, [(p, pods.address(p), rendered.port) for p in members])

        dcgm = service_monitor_scrape_configs(dcgm_service_monitor(gpu_values, "gpu-operator"),
                                              dcgm_exporter.targets("gpu-operator"))
        config = {"global": {"scrape_interval": SCRAPE, "evaluation_interval": SCRAPE}, "scrape_configs": [
            *scraped(rendered.pod_monitor, ours),
            *scraped(canary_monitor, [canary]),
            *scraped(other_monitor, [elsewhere]),
            *[{**c, "scrape_interval": SCRAPE, "scrape_timeout": SCRAPE} for c in dcgm],
        ]}
        server = PrometheusServer(config, Path(tmp_path_factory.mktemp("serving")))
        try:
            server.start()
            server.wait_ready()
            # Every look-alike is really there: a loose query would count it.
            server.wait_until(f"count({WAITING})", lambda r: values_of(r) == [4.0])
            server.wait_until("count(DCGM_FI_DEV_GPU_UTIL)", lambda r: values_of(r) == [4.0])
            yield server
        finally:
            server.stop()


def test_the_pod_monitor_is_what_prometheus_selects(rendered: Rendered, recordings: dict[str, Recording]) -> None:
    """Same namespace as the pods, the workload's pod selector, the port the container names."""
    deployment = recordings["prod"].get("inference-deployment").inputs
    assert rendered.pod_monitor["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert rendered.pod_monitor["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert rendered.port in {p["name"] for p in container["ports"]}
    values = recordings["prod"].get("monitoring-release").inputs["values"]["prometheus"]["prometheusSpec"]
    assert values["podMonitorSelectorNilUsesHelmValues"] is False  # PodMonitors of every release are selected


def test_the_waiting_requests_trigger_sums_exactly_this_workloads_pods(
    rendered: Rendered, prometheus: PrometheusServer
) -> None:
    trigger = rendered.triggers["waiting-requests"]
    assert trigger["metadata"]["ignoreNullValues"] == "false" and trigger["metricType"] == "AverageValue"
    # avg_over_time of a constant gauge is the gauge: 12 + 7, not + 100 (canary) or + 50 (other namespace).
    result = prometheus.wait_until(trigger["metadata"]["query"], lambda r: values_of(r) == [19.0])
    assert len(result) == 1


def test_the_hpa_takes_the_larger_recommendation(rendered: Rendered, prometheus: PrometheusServer) -> None:
    gpu, waiting = rendered.triggers["gpu-utilization"], rendered.triggers["waiting-requests"]
    gpu_total = values_of(prometheus.wait_until(gpu["metadata"]["query"], lambda r: values_of(r) == [150.0]))[0]
    waiting_total = values_of(prometheus.query(waiting["metadata"]["query"]))[0]
    gpu_threshold, waiting_threshold = float(gpu["metadata"]["threshold"]), float(waiting["metadata"]["threshold"])
    assert (gpu_threshold, waiting_threshold) == (60.0, 5.0)
    # GPUs at 75 % on average ask for ceil(150 / 60) = 3 replicas; 19 waiting requests at 5 per replica ask for 4.
    assert hpa.hpa_desired_replicas(gpu_total, gpu_threshold, 2) == 3
    assert hpa.hpa_desired_replicas(waiting_total, waiting_threshold, 2) == 4
    metrics = [(gpu_total, gpu_threshold), (waiting_total, waiting_threshold)]
    assert hpa.hpa_desired_replicas_all(metrics, 2) == 4
    assert hpa.hpa_desired_replicas_all(list(reversed(metrics)), 2) == 4
    # Busy GPUs with an empty queue still scale: the largest, not the last or the smallest, wins.
    assert hpa.hpa_desired_replicas_all([(gpu_total, gpu_threshold), (0.0, waiting_threshold)], 2) == 3
