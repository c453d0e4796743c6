"""The documented base-vs-head commands in the checkout a pull request's workflow has: shallow (`--depth 1`) and
detached, with no `main` branch and no `origin/main` (what actions/checkout leaves), and in a full clone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_docs import blocks

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True,
                          text=True).stdout.strip()


def review_block() -> str:
    """docs/delivery.md's "review a branch against main" commands, as written."""
    (body,) = [body for _, lang, body, _ in blocks(ROOT / "docs" / "delivery.md") if "git worktree add" in body]
    return body


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This working tree as `main` of a repository, plus a pull-request commit on top; (repository, its sha)."""
    up = tmp_path_factory.mktemp("upstream")
    files = git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (up / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, up / name)
    git(up, "init", "-q", "-b", "main")
    git(up, "add", "-A")
    git(up, "commit", "-qm", "main")
    git(up, "checkout", "-qb", "feature")
    (up / "README.md").write_text((up / "README.md").read_text() + "\n")
    git(up, "commit", "-qam", "a pull request")
    return up, git(up, "rev-parse", "HEAD")


def pull_request_checkout(dest: Path, up: Path, sha: str) -> Path:
    """What actions/checkout does for a pull request: one commit, fetched by ref, checked out detached."""
    dest.mkdir()
    git(dest, "init", "-q")
    git(dest, "remote", "add", "origin", f"file://{up}")
    git(dest, "fetch", "-q", "--depth", "1", "origin", f"+{sha}:refs/remotes/pull/1/merge")
    git(dest, "checkout", "-q", "--detach", "refs/remotes/pull/1/merge")
    assert git(dest, "rev-parse", "--is-shallow-repository") == "true"
    assert git(dest, "for-each-ref", "--format=%(refname)") == "refs/remotes/pull/1/merge"  # no main, no origin/main
    return dest


def bash(cwd: Path, script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script, "bash", *args], cwd=cwd,
                          env={**os.environ, **GIT_ENV, "PATH": path, **env}, capture_output=True, text=True,
                          timeout=300, check=False)


def test_the_documented_review_runs_in_a_shallow_detached_checkout(upstream: tuple[Path, str], tmp_path: Path) -> None:
    up, sha = upstream
    ci = pull_request_checkout(tmp_path / "ci", up, sha)
    run = bash(ci, review_block())
    assert run.returncode == 0, run.stderr
    assert "**OK**: no change to the Gcore cluster" in run.stdout, run.stdout  # the guard read both plans
    assert git(ci, "rev-parse", "--is-shallow-repository") == "true"
    assert git(ci, "worktree", "list", "--porcelain").count("worktree ") == 1, "the base worktree is removed"


def test_the_documented_review_leaves_a_full_clone_full(upstream: tuple[Path, str], tmp_path: Path) -> None:
    up, _ = upstream
    full = tmp_path / "full"
    git(tmp_path, "clone", "-q", "--branch", "feature", f"file://{up}", str(full))
    assert git(full, "branch", "--format=%(refname:short)") == "feature"  # main only as origin/main
    run = bash(full, review_block())
    assert run.returncode == 0, run.stderr
    assert git(full, "rev-parse", "--is-shallow-repository") == "false"


@pytest.mark.parametrize("base", ["sha", "origin/main"])
def test_the_what_if_script_fetches_a_base_the_checkout_lacks(
    upstream: tuple[Path, str], tmp_path: Path, base: str
) -> None:
    up, sha = upstream
    ci = pull_request_checkout(tmp_path / "ci", up, sha)
    ref = git(up, "rev-parse", "main") if base == "sha" else base
    run = bash(ci, 'bash .github/scripts/what-if.sh "$1" out prod', ref, WHAT_IF_ARGS="--days 0.1")
    assert run.returncode == 0, run.stderr
    assert (ci / "out" / "prod.base.json").is_file() and (ci / "out" / "prod.head.json").is_file()
    assert git(ci, "rev-parse", "--is-shallow-repository") == "true"
