"""The real engine and providers without a cluster: versions, a preview of every stack offline, the generated SDK.

What `scripts/preview.sh STACK` prints, checked: the real CLI (the pinned version), the pinned providers in its
plugin list, a preview of each stack from scratch that runs to completion (no cluster, no network: scripts/e2e.sh
runs this inside a network namespace with only loopback), and the Gcore schema and SDK being what the toolchain
generates now.
"""

from __future__ import annotations

import subprocess
import sys

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
    import json

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
