"""`python -m capacity <stack> --trace FILE.csv`: what the stack's scaling settings would have done to a trace.

Exit codes: 0 done; 1 the trace or an output cannot be read/written; 2 a config error (stack file or
`--set`, the same message `pulumi preview` prints) or a bad command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capacity import config as stackfile
from capacity.sim import simulate
from capacity.trace import TraceError, segments, trace_start
from offline.engine import ROOT
from stackconfig import ConfigError, WhatIfConfig

SUMMARY_ROWS = (
    ("cost per month (USD)", "costPerMonth", "{:,.0f}"),
    ("cost over the trace (USD)", "cost", "{:,.0f}"),
    ("GPU-hours billed", "gpuHoursBilled", "{:,.1f}"),
    ("GPU-hours busy (served)", "gpuHoursBusy", "{:,.1f}"),
    ("GPU-hours idle", "gpuHoursIdle", "{:,.1f}"),
    ("GPU-hours unserved", "gpuHoursUnserved", "{:,.2f}"),
    ("minutes short of capacity", "minutesShort", "{:,.1f}"),
    ("peak nodes", "peakNodes", "{}"),
)


class UsageError(ValueError):
    """A command line that cannot run (exit 2, like argparse's own errors)."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m capacity", description=__doc__.splitlines()[0])
    p.add_argument("stack", help="stack name: reads Pulumi.<stack>.yaml from the repository root")
    p.add_argument("--trace", help="demand CSV (default: the stack's whatIf.trace)")
    p.add_argument("--workload", help="workload to drive (default: whatIf.workload, else the first)")
    p.add_argument("--column", help="demand column (default: whatIf.column, else 'requests')")
    p.add_argument("--per-gpu", type=float, help="units of the column one GPU serves per minute at 100%% util")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a stack key by its path, e.g. gpuPool.maxNodes=4 (repeatable)")
    p.add_argument("--days", type=float, help="replay only the first DAYS of the trace")
    p.add_argument("--seed", type=int, help="seed for the provisioning-time draws (default: whatIf.seed, 1)")
    p.add_argument("--json", type=Path, help="write the result as JSON ('-' for stdout)")
    p.add_argument("--plot", type=Path, help="write a PNG of demand, capacity, replicas, nodes and Pending pods")
    p.add_argument("--if-configured", action="store_true",
                   help="exit 0 without a result when the stack has no whatIf.trace (for CI over every stack)")
    p.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Load and validate the stack (with `--set`), run the trace, return the result (JSON-ready)."""
    cfg = stackfile.load(args.stack, args.set, args.root)
    whatif = cfg.what_if or WhatIfConfig()
    workload = stackfile.pick_workload(cfg, args.workload or whatif.workload)
    trace = args.trace or whatif.trace
    if trace is None and args.if_configured:
        print(f"{args.stack}: no whatIf.trace in the stack, nothing to replay", file=sys.stderr)
        return {}
    column = args.column or whatif.column
    per_gpu = args.per_gpu if args.per_gpu is not None else whatif.per_gpu
    if trace is None or per_gpu is None:
        raise UsageError("give --trace and --per-gpu, or set whatIf.trace and whatIf.perGpu in the stack")
    if per_gpu <= 0:
        raise UsageError(f"--per-gpu must be > 0, got {per_gpu:g}")
    path = Path(trace) if Path(trace).is_absolute() or Path(trace).exists() else args.root / trace
    if not path.is_file():
        raise TraceError(f"no trace file {trace}")
    settings = stackfile.settings_from_config(cfg, workload, whatif)
    start = trace_start(path)
    if start is not None:
        settings = dataclasses.replace(settings, start=start)
    seed = args.seed if args.seed is not None else whatif.seed
    began = time.perf_counter()
    result = simulate(settings, segments(path, column, per_gpu, args.days * 1440 if args.days else None),
                      seed=seed, plot=args.plot is not None)
    elapsed = time.perf_counter() - began
    series = result.pop("series", None)
    out: dict[str, Any] = {
        "stack": args.stack,
        "workload": workload.name,
        "trace": {"file": str(trace), "column": column, "perGpu": per_gpu, "days": args.days},
        "seed": seed,
        "overrides": list(args.set),
        **result,
        "settings": settings.as_json(),
    }
    if args.plot is not None and series is not None:
        from capacity.plot import plot

        plot(series, out, args.plot)
    print(f"simulated {result['hours'] / 24:.1f} days in {elapsed:.2f} s", file=sys.stderr)
    return out


def summary(result: dict[str, Any]) -> str:
    """The table printed on the terminal: the run, the oracle and the static pool side by side."""
    head = f"{'':28} {'these settings':>15} {'oracle':>12} {'static max':>12}"
    lines = [
        f"{result['stack']} / {result['workload']}: {result['hours'] / 24:.1f} days of {result['trace']['file']} "
        f"({result['trace']['column']} / {result['trace']['perGpu']:g} per GPU-minute)",
        head,
    ]
    for label, key, fmt in SUMMARY_ROWS:
        row = [fmt.format(result[key]), fmt.format(result["oracle"][key]), fmt.format(result["static"][key])]
        lines.append(f"{label:28} {row[0]:>15} {row[1]:>12} {row[2]:>12}")
    ttc = result["timeToCapacityMinutes"]
    lines.append(f"time to capacity (min): p50 {ttc['p50']:.1f}, p95 {ttc['p95']:.1f}, max {ttc['max']:.1f} "
                 f"over {ttc['episodes']} episode(s)")
    lines.append(f"nodes ordered {result['nodesOrdered']}, given up {result['nodesGivenUp']}; "
                 f"price {result['settings']['pricePerGpuHour']:g} USD per GPU-hour "
                 "(estimate: gpuPool.pricePerGpuHour)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        result = run(args)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    except (FileNotFoundError, UsageError) as exc:
        print(f"python -m capacity: error: {exc}", file=sys.stderr)
        return 2
    except (TraceError, OSError) as exc:
        print(f"python -m capacity: error: {exc}", file=sys.stderr)
        return 1
    if not result:
        return 0
    text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    if args.json is not None:
        if str(args.json) == "-":
            sys.stdout.write(text)
            return 0
        args.json.write_text(text)
    print(summary(result))
    return 0
