"""`python -m delivery.core_size`: what `pulumi up` runs, measured the one way docs/development.md states."""

from __future__ import annotations

from pathlib import Path

from delivery.core_size import ROOT, core_files, lines

#: The core's lines when this was written (December 2026): it may shrink, not grow. The aim is 4,500 at most. (7,306
#: until __main__.py created its workloads and then its cluster with the component package, whose typed arguments,
#: documented field by field as the schema needs them, joined the core; teams and their quota alert came in
#: with the loader's read-recording proxy cut.)
CEILING = 7_892


def test_the_core_is_what_main_imports_transitively_without_tests_or_sdks() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in core_files()}
    assert {"__main__.py", "components/workload.py", "renderers/scaling_triggers.py", "stackconfig/rules/workloads.py",
            "stackconfig/__init__.py", "stacknames.py"} <= files
    assert not {f for f in files if f.startswith(("tests/", "sdks/", "e2e/", "capacity/", "delivery/"))}, files


def test_relative_and_lazy_imports_are_followed_and_nothing_else(tmp_path: Path) -> None:
    files = {
        "__main__.py": "import pkg.a\n",
        "pkg/__init__.py": "",
        "pkg/a.py": "def f():\n    from .b import g\n    return g\n",  # lazy and relative
        "pkg/b.py": "import json\ng = 1\n",
        "pkg/unused.py": "x = 1\n",
        "tests/t.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = {p.relative_to(tmp_path).as_posix() for p in core_files(tmp_path)}
    assert found == {"__main__.py", "pkg/__init__.py", "pkg/a.py", "pkg/b.py"}


def test_the_core_does_not_grow() -> None:
    total = sum(lines(p) for p in core_files())
    assert total <= CEILING, f"the core grew to {total} lines (ceiling {CEILING}): cut before adding"
