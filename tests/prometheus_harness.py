"""Real Prometheus and promtool for the tests: the metrics path checked on the binaries, not assumed.

What lives here:
- `stack_config(stack)`: the StackConfig a stack file yields, read the way `__main__.py` reads it;
- `promtool(...)` and `PrometheusServer`: the Debian `prometheus` package's binaries, run on loopback
  with a temporary TSDB (scripts/test.sh installs them; tests skip with a reason only where absent);
- `DcgmExporter`: a loopback HTTP server that serves DCGM series labelled exactly as dcgm-exporter
  labels them (NVIDIA/dcgm-exporter internal/pkg/rendermetrics/render_metrics.go);
- `dcgm_service_monitor` / `service_monitor_scrape_configs`: the ServiceMonitor the GPU Operator renders
  from the program's `dcgmExporter.serviceMonitor` values, and the scrape config prometheus-operator
  generates from a ServiceMonitor (pkg/prometheus/promcfg.go, golden files HonorLabelsOverriding /
  GenerateRelabelConfig). Kubernetes endpoint discovery is replaced by static targets carrying the
  `__meta_kubernetes_*` labels discovery would attach, so the operator's relabelings and ours run for real.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from offline.engine import load_config
from renderers import dcgm
from stackconfig import StackConfig, load_stack_config

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
MISSING_REASON = (
    "{binary} is not installed: the metrics-path tests need Debian's `prometheus` package "
    "(scripts/test.sh installs it with apt-get)"
)


def require(binary: str | None, name: str) -> str:
    """The binary's path, or skip the calling test with the reason (never silently pass).

    CI sets REQUIRE_PROMETHEUS=1: there a missing binary fails the run instead of skipping it.
    """
    if binary is None:
        if os.environ.get("REQUIRE_PROMETHEUS") == "1":
            pytest.fail(MISSING_REASON.format(binary=name))
        pytest.skip(MISSING_REASON.format(binary=name))
    return binary


def stack_config(stack: str) -> StackConfig:
    """The validated config of `Pulumi.<stack>.yaml`, decoded like `__main__.project_config()` does."""
    project, config, _ = load_config(stack)
    raw: dict[str, Any] = {}
    for key, value in config.items():
        if not key.startswith(f"{project}:"):
            continue
        try:
            raw[key.removeprefix(f"{project}:")] = json.loads(value)
        except json.JSONDecodeError:
            raw[key.removeprefix(f"{project}:")] = value
    return load_stack_config(raw)


def promtool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    binary = require(PROMTOOL, "promtool")
    return subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def dump_yaml(data: Any, path: Path) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=10_000))
    return path


# --- the DCGM scrape path as the cluster would build it ---------------------------------------------


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
    service_monitor: Mapping[str, Any], targets: Sequence[Target]
) -> list[dict[str, Any]]:
    """What prometheus-operator generates for a ServiceMonitor: one scrape config per endpoint.

    Operator relabelings first (selector and port `keep`s, then the target labels `namespace`, `service`,
    `pod`, `container`, `job`, `endpoint`), the endpoint's own relabelings after them; sharding omitted.
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
        if spec.get("jobLabel"):
            relabel.append({"source_labels": [f"__meta_kubernetes_service_label_{_meta(spec['jobLabel'])}"],
                            "target_label": "job", "regex": "(.+)", "replacement": "${1}"})
        relabel.append({"target_label": "endpoint", "replacement": port})
        relabel += [relabel_config(r) for r in endpoint.get("relabelings", [])]
        config: dict[str, Any] = {
            "job_name": f"serviceMonitor/{meta['namespace']}/{meta['name']}/{i}",
            "honor_labels": bool(endpoint.get("honorLabels", False)),
            "metrics_path": endpoint.get("path", "/metrics"),
            "static_configs": [{"targets": [t.address], "labels": t.meta_labels()} for t in targets],
            "relabel_configs": relabel,
        }
        if endpoint.get("interval"):
            config["scrape_interval"] = endpoint["interval"]
        if endpoint.get("scrapeTimeout"):
            config["scrape_timeout"] = endpoint["scrapeTimeout"]
        out.append(config)
    return out


# --- a dcgm-exporter stand-in ---------------------------------------------------------------------

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


def serve_metrics(body: bytes, path: str = "/metrics") -> ThreadingHTTPServer:
    """A loopback HTTP server (ephemeral port) that answers `path` with a Prometheus text exposition."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            if self.path != path:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

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


# --- a real Prometheus ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrometheusServer:
    """`prometheus` on 127.0.0.1 with its own config and a short-retention TSDB in `workdir`."""

    def __init__(self, config: Mapping[str, Any], workdir: Path, rule_groups: Iterable[Mapping[str, Any]] = ()):
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        config = dict(config)
        groups = list(rule_groups)
        if groups:
            dump_yaml({"groups": groups}, workdir / "rules.yaml")
            config["rule_files"] = ["rules.yaml"]
        self.config_file = dump_yaml(config, workdir / "prometheus.yml")
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> PrometheusServer:
        binary = require(PROMETHEUS, "prometheus")
        self.port = free_port()
        self._log = (self.workdir / "prometheus.log").open("wb")
        self.process = subprocess.Popen(
            [binary, f"--config.file={self.config_file}", f"--storage.tsdb.path={self.workdir / 'tsdb'}",
             "--storage.tsdb.retention.time=1h", f"--web.listen-address=127.0.0.1:{self.port}",
             "--log.level=warn"],
            stdout=self._log, stderr=subprocess.STDOUT,
        )
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _get(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}{path}{query}", timeout=5) as response:  # noqa: S310 (loopback)
            return json.loads(response.read()) if path.startswith("/api/") else response.read()

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited: {self.log()}")
            try:
                self._get("/-/ready")
                return
            except OSError:
                time.sleep(0.05)
        raise TimeoutError(f"prometheus not ready after {timeout}s: {self.log()}")

    def wait_until(self, expr: str, predicate: Any, timeout: float = 15.0) -> list[dict[str, Any]]:
        """Poll an instant query until `predicate(result)` holds (scrapes and rule runs are asynchronous)."""
        deadline = time.monotonic() + timeout
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            result = self.query(expr)
            if predicate(result):
                return result
            time.sleep(0.1)
        raise TimeoutError(f"{expr!r} never satisfied the condition; last result {result}")

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """Instant query through the HTTP API, as KEDA's Prometheus scaler sends it."""
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        body = self._get("/api/v1/query", **params)
        assert body["status"] == "success", body
        return list(body["data"]["result"])

    def log(self) -> str:
        path = self.workdir / "prometheus.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if getattr(self, "_log", None):
            self._log.close()


def values_of(result: Sequence[Mapping[str, Any]]) -> list[float]:
    return [float(sample["value"][1]) for sample in result]
