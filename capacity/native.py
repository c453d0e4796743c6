"""The simulator's modules compiled with mypyc (mypy's compiler, mypy/mypyc), for `python -m capacity`:
the same code, two to three times faster, the same JSON to the byte (tests/test_native.py compares them).

`python -m capacity.native` compiles them into `.cache/capacity-native/<key>/`, where the key hashes what a build
is made from (`sources`: the compiled modules, every repository module they import, mypy's settings and version,
the interpreter): an edited module makes a new key, so a stale build is never loaded. `scripts/test.sh` builds it
(needs mypy, from requirements-dev.txt, and a C compiler with Python's headers); without it the tools run the
same modules as Python, and after an edit they do until the next build.

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
import time
from importlib import metadata
from pathlib import Path

#: The modules of the tick loop (capacity/sim.py and what it calls each tick), compiled as one group.
MODULES = ("state", "metric_path", "tally", "scheduler", "autoscaler", "hpa", "keda", "service", "sim")
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "capacity-native"


def _imports(path: Path, root: Path) -> set[Path]:
    """The repository files `path` imports (`from a import b` counts `a` and, when it is a module, `a/b`)."""
    out: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        else:
            continue
        for name in names:
            base = root.joinpath(*name.split("."))
            out |= {f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()}
    return out


def sources(root: Path = ROOT) -> list[Path]:
    """What a build is compiled from: this file, mypy's settings, the compiled modules and every repository module
    they import, transitively (mypyc compiles against their types)."""
    out: set[Path] = set()
    todo = [root / "capacity" / f"{m}.py" for m in MODULES]
    while todo:
        path = todo.pop()
        if path not in out:
            out.add(path)
            todo += _imports(path, root) - out
    return sorted({*out, root / "capacity" / "native.py", root / "mypy.ini"})


def key(root: Path = ROOT) -> str:
    """What a build depends on: its sources, mypy's version, the interpreter's version and extension suffix."""
    try:
        mypy = metadata.version("mypy")
    except metadata.PackageNotFoundError:  # then nothing is built, and nothing is found
        mypy = "none"
    digest = hashlib.sha256(f"{sys.version}\n{sysconfig.get_config_var('EXT_SUFFIX')}\n{mypy}\n".encode())
    for path in sources(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def find(root: Path = ROOT, cache: Path = CACHE) -> Path | None:
    """The complete build of `root`'s current sources, if there is one: each module's extension and the group's
    shared library (mypyc names it after the group)."""
    built, suffix = cache / key(root), sysconfig.get_config_var("EXT_SUFFIX")
    modules = all((built / "capacity" / f"{m}{suffix}").is_file() for m in MODULES)
    return built if modules and len(list(built.glob(f"*__mypyc{suffix}"))) == 1 else None


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
    sys.path.insert(0, str(built))  # the group's shared library, a top-level module: this build's, no other
    return built


def build(root: Path = ROOT, cache: Path = CACHE) -> Path:
    """Compile MODULES (mypyc, opt level 3) unless the current sources are built already; the build's directory.

    Built aside and renamed into place, so that a build stopped halfway or two at once never leave a partial one.
    Floating point as CPython computes it: no fused multiply-add (GCC contracts `a + b * c` into one rounding on
    machines that have it), and no CFLAGS from the environment (-ffast-math would change results)."""
    built = cache / key(root)
    if find(root, cache) is not None:
        return built
    from mypyc.build import mypycify
    from setuptools import setup  # type: ignore[import-untyped]

    cache.mkdir(parents=True, exist_ok=True)
    for old in cache.iterdir():  # other sources' builds and stopped builds, an hour on: never loaded again
        if old != built and time.time() - old.stat().st_mtime > 3600:
            shutil.rmtree(old, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
    here, env = Path.cwd(), {k: os.environ.pop(k) for k in ("CFLAGS", "CPPFLAGS", "LDFLAGS") if k in os.environ}
    try:
        os.chdir(root)  # mypyc names each module by its path from here
        extensions = mypycify([f"capacity/{m}.py" for m in MODULES], opt_level="3", target_dir=str(work / "c"))
        for ext in extensions:
            ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
        setup(name="capacity-native", ext_modules=extensions, script_args=[
            "--quiet", "build_ext", "--build-lib", str(work / "lib"), "--build-temp", str(work / "temp")])
        shutil.rmtree(built, ignore_errors=True)  # an incomplete one (find() said so)
        try:
            (work / "lib").rename(built)
        except OSError:  # built meanwhile by another process: keep theirs
            if find(root, cache) is None:
                raise
    finally:
        os.chdir(here)
        os.environ.update(env)
        shutil.rmtree(work, ignore_errors=True)
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capacity.native", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    try:
        built = build()
    except (Exception, SystemExit) as exc:  # noqa: BLE001  (mypyc and setuptools exit on a compile error)
        print(f"warning: the simulator was not compiled ({type(exc).__name__}: {exc}); `python -m capacity` runs "
              "it as Python (the same results, two to three times slower). It needs mypy (requirements-dev.txt) "
              "and a C compiler with Python's headers.", file=sys.stderr)
        return 2
    print(built)
    return 0


if __name__ == "__main__":
    sys.exit(main())
