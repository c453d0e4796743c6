"""`python -m capacity <stack> --trace FILE.csv`: what the stack's scaling settings would have done to a trace.

Exit codes: 0 done; 2 an input cannot be used: the command line, the stack file or `--set` (the same message
`pulumi preview` prints), the trace, or an output path; every message names the input, the value and the fix.
1 only for a crash of the tool itself (a bug: please report it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capacity import config as stackfile
from capacity.service import gpu_only_threshold
from capacity.sim import simulate
from capacity.trace import TraceError, segments, trace_start
from offline.engine import ROOT
from stackconfig import ConfigError, Problem, StackConfig, WhatIfConfig, WorkloadConfig
from stackconfig.errors import UNSET

#: Exit status for an input that cannot be used (argparse's own, for the same kind of mistake).
USAGE = 2

#: What the GPU-utilisation-only comparison of a serving profile reports beside its service numbers.
COMPARED = ("gpuHoursBilled", "cost", "gpuHoursUnserved", "minutesShort", "nodesOrdered", "peakNodes")

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
    """A command line that cannot run (exit 2, like argparse's own errors): every problem with its fix."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            super().__init__(str(self.problems[0]))
        else:
            lines = "".join(f"\n  - {p}" for p in self.problems)
            super().__init__(f"{len(self.problems)} problems with the command line:{lines}")


def _output_problem(option: str, path: Path) -> Problem | None:
    """Why `path` cannot take an output, checked before the replay (so a typo does not cost the run)."""
    if path.is_dir():
        return Problem(option, str(path), "is a directory", f"give a file name, e.g. {path / 'out'}")
    folder = path.parent
    if not folder.is_dir():
        return Problem(option, str(path), f"is in a folder that does not exist ({folder})",
                       f"create it first (mkdir -p {folder}) or choose another path")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return Problem(option, str(path), "cannot be written (permission denied)", "choose a path you can write")
    return None


def trace_option_problems(days: float | None, per_gpu: float | None) -> list[Problem]:
    """`--days` and `--per-gpu`, as the what-if and the tuner take them."""
    problems = []
    if days is not None and not (math.isfinite(days) and days > 0):
        problems.append(Problem("--days", days, "is not a positive number of days",
                                "give --days > 0 (e.g. --days 2), or leave it out to replay the whole trace"))
    if per_gpu is not None and not (math.isfinite(per_gpu) and per_gpu > 0):
        problems.append(Problem("--per-gpu", per_gpu, "is not a positive number",
                                "give what one GPU serves per minute at 100 % utilisation, e.g. --per-gpu 1200"))
    return problems


def check_args(args: argparse.Namespace) -> None:
    """Every problem of the command line at once (UsageError), before the stack is read or the trace replayed."""
    problems: list[Problem | None] = [*trace_option_problems(args.days, args.per_gpu)]
    if args.json is not None and str(args.json) != "-":
        problems.append(_output_problem("--json", args.json))
    if args.plot is not None:
        problem = _output_problem("--plot", args.plot)
        if problem is None:
            problem = _plot_format_problem(args.plot)
        problems.append(problem)
    found = [p for p in problems if p is not None]
    if found:
        raise UsageError(found)


def _plot_format_problem(path: Path) -> Problem | None:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return Problem("--plot", str(path), "needs matplotlib, which is not installed",
                       "pip install -r capacity/requirements.txt (or use the project's .venv)")
    formats = Figure().canvas.get_supported_filetypes()
    suffix = path.suffix.lower().lstrip(".")
    if suffix and suffix not in formats:
        return Problem("--plot", str(path), f"has the suffix .{suffix}, which matplotlib cannot write",
                       f"end the name with one of .{', .'.join(sorted(formats))} (e.g. .png)")
    return None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m capacity", description=__doc__.splitlines()[0],
                                epilog="python -m capacity tune <stack> --help: the cheapest settings that meet a "
                                       "service level on the trace")
    p.add_argument("stack", help="stack name: reads Pulumi.<stack>.yaml from the repository root")
    p.add_argument("--trace", help="demand CSV (default: the stack's whatIf.trace)")
    p.add_argument("--workload", help="workload to drive (default: whatIf.workload, else the first)")
    p.add_argument("--column", help="demand column (default: whatIf.column, else 'requests')")
    p.add_argument("--per-gpu", type=float, help="units of the column one GPU serves per minute at 100%% util")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a stack key by its path, e.g. gpuPool.maxNodes=4 (repeatable)")
    p.add_argument("--days", type=float, help="replay only the first DAYS of the trace")
    p.add_argument("--seed", type=int, help="seed for the provisioning-time draws (default: whatIf.seed, 1)")
    p.add_argument("--gpu-unaware-autoscaler", action="store_true",
                   help="replay as if the autoscaler took a Ready node without allocatable GPUs for a full one (no "
                        "GPU label it knows, no start-up taint): the duplicate scale-ups of kubernetes/autoscaler#461")
    p.add_argument("--json", type=Path, help="write the result as JSON ('-' for stdout)")
    p.add_argument("--plot", type=Path, help="write a PNG of demand, capacity, replicas, nodes and Pending pods")
    p.add_argument("--if-configured", action="store_true",
                   help="exit 0 without a result when the stack has no whatIf.trace (for CI over every stack)")
    p.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def trace_source(trace: str | None, column: str | None, per_gpu: float | None, whatif: WhatIfConfig,
                 root: Path) -> tuple[str, float, Path]:
    """The demand column, the per-GPU rate and the trace file: the command line's, else the stack's `whatIf`."""
    column = column or whatif.column
    per_gpu = per_gpu if per_gpu is not None else whatif.per_gpu
    if trace is None or per_gpu is None:
        option, key = ("--trace", "whatIf.trace") if trace is None else ("--per-gpu", "whatIf.perGpu")
        raise UsageError([Problem(option, UNSET, f"is not given, and the stack has no {key}",
                                  "give --trace and --per-gpu, or set whatIf.trace and whatIf.perGpu in the stack")])
    if not math.isfinite(per_gpu):  # whatIf.perGpu: .inf passes the model's > 0
        raise ConfigError([Problem("whatIf.perGpu", per_gpu, "is not a finite number",
                                   "set what one GPU serves per minute at 100 % utilisation, e.g. perGpu: 1200")])
    path = Path(trace) if Path(trace).is_absolute() or Path(trace).exists() else root / trace
    if not path.exists() and not Path(trace).is_absolute():
        raise TraceError(f"no trace file {trace!r}: looked in the current directory ({Path.cwd()}) and in the "
                         f"repository root ({root}). Fix: give the path of an existing CSV file")
    return column, per_gpu, path


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Load and validate the stack (with `--set`), run the trace, return the result (JSON-ready)."""
    check_args(args)
    cfg = stackfile.load(args.stack, args.set, args.root)
    whatif = cfg.what_if or WhatIfConfig()
    workload = stackfile.pick_workload(cfg, args.workload or whatif.workload)
    trace = args.trace or whatif.trace
    if trace is None and args.if_configured:
        print(f"{args.stack}: no whatIf.trace in the stack, nothing to replay", file=sys.stderr)
        return {}
    column, per_gpu, path = trace_source(trace, args.column, args.per_gpu, whatif, args.root)
    settings = stackfile.settings_from_config(cfg, workload, whatif)
    start = trace_start(path)
    if start is not None:
        settings = dataclasses.replace(settings, start=start)
    if args.gpu_unaware_autoscaler:
        settings = dataclasses.replace(settings, gpu_aware_autoscaler=False)
    seed = args.seed if args.seed is not None else whatif.seed
    began = time.perf_counter()
    limit = args.days * 1440 if args.days is not None else None
    result = simulate(settings, segments(path, column, per_gpu, limit), seed=seed, plot=args.plot is not None)
    if settings.scale_on_service:
        # The same replay scaled on GPU utilisation alone (at the default targetUtilization): the comparison the
        # serving profile has to win (capacity/service.py).
        baseline = dataclasses.replace(settings, scale_on_service=False,
                                       threshold=gpu_only_threshold(workload.gpus_per_pod))
        b = simulate(baseline, segments(path, column, per_gpu, limit), seed=seed)
        result["gpuUtilizationOnly"] = {
            **{key: b[key] for key in COMPARED}, "serving": b["serving"], "threshold": baseline.threshold}
    elapsed = time.perf_counter() - began
    series = result.pop("series", None)
    out: dict[str, Any] = {
        "stack": args.stack,
        "workload": workload.name,
        "pool": stackfile.workload_pool(cfg, workload).name,
        "trace": {"file": str(trace), "column": column, "perGpu": per_gpu, "days": args.days},
        "seed": seed,
        "overrides": list(args.set),
        **result,
        **stack_totals(cfg, workload, result),
        "settings": settings.as_json(),
    }
    if args.plot is not None and series is not None:
        from capacity.plot import plot

        try:
            plot(series, out, args.plot)
        except OSError as exc:
            raise UsageError([Problem("--plot", str(args.plot), f"cannot be written ({exc.strerror or exc})",
                                      "choose a path you can write")]) from None
    print(f"simulated {result['hours'] / 24:.1f} days in {elapsed:.2f} s", file=sys.stderr)
    if args.days is not None and result["hours"] < args.days * 24 - 1e-9:
        print(f"note: --days {args.days:g} asked for more than the trace holds: replayed all of it "
              f"({result['hours'] / 24:.2f} days)", file=sys.stderr)
    return out


def stack_totals(cfg: StackConfig, workload: WorkloadConfig, result: dict[str, Any]) -> dict[str, Any]:
    """`pools` (the replayed pool's figures, and each other pool as its workloads' minimums hold it) and `totals`
    (cost and GPU-hours billed over every GPU pool, for the replay and its two yardsticks): with several pools the
    replayed pool is not the whole bill. (`stack` is the stack's name.)"""
    hours = result["hours"]
    held = stackfile.held_pools(cfg, workload)
    own = stackfile.workload_pool(cfg, workload)
    pools: dict[str, Any] = {own.name: {
        "simulated": True, "spot": own.spot, "workloads": [w.name for w in cfg.workloads_on(own)],
        "pricePerGpuHour": own.price_per_gpu_hour,
        **{key: result[key] for key in ("cost", "costPerMonth", "gpuHoursBilled", "peakNodes")},
        "oracleCostPerMonth": result["oracle"]["costPerMonth"], "staticCostPerMonth": result["static"]["costPerMonth"],
    }}
    pools.update({p.name: p.as_json(hours) for p in held})
    fixed = sum(p.cost(hours) for p in held)
    per_month = 730 / hours if hours else 0.0

    def total(run: dict[str, Any]) -> dict[str, float]:
        return {"cost": run["cost"] + fixed, "costPerMonth": (run["cost"] + fixed) * per_month,
                "gpuHoursBilled": run["gpuHoursBilled"] + sum(p.nodes * p.gpus_per_node * hours for p in held)}

    return {"pools": pools, "totals": {**total(result), "oracle": total(result["oracle"]),
                                       "static": total(result["static"])}}


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
                 "(estimate: the pool's pricePerGpuHour)")
    held = {name: p for name, p in result.get("pools", {}).items() if not p["simulated"]}
    if held:
        lines.append(f"replayed on pool {result['pool']}; the other pools hold their workloads' minReplicas:")
        for name, p in held.items():
            lines.append(f"  pool {name}{' (spot)' if p['spot'] else ''}: {p['nodes']} node(s) × {p['gpusPerNode']} "
                         f"GPUs at {p['pricePerGpuHour']:g} USD = {p['costPerMonth']:,.0f} USD per month")
        st = result["totals"]
        lines.append(f"every GPU pool: {st['costPerMonth']:,.0f} USD per month (oracle "
                     f"{st['oracle']['costPerMonth']:,.0f}, static {st['static']['costPerMonth']:,.0f})")
    lines.extend(serving_summary(result))
    return "\n".join(lines)


def serving_summary(result: dict[str, Any]) -> list[str]:
    """With a serving profile: what its users felt, against the same replay on GPU utilisation alone."""
    if "serving" not in result:
        return []
    mine, static = result["serving"], result["static"]["gpuHoursBilled"]
    lines = [f"serving profile: latency objective met for {100 * mine['objectiveAttainment']:.1f} % of the demand, "
             f"goodput {mine['goodputGpuHours']:,.1f} GPU-hours, "
             f"{result['gpuHoursBilled'] / static:.2f}x the GPU-hours of the static pool"]
    other = result.get("gpuUtilizationOnly")
    if other is not None:
        lines.append(f"GPU utilisation only (target {other['threshold']:g} per replica): "
                     f"{100 * other['serving']['objectiveAttainment']:.1f} %, goodput "
                     f"{other['serving']['goodputGpuHours']:,.1f} GPU-hours, "
                     f"{other['gpuHoursBilled'] / static:.2f}x, nodes ordered {other['nodesOrdered']} "
                     f"(profile: {result['nodesOrdered']})")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["tune"]:
        from capacity.tune_cli import main as tune_main

        return tune_main(argv[1:])
    args = parse_args(argv)
    try:
        result = run(args)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return USAGE
    except (FileNotFoundError, UsageError, TraceError) as exc:
        print(f"python -m capacity: error: {exc}", file=sys.stderr)
        return USAGE
    if not result:
        return 0
    text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    if args.json is not None:
        if str(args.json) == "-":
            sys.stdout.write(text)
            return 0
        try:
            args.json.write_text(text)
        except OSError as exc:
            print(f"python -m capacity: error: --json: {args.json} cannot be written ({exc.strerror}). "
                  "Fix: choose a path you can write", file=sys.stderr)
            return USAGE
    print(summary(result))
    return 0
