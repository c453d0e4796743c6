"""`prometheus` on 127.0.0.1 with its own config and a short-retention TSDB: the Debian package's binary (what
scripts/test.sh installs), queried through the HTTP API as KEDA's Prometheus scaler queries it.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml


def dump_yaml(data: Any, path: Path) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=10_000))
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrometheusServer:
    """`prometheus` on 127.0.0.1 with its own config and a short-retention TSDB in `workdir`."""

    def __init__(self, config: Mapping[str, Any], workdir: Path, rule_groups: Iterable[Mapping[str, Any]] = (),
                 port: int = 0, binary: str | None = None):
        self.workdir = workdir
        self.binary = binary
        workdir.mkdir(parents=True, exist_ok=True)
        config = dict(config)
        groups = list(rule_groups)
        if groups:
            dump_yaml({"groups": groups}, workdir / "rules.yaml")
            config["rule_files"] = ["rules.yaml"]
        self.config_file = dump_yaml(config, workdir / "prometheus.yml")
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> PrometheusServer:
        """Start it (on `port`, or a free one); a second start after `stop` keeps the port and the TSDB."""
        binary = self.binary or shutil.which("prometheus")
        if binary is None:
            raise FileNotFoundError("prometheus is not installed (Debian's `prometheus` package)")
        self.port = self.port or free_port()
        self._log = (self.workdir / "prometheus.log").open("ab")
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
