"""The real engine and providers without a cluster: versions, a preview of every stack offline, the generated SDK.

What `scripts/preview.sh STACK` prints, checked: the real CLI (the pinned version), the pinned providers in its
plugin list, a preview of each stack from scratch that runs to completion (no cluster, no network: scripts/e2e.sh
runs this inside a network namespace with only loopback), and the Gcore schema and SDK being what the toolchain
generates now.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from realengine.preview import dummy_secrets
from realengine.stack import local_stack
from realengine.toolchain import ROOT, Toolchain, pins, plugins, stamp
from tests.conftest import STACKS


def test_the_cli_and_plugins_are_the_pinned_ones(tc: Toolchain) -> None:
    version = subprocess.run([tc.pulumi, "version"], env=tc.env(), capture_output=True, text=True, check=True)
    assert version.stdout.strip() == str(pins()["pulumi"]["version"])
    listed = subprocess.run([tc.pulumi, "plugin", "ls", "--json"], env=tc.env(), capture_output=True, text=True,
                            check=True).stdout
    have = {(p["kind"], p["name"], p["version"]) for p in json.loads(listed)}
    assert set(plugins()) <= have
    assert ("resource", "kubernetes", stamp("pulumi-kubernetes")) in have


@pytest.mark.parametrize("stack", STACKS)
def test_a_preview_of_every_stack_runs_offline(tc: Toolchain, stack: str) -> None:
    with local_stack(stack, tc, secrets=dummy_secrets(stack)) as ls:
        result = ls.preview(diff=True)
    summary = result.change_summary
    assert set(summary) == {"create"} and summary["create"] > 20
    # Nothing secret is printed: the token, the placeholders and the Grafana password stay `[secret]`.
    assert "fake-token-for-local-previews" not in result.stdout and "placeholder-" not in result.stdout


def test_the_gcore_schema_and_sdk_are_what_the_toolchain_generates() -> None:
    check = subprocess.run([sys.executable, "-m", "realengine.gcore_sdk", "--check"], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert check.returncode == 0, check.stderr


def test_a_preview_against_a_base_revision_shows_only_what_changed(tmp_path: Path) -> None:
    """`--base` (what the pull-request workflow runs): the base revision's own `up` into a local cluster, then this
    checkout's preview of the same stack; a maxNodes change updates the cluster's pool, and nothing is created."""
    out = tmp_path / "preview.json"
    proc = subprocess.run([sys.executable, "-m", "realengine.preview", "dev", "--base", "HEAD", "--set",
                           "gpu-autoscaling:gpuPool.maxNodes=3", "--json", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stderr.rsplit("change summary: ", 1)[1].splitlines()[0])
    assert "create" not in summary and summary["update"] >= 1
    steps = {st["urn"].rsplit("::", 1)[-1]: st["op"] for st in json.loads(out.read_text())["steps"]}
    assert steps["gpu-cluster"] == "update"
    assert "maxNodes   : 2 => 3" in proc.stdout
