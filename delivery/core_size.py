"""`python -m delivery.core_size`: the size of what `pulumi up` runs: every Python file of this repository that
`__main__.py` imports, transitively (lazy imports too), `sdks/` and the tests left out; its lines as `wc -l` counts
them. The number the review of the core measured (7,580 lines in 62 files) and the one its cut is held to."""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The repository file of module `name` (a package's `__init__.py`), or None outside the repository."""
    parts = name.split(".")
    if not name or parts[0] in ("sdks", "tests"):
        return None
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported(path: Path, root: Path = ROOT) -> set[str]:
    """The modules `path` imports, absolute and relative, at any depth of the file; `from a import b` counts `a`
    and, when it is a module, `a.b`."""
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1] if package else []
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out |= {f"{base}.{alias.name}" for alias in node.names}
    return out


def core_files(root: Path = ROOT) -> list[Path]:
    """`root`'s `__main__.py` and every repository file it reaches through imports, each once, sorted."""
    entry = root / "__main__.py"
    seen: set[Path] = set()
    todo = [entry]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in imported(path, root):
            found = module_file(name, root)
            # A package's modules import their package's __init__ too, as Python does.
            parents = [module_file(".".join(name.split(".")[:i]), root) for i in range(1, name.count(".") + 1)]
            todo += [p for p in (found, *parents) if p is not None and p not in seen]
    return sorted(seen)


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delivery.core_size", description=__doc__)
    parser.add_argument("--files", action="store_true", help="list each file with its lines")
    args = parser.parse_args(argv)
    files = core_files()
    if args.files:
        for path in files:
            print(f"{lines(path):6d} {path.relative_to(ROOT)}")
    print(f"{sum(lines(p) for p in files)} lines in {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
