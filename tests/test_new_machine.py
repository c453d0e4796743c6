"""A first run on a new machine: the tools that fill a cache of their own on first use (matplotlib's font cache,
Helm's SDK) run with an empty HOME, XDG_CACHE_HOME and MPLCONFIGDIR, in a process of their own, so no test's
success rests on a cache the machine happens to have. (The suite gives matplotlib a fresh MPLCONFIGDIR per run
too, tests/conftest.py; pip's cache only speeds up `scripts/test.sh`'s install and no test reads it.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.chart_cache import require_charts

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.subprocess


def new_machine(tmp_path: Path) -> dict[str, str]:
    """The environment with HOME, its XDG folders and MPLCONFIGDIR empty, and no Helm or pip settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HELM_", "PIP_", "MPL"))}
    home = tmp_path / "home"
    for folder in (home, tmp_path / "mplconfig"):
        folder.mkdir()
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), MPLCONFIGDIR=str(tmp_path / "mplconfig"))
    return env


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=new_machine(tmp_path), capture_output=True,
                          text=True, timeout=300, check=False)


def test_the_what_if_plots_with_empty_caches(tmp_path: Path) -> None:
    done = run(tmp_path, "-m", "capacity", "dev", "--days", "0.2", "--plot", "dev.png")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "dev.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the first-run path: matplotlib built its font cache here, in the empty folder
    assert list((tmp_path / "mplconfig").glob("fontlist-*.json")), sorted((tmp_path / "mplconfig").iterdir())


@pytest.mark.charts
def test_a_pinned_chart_renders_with_empty_caches(tmp_path: Path) -> None:
    require_charts()
    script = ("from delivery import render\nfrom stackconfig import versions\n"
              "texts = render.render_text(versions.KEDA.name, versions.KEDA.default_version, '{}', 'keda', 'keda', "
              "'v1.33.0', ())\n"
              "print(sum(1 for _ in render.parse(texts)), 'objects')")
    done = run(tmp_path, "-c", script)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[0]) > 10, done.stdout
