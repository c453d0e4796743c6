"""Real Prometheus and promtool for the tests: the metrics path checked on the binaries, not assumed.

What lives here (the pieces the end-to-end suite shares are in localprom/, re-exported below):
- `stack_config(stack)`: the StackConfig a stack file yields, read the way `__main__.py` reads it;
- `promtool(...)` and `PrometheusServer`: the Debian `prometheus` package's binaries, run on loopback
  with a temporary TSDB (scripts/test.sh installs them; tests skip with a reason only where absent,
  and fail in CI);
- `DcgmExporter` and the scrape path (`dcgm_service_monitor`, `service_monitor_scrape_configs`):
  localprom/dcgm.py and localprom/scrape.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from localprom import server
from localprom.dcgm import DRIVER_VERSION as DRIVER_VERSION
from localprom.dcgm import MODEL as MODEL
from localprom.dcgm import DcgmExporter as DcgmExporter
from localprom.dcgm import ExporterNode as ExporterNode
from localprom.dcgm import Gpu as Gpu
from localprom.dcgm import serve_metrics as serve_metrics
from localprom.dcgm import stop_servers as stop_servers
from localprom.scrape import Target as Target
from localprom.scrape import dcgm_service_monitor as dcgm_service_monitor
from localprom.scrape import relabel_config as relabel_config
from localprom.scrape import service_monitor_scrape_configs as service_monitor_scrape_configs
from localprom.server import dump_yaml as dump_yaml
from localprom.server import free_port as free_port
from localprom.server import values_of as values_of
from offline.engine import load_config
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


class PrometheusServer(server.PrometheusServer):
    """localprom's server, skipped with the reason (failed in CI) where Debian's prometheus is not installed."""

    def start(self) -> PrometheusServer:
        self.binary = require(PROMETHEUS, "prometheus")
        super().start()
        return self
