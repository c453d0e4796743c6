"""tests/skip_accounting.py: every skip counted; in CI only a missing optional tool may explain one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import skip_accounting
from tests.prometheus_harness import MISSING_REASON

ROOT = Path(__file__).resolve().parent.parent


def test_the_optional_tools_explain_the_skips_the_tests_give() -> None:
    assert (skip_accounting.explained_by(MISSING_REASON.format(binary="promtool")) or "").startswith(
        "prometheus/promtool")
    assert skip_accounting.explained_by("node is not installed") == "node (Node.js)"
    assert skip_accounting.explained_by("chart cache incomplete: keda-2.20.2.tgz ...") is None


def run(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_s.py").write_text(
        "import pytest\n"
        "def test_tool(): pytest.skip('node is not installed')\n"
        "def test_other(): pytest.skip('reference data is absent')\n"
        "def test_ok(): pass\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": "true"} if ci else {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.skip_accounting", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), str(tmp_path / "test_s.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )


@pytest.mark.subprocess
def test_skips_are_counted_and_an_unexplained_one_fails_in_ci(tmp_path: Path) -> None:
    local = run(tmp_path, ci=False)
    assert local.returncode == 0, local.stdout
    assert "skipped tests: 2" in local.stdout
    assert "optional tool missing: node (Node.js)" in local.stdout
    assert "test_other: NOT explained by a missing optional tool (reference data is absent)" in local.stdout
    ci = run(tmp_path, ci=True)
    assert ci.returncode == 1, ci.stdout
    assert "1 skip(s) in CI not explained" in ci.stdout
