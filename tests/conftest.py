"""Shared fixtures: the real program evaluated per stack under Pulumi mocks (offline/engine.py)."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from offline.engine import Recording, ensure_gcore_sdk, record_stack  # noqa: E402
from stacknames import CLUSTER_COMPONENT  # noqa: E402

ensure_gcore_sdk()

#: The stacks every "each stack" test evaluates: one per `Pulumi.<stack>.yaml`, so adding a stack file is all it
#: takes (its `policy/config/<stack>.json` and workflow entries are then required by the tests).
STACKS = tuple(sorted(path.name.split(".")[1] for path in ROOT.glob("Pulumi.*.yaml")))


@pytest.fixture(scope="session")
def recordings() -> dict[str, Recording]:
    """Each stack's graph, evaluated once per test session (recordings are read-only snapshots)."""
    return {stack: record_stack(stack) for stack in STACKS}


@pytest.fixture(params=STACKS)
def rec(request: pytest.FixtureRequest, recordings: dict[str, Recording]) -> Recording:
    return recordings[request.param]


@pytest.fixture
def record() -> Callable[..., Recording]:
    """Evaluate a stack with some project keys replaced: `record("dev", gpuPool={...})`."""

    def run(stack: str = "dev", into: Recording | None = None, **overrides: Any) -> Recording:
        return record_stack(stack, overrides, into=into)

    return run


#: The cluster's component and its children: fixed names, whatever the stack calls its cluster (issue 17).
CLUSTER_RESOURCE = f"{CLUSTER_COMPONENT}-cluster"
PROVIDER_RESOURCE = f"{CLUSTER_COMPONENT}-provider"


def cluster_name(rec: Recording) -> str:
    """The Gcore cluster name the stack file sets (the cluster's `name` input, not any resource's name)."""
    stack_file = ROOT / f"Pulumi.{rec.stack}.yaml"
    return yaml.safe_load(stack_file.read_text())["config"]["gpu-autoscaling:cluster"]["name"]


#: The test being run (its setup, call and teardown, fixtures of any scope included).
_running: list[pytest.Item] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _running.append(item)
    yield
    _running.pop()


def _fresh_matplotlib_config() -> None:
    """A new, empty MPLCONFIGDIR for this run (shared by its xdist workers and the processes the tests start), so no
    test reads a font cache the machine happens to have (~/.cache/matplotlib) and every run takes the path of a
    first run on a new machine: matplotlib builds its font cache on first import, running `fc-list`
    (matplotlib 3.11 `font_manager._get_fontconfig_fonts`), about 0.2 s of CPU."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker inherits its controller's folder
    folder = tempfile.mkdtemp(prefix="pytest-mplconfig-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["MPLCONFIGDIR"] = folder


def _matplotlib_font_cache(args: tuple[Any, ...]) -> bool:
    """The `fc-list` matplotlib's font manager runs to build its font cache: a library filling its own cache on
    first use, not a process the test starts, so it needs no `subprocess` marker."""
    argv = args[1] if len(args) > 1 else None
    if not (isinstance(argv, list | tuple) and argv and argv[0] == "fc-list"):
        return False
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__") == "matplotlib.font_manager":
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _marked(marker: str, what: str, original: Callable[..., Any],
            allowed: Callable[[tuple[Any, ...]], bool] = lambda args: False) -> Callable[..., Any]:
    """`original`, refused to a test that is not marked `marker` (pytest.ini): `scripts/test.sh --quick` deselects
    by these markers, so an unmarked test that starts a process or renders the charts would slow the inner loop
    down unseen. Fixtures count for the test whose setup runs them; `allowed(args)` lets a call through."""

    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _running and _running[-1].get_closest_marker(marker) is None and not allowed(args):
            raise AssertionError(f"{_running[-1].nodeid} {what}: mark it @pytest.mark.{marker} (pytest.ini)")
        return original(*args, **kwargs)

    return guarded


def _guard_markers() -> None:
    from delivery import charts, render

    subprocess.Popen.__init__ = _marked("subprocess", "starts a process", subprocess.Popen.__init__,  # type: ignore[method-assign]
                                        _matplotlib_font_cache)
    for module, name in ((render, "load_chart"), (charts, "chart_archive"), (charts, "gpu_operator_assets")):
        setattr(module, name, _marked("charts", f"reads the chart cache ({name})", getattr(module, name)))


_fresh_matplotlib_config()
_guard_markers()
