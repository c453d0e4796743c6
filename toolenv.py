"""A tool of this repository run outside the project's virtualenv says so in one line, with how to enter it,
instead of a `ModuleNotFoundError` traceback.

`python3 -m capacity` (or `offline.plan`, `stackconfig`, `delivery.*`) from the repository root finds the package
in the current directory but not its requirements. Each tool package imports this module first, in its
`__init__.py`, so the hook is in place before anything third-party is imported. Only a missing module that is not
the repository's own is rewritten; every other exception keeps its traceback. Standard library only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"


def _ours(module: str) -> bool:
    top = module.split(".")[0]
    return (ROOT / f"{top}.py").is_file() or (ROOT / top / "__init__.py").is_file()


def _tool() -> str:
    """`python -m <module>` as the user typed it (the package is imported before its `__main__` runs)."""
    argv = sys.orig_argv
    return f"python -m {argv[argv.index('-m') + 1]}" if "-m" in argv[:-1] else "this tool"


def hint(missing: str) -> str:
    """The one line for a missing third-party module `missing`."""
    here = f"{_tool()} needs the project's virtualenv (no module named {missing!r} in {sys.prefix})"
    if sys.prefix != sys.base_prefix:  # a virtualenv, without the pins
        return f"{here}: install the pins with `bash scripts/test.sh` (in {ROOT}), then run it again"
    if (VENV / "bin" / "python").is_file():
        return f"{here}: run `source {VENV}/bin/activate` first, then run it again"
    return f"{here}: run `bash scripts/test.sh` in {ROOT} once (it creates .venv), then `source .venv/bin/activate`"


def _excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    if isinstance(exc, ModuleNotFoundError) and exc.name and not _ours(exc.name):
        print(f"error: {hint(exc.name)}", file=sys.stderr)
        return
    _previous(kind, exc, tb)


_previous = sys.excepthook
if sys.excepthook is sys.__excepthook__:
    sys.excepthook = _excepthook
