"""Shared fixtures: the real program evaluated per stack under Pulumi mocks (offline/engine.py)."""

from __future__ import annotations

import functools
import subprocess
import sys
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


def _marked(marker: str, what: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """`original`, refused to a test that is not marked `marker` (pytest.ini): `scripts/test.sh --quick` deselects
    by these markers, so an unmarked test that starts a process or renders the charts would slow the inner loop
    down unseen. Fixtures count for the test whose setup runs them."""

    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _running and _running[-1].get_closest_marker(marker) is None:
            raise AssertionError(f"{_running[-1].nodeid} {what}: mark it @pytest.mark.{marker} (pytest.ini)")
        return original(*args, **kwargs)

    return guarded


def _guard_markers() -> None:
    from delivery import charts, render

    subprocess.Popen.__init__ = _marked("subprocess", "starts a process", subprocess.Popen.__init__)  # type: ignore[method-assign]
    for module, name in ((render, "load_chart"), (charts, "chart_archive"), (charts, "gpu_operator_assets")):
        setattr(module, name, _marked("charts", f"reads the chart cache ({name})", getattr(module, name)))


_guard_markers()
