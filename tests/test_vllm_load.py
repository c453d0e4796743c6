"""The serving chain's engine stand-in (e2e/vllm_load.py) and the PodMonitor's scrape config
(localprom/scrape.py `pod_monitor_scrape_configs`), on a real Prometheus: what e2e/test_serving_chain.py's
triggers read must be what the service model says, under the labels the stack's PodMonitor gives them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from capacity.service import ServiceModel
from e2e.gpu_load import LoadProfile
from e2e.vllm_load import LiveVllmExporter, p90_split
from localprom.scrape import pod_monitor_scrape_configs
from renderers import workload_specs
from stackconfig.engines import VLLM
from tests.prometheus_harness import PROMETHEUS, PrometheusServer, require, values_of
from tests.vllm_history import TPOT_BUCKETS, TTFT_BUCKETS, prod_with_profile


def interpolated_p90(buckets: tuple[float, ...], shares: dict[int, float]) -> float:
    """Prometheus' histogram_quantile(0.9) of one observation set (promql/quantile.go `bucketQuantile`: linear
    inside the bucket that holds the rank, the first bucket from 0)."""
    rank, below = 0.9, 0.0
    for i, upper in enumerate(buckets):
        count = shares.get(i, 0.0)
        if below + count >= rank:
            lower = buckets[i - 1] if i > 0 else 0.0
            return lower + (upper - lower) * (rank - below) / count
        below += count
    return buckets[-1]


@pytest.mark.parametrize("target", [0.023, 0.0235, 0.04, 0.07, 0.3, 0.49, 0.5, 0.74, 0.99, 3.0, 50.0])
def test_each_ticks_requests_read_the_models_p90(target: float) -> None:
    for buckets in (TTFT_BUCKETS, TPOT_BUCKETS):
        shares = p90_split(buckets, target)
        assert sum(shares.values()) == pytest.approx(1.0)
        assert interpolated_p90(buckets, shares) == pytest.approx(target)


class FakeRecorder:
    def __init__(self, pods: list[dict[str, Any]]) -> None:
        self.pods = pods

    def of(self, namespace: str, name: str) -> list[dict[str, Any]]:
        return [p for p in self.pods if p["metadata"]["namespace"] == namespace]


def pod(name: str, labels: dict[str, str], ready: bool = True, gpus: int = 1) -> dict[str, Any]:
    return {"metadata": {"uid": name, "name": name, "namespace": "inference", "labels": labels},
            "spec": {"nodeName": "gpu-0", "containers": [{"name": "inference",
                                                           "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": str(ready)}]}}


@pytest.mark.subprocess
def test_the_pod_monitors_scrape_of_the_engines_gives_the_triggers_the_models_numbers(tmp_path: Path) -> None:
    """Two Ready pods and one loading share 1.0 GPUs of work: each engine reports the load (0.5), the P90 TPOT of
    that load (7 + 33 × 0.5 = 23.5 ms), no queue; the loading pod has no series; the series carry the PodMonitor's
    target labels (`job` = namespace/name, `endpoint` = the port, `namespace`, `pod`, `container`)."""
    require(PROMETHEUS, "prometheus")
    w = prod_with_profile().workloads[0]
    assert w.serving is not None and w.metrics is not None
    labels = workload_specs.selector(w)
    recorder = FakeRecorder([pod("inference-7c9d5b8f6d-aaaaa", labels), pod("inference-7c9d5b8f6d-bbbbb", labels),
                             pod("inference-7c9d5b8f6d-ccccc", labels, ready=False)])
    monitor = {"metadata": {"name": w.name, "namespace": w.namespace},
               "spec": {**workload_specs.pod_monitor_spec(w)}}
    monitor["spec"]["podMetricsEndpoints"][0]["interval"] = "1s"
    targets = tmp_path / "targets.json"
    model = ServiceModel.from_config(w.serving, 15)
    assert model is not None
    gpu_load = LoadProfile()
    exporter = LiveVllmExporter(recorder, LoadProfile(), model, VLLM, w.namespace, w.name,  # type: ignore[arg-type]
                                w.metrics.port, targets, gpu_load, tick=0.25)
    exporter.demand.set(1.0)
    server = PrometheusServer({"global": {"scrape_interval": "1s"},
                               "scrape_configs": pod_monitor_scrape_configs(monitor, targets)}, tmp_path / "prom")
    exporter.start()
    try:
        server.start()
        server.wait_ready()
        time.sleep(6)
        kv = server.query(f"{VLLM.kv_cache_gauge}")
        assert sorted(s["metric"]["pod"] for s in kv) == ["inference-7c9d5b8f6d-aaaaa", "inference-7c9d5b8f6d-bbbbb"]
        assert values_of(kv) == [pytest.approx(0.5)] * 2
        first = kv[0]["metric"]
        assert (first["job"], first["endpoint"], first["namespace"], first["container"], first["engine"]) == (
            f"{w.namespace}/{w.name}", w.metrics.port, w.namespace, "inference", "0")
        p90 = server.wait_until(f"histogram_quantile(0.9, sum by (le) (rate({VLLM.tpot_histogram}_bucket[4s])))",
                                lambda r: bool(r), timeout=20)
        assert values_of(p90) == [pytest.approx(0.0235, rel=1e-3)]
        assert values_of(server.query(f"sum({VLLM.queue_gauge})")) == [0.0]
        assert gpu_load.gpus == pytest.approx(1.0), "the guardrail's GPUs see the work served"
    finally:
        exporter.stop()
        server.stop()


def test_the_pod_monitors_config_keeps_only_the_selected_pods_on_its_port(tmp_path: Path) -> None:
    """prometheus-operator's PodMonitor config: phase, selector and port `keep`s before the target labels."""
    w = prod_with_profile().workloads[0]
    monitor = {"metadata": {"name": w.name, "namespace": w.namespace}, "spec": workload_specs.pod_monitor_spec(w)}
    (job,) = pod_monitor_scrape_configs(monitor, tmp_path / "t.json")
    assert job["job_name"] == f"podMonitor/{w.namespace}/{w.name}/0"
    relabel = job["relabel_configs"]
    assert {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"],
            "regex": "(Failed|Succeeded)"} in relabel
    assert {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"],
            "regex": "http"} in relabel
    assert {"target_label": "job", "replacement": f"{w.namespace}/{w.name}"} in relabel
    assert job["scrape_interval"] == "15s" and job["metrics_path"] == "/metrics"
