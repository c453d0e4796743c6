"""`pulumi preview --diff` of a stack on the real engine, offline: what `bash scripts/preview.sh STACK` runs.

    python -m realengine.preview dev                      # the diff, as `pulumi preview --diff` prints it
    python -m realengine.preview prod --json preview.json # also the engine's JSON (what delivery.guard reads)
    python -m realengine.preview dev --set gpu-autoscaling:gpuPool.maxNodes=3
    python -m realengine.preview dev --base origin/main   # what this checkout changes against a base revision

Without `--base`: a fresh stack in a temporary file backend, so everything is a create; the real Gcore provider is
pointed at a Gcore API emulator on loopback (realengine/gcore_api.py), so nothing reaches Gcore, and the cluster's
kubeconfig is unknown until the cluster exists, so pulumi-kubernetes previews the in-cluster resources from their
inputs alone.

With `--base REF`: the diff a pull request makes. A local control plane stands for the cluster
(realengine/cluster.py); the base revision's own code (a git worktree) runs `pulumi up` of the stack into it, then
this checkout's code previews the same stack against that state. Only what differs between the two shows.

Exit status: 0 the preview ran, 1 the engine or the program failed (its output says why), 2 a usage error or the
toolchain is not built.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from realengine import gcore_api
from realengine.stack import local_stack
from realengine.toolchain import ENGINE, ROOT, ToolchainMissing, bin_dir, prepare

#: The control plane `--base` starts (realengine/cluster.py CONTROL_PLANE; not imported, to keep this module light).
CONTROL_PLANE = ("kubernetes", "etcd", "kwok")
#: The pinned charts, as scripts/test.sh fills the cache (delivery/charts.py).
CHART_CACHE = ROOT / ".cache" / "charts"


def dummy_secrets(stack: str) -> dict[str, str]:
    """A placeholder value for every `secrets:` key the stack refers to (the program refuses unset ones)."""
    from realengine.config_keys import secret_keys

    return {k: f"placeholder-{k}" for k in secret_keys(stack)}


def parse_set(values: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set {item!r}: expected PATH=VALUE, e.g. gpu-autoscaling:gpuPool.maxNodes=3")
        out[key] = yaml.safe_load(raw)
    return out


def printer(line: str) -> None:
    print(line, end="" if line.endswith("\n") else "\n")


def run(stack: str, overrides: dict[str, Any], json_out: Path | None, workdir: Path | None, kubeconfig: Path | None,
        apply: bool, charts: Path = CHART_CACHE) -> int:
    """Preview (or, with `apply`, `up`) `stack` in `workdir` (temporary when None) against `kubeconfig`'s cluster."""
    from pulumi.automation import CommandError

    try:
        tc = prepare(bin_dir(ENGINE + CONTROL_PLANE) if kubeconfig else None)
    except ToolchainMissing as exc:
        print(f"preview: {exc}", file=sys.stderr)
        return 2
    if kubeconfig is not None and workdir is not None:
        overrides = {"gpu-autoscaling:charts.mirror": str(charts), **overrides}
    with tempfile.TemporaryDirectory(prefix="gcore-api-") as tmp, \
            gcore_api.serving(workdir / "gcore-api" if workdir else Path(tmp), kubeconfig) as endpoint, \
            local_stack(stack, tc, overrides=overrides, secrets=dummy_secrets(stack), workdir=workdir,
                        env=gcore_api.provider_env(endpoint)) as ls:
        try:
            if apply:
                ls.up(on_output=printer)
                return 0
            result = ls.preview(diff=True, on_output=printer)
            if json_out:
                json_out.write_text(ls.stack.preview(json=True, color="never").stdout)
        except CommandError as exc:
            print(str(exc), file=sys.stderr)
            return 1
    print(f"change summary: {json.dumps(result.change_summary, sort_keys=True)}", file=sys.stderr)
    return 0


def against_base(stack: str, base: str, overrides: dict[str, Any], json_out: Path | None) -> int:
    """`up` of the base revision's stack into a local cluster, then this checkout's preview of it."""
    from realengine import cluster

    with tempfile.TemporaryDirectory(prefix="preview-base-") as tmp:
        tree, work = Path(tmp) / "base", Path(tmp) / "work"
        added = subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), base], cwd=ROOT,
                               capture_output=True, text=True)
        if added.returncode != 0:
            print(f"preview: --base {base}: {added.stderr.strip()}", file=sys.stderr)
            return 2
        name = f"preview-{os.getpid()}"
        try:
            kubeconfig = cluster.up(name, stack)
            print(f"== {base}: pulumi up of {stack} into a local cluster (its own code)", file=sys.stderr)
            applied = subprocess.run([sys.executable, "-m", "realengine.preview", stack, "--workdir", str(work),
                                      "--kubeconfig", str(kubeconfig), "--charts", str(CHART_CACHE), "--apply"],
                                     cwd=tree,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if applied.returncode != 0:
                print(f"preview: the base revision's up failed:\n{applied.stderr[-4000:]}", file=sys.stderr)
                return 1
            print(f"== this checkout: pulumi preview --diff of {stack} against it", file=sys.stderr)
            return run(stack, overrides, json_out, work, kubeconfig, apply=False)
        finally:
            cluster.down(name)
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m realengine.preview", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="change the stack file's copy first (a stack-file path; YAML value; repeatable)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the engine's JSON preview to FILE")
    ap.add_argument("--base", metavar="REF", help="preview against the state the base revision's `up` makes")
    ap.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)  # used by --base (workspace and backend)
    ap.add_argument("--kubeconfig", type=Path, help=argparse.SUPPRESS)  # used by --base (the local cluster)
    ap.add_argument("--apply", action="store_true", help=argparse.SUPPRESS)  # used by --base (the base's up)
    ap.add_argument("--charts", type=Path, default=CHART_CACHE, help=argparse.SUPPRESS)  # used by --base
    args = ap.parse_args(argv)
    overrides = parse_set(args.set)
    if args.base:
        return against_base(args.stack, args.base, overrides, args.json)
    return run(args.stack, overrides, args.json, args.workdir, args.kubeconfig, args.apply, args.charts)


if __name__ == "__main__":
    sys.exit(main())
