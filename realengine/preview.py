"""`pulumi preview --diff` of a stack on the real engine, offline: what `bash scripts/preview.sh STACK` runs.

    python -m realengine.preview dev                      # the diff, as `pulumi preview --diff` prints it
    python -m realengine.preview prod --json preview.json # also the engine's JSON (what delivery.guard reads)
    python -m realengine.preview dev --set gpu-autoscaling:gpuPool.maxNodes=3

A fresh stack in a temporary file backend: everything is a create, nothing is reached over a network (the Gcore
provider is the fake of toolchain/gcore-fake; the cluster's kubeconfig is unknown until the cluster exists, so
pulumi-kubernetes previews the in-cluster resources from their inputs alone). Exit status: 0 the preview ran,
1 the engine or the program failed (its output says why), 2 a usage error or the toolchain is not built.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from realengine.stack import local_stack
from realengine.toolchain import ToolchainMissing, prepare


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m realengine.preview", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="change the stack file's copy first (a stack-file path; YAML value; repeatable)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the engine's JSON preview to FILE")
    args = ap.parse_args(argv)
    try:
        tc = prepare()
    except ToolchainMissing as exc:
        print(f"preview: {exc}", file=sys.stderr)
        return 2
    overrides = parse_set(args.set)
    from pulumi.automation import CommandError

    with local_stack(args.stack, tc, overrides=overrides, secrets=dummy_secrets(args.stack)) as ls:
        try:
            result = ls.preview(diff=True, on_output=lambda line: print(line, end="" if line.endswith("\n") else "\n"))
            if args.json:
                out = ls.stack.preview(json=True, color="never")
                args.json.write_text(out.stdout)
        except CommandError as exc:
            print(str(exc), file=sys.stderr)
            return 1
    summary = json.dumps(result.change_summary, sort_keys=True)
    print(f"change summary: {summary}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
