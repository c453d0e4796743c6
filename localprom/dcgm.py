"""A dcgm-exporter stand-in: loopback HTTP servers serving DCGM series labelled exactly as dcgm-exporter labels
them (NVIDIA/dcgm-exporter internal/pkg/rendermetrics/render_metrics.go), one per GPU node, behind the
`nvidia-dcgm-exporter` Service as endpoint discovery would see it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from localprom.scrape import Target
from renderers import dcgm

#: The labels dcgm-exporter puts on every GPU series (render_metrics.go), before the Kubernetes ones.
DRIVER_VERSION = "570.124.06"
MODEL = "NVIDIA H100 80GB HBM3"


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str
    utilization: float
    #: The pod holding the GPU; empty strings when none does (dcgm-exporter's own convention).
    namespace: str = ""
    pod: str = ""
    container: str = ""


@dataclass
class ExporterNode:
    """One GPU node: its dcgm-exporter pod serves the node's GPUs."""

    node: str
    gpus: list[Gpu] = field(default_factory=list)

    @property
    def exporter_pod(self) -> str:
        return f"{dcgm.EXPORTER_APP_LABEL}-{hashlib.sha1(self.node.encode()).hexdigest()[:5]}"

    def exposition(self) -> str:
        """The /metrics body, in the order and with the labels dcgm-exporter renders."""
        lines = []
        for metric, help_, value_of in (
            (dcgm.GPU_UTIL_METRIC, "GPU utilization (in %).", lambda g: g.utilization),
            ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", lambda g: 40.0),
            ("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", lambda g: 0.0),
        ):
            lines += [f"# HELP {metric} {help_}", f"# TYPE {metric} gauge"]
            for g in self.gpus:
                labels = {
                    "gpu": str(g.index), dcgm.GPU_ID_LABEL: g.uuid, "pci_bus_id": f"00000000:{0x18 + g.index:02X}:00.0",
                    "device": f"nvidia{g.index}", "modelName": MODEL, "Hostname": self.node,
                    "DCGM_FI_DRIVER_VERSION": DRIVER_VERSION,
                    "container": g.container, "namespace": g.namespace, "pod": g.pod,
                }
                body = ",".join(f'{k}="{v}"' for k, v in labels.items())
                lines.append(f"{metric}{{{body}}} {value_of(g):g}")
        return "\n".join(lines) + "\n"


def serve_metrics(body: bytes | Callable[[], bytes], path: str = "/metrics") -> ThreadingHTTPServer:
    """A loopback HTTP server (ephemeral port) that answers `path` with a Prometheus text exposition: `body`, or
    what `body()` returns at each scrape."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            if self.path != path:
                self.send_error(404)
                return
            payload = body() if callable(body) else body
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop_servers(servers: Iterable[ThreadingHTTPServer]) -> None:
    for server in servers:
        server.shutdown()
        server.server_close()


class DcgmExporter:
    """One loopback HTTP server per node, each serving that node's /metrics."""

    def __init__(self, nodes: Sequence[ExporterNode]) -> None:
        self.nodes = list(nodes)
        self._servers: list[ThreadingHTTPServer] = []

    def __enter__(self) -> DcgmExporter:
        self._servers = [serve_metrics(node.exposition().encode()) for node in self.nodes]
        return self

    def __exit__(self, *exc: object) -> None:
        stop_servers(self._servers)

    def targets(self, namespace: str) -> list[Target]:
        """Each exporter pod as endpoint discovery sees it behind the `nvidia-dcgm-exporter` Service."""
        return [
            Target(
                address=f"127.0.0.1:{server.server_address[1]}",
                namespace=namespace,
                service=dcgm.EXPORTER_SERVICE,
                service_labels={"app": dcgm.EXPORTER_APP_LABEL,
                                "app.kubernetes.io/component": dcgm.EXPORTER_APP_LABEL},
                port_name=dcgm.EXPORTER_PORT_NAME,
                pod=node.exporter_pod,
                container=dcgm.EXPORTER_APP_LABEL,
                node=node.node,
            )
            for node, server in zip(self.nodes, self._servers, strict=True)
        ]
