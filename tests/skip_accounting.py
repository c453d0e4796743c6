"""pytest plugin (scripts/test.sh loads it with `-p tests.skip_accounting`): count and explain every skip.

A skipped test proves nothing, and a silent skip hides that (12 tests once skipped on every fresh clone because
they read files beside the checkout). The run prints how many tests skipped and why; in CI (`CI=true`) a skip
is allowed only when a tool that a user's machine may lack is missing, and every other skip fails the run.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

#: Optional tools whose absence may skip tests, and the skip reason the tests give when they are missing.
OPTIONAL_TOOLS: dict[str, re.Pattern[str]] = {
    # tests/prometheus_harness.py MISSING_REASON (CI also sets REQUIRE_PROMETHEUS=1, which fails instead).
    "prometheus/promtool (Debian package `prometheus`)": re.compile(r"^(prometheus|promtool) is not installed"),
    # tests/test_workflows.py runs the comment helper under Node.js where it is installed.
    "node (Node.js)": re.compile(r"^node is not installed"),
    # tests/test_native.py compares the compiled simulator with the Python one where a C compiler is installed.
    "a C compiler (cc)": re.compile(r"^no C compiler"),
}

_skips: list[tuple[str, str]] = []


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _skips.append((report.nodeid, _reason(report)))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:
        _skips.append((report.nodeid, _reason(report)))


def explained_by(reason: str) -> str | None:
    """The optional tool whose absence explains the skip, or None."""
    return next((tool for tool, pattern in OPTIONAL_TOOLS.items() if pattern.search(reason)), None)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    unexplained = [(node, reason) for node, reason in _skips if explained_by(reason) is None]
    if unexplained and os.environ.get("CI") == "true" and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    write = terminalreporter.write_line
    write(f"skipped tests: {len(_skips)}")
    for node, reason in _skips:
        tool = explained_by(reason)
        why = f"optional tool missing: {tool}" if tool else "NOT explained by a missing optional tool"
        write(f"  {node}: {why} ({reason})")
    unexplained = [s for s in _skips if explained_by(s[1]) is None]
    if unexplained and os.environ.get("CI") == "true":
        write(f"error: {len(unexplained)} skip(s) in CI not explained by a missing optional tool "
              f"({', '.join(OPTIONAL_TOOLS)}): the run fails", red=True)
