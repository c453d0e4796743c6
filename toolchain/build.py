"""Build the pinned Go toolchain (toolchain/pins.toml) into a cache outside the repository.

Why a builder of our own rather than `go install`: every program here is a Go module whose go.mod carries replace
directives (or embeds a generated file), which `go install mod@version` refuses; each is built from a small wrapper
module in toolchain/<wrapper>/ whose go.mod/go.sum are committed. This script only orders the builds, keys the
cache, times each build and names the module the proxy refused.

    python3 toolchain/build.py            # build what is missing; last line: the directory with the binaries
    python3 toolchain/build.py --check    # exit 0 if everything is built (builds nothing), 1 otherwise
    python3 toolchain/build.py --only pulumi,pulumi-kubernetes

A few modules the Go module proxy of some machines refuses (403) are built from a local source mirror instead:
`GO_SOURCE_MIRROR` (default: shared/reference/src beside the checkout, when it exists), one folder per module as
the pin's `mirror` table names it. Without a mirror, those modules come from the proxy like every other one.

Standard library only: it runs before the repository's virtualenv exists.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PINS = HERE / "pins.toml"
#: Where the source mirror is when GO_SOURCE_MIRROR is unset: shared/reference/src beside the checkout.
DEFAULT_MIRROR = HERE.parent.parent / "shared" / "reference" / "src"
#: Bumped when this script changes how it builds, so old cache entries are not reused.
BUILDER_VERSION = "1"
DEFAULT_CACHE = Path.home() / ".cache" / "gpu-autoscaling-toolchain"


@dataclass(frozen=True)
class Mirrored:
    """A module built from a folder of the source mirror (`dir`, relative to it) when there is one, and otherwise
    fetched through the proxy at `rev` (a tag or a commit: untagged modules have no version to require)."""

    module: str
    dir: str
    rev: str


@dataclass(frozen=True)
class Script:
    """A file of a module of the build list copied beside the binaries, executable (a language host's helper)."""

    name: str
    module: str
    path: str


class ToolchainError(Exception):
    """A build that cannot succeed here; the message says which module and what to do."""


@dataclass(frozen=True)
class Component:
    name: str
    wrapper: str
    module: str
    version: str
    stamp: str
    packages: tuple[str, ...]
    binaries: tuple[str, ...]
    ldflags: tuple[str, ...]
    copy_main: str | None = None
    generate: tuple[tuple[str, ...], ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    mirror: tuple[Mirrored, ...] = ()
    scripts: tuple[Script, ...] = ()

    @property
    def wrapper_dir(self) -> Path:
        return HERE / self.wrapper

    @property
    def outputs(self) -> tuple[str, ...]:
        """Every file the entry puts in the bin directory: its binaries, then its scripts."""
        return self.binaries + tuple(s.name for s in self.scripts)


def _strings(path: Path, name: str, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ToolchainError(f"{path}: [{name}] {key} = {value!r}: expected a list of non-empty strings, "
                             f"such as {key} = [\"kwok\"]")
    return tuple(value)


def _table(path: Path, name: str, key: str, value: object, fields: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """A pin's `[name.key]` table of `"<id>" = { field = "...", ... }` rows, every field a non-empty string."""
    example = ", ".join(f'{f} = "..."' for f in fields)
    if not isinstance(value, dict):
        raise ToolchainError(f"{path}: [{name}] {key} = {value!r}: expected a table of {{ {example} }} rows")
    for ident, row in value.items():
        if not isinstance(row, dict) or sorted(row) != sorted(fields) or not all(
                isinstance(v, str) and v for v in row.values()):
            raise ToolchainError(f"{path}: [{name}] {key}.{ident!r} = {row!r}: expected {{ {example} }}")
        if key == "mirror" and (Path(row["dir"]).is_absolute() or ".." in Path(row["dir"]).parts):
            raise ToolchainError(f"{path}: [{name}] mirror.{ident!r} dir = {row['dir']!r}: a folder inside the "
                                 "mirror is expected (relative, without ..), such as \"gcorelabscloud-go-v0.29.5\"")
    return value


def load_pins(path: Path = PINS) -> list[Component]:
    raw = tomllib.loads(path.read_text())
    out: list[Component] = []
    for name, entry in raw.items():
        packages = tuple(entry["packages"])
        binaries = tuple(entry["binaries"])
        if len(packages) != len(binaries):
            raise ToolchainError(f"{path}: [{name}] lists {len(packages)} packages but {len(binaries)} binaries")
        version = entry["version"]
        stamp = entry.get("stamp", version)
        major, minor = (version.lstrip("v").split(".") + ["0"])[:2]
        ldflags = tuple(f.format(version=version, stamp=stamp, major=major, minor=minor)
                        for f in entry.get("ldflags", []))
        out.append(
            Component(
                name=name,
                wrapper=entry["wrapper"],
                module=entry["module"],
                version=version,
                stamp=stamp,
                packages=packages,
                binaries=binaries,
                ldflags=ldflags,
                copy_main=entry.get("copy_main"),
                generate=tuple(tuple(cmd) for cmd in entry.get("generate", [])),
                env=dict(entry.get("env", {})),
                tags=_strings(path, name, "tags", entry.get("tags", [])),
                mirror=tuple(Mirrored(mod, **row) for mod, row in
                             _table(path, name, "mirror", entry.get("mirror", {}), ("dir", "rev")).items()),
                scripts=tuple(Script(script, **row) for script, row in
                              _table(path, name, "scripts", entry.get("scripts", {}), ("module", "path")).items()),
            )
        )
    return out


def go_version() -> str:
    try:
        return subprocess.run(["go", "env", "GOVERSION"], check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ToolchainError(f"the Go toolchain is needed to build the toolchain ({exc}); install Go >= 1.26") from exc


def cache_key(c: Component, gover: str) -> str:
    """Hash of everything that decides the binaries: the pin, the wrapper's files, Go's version, this builder."""
    h = hashlib.sha256()
    fields: list[object] = [BUILDER_VERSION, gover, c.module, c.version, c.stamp, c.packages, c.binaries, c.ldflags,
                            c.copy_main, c.generate, sorted(c.env.items())]
    # Appended only when set, so that the entries without them keep the keys they were built under.
    if c.tags:
        fields.append(["tags", c.tags])
    if c.mirror:
        fields.append(["mirror", [(m.module, m.dir, m.rev) for m in c.mirror]])
    if c.scripts:
        fields.append(["scripts", [(s.name, s.module, s.path) for s in c.scripts]])
    h.update(json.dumps(fields).encode())
    for f in sorted(c.wrapper_dir.iterdir()):
        if f.is_file():
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def module_refused(output: str) -> str | None:
    """The module@version the Go proxy refused, read from go's own error text."""
    m = re.search(r"reading https?://[^/]+/(\S+?)/@v/(\S+?)\.(?:zip|mod|info): (\d{3} [A-Za-z ]+)", output)
    if m:
        # The proxy's URL escapes capitals as `!x` (golang.org/x/mod/module.EscapePath), URL-encoded as %21x.
        mod = re.sub(r"!([a-z])", lambda x: x.group(1).upper(), urllib.parse.unquote(m.group(1)))
        return f"{mod}@{m.group(2)} ({m.group(3).strip()})"
    m = re.search(r"(\S+@\S+): .*?(?:not available|unknown revision|invalid version)", output)
    return m.group(1) if m else None


def run_go(args: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
    with log.open("a") as fh:
        fh.write(f"$ (cd {cwd} && go {' '.join(args)})\n")
        fh.flush()
        proc = subprocess.run(["go", *args], cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        text = log.read_text()[-20000:]
        refused = module_refused(text)
        why = (f"the Go module proxy refused {refused}: that module cannot be had on this machine"
               if refused else f"go {args[0]} failed")
        raise ToolchainError(f"{why}; the last lines of {log}:\n" + "\n".join(text.splitlines()[-15:]))


def module_dir(mod_at_version: str, cwd: Path, env: dict[str, str], log: Path) -> str:
    """Download a module (through the proxy, checked against the checksum database) and return its directory."""
    run_go(["mod", "download", mod_at_version], cwd, env, log)
    out = subprocess.run(["go", "mod", "download", "-json", mod_at_version], cwd=cwd, env=env, check=True,
                         capture_output=True, text=True).stdout
    return str(json.loads(out)["Dir"])


def source_mirror() -> Path | None:
    """The source mirror: GO_SOURCE_MIRROR (empty: none, use the proxy), else DEFAULT_MIRROR if it exists."""
    value = os.environ.get("GO_SOURCE_MIRROR")
    if value is None:
        return DEFAULT_MIRROR if DEFAULT_MIRROR.is_dir() else None
    if not value:
        return None
    root = Path(value).expanduser()
    if not root.is_dir():
        raise ToolchainError(f"GO_SOURCE_MIRROR={value!r} is not a directory; point it at the source mirror, or set "
                             "it empty to fetch every module through the Go module proxy")
    return root


def use_mirror(c: Component, src: Path, tmp: Path, env: dict[str, str], log: Path) -> None:
    """Make the build directory `src` use c.mirror's modules: from writable copies of the mirror's folders (the
    mirror itself may be read-only), or, without a mirror, through the proxy."""
    root = source_mirror()
    if root is None:
        # The wrapper's go.sum has no lines for these modules (it was tidied against the mirror, whose folders are
        # trimmed and so hash differently from the published module). `go get` resolves each at its rev through
        # the proxy and checks it against the checksum database (GOSUMDB, sum.golang.org unless the user turned
        # it off), and -mod=mod lets the build write the lines it needs, equally checked, into this copy's go.sum.
        env["GOFLAGS"] = "-mod=mod"
        for m in c.mirror:
            run_go(["get", f"{m.module}@{m.rev}"], src, env, log)
        return
    copies = tmp / "mirror"
    for m in c.mirror:
        if not (root / m.dir).is_dir():
            raise ToolchainError(f"[{c.name}] mirror: {m.module} is to be built from {root / m.dir}, which does not "
                                 f"exist; fix the folder name in {PINS.name}, or set GO_SOURCE_MIRROR empty to fetch "
                                 f"{m.module}@{m.rev} through the Go module proxy")
        top = Path(m.dir).parts[0]
        if not (copies / top).exists():
            shutil.copytree(root / top, copies / top)
            for dirpath, _, files in os.walk(copies / top):
                os.chmod(dirpath, 0o755)
                for f in files:
                    os.chmod(os.path.join(dirpath, f), 0o644)
        run_go(["mod", "edit", "-replace", f"{m.module}={copies / m.dir}"], src, env, log)


def substitute(arg: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        arg = arg.replace(key, value)
    return arg


def build(c: Component, out: Path, gover: str) -> None:
    log = out / "build.log"
    log.write_text("")
    env = dict(os.environ)
    env.update({"CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": env.get("GOTOOLCHAIN", "local")})
    env.update(c.env)
    with tempfile.TemporaryDirectory(prefix=f"toolchain-{c.name}-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(c.wrapper_dir, src)
        (src / "tools.go").unlink(missing_ok=True)
        if c.mirror:
            use_mirror(c, src, Path(tmp), env, log)
        if c.copy_main:
            for f in Path(module_dir(f"{c.module}@{c.version}", src, env, log), c.copy_main).iterdir():
                if f.is_file():
                    shutil.copy(f, src / f.name)
                    (src / f.name).chmod(0o644)
        for cmd in c.generate:
            subst = {"{version}": c.version, "{stamp}": c.stamp}
            if any("{moddir}" in a for a in cmd):
                subst["{moddir}"] = module_dir(f"{c.module}@{c.version}", src, env, log)
            argv = [substitute(a, subst) for a in cmd]
            if argv[0] != "go":
                raise ToolchainError(f"[{c.name}] generate: only go commands are run, not {argv[0]!r}")
            run_go(argv[1:], src, dict(env, VERSION=c.stamp), log)
        bindir = out / "bin"
        bindir.mkdir(exist_ok=True)
        tags = ["-tags", ",".join(c.tags)] if c.tags else []
        for pkg, binary in zip(c.packages, c.binaries, strict=True):
            run_go(["build", "-trimpath", *tags, "-ldflags", " ".join(["-s", "-w", *c.ldflags]), "-o",
                    str(bindir / binary), pkg], src, env, log)
        for script in c.scripts:
            # The version of script.module that the build list selected (the one the binaries were built with).
            shutil.copy(Path(module_dir(script.module, src, env, log), script.path), bindir / script.name)
            (bindir / script.name).chmod(0o755)


def bin_dir(cache: Path, keys: dict[str, str]) -> Path:
    """<cache>/toolchain-<digest>/bin, hard links to the selected entries' outputs: a `bin` of its own, the layout
    tools such as Pulumi's Automation API expect of an installation root (PulumiCommand(root=...) runs
    <root>/bin/pulumi)."""
    digest = hashlib.sha256(json.dumps(sorted(keys.items())).encode()).hexdigest()[:12]
    return cache / f"toolchain-{digest}" / "bin"


def link_into(target: Path, link: Path) -> None:
    """`link` made a hard link to `target`, in one rename: several runs at once (CI checks the toolchain from both
    halves of the lifecycle suite together) never see it missing, nor fail on each other's half-made link.

    A hard link, not a symlink: the CLI looks for its language hosts beside its own path with symlinks resolved
    (pulumi/pulumi sdk/go/common/workspace/plugins.go, GetPluginPath), which for a symlink is its own cache entry,
    where no host is."""
    if link.exists() and not link.is_symlink() and link.samefile(target):
        return
    staged = link.with_name(f".{link.name}.{os.getpid()}.{threading.get_ident()}")
    staged.unlink(missing_ok=True)
    staged.hardlink_to(target)
    os.replace(staged, link)
    staged.unlink(missing_ok=True)  # rename(2) leaves both names when they are links to one file already


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="build nothing; exit 0 if every selected component is built")
    ap.add_argument("--only", default="", help="comma-separated component names (default: all)")
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("GPU_TOOLCHAIN_CACHE", DEFAULT_CACHE)))
    args = ap.parse_args(argv)
    try:
        comps = load_pins()
        names = [n for n in args.only.split(",") if n]
        unknown = sorted(set(names) - {c.name for c in comps})
        if unknown:
            raise ToolchainError(f"--only: unknown component(s) {unknown}; known: {[c.name for c in comps]}")
        if names:
            comps = [c for c in comps if c.name in names]
        gover = go_version()
        cache: Path = args.cache.expanduser()
        keys: dict[str, str] = {}
        missing: list[str] = []
        for c in comps:
            key = cache_key(c, gover)
            keys[c.name] = key
            out = cache / f"{c.name}-{c.version}-{key}"
            if (out / ".complete").exists():
                print(f"{c.name} {c.version}: built ({out})", file=sys.stderr)
                continue
            if args.check:
                missing.append(c.name)
                print(f"{c.name} {c.version}: NOT built", file=sys.stderr)
                continue
            print(f"{c.name} {c.version}: building {', '.join(c.binaries)} ...", file=sys.stderr, flush=True)
            start = time.monotonic()
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            build(c, out, gover)
            took = time.monotonic() - start
            (out / ".complete").write_text(json.dumps({"seconds": round(took, 1), "go": gover}) + "\n")
            print(f"{c.name} {c.version}: built in {took:.0f} s", file=sys.stderr, flush=True)
        if missing:
            print(f"toolchain not built: {', '.join(missing)} (run: bash scripts/toolchain.sh)", file=sys.stderr)
            return 1
        bdir = bin_dir(cache, keys)
        bdir.mkdir(parents=True, exist_ok=True)
        for c in comps:
            for b in c.outputs:
                link_into(cache / f"{c.name}-{c.version}-{keys[c.name]}" / "bin" / b, bdir / b)
        print(bdir)
        return 0
    except ToolchainError as exc:
        print(f"toolchain: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
