"""realengine.stack.project_dir: the project directory the real CLI and language host run a program in (no CLI
needed here: what the host reads is Pulumi.yaml's runtime options, `__main__.py` and the virtualenv)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from realengine.stack import ToolchainMissing, project_dir

ROOT = Path(__file__).resolve().parent.parent


def test_the_project_directory_has_the_projects_files_and_this_virtualenv(tmp_path: Path) -> None:
    project_dir(ROOT, tmp_path)
    assert (tmp_path / "Pulumi.yaml").read_text() == (ROOT / "Pulumi.yaml").read_text()
    assert (tmp_path / "__main__.py").resolve() == ROOT / "__main__.py"
    assert (tmp_path / ".venv").resolve() == Path(sys.prefix).resolve()  # the name Pulumi.yaml gives it


def test_a_consumer_gets_the_same_virtualenv_under_its_own_name(tmp_path: Path) -> None:
    project_dir(ROOT / "examples" / "package-consumer", tmp_path)
    assert (tmp_path / "venv").resolve() == Path(sys.prefix).resolve()
    assert not (tmp_path / ".venv").exists()


@pytest.mark.parametrize("runtime", ["python", "{name: python, options: {toolchain: uv, virtualenv: .venv}}",
                                     "{name: python, options: {toolchain: pip}}"])
def test_a_runtime_without_a_pip_virtualenv_is_refused(tmp_path: Path, runtime: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "Pulumi.yaml").write_text(f"name: x\nruntime: {runtime}\n")
    with pytest.raises(ToolchainMissing, match=r"runtime\.options .*toolchain: pip.*virtualenv: <dir>"):
        project_dir(src, tmp_path / "work")


@pytest.mark.subprocess
def test_a_prelude_runs_first_and_the_program_sees_the_project_directory(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "Pulumi.yaml").write_text("name: x\nruntime: {name: python, options: {virtualenv: .venv}}\n")
    (src / "__main__.py").write_text("import pathlib, json\nprint(json.dumps([PATCHED, str(pathlib.Path(__file__)"
                                     ".parent)]))\n")
    project_dir(src, tmp_path / "work", prelude="import builtins\nbuiltins.PATCHED = 1")
    # As the executor script runs it (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec: runpy.run_path).
    out = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path('.', run_name='__main__')"],
                         cwd=tmp_path / "work", capture_output=True, text=True, check=True).stdout
    assert out.strip() == f'[1, "{tmp_path / "work"}"]'
