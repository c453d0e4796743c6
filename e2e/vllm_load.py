"""The serving chain's load: vLLM's own metric families per Ready pod, driven by the what-if's per-GPU service model.

Under kwok no container runs, so something must say what each vLLM engine would report. `LiveVllmExporter`
stands in for the engines of the workload: one loopback endpoint per Ready pod, serving the families and labels of
vLLM's `PrometheusStatLogger` (vllm/v1/metrics/loggers.py, v0.12.0 onward; the names of stackconfig/engines.py,
the buckets and `model_name`/`engine` labels of tests/vllm_history.py):

- `vllm:time_to_first_token_seconds` and `vllm:request_time_per_output_token_seconds`, histograms with one
  observation per finished request;
- `vllm:num_requests_waiting`, `vllm:num_requests_running`, `vllm:kv_cache_usage_perc`, gauges.

Prometheus finds the endpoints through a targets file carrying the labels pod discovery would attach, and scrapes
them with the scrape config prometheus-operator makes of the stack's own PodMonitor (localprom/scrape.py
`pod_monitor_scrape_configs`). A pod still loading its model has no endpoint: vLLM's API server, which serves
/metrics, starts only after the engine has loaded the model, so the PodMonitor's scrape of it fails and adds no
series; leaving the target out has the same effect on every query.

What the engines report comes from capacity/service.py's model, the one the what-if uses, ticked every second on
the wall clock: demand of D GPUs of work (at the knee) arrives, the Ready GPUs serve up to their capacity, the
excess waits first in, first out. Below the knee the P90 TPOT rises linearly from `perGpu.tpotP90` to
`perGpu.tpotP90AtKnee`; above it the backlog grows and the P90 TTFT is `perGpu.ttftP90` plus the wait. The
histograms get, per tick and pod, the requests served (`REQUESTS_PER_GPU_SECOND` per GPU-second of work),
spread over two neighbouring buckets so that `histogram_quantile(0.9, …)` of that tick reads exactly the model's
P90 (Prometheus interpolates linearly inside a bucket); counts are fluid like the model, so they are not whole
numbers. The queue is the backlog in requests, the running batch and the KV cache follow the load. The GPU load
the dcgm-exporter stand-in (e2e/gpu_load.py) reports is the work served, so the guardrail sees the same load.

The model runs on the wall clock, like the metric path (scrapes, rate windows and smoothing are not shortened);
only the pods' start-up is divided by e2e/timescale.py's FACTOR.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from capacity.service import Service, ServiceModel
from e2e.gpu_load import LoadProfile
from e2e.objects import pod_gpus
from e2e.recorder import Recorder, is_ready
from localprom.dcgm import serve_metrics, stop_servers
from localprom.scrape import PodTarget, write_targets
from stackconfig.engines import EngineMetrics
from tests.vllm_history import MODEL, TPOT_BUCKETS, TTFT_BUCKETS

#: Requests one GPU finishes per second of work at the knee (e.g. 2,000 output tokens/s in 1,000-token answers).
REQUESTS_PER_GPU_SECOND = 2.0
#: Requests in an engine's batch at the knee (vLLM's max_num_seqs order of magnitude for an 8B model).
BATCH_AT_KNEE = 64
QUANTILE = 0.9


def p90_split(buckets: Sequence[float], target: float) -> dict[int, float]:
    """Fractions of one tick's requests per bucket index (len(buckets) is +Inf) whose linearly interpolated
    0.9-quantile is `target`: the bucket (a, b] that holds `target` gets the rest, and a fraction `q` goes to
    the bucket below it (target in the lower 90 % of (a, b]) or a fraction `r` to the bucket above it."""
    j = next((i for i, b in enumerate(buckets) if b >= target), len(buckets))
    if j == len(buckets):
        return {j: 1.0}
    a = buckets[j - 1] if j > 0 else 0.0
    f = (target - a) / (buckets[j] - a)
    if f <= QUANTILE:
        q = (QUANTILE - f) / (1 - f)
        return {j - 1: q, j: 1 - q} if j > 0 else {j: 1.0}
    r = 1 - QUANTILE / f
    return {j: 1 - r, j + 1: r}


@dataclass
class Histogram:
    buckets: Sequence[float]
    counts: list[float] = field(default_factory=list)  # per bucket, not cumulative; last is +Inf
    total: float = 0.0
    sum: float = 0.0

    def __post_init__(self) -> None:
        self.counts = [0.0] * (len(self.buckets) + 1)

    def observe(self, p90: float, requests: float) -> None:
        if requests <= 0:
            return
        for index, share in p90_split(self.buckets, p90).items():
            self.counts[index] += share * requests
        self.total += requests
        self.sum += p90 * requests

    def exposition(self, name: str, labels: str) -> list[str]:
        lines, running = [], 0.0
        for le, count in zip([*(repr(b) for b in self.buckets), "+Inf"], self.counts, strict=True):
            running += count
            lines.append(f'{name}_bucket{{{labels},le="{le}"}} {running!r}')
        lines += [f"{name}_count{{{labels}}} {self.total!r}", f"{name}_sum{{{labels}}} {self.sum!r}"]
        return lines


@dataclass
class Engine:
    """One pod's engine: its counters since it started serving, its gauges now."""

    pod: dict[str, Any]
    ttft: Histogram = field(default_factory=lambda: Histogram(TTFT_BUCKETS))
    tpot: Histogram = field(default_factory=lambda: Histogram(TPOT_BUCKETS))
    waiting: float = 0.0
    running: float = 0.0
    kv_cache: float = 0.0

    def exposition(self, e: EngineMetrics) -> bytes:
        labels = f'engine="0",model_name="{MODEL}"'
        lines = [f"# TYPE {e.ttft_histogram} histogram", *self.ttft.exposition(e.ttft_histogram, labels),
                 f"# TYPE {e.tpot_histogram} histogram", *self.tpot.exposition(e.tpot_histogram, labels)]
        for name, value in ((e.queue_gauge, self.waiting), (e.running_gauge, self.running),
                            (e.kv_cache_gauge, self.kv_cache)):
            lines += [f"# TYPE {name} gauge", f"{name}{{{labels}}} {value!r}"]
        return ("\n".join(lines) + "\n").encode()


@dataclass
class LiveVllmExporter:
    recorder: Recorder
    demand: LoadProfile  # GPUs of work at the knee, set by the test
    model: ServiceModel
    metrics: EngineMetrics
    namespace: str
    workload: str
    port_name: str  # the PodMonitor's endpoint port
    targets_file: Path
    #: The dcgm-exporter stand-in's load: set to the GPUs of work served.
    gpu_load: LoadProfile
    tick: float = 1.0
    service: Service = field(init=False)
    #: (time, demand, ready GPUs, backlog, load, P90 TTFT, P90 TPOT) per tick, for the report.
    history: list[tuple[float, float, int, float, float, float, float]] = field(default_factory=list)
    _engines: dict[str, Engine] = field(default_factory=dict)
    _servers: dict[str, ThreadingHTTPServer] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.service = Service(self.model, 4)

    def start(self) -> LiveVllmExporter:
        write_targets(self.targets_file, [])
        threading.Thread(target=self._run, name="vllm exporter", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        stop_servers(servers)

    def _run(self) -> None:
        last = time.time()
        while not self._stop.wait(max(0.0, last + self.tick - time.time())):
            now = time.time()
            self.step(now - last)
            last = now

    def ready_pods(self) -> list[dict[str, Any]]:
        return [p for p in self.recorder.of(self.namespace, self.workload) if is_ready(p)]

    def step(self, dt: float) -> None:
        """One tick of the service model over the Ready pods, then the engines' counters and gauges."""
        pods = [p for p in self.ready_pods() if pod_gpus(p) > 0]
        gpus = sum(pod_gpus(p) for p in pods)
        s = self.service
        s.step(self.demand.gpus, float(gpus), dt)
        self.gpu_load.gpus = s.load * gpus
        self.history.append((time.time(), self.demand.gpus, gpus, s.backlog, s.load, s.ttft, s.tpot))
        finished = s.load * gpus * dt * REQUESTS_PER_GPU_SECOND
        gone: list[ThreadingHTTPServer] = []
        with self._lock:
            changed = False
            for uid in [u for u in self._engines if u not in {p["metadata"]["uid"] for p in pods}]:
                del self._engines[uid]
                gone.append(self._servers.pop(uid))
                changed = True
            for pod in pods:
                uid = pod["metadata"]["uid"]
                engine = self._engines.get(uid)
                if engine is None:
                    engine = self._engines[uid] = Engine(pod)
                    self._servers[uid] = serve_metrics(self._body_of(uid))
                    changed = True
                share = pod_gpus(pod) / gpus
                engine.ttft.observe(s.ttft, finished * share)
                engine.tpot.observe(s.tpot, finished * share)
                engine.waiting = s.backlog * REQUESTS_PER_GPU_SECOND * share
                engine.running = s.load * BATCH_AT_KNEE * pod_gpus(pod)
                engine.kv_cache = s.load
            if changed:
                write_targets(self.targets_file, self.targets())
        stop_servers(gone)

    def _body_of(self, uid: str) -> Any:
        def body() -> bytes:
            with self._lock:
                engine = self._engines.get(uid)
                return engine.exposition(self.metrics) if engine is not None else b""
        return body

    def targets(self) -> list[PodTarget]:
        """Each serving pod as pod discovery sees it, on the PodMonitor's port."""
        out = []
        for uid, engine in sorted(self._engines.items(), key=lambda kv: kv[1].pod["metadata"]["name"]):
            pod = engine.pod
            out.append(PodTarget(address=f"127.0.0.1:{self._servers[uid].server_address[1]}",
                                 namespace=pod["metadata"]["namespace"], pod=pod["metadata"]["name"],
                                 pod_labels=pod["metadata"].get("labels", {}),
                                 container=pod["spec"]["containers"][0]["name"], port_name=self.port_name,
                                 node=pod["spec"].get("nodeName", "")))
        return out
