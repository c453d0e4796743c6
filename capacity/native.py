"""The simulator's modules compiled with mypyc (mypy's compiler, mypy/mypyc), for `python -m capacity`:
the same code, two to three times faster, the same JSON to the byte (tests/test_native.py compares them).

`python -m capacity.native` compiles them into `.cache/capacity-native/<key>/`, where the key hashes the compiled
sources, the Python version and its extension ABI: an edited module makes a new key, so a stale build is never
loaded; a build is used only when its key is the current one. `scripts/test.sh` builds it (needs mypy, from
requirements-dev.txt, and a C compiler); without it the tools run the same modules as Python.

Only the command line (capacity/__main__.py) loads the build. Everything that imports the simulator as a library
(the tests, the end-to-end calibration and its deliberately wrong rules, which subclass and patch its classes)
keeps the Python modules. `CAPACITY_NATIVE=0` keeps them on the command line too.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

#: The modules of the tick loop (capacity/sim.py and what it calls each tick), compiled as one group.
MODULES = ("state", "metric_path", "tally", "scheduler", "autoscaler", "hpa", "keda", "service", "sim")
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "capacity-native"


def sources(root: Path = ROOT) -> list[Path]:
    """The compiled modules and the repository modules they import (whose types mypyc compiled them against)."""
    out = {root / "capacity" / f"{m}.py" for m in MODULES}
    for path in list(out):
        for node in ast.walk(ast.parse(path.read_bytes())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            for name in names:
                base = root.joinpath(*name.split("."))
                out |= {f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()}
    return sorted(out)


def key(root: Path = ROOT) -> str:
    """What a build depends on: its sources, the interpreter's version and its extension suffix."""
    digest = hashlib.sha256(f"{sys.version}\n{sysconfig.get_config_var('EXT_SUFFIX')}\n".encode())
    for path in sources(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def find(root: Path = ROOT, cache: Path = CACHE) -> Path | None:
    """The build of `root`'s current sources, if there is one."""
    built = cache / key(root)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return built if all((built / "capacity" / f"{m}{suffix}").is_file() for m in MODULES) else None


def use() -> Path | None:
    """Load the compiled modules from now on, if the current sources have a build; its directory, else None.

    Must run before any of MODULES is imported (a module already loaded as Python stays Python)."""
    if os.environ.get("CAPACITY_NATIVE") == "0" or any(f"capacity.{m}" in sys.modules for m in MODULES):
        return None
    built = find()
    if built is None:
        return None
    import capacity

    capacity.__path__.insert(0, str(built / "capacity"))
    sys.path.append(str(built))  # the group's shared library, a top-level module named after the group
    return built


def build(root: Path = ROOT, cache: Path = CACHE) -> Path:
    """Compile MODULES (mypyc, opt level 3) unless the current sources are built already; the build's directory.

    Built aside and renamed into place, so that a build stopped halfway or two at once never leave a partial one."""
    built = cache / key(root)
    if built.is_dir():
        return built
    from mypyc.build import mypycify
    from setuptools import setup  # type: ignore[import-untyped]

    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
    here = Path.cwd()
    try:
        os.chdir(root)  # mypyc names each module by its path from here
        extensions = mypycify([f"capacity/{m}.py" for m in MODULES], opt_level="3", target_dir=str(work / "c"))
        setup(name="capacity-native", ext_modules=extensions, script_args=[
            "--quiet", "build_ext", "--build-lib", str(work / "lib"), "--build-temp", str(work / "temp")])
        try:
            (work / "lib").rename(built)
        except OSError:  # built meanwhile by another process: keep theirs
            if not built.is_dir():
                raise
        for old in cache.iterdir():  # builds of other sources: never loaded again
            if old != built and not old.name.startswith("."):
                shutil.rmtree(old, ignore_errors=True)
    finally:
        os.chdir(here)
        shutil.rmtree(work, ignore_errors=True)
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capacity.native", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    try:
        built = build()
    except Exception as exc:  # noqa: BLE001  (no compiler, no mypy: the tools still run, as Python)
        print(f"warning: the simulator was not compiled ({type(exc).__name__}: {exc}); `python -m capacity` runs "
              "it as Python (the same results, two to three times slower). It needs mypy (requirements-dev.txt) "
              "and a C compiler with Python's headers.", file=sys.stderr)
        return 1
    print(built)
    return 0


if __name__ == "__main__":
    sys.exit(main())
