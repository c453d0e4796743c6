"""The GPU load of the autoscaling suite: a load profile, and a dcgm-exporter stand-in that reports it per GPU for
the pods the real scheduler placed on the kwok nodes.

Under kwok no container runs and no GPU exists, so something must say how busy each GPU is. `LiveDcgmExporter`
stands in for the GPU Operator's dcgm-exporter DaemonSet: one loopback endpoint per node of the pool from when it
registers (so Prometheus has found it, as it finds the DaemonSet's pod, before any pod is bound there), serving for
the node's allocatable GPUs `DCGM_FI_DEV_GPU_UTIL` (and the other default fields) with exactly dcgm-exporter's labels
(localprom/dcgm.py), each GPU mapped to the pod that holds it, as dcgm-exporter's Kubernetes mapping (the kubelet's
pod-resources API) maps devices to pods. Its readings refresh every `--collect-interval`, the program's 5 s
(renderers/dcgm.py EXPORTER_COLLECT_INTERVAL_MS), and are served between refreshes as read; Prometheus finds the
endpoints through a targets file carrying the labels endpoint discovery would attach, and scrapes them with the
scrape config prometheus-operator makes of the program's ServiceMonitor.

The rule the load follows is the what-if's (docs/capacity-what-if.md, "Utilisation"): demand of D GPUs is spread
over the workload's Ready GPUs, each capped at 100 %; GPUs of pods still starting, of placeholders and of no pod read
0. So a step of the profile reaches Prometheus as it would from a real server: at the exporter's next refresh, then
the next scrape.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path

from e2e.objects import pod_gpus
from e2e.recorder import Recorder, is_ready
from localprom.dcgm import ExporterNode, Gpu, serve_metrics
from localprom.scrape import Target, write_targets
from renderers import dcgm
from stacknames import NAME_LABEL


@dataclass
class LoadProfile:
    """Demand in GPUs of the workload, changed by the test; every change is kept with its time."""

    gpus: float = 0.0
    changes: list[tuple[float, float]] = field(default_factory=list)

    def set(self, gpus: float) -> float:
        now = time.time()
        self.gpus = gpus
        self.changes.append((now, gpus))
        return now


def gpu_uuid(node: str, index: int) -> str:
    digest = hashlib.sha1(node.encode()).hexdigest()[:8]
    return f"GPU-{digest}-{index:04x}-4c1d-9f3e-{index:012x}"


@dataclass
class LiveDcgmExporter:
    recorder: Recorder
    load: LoadProfile
    namespace: str  # the workload's
    workload: str
    targets_file: Path
    exporter_namespace: str
    refresh: float = dcgm.EXPORTER_COLLECT_INTERVAL_MS / 1000
    #: Refreshes happen at `phase` + k × `refresh` (wall clock).
    phase: float = 0.0
    #: Wall-clock times of the refreshes (what Prometheus can have seen is at most the last one).
    refreshes: list[float] = field(default_factory=list)
    _bodies: dict[str, bytes] = field(default_factory=dict)
    _servers: dict[str, ThreadingHTTPServer] = field(default_factory=dict)
    _held: dict[str, dict[int, str]] = field(default_factory=dict)  # node -> GPU index -> pod uid
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> LiveDcgmExporter:
        write_targets(self.targets_file, [])
        self.collect()
        threading.Thread(target=self._run, name="dcgm exporter", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for server in self._servers.values():
            server.shutdown()
            server.server_close()

    def next_refresh(self, now: float) -> float:
        """Refreshes happen on a wall-clock grid (`phase`), so the prediction can start in phase with them."""
        return now - ((now - self.phase) % self.refresh) + self.refresh

    def _run(self) -> None:
        while not self._stop.wait(max(0.0, self.next_refresh(time.time() + 0.05) - time.time())):
            self.collect()

    def step(self, gpus: float, lead: float = 0.3) -> float:
        """Change the load just before the next refresh, which publishes it; returns the time of the change."""
        now = time.time()
        target = self.next_refresh(now) - lead
        if target <= now:
            target += self.refresh
        time.sleep(target - now)
        return self.load.set(gpus)

    def _body_of(self, node: str) -> Callable[[], bytes]:
        return lambda: self._bodies.get(node, b"")

    def collect(self) -> None:
        """One refresh: GPUs -> pods (kept while a pod holds them), utilisation from the load, bodies, targets."""
        nodes = self.recorder.exporter_nodes()
        pods = self.recorder.gpu_pods()
        ready_gpus = sum(pod_gpus(p) for p in pods if self._ours(p) and is_ready(p))
        each = min(100.0, 100.0 * self.load.gpus / ready_gpus) if ready_gpus else 0.0
        bodies: dict[str, bytes] = {}
        for node, count in nodes.items():
            held = self._held.setdefault(node, {})
            here = {p["metadata"]["uid"]: p for p in pods if p["spec"]["nodeName"] == node}
            for index in [i for i, uid in held.items() if uid not in here]:
                del held[index]
            for uid, pod in sorted(here.items(), key=lambda kv: kv[1]["metadata"]["creationTimestamp"]):
                need = pod_gpus(pod) - sum(1 for u in held.values() if u == uid)
                for index in [i for i in range(count) if i not in held][: max(0, need)]:
                    held[index] = uid
            gpus = []
            for index in range(count):
                holder = here.get(held.get(index, ""))
                if holder is None:
                    gpus.append(Gpu(index, gpu_uuid(node, index), 0.0))
                    continue
                busy = each if self._ours(holder) and is_ready(holder) else 0.0
                container = holder["spec"]["containers"][0]["name"]
                gpus.append(Gpu(index, gpu_uuid(node, index), busy, holder["metadata"]["namespace"],
                                holder["metadata"]["name"], container))
            bodies[node] = ExporterNode(node, gpus).exposition().encode()
        with self._lock:
            self._bodies = bodies
            for node in [n for n in self._servers if n not in nodes]:
                server = self._servers.pop(node)
                server.shutdown()
                server.server_close()
                self._held.pop(node, None)
            changed = False
            for node in nodes:
                if node not in self._servers:
                    self._servers[node] = serve_metrics(self._body_of(node))
                    changed = True
            if changed or len(self._servers) != len(nodes):
                write_targets(self.targets_file, self.targets())
        self.refreshes.append(time.time())

    def _ours(self, pod: dict[str, object]) -> bool:
        md = pod["metadata"]
        assert isinstance(md, dict)
        return bool(md["namespace"] == self.namespace and md.get("labels", {}).get(NAME_LABEL) == self.workload)

    def targets(self) -> list[Target]:
        """Each exporter as endpoint discovery sees it behind the GPU Operator's `nvidia-dcgm-exporter` Service."""
        return [Target(address=f"127.0.0.1:{server.server_address[1]}", namespace=self.exporter_namespace,
                       service=dcgm.EXPORTER_SERVICE,
                       service_labels={"app": dcgm.EXPORTER_APP_LABEL,
                                       "app.kubernetes.io/component": dcgm.EXPORTER_APP_LABEL},
                       port_name=dcgm.EXPORTER_PORT_NAME, pod=ExporterNode(node).exporter_pod,
                       container=dcgm.EXPORTER_APP_LABEL, node=node)
                for node, server in sorted(self._servers.items())]
