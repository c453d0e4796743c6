"""The pull request's what-if table: base against head, per stack, from two `python -m capacity --json` results.

    python -m capacity.compare OUT.md DIR STACK...    # reads DIR/<stack>.base.json and DIR/<stack>.head.json

With DIR/<stack>.tune.json (`python -m capacity tune --json` of the head) the table gets one more line when the
head's settings are dominated: the tuner found a setting that is both cheaper and leaves less demand unserved.

A missing base (the base branch has no what-if for that stack yet) or head (the head removed it) is
said so in the table instead of failing. The JSON may come from a fork's code (the offline review), so
only numbers are read from it: every cell is rendered from `float(...)`, never from a string in the file.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

MARKER = "<!-- what-if -->"


def _num(result: dict[str, Any], path: str) -> float:
    """The number at `path`. A `totals.` path (every GPU pool's total, issue 19) reads `stack.` in a result from
    before the totals had their own key (a base branch's code wrote them over the stack's name), and the replayed
    pool's own figure in one from before there were several pools, where the two are the same."""
    node: Any = result
    if path.startswith("totals.") and "totals" not in result:
        rest = path.removeprefix("totals.")
        path = f"stack.{rest}" if isinstance(result.get("stack"), dict) else rest
    for part in path.split("."):
        node = node[part]
    value = float(node)
    if not math.isfinite(value):
        raise ValueError(f"{path} is not a finite number")
    return value


#: (label, JSON path, format of a value, format of a change, what "better" is: -1 lower, +1 higher)
ROWS: tuple[tuple[str, str, Callable[[float], str], int], ...] = (
    ("cost per month (USD)", "totals.costPerMonth", lambda v: f"{v:,.0f}", -1),
    ("unserved GPU-hours", "gpuHoursUnserved", lambda v: f"{v:,.2f}", -1),
    ("p95 time to capacity (min)", "timeToCapacityMinutes.p95", lambda v: f"{v:,.1f}", -1),
    ("peak nodes", "peakNodes", lambda v: f"{v:,.0f}", 0),
    ("minutes short of capacity", "minutesShort", lambda v: f"{v:,.0f}", -1),
    ("GPU-hours billed", "totals.gpuHoursBilled", lambda v: f"{v:,.0f}", -1),
)


def _change(base: float, head: float, fmt: Callable[[float], str]) -> str:
    delta = head - base
    if fmt(abs(delta)) == fmt(0.0):
        return "="
    sign = "+" if delta > 0 else "−"
    pct = f" ({delta / base:+.0%})" if base else ""
    return f"{sign}{fmt(abs(delta))}{pct}"


def _held_pools_line(head: dict[str, Any]) -> list[str]:
    """With several GPU pools: what the pools the trace does not replay hold (numbers only, like every cell)."""
    pools = head.get("pools")
    if not isinstance(pools, dict) or len(pools) < 2:
        return []
    held = [p for p in pools.values() if isinstance(p, dict) and not p.get("simulated")]
    nodes = sum(_num(p, "nodes") for p in held)
    cost = sum(_num(p, "costPerMonth") for p in held)
    return ["", f"Cost and GPU-hours billed are every GPU pool's: the trace replays the workload's pool, and the "
                f"{len(held)} other pool(s) hold their workloads' minReplicas on {nodes:,.0f} node(s), "
                f"{cost:,.0f} USD/month."]


def dominated_line(stack: str, tune: dict[str, Any] | None) -> list[str]:
    """One line when the tuner found a setting cheaper than the head's that also serves more (numbers only)."""
    if tune is None or not isinstance(tune.get("current"), dict) or not tune["current"].get("dominatedBy"):
        return []
    cur = tune["current"]
    saving = _num(cur, "dominatedBy.savingPerMonth")
    less = _num(cur, "dominatedBy.gpuHoursUnservedLess")
    return ["", f"**Dominated:** `python -m capacity tune {stack}` found settings that cost {saving:,.0f} USD/month "
                f"less than the pull request's and leave {less:,.2f} GPU-hours less demand unserved (same trace, "
                f"{_num(cur, 'dominatedBy.costPerMonth'):,.0f} against "
                f"{_num(cur, 'dominatedBy.costPerMonth') + saving:,.0f} USD/month); run it to see them."]


def serving_line(head: dict[str, Any]) -> list[str]:
    """With a serving profile: the users' side of the pull request (capacity/service.py), numbers only."""
    if not isinstance(head.get("serving"), dict):
        return []
    line = (f"**Serving profile:** latency objective met for {100 * _num(head, 'serving.objectiveAttainment'):.1f} % "
            f"of the demand, goodput {_num(head, 'serving.goodputGpuHours'):,.0f} GPU-hours, "
            f"{_num(head, 'gpuHoursBilled') / _num(head, 'static.gpuHoursBilled'):.2f}× the static pool's GPU-hours")
    if isinstance(head.get("gpuUtilizationOnly"), dict):
        line += (f"; on GPU utilisation alone {100 * _num(head, 'gpuUtilizationOnly.serving.objectiveAttainment'):.1f}"
                 f" %, {_num(head, 'gpuUtilizationOnly.gpuHoursBilled') / _num(head, 'static.gpuHoursBilled'):.2f}×"
                 f", {_num(head, 'gpuUtilizationOnly.nodesOrdered'):,.0f} nodes ordered (profile "
                 f"{_num(head, 'nodesOrdered'):,.0f})")
    return ["", line + "."]


def stack_table(stack: str, base: dict[str, Any] | None, head: dict[str, Any] | None,
                tune: dict[str, Any] | None = None) -> str:
    """Markdown for one stack; `stack` comes from the workflow, the numbers from the results."""
    title = f"#### What-if `{stack}`"
    if head is None:
        return f"{title}\n\nNo what-if for the pull request (the stack has no `whatIf` section).\n"
    lines = [title, ""]
    hours = _num(head, "hours")
    lines.append(f"{hours / 24:.1f} days of the stack's `whatIf.trace` replayed through its scaling settings "
                 "(`python -m capacity`).")
    lines.append("")
    if base is None:
        lines += ["| | pull request |", "|---|---:|"]
        lines += [f"| {label} | {fmt(_num(head, path))} |" for label, path, fmt, _ in ROWS]
        lines += ["", "The base branch has no what-if for this stack: no comparison."]
        lines += serving_line(head)
        lines += dominated_line(stack, tune)
        return "\n".join(lines) + "\n"
    lines += ["| | base | pull request | change |", "|---|---:|---:|---:|"]
    for label, path, fmt, _ in ROWS:
        b, h = _num(base, path), _num(head, path)
        lines.append(f"| {label} | {fmt(b)} | {fmt(h)} | {_change(b, h, fmt)} |")
    oracle, static = _num(head, "totals.oracle.costPerMonth"), _num(head, "totals.static.costPerMonth")
    lines += ["", f"Yardsticks for the pull request: oracle (nodes exactly when needed) {oracle:,.0f} USD/month, "
                  f"static pool at maxNodes {static:,.0f} USD/month. Price: "
                  f"{_num(head, 'settings.pricePerGpuHour'):g} USD per GPU-hour (estimate)."]
    lines += _held_pools_line(head)
    lines += serving_line(head)
    lines += dominated_line(stack, tune)
    return "\n".join(lines) + "\n"


def _load(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.is_file() else None


def comment(directory: Path, stacks: Sequence[str]) -> str:
    parts = [MARKER, "### What-if: real demand through base and pull-request settings", ""]
    for stack in stacks:
        parts.append(stack_table(stack, _load(directory / f"{stack}.base.json"),
                                 _load(directory / f"{stack}.head.json"), _load(directory / f"{stack}.tune.json")))
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m capacity.compare", description=__doc__.splitlines()[0],
        epilog="Exit 0 written, 1 a result that is not a what-if's (a number missing or not a number), 2 the command "
               "line or OUT.md cannot be written. .github/scripts/what-if.sh runs it for every pull request.")
    parser.add_argument("out", type=Path, metavar="OUT.md", help="the Markdown table to write")
    parser.add_argument("directory", type=Path, metavar="DIR",
                        help="folder of <stack>.base.json and <stack>.head.json (python -m capacity <stack> --json), "
                             "and optionally <stack>.tune.json (python -m capacity tune <stack> --json)")
    parser.add_argument("stacks", nargs="+", metavar="STACK", help="the stacks to compare, in the table's order")
    args = parser.parse_args(argv)
    out, directory, stacks = args.out, args.directory, args.stacks
    try:
        text = comment(directory, stacks)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"python -m capacity.compare: unreadable result: {exc}", file=sys.stderr)
        return 1
    try:
        out.write_text(text)
    except OSError as exc:
        print(f"python -m capacity.compare: {out} cannot be written ({exc.strerror}): create its folder or choose "
              "another path", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
