"""The layout the README and docs/development.md describe: which room may import which, and rooms kept small.

Each room is a top-level module or package of the repository. An import against the table below is a design
change, not a detail: config that imported Pulumi could no longer be checked without it, a component that read
stack files could not serve a program that has no stack file (the component package), the policy pack runs where only
`pulumi-policy` is installed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: Room -> the rooms (and third-party top-level packages of note) it may import. Anything of this repository not
#: listed is refused; `pulumi*` is refused unless listed.
MAY_IMPORT: dict[str, set[str]] = {
    "stacknames": set(),
    "podspec": set(),
    # Standard library only: what a tool says outside the virtualenv (each tool package imports it first).
    "toolenv": set(),
    "stackconfig": {"stacknames", "podspec", "toolenv"},
    "renderers": {"stackconfig", "stacknames", "podspec"},
    "components": {"renderers", "stackconfig", "stacknames", "pulumi", "pulumi_kubernetes", "pulumi_random",
                   "pulumi_gcore"},
    # The component package (PulumiPlugin.yaml): the platform's components for other programs, any language.
    "gpu_platform": {"components", "renderers", "stackconfig", "stacknames", "pulumi", "pulumi_kubernetes",
                     "pulumi_gcore"},
    "program": {"components", "gpu_platform", "renderers", "stackconfig", "stacknames", "pulumi"},
    "__main__": {"components", "gpu_platform", "program", "renderers", "stackconfig", "stacknames", "pulumi"},
    # The engine evaluates the program under Pulumi's mocks; it never imports components itself.
    "offline": {"stackconfig", "stacknames", "pulumi", "pulumi_gcore", "toolenv"},
    "capacity": {"offline", "renderers", "stackconfig", "stacknames", "toolenv"},
    "delivery": {"offline", "renderers", "stackconfig", "stacknames", "podspec", "policy", "toolenv"},
    # Run by the Pulumi CLI with only pulumi-policy installed.
    "policy": {"stacknames", "podspec"},
    # The program on the real engine (Automation API): it reads stacks as config does, never wires components.
    "realengine": {"stackconfig", "stacknames", "offline", "pulumi"},
    # A real Prometheus on loopback and the scrape path as prometheus-operator builds it (tests/ and e2e/ share it).
    "localprom": {"renderers"},
    # The end-to-end tests (scripts/e2e.sh): the real engine on the local control plane, reading names as config does;
    # the autoscaling suite also runs the real Prometheus (localprom), reads the rendered queries and exporter names
    # (renderers) and compares the what-if (capacity) with the run.
    "e2e": {"realengine", "stackconfig", "stacknames", "pulumi", "localprom", "renderers", "capacity"},
}
ROOMS = set(MAY_IMPORT)
#: Modules a component must not read: the stack file is config's and program/'s business.
STACK_FILE_READERS = {"stackconfig.stackfile", "stackconfig.loader"}


def room_files(room: str) -> list[Path]:
    path = ROOT / room
    if path.is_dir():
        return sorted(path.rglob("*.py"))
    return [ROOT / f"{room}.py"]


def imports(path: Path) -> Iterator[str]:
    """Every module `path` imports, at any depth of the file (lazy imports count too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_each_room_imports_only_what_it_may(room: str) -> None:
    allowed = MAY_IMPORT[room] | {room}
    wrong = []
    for path in room_files(room):
        for module in imports(path):
            top = module.split(".")[0]
            if room == "policy" and top == "gpu_policies":
                continue  # the pack's own package, as the CLI puts it on sys.path
            if (top in ROOMS or top.startswith("pulumi")) and top not in allowed and top != "pulumi_policy":
                wrong.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not wrong, f"{room} may import only {sorted(MAY_IMPORT[room])}: {wrong}"


def test_components_read_no_stack_file() -> None:
    wrong = [f"{p.relative_to(ROOT)} imports {m}" for p in room_files("components") for m in imports(p)
             if m in STACK_FILE_READERS]
    assert not wrong


def test_every_room_of_the_repository_is_in_the_table() -> None:
    """A new top-level module or package gets a line here (and in docs/development.md's layout)."""
    tops = {p.stem for p in ROOT.glob("*.py")} | {
        p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }
    assert tops - {"tests"} == ROOMS - {"policy"} | ({"policy"} & tops)


#: Over this, a file must say at its top why it is one file (the issue's "~400 lines" rule).
MAX_LINES = 420


def test_no_program_file_grows_past_the_limit_without_saying_why() -> None:
    long = []
    for room in sorted(ROOMS):
        for path in room_files(room):
            text = path.read_text(encoding="utf-8")
            if text.count("\n") > MAX_LINES and "One file over 400 lines:" not in text:
                long.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert not long, f"split these, or say at the top why not ('One file over 400 lines: ...'): {long}"
