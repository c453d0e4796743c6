"""The stack's facts in its policy config, generated from the stack: what the budget policies price with.

Why generated: `pulumi preview --policy-pack policy --policy-pack-config policy/config/<stack>.json` hands the
pack only that file, so the price and the GPUs per node must be in it; written by hand they were a second copy
of `gpuPool.pricePerGpuHour` and a count read off the flavor's name. This writes, into each budget policy's
entry, `pricePerGpuHourByPool` (each GPU pool's `pricePerGpuHour` by name), `pricePerGpuHour` (the first pool's)
and `gpusPerNode` (the flavor table, stackconfig/flavors.py, plus a pool's unlisted flavor at its `gpusPerNode`),
and leaves
every decision (`maxHourlyBudget`, `requireProtect`, enforcement levels) as the file has it. The tests check that
every committed file holds what its stack gives.

    python -m delivery.policy_config prod            # exit 1 when policy/config/prod.json is out of date
    python -m delivery.policy_config prod --write    # update (or create) it

Exit status: 0 up to date (or written); 1 out of date (each key with the value it holds and the one it needs);
2 the stack file is invalid or unknown, or the policy config cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stackconfig import ConfigError, StackConfig, check_stack
from stackconfig.flavors import GPU_FLAVORS

ROOT = Path(__file__).resolve().parent.parent
#: The policies that price the GPU pool (policy/gpu_policies/budget.py).
BUDGET_POLICIES = ("gpu-pool-hourly-budget", "gpu-headroom-hourly-budget")
FACTS = ("pricePerGpuHour", "pricePerGpuHourByPool", "gpusPerNode")
#: Retired: a node price kept by hand beside the stack's price per GPU.
RETIRED = ("pricePerNodeHour",)


def facts(cfg: StackConfig) -> dict[str, Any]:
    """What the budget policies need to know about the stack, from the stack alone: each GPU pool's price (by pool
    name; the first pool's also as the price of a pool the config does not name) and GPUs per node by flavor."""
    gpus = {flavor.id: flavor.gpus for flavor in GPU_FLAVORS.values()}
    for pool in cfg.pools:
        gpus[pool.flavor] = pool.gpus  # a listed flavor's own count, or an unlisted one's gpusPerNode
    return {"pricePerGpuHour": cfg.pools[0].price_per_gpu_hour,
            "pricePerGpuHourByPool": {p.name: p.price_per_gpu_hour for p in cfg.pools},
            "gpusPerNode": dict(sorted(gpus.items()))}


def generated(cfg: StackConfig, current: dict[str, Any]) -> dict[str, Any]:
    """`current` (the policy config as committed) with the stack's facts in each budget policy's entry."""
    out = json.loads(json.dumps(current))
    out.setdefault("all", "mandatory")
    for policy in BUDGET_POLICIES:
        entry = out.setdefault(policy, {})
        if not isinstance(entry, dict):  # a bare enforcement level: keep it, as the CLI reads it
            entry = out[policy] = {"enforcementLevel": entry}
        for key in RETIRED:
            entry.pop(key, None)
        entry.update(facts(cfg))
    return out


def differences(cfg: StackConfig, current: dict[str, Any]) -> list[str]:
    """Each generated key whose committed value differs: `policy.key: has X, the stack gives Y`."""
    wanted = generated(cfg, current)
    out = []
    for policy in BUDGET_POLICIES:
        entry = current.get(policy)
        have: dict[str, Any] = entry if isinstance(entry, dict) else {}
        for key in FACTS:
            if have.get(key) != wanted[policy][key]:
                out.append(f"{policy}.{key}: has {json.dumps(have.get(key))}, the stack gives "
                           f"{json.dumps(wanted[policy][key])}")
        out += [f"{policy}.{key}: has {json.dumps(have[key])}, a retired key (pricePerGpuHour and gpusPerNode "
                "replace it)" for key in RETIRED if key in have]
    return out


def render(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=4) + "\n"


def config_path(stack: str, root: Path = ROOT) -> Path:
    return root / "policy" / "config" / f"{stack}.json"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delivery.policy_config", description=__doc__.splitlines()[0])
    parser.add_argument("stack", help="stack name: reads Pulumi.<stack>.yaml, checks policy/config/<stack>.json")
    parser.add_argument("--write", action="store_true", help="write the stack's facts into the policy config")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    prog = f"delivery.policy_config: {args.stack}"
    try:
        cfg = check_stack(args.root, args.stack)
    except FileNotFoundError as exc:
        print(f"{prog}: no {Path(exc.filename or '').name} in {args.root}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    path = config_path(args.stack, args.root)
    if not path.is_file() and not args.write:
        print(f"{prog}: {path} does not exist. Fix: python -m delivery.policy_config {args.stack} --write (then set "
              "maxHourlyBudget in it to switch the budget checks on)", file=sys.stderr)
        return 1
    try:
        current = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError) as exc:
        print(f"{prog}: {path} cannot be read as JSON ({exc}). Fix: correct it or delete it and run with --write",
              file=sys.stderr)
        return 2
    if not isinstance(current, dict):
        print(f"{prog}: {path} is not a JSON object of policy names. Fix: correct it", file=sys.stderr)
        return 2
    stale = differences(cfg, current)
    if args.write:
        written = generated(cfg, current)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(written), encoding="utf-8")
        hint = "" if written[BUDGET_POLICIES[0]].get("maxHourlyBudget") else (
            " (set maxHourlyBudget in both budget entries to switch the budget checks on)")
        print(f"{prog}: wrote {path}{hint}", file=sys.stderr)
        return 0
    if stale:
        lines = "".join(f"\n  - {line}" for line in stale)
        print(f"{prog}: {path} is out of date with Pulumi.{args.stack}.yaml:{lines}\nFix: python -m "
              f"delivery.policy_config {args.stack} --write", file=sys.stderr)
        return 1
    print(f"{prog}: {path} is up to date", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
