"""The README and docs/ as a newcomer meets them: short README, links that resolve, commands that run.

Every shell block in the docs carries a marker on the line before it: `<!-- runnable -->` (this test runs it, in
the repository root, in the test's own environment, as `bash -e`), or `<!-- runnable: skip (why) -->` for what needs
a Pulumi CLI, a cluster or an account. A YAML block marked `<!-- stack-file -->` is validated as a stack file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from stackconfig import load_stack_config
from tests.chart_cache import require_charts

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "policy/config/README.md"]
README_MAX_BYTES = 10_500
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[A-Za-z]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.M | re.S)
MARKER = re.compile(r"<!--\s*(?P<kind>runnable|stack-file)(?P<rest>[^>]*)-->\s*$")
SHELLS = {"sh", "bash", "shell", "console"}


def blocks(path: Path) -> list[tuple[int, str, str, str | None]]:
    """(line, language, body, marker) for every fenced block; marker is the comment on the line before it."""
    text = path.read_text()
    out = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        indent = match.group("indent")
        body = "\n".join(row.removeprefix(indent) for row in match.group("body").splitlines())
        out.append((line, match.group("lang"), body, marker.group(0) if marker else None))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, re.M)}


def test_readme_is_short() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move detail into docs/ (limit {README_MAX_BYTES})"


#: docs/ as a whole and any one page: what a reader finishes (detail beyond it goes, or into a tool's docstring).
DOCS_MAX_BYTES, PAGE_MAX_BYTES = 160_000, 20_000


def test_the_docs_are_short_enough_to_finish() -> None:
    pages = {p.name: len(p.read_bytes()) for p in (ROOT / "docs").glob("*.md")}
    assert sum(pages.values()) <= DOCS_MAX_BYTES, (
        f"docs/ is {sum(pages.values())} bytes (limit {DOCS_MAX_BYTES}): cut measurement logs and derivations")
    long = {name: size for name, size in pages.items() if size > PAGE_MAX_BYTES}
    assert not long, f"pages over {PAGE_MAX_BYTES} bytes: {long}; split or cut them"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_link_resolves(doc: Path) -> None:
    text = FENCE.sub("", doc.read_text())
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest} is missing")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading '#{anchor}' in {dest.name}")
    assert not broken, f"{doc.name}: broken links:\n" + "\n".join(broken)


def shell_blocks() -> list[tuple[str, str, str | None]]:
    return [(f"{doc.relative_to(ROOT)}:{line}", body, marker)
            for doc in DOCS for line, lang, body, marker in blocks(doc) if lang in SHELLS]


def test_every_shell_block_says_whether_it_runs() -> None:
    unmarked = [where for where, _, marker in shell_blocks() if marker is None or "stack-file" in marker]
    assert not unmarked, ("shell blocks without `<!-- runnable -->` or `<!-- runnable: skip (why) -->` before "
                          f"them: {unmarked}")
    no_reason = [where for where, _, marker in shell_blocks()
                 if marker and "skip" in marker and not re.search(r"skip\s*\(.+\)", marker)]
    assert not no_reason, f"skipped shell blocks must say why: {no_reason}"


RUNNABLE = [(where, body) for where, body, marker in shell_blocks()
            if marker and "runnable" in marker and "skip" not in marker]


def test_the_docs_have_runnable_commands() -> None:
    assert len(RUNNABLE) >= 3, RUNNABLE


@pytest.mark.parametrize(("where", "body"), RUNNABLE, ids=[w for w, _ in RUNNABLE])
@pytest.mark.subprocess
@pytest.mark.charts
def test_runnable_block_runs_as_written(where: str, body: str) -> None:
    venv = Path(sys.prefix)
    assert (ROOT / ".venv").resolve() == venv.resolve(), (
        f"the docs' commands run in the project's one environment {ROOT / '.venv'}; these tests run in {venv}: "
        "use `bash scripts/test.sh`")
    if "delivery.render_check" in body:
        require_charts()
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(venv)}
    run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, f"{where} failed ({run.returncode}):\n{body}\n--- stderr:\n{run.stderr[-3000:]}"


STACK_FILES = [(f"{doc.relative_to(ROOT)}:{line}", body)
               for doc in DOCS for line, lang, body, marker in blocks(doc) if marker and "stack-file" in marker]


def test_documented_stack_files_exist() -> None:
    assert STACK_FILES, "README's minimal stack file must be marked <!-- stack-file --> and validated"


@pytest.mark.parametrize(("where", "body"), STACK_FILES, ids=[w for w, _ in STACK_FILES])
def test_documented_stack_file_is_valid(where: str, body: str) -> None:
    config = yaml.safe_load(body)["config"]
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["name"]
    keys = {k.removeprefix(f"{project}:"): v for k, v in config.items() if k.startswith(f"{project}:")}
    assert len(keys) == len(config), f"{where}: keys outside the project's namespace {project!r}"
    load_stack_config(keys)


@pytest.mark.parametrize("section", ["cluster", "gpuPool", "systemPool", "charts", "monitoring", "teams"])
def test_every_key_of_a_section_has_its_row_in_the_configuration_reference(section: str) -> None:
    """A key a user can set is in the table of its section (charts.mirror and monitoring.queryUrl were not)."""
    from stackconfig.stack import StackConfig

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    found = re.search(rf"^### `{section}`[^\n]*\n(.*?)(?=^##|\Z)", text, re.S | re.M)
    assert found, f"no section `{section}` in docs/configuration.md"
    (field,) = [f for f, i in StackConfig.model_fields.items() if i.alias == section]
    annotation = StackConfig.model_fields[field].annotation
    model: Any = next(a for a in getattr(annotation, "__args__", (annotation,)) if a is not type(None))
    missing = [i.alias for i in model.model_fields.values() if f"`{i.alias}`" not in found.group(1)]
    assert not missing, f"docs/configuration.md `{section}` lacks a row for {missing}"
