"""Shared fixtures: the real program evaluated per stack under Pulumi mocks (offline/engine.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from offline.engine import Recording, ensure_gcore_sdk, record_stack  # noqa: E402

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


def cluster_name(rec: Recording) -> str:
    """The Gcore cluster name the stack file sets (the component's name and its children's prefix)."""
    stack_file = ROOT / f"Pulumi.{rec.stack}.yaml"
    return yaml.safe_load(stack_file.read_text())["config"]["gpu-autoscaling:cluster"]["name"]
