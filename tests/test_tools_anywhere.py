"""The offline tools as a user runs them: from any directory of the project's `.venv`, writing only the files
asked for, and refusing an unusable folder or output with exit 2 and the fix (never a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

from offline import plan
from stackconfig.__main__ import main as stackconfig_main

ROOT = Path(__file__).resolve().parents[1]
PTH = Path(sysconfig.get_paths()["purelib"]) / "gpu-autoscaling-repository.pth"


def tool(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as in a user's shell
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_scripts_test_sh_registers_the_repository_in_the_environment() -> None:
    assert PTH.is_file(), f"{PTH} is missing: run the tests with `bash scripts/test.sh`, which writes it"
    assert Path(PTH.read_text().strip()).resolve() == ROOT


@pytest.mark.parametrize(
    ("args", "status", "expected"),
    [
        (["stackconfig", "dev", "--dir", str(ROOT)], 0, "dev: valid"),
        (["stackconfig", "prod"], 2, f"no Pulumi.yaml in {{cwd}}. Fix: give --dir the project folder (this tool's "
                                     f"own: {ROOT})"),
        (["offline.plan", "dev", "--out", "{cwd}/dev.yaml"], 0, "resources → {cwd}/dev.yaml, {cwd}/dev.mmd"),
        (["capacity", "dev", "--days", "0.1", "--json", "r.json"], 0, "simulated 0.1 days"),
        (["capacity.compare"], 2, "usage: python -m capacity.compare"),
        (["capacity.compare", "--help"], 0, "DIR         folder of <stack>.base.json"),
        (["capacity", "--help"], 0, "usage: python -m capacity"),
        # argparse %-formats help strings: a default such as '97%' in one must be escaped
        (["capacity", "tune", "--help"], 0, "(default 97%; a workload with a serving"),
        (["delivery.guard", "--help"], 0, ""),
        (["delivery.policy_check", "{cwd}/none.yaml", "--config", str(ROOT / "policy/config/dev.json")], 2, ""),
        (["delivery.render_check", "--help"], 0, ""),
        (["delivery.charts", "--help"], 0, ""),
    ],
    ids=lambda v: v if isinstance(v, int) else None,
)
@pytest.mark.subprocess
def test_every_tool_runs_from_another_directory(tmp_path: Path, args: list[str], status: int, expected: str) -> None:
    run = tool(tmp_path, *(a.replace("{cwd}", str(tmp_path)) for a in args))
    out = run.stdout + run.stderr
    assert "No module named" not in out and "Traceback" not in out, out
    assert run.returncode == status, out
    assert expected.replace("{cwd}", str(tmp_path)) in out
    if args[0] == "offline.plan":
        assert (tmp_path / "dev.yaml").is_file() and (tmp_path / "dev.mmd").is_file()
    if "--json" in args:
        assert (tmp_path / "r.json").is_file(), "a relative --json is from the current directory"


def test_a_plan_sent_to_dev_null_leaves_no_diagram_beside_it(capsys: pytest.CaptureFixture[str]) -> None:
    stray = Path("/dev/null.mmd")
    if stray.is_file():  # left by an earlier run of the old code
        stray.unlink()
    assert plan.main(["dev", "--out", "/dev/null"]) == 0, capsys.readouterr().err
    assert "resources → /dev/null\n" in capsys.readouterr().err
    assert not stray.exists()
    assert plan.default_diagram("-") is None and plan.default_diagram("/dev/null") is None
    assert plan.default_diagram("out/prod.yaml") == "out/prod.mmd"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--out", "{tmp}"], "--out {tmp} is a directory"),
        (["--out", "{tmp}/p.mmd"], "--diagram {tmp}/p.mmd is the plan file itself"),
        (["--out", "{tmp}/p.yaml", "--diagram", "{tmp}"], "--diagram {tmp} is a directory"),
        (["--out", "/proc/no/p.yaml"], "cannot write /proc/no"),
    ],
)
def test_an_unusable_plan_output_is_refused_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    assert plan.main(["dev", *(a.replace("{tmp}", str(tmp_path)) for a in args)]) == 2
    err = capsys.readouterr().err
    assert expected.replace("{tmp}", str(tmp_path)) in err and "Fix:" in err, err
    assert not (tmp_path / "p.mmd").exists()


@pytest.mark.parametrize(
    ("make", "stack", "expected"),
    [
        (lambda d: (d / "file").write_text("x"), "dev", "--dir {dir}/file is not a directory"),
        (lambda d: (d / "Pulumi.dev.yaml").write_bytes(b"config:\n  gpu-autoscaling:cluster:\n    name: caf\xe9\n"),
         "dev", "Pulumi.dev.yaml:3: 'byte 0xe9' is not UTF-8 text"),
        (lambda d: (d / "Pulumi.dev.yaml").mkdir(), "dev", "is a directory, not a stack file"),
        (lambda d: (d / "Pulumi.yaml").write_text("runtime: python\n"), "dev", "has no project `name:`"),
        (lambda d: None, "staging", "no Pulumi.staging.yaml in {dir}. Fix: name one of the stacks there: none"),
    ],
    ids=["dir-is-a-file", "stack-file-not-utf8", "stack-file-is-a-directory", "project-without-name", "no-stack"],
)
def test_stackconfig_refuses_an_unusable_project_folder_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], object], stack: str, expected: str
) -> None:
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    make(tmp_path)
    folder = tmp_path / "file" if "{dir}/file" in expected else tmp_path
    assert stackconfig_main([stack, "--dir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert expected.replace("{dir}", str(tmp_path)) in err and "Fix:" in err, err


@pytest.mark.parametrize("args", [["capacity", "dev"], ["capacity", "tune", "dev"], ["offline.plan", "dev"],
                                  ["stackconfig", "dev"], ["delivery.render_check", "--help"]],
                         ids=lambda a: " ".join(a))
@pytest.mark.subprocess
def test_a_tool_outside_the_virtualenv_says_how_to_enter_it(args: list[str]) -> None:
    """`python3 -m capacity` from the repository root with no virtualenv: the packages are found in the current
    directory, their requirements are not (`-S`: the interpreter without site-packages, as outside `.venv`)."""
    run = subprocess.run([sys.executable, "-S", "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.returncode == 1 and not run.stdout, run
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"error: python -m {args[0]} needs the project's virtualenv (no module named "), line
    assert "source " in line or "bash scripts/test.sh" in line, line
