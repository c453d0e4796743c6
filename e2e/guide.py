"""The guide's own metric path beside the stack's, on the same GPUs and the same load step, to measure both.

Gcore's guide (step 6 and 7) scrapes dcgm-exporter with an extra job (`gpu-metrics`, `scrape_interval: 1s`, the
node as `kubernetes_node`), leaves the exporter at its default collect interval (30 s: NVIDIA/dcgm-exporter
pkg/cmd/app.go) and scales on `sum(avg_over_time(DCGM_FI_DEV_GPU_UTIL{pod=~"gpu-workload.*"}[30s]))` with threshold
60. Here that runs for real next to the stack's path: a second exporter stand-in with the 30 s refresh over the same
pods, a Prometheus with the guide's job, and the guide's ScaledObject (step 7, its query pointed at the stack's
workload as the guide says to) scaling the guide's Deployment, whose 8-GPU pods tolerate no GPU taint and stay
Pending (their HPA still answers: an AverageValue target counts Pending replicas). Its HPA's first change after the
step is the guide's metric-path delay.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from e2e.gpu_load import LiveDcgmExporter
from e2e.harness import Kube
from e2e.kubeapi import KubeApi
from e2e.recorder import Recorder
from localprom.server import PrometheusServer

NAMESPACE = "guide"
DEPLOYMENT = "gpu-workload"
SCALED_OBJECT = "gpu-workload-scaledobject"
HPA = f"keda-hpa-{SCALED_OBJECT}"
EXPORTER_INTERVAL = 30.0  # dcgm-exporter's default --collect-interval, which the guide keeps
SCRAPE_INTERVAL = "1s"  # the guide's additionalScrapeConfigs job
WINDOW = "30s"


def manifests(workload: str, prometheus_url: str, scale_down_seconds: int) -> list[dict[str, Any]]:
    """The guide's step 7, as published, with its query's pod prefix set to the workload (as it instructs), and the
    scale-down stabilisation the run gives the stack's workload (the controller's default 5 minutes, divided like
    every duration of the run): the metric-path rounds wait for both HPAs to come back down. Its way up, which is
    what is measured, is the guide's."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": DEPLOYMENT, "namespace": NAMESPACE},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "gpu"}},
                  "template": {"metadata": {"labels": {"app": "gpu"}}, "spec": {"containers": [{
                      "name": DEPLOYMENT, "image": "registry.example.com/gpu-app:latest",
                      "command": ["/usr/bin/your-command"], "args": ["--argument-1", "--argument-2"],
                      "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}}},
        {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
         "metadata": {"name": SCALED_OBJECT, "namespace": NAMESPACE},
         "spec": {"scaleTargetRef": {"name": DEPLOYMENT}, "minReplicaCount": 1, "maxReplicaCount": 16,
                  "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {"scaleDown": {
                      "stabilizationWindowSeconds": scale_down_seconds}}}},
                  "triggers": [{"type": "prometheus", "metadata": {
                      "serverAddress": prometheus_url, "metricName": "gpu-utilization", "threshold": "60",
                      "query": f'sum(avg_over_time(DCGM_FI_DEV_GPU_UTIL{{pod=~"{workload}.*"}}[{WINDOW}]))'}}]}},
    ]


def scrape_config(targets_file: Path) -> dict[str, Any]:
    """The guide's `gpu-metrics` job (step 6) over the exporter's endpoints, discovery standing in as for ours."""
    return {"job_name": "gpu-metrics", "scrape_interval": SCRAPE_INTERVAL, "scrape_timeout": SCRAPE_INTERVAL,
            "metrics_path": "/metrics", "scheme": "http", "file_sd_configs": [{"files": [str(targets_file)]}],
            "relabel_configs": [{"source_labels": ["__meta_kubernetes_pod_node_name"], "action": "replace",
                                 "target_label": "kubernetes_node"}]}


@dataclass
class GuidePath:
    prom: PrometheusServer
    exporter: LiveDcgmExporter
    #: (wall time, desiredReplicas) of the guide's HPA, as it changes.
    desired: list[tuple[float, int]] = field(default_factory=list)

    def first_change_after(self, t: float) -> float | None:
        before = [d for ts, d in self.desired if ts <= t]
        base = before[-1] if before else None
        return next((ts for ts, d in self.desired if ts > t and d != base), None)


@contextmanager
def guide_path(kube: Kube, api: KubeApi, recorder: Recorder, load: Any, workload: str, namespace: str,
               exporter_namespace: str, workdir: Path, scale_down_seconds: int) -> Iterator[GuidePath]:
    workdir.mkdir(parents=True, exist_ok=True)
    targets = workdir / "targets.json"
    exporter = LiveDcgmExporter(recorder, load, namespace, workload, targets, exporter_namespace,
                                refresh=EXPORTER_INTERVAL)
    prom = PrometheusServer({"global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": "30s"},
                             "scrape_configs": [scrape_config(targets)]}, workdir / "prometheus")
    path = GuidePath(prom, exporter)
    stop = threading.Event()
    exporter.start()
    prom.start()
    prom.wait_ready()
    for doc in manifests(workload, prom.url, scale_down_seconds):
        kube.apply(doc)

    def on_hpa(obj: dict[str, Any]) -> None:
        d = int(obj.get("status", {}).get("desiredReplicas", 0))
        if not path.desired or path.desired[-1][1] != d:
            path.desired.append((time.time(), d))

    def on_list(items: list[dict[str, Any]]) -> None:
        for item in items:
            on_hpa(item)

    api.watch(f"/apis/autoscaling/v2/namespaces/{NAMESPACE}/horizontalpodautoscalers",
              on_list, lambda kind, obj: on_hpa(obj), stop,
              fieldSelector=f"metadata.name={HPA}")
    try:
        yield path
    finally:
        stop.set()
        kube.run("delete", "namespace", NAMESPACE, "--wait=false", check=False)
        exporter.stop()
        prom.stop()
