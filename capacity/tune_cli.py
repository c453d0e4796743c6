"""`python -m capacity tune <stack>`: the cheapest settings that meet a service level on the stack's trace.

Prints the comparison (current, recommended, the oracle, the static pool; on the tuning part and the held-out
part), what the learned windows buy against reactive scaling alone, and the recommended change as a diff of
`Pulumi.<stack>.yaml`; writes `--json`, `--plot` (the cost/unserved trade-off) and `--patch` (for `git apply`).

Exit codes, as for every tool here: 0 done (`met` in the JSON says whether the recommendation also met the level
on the held-out part); 2 an input cannot be used: the command line (a level, a bound, an output path), the stack
file, the trace, or a level that no setting within the bounds can meet, with why and what to change; 1 only for
a crash of the tool itself (a bug: please report it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from capacity import config as stackfile
from capacity.bounds import CLUSTER, Request
from capacity.cli import USAGE, UsageError, _output_problem, _plot_format_problem, trace_option_problems
from capacity.level import judged_text
from capacity.search import MIN_SAVING, Level, Point
from capacity.space import Range
from capacity.stackedit import edited, scalar, unified_diff
from capacity.trace import TraceError
from capacity.tune import WINDOWS_HELD, Outcome, Tuner
from offline.engine import ROOT
from stackconfig import ConfigError, Problem, load_stack_config
from stackconfig.stackfile import project_name
from stackconfig.units import go_duration_seconds

DEFAULT_MAX_UNSERVED = "1%"
DEFAULT_P95 = "5m"
DEFAULT_ATTAINMENT = "97%"
DEFAULT_HOLD_OUT = "30%"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    # argparse %-formats help strings: each "%" of a default (e.g. "97%") goes in as "%%"
    p = argparse.ArgumentParser(prog="python -m capacity tune", description=__doc__.splitlines()[0])
    p.add_argument("stack", help="stack name: reads Pulumi.<stack>.yaml from the repository root")
    level = p.add_argument_group("service level")
    level.add_argument("--max-unserved", default=DEFAULT_MAX_UNSERVED, metavar="PCT",
                       help=f"most demand left unserved, in %% of the demand (default {DEFAULT_MAX_UNSERVED}%)")
    level.add_argument("--p95-time-to-capacity", metavar="DURATION", help="p95 time from a shortfall to enough Ready "
                       f"GPUs, e.g. 5m, 90s (default {DEFAULT_P95}; a workload scaled on GPU utilisation)")
    level.add_argument("--min-attainment", metavar="PCT",
                       help=f"least share of the demand served within the latency objective (default "
                            f"{DEFAULT_ATTAINMENT}%; a workload with a serving profile)")
    bounds = p.add_argument_group("bounds")
    bounds.add_argument("--max-nodes", type=int, metavar="N",
                        help="quota: the workload's pool's maxNodes at most N (default: its maxNodes)")
    bounds.add_argument("--range", action="append", default=[], metavar="PATH=LOW..HIGH",
                        help="bounds of one setting, e.g. gpuPool.minNodes=2.. or "
                             "cluster.autoscaler.scale-down-unneeded-time=5m..30m (repeatable)")
    bounds.add_argument("--keep", action="append", default=[], metavar="PATH",
                        help="hold one setting at the stack's value, e.g. workloads.0.schedules (repeatable)")
    p.add_argument("--hold-out", default=DEFAULT_HOLD_OUT, metavar="PCT",
                   help=f"the trace's last part, replayed after tuning on the rest (default {DEFAULT_HOLD_OUT}%; "
                        "0 tunes on all of it)")
    p.add_argument("--reorderings", type=int, default=8, metavar="N",
                   help="copies of the tuning part, each hour's 10-minute blocks reordered (and other draws), on "
                        "which the recommendation must meet the level too (default 8; 0: the trace as it is only)")
    p.add_argument("--timezone", help="time zone of learned windows (default: the stack's own windows', else UTC)")
    p.add_argument("--trace", help="demand CSV (default: the stack's whatIf.trace)")
    p.add_argument("--column", help="demand column (default: whatIf.column, else 'requests')")
    p.add_argument("--per-gpu", type=float, help="units of the column one GPU serves per minute at 100%% util")
    p.add_argument("--workload", help="workload the trace drives (default: whatIf.workload, else the first)")
    p.add_argument("--days", type=float, help="use only the first DAYS of the trace")
    p.add_argument("--seed", type=int, help="seed for the provisioning-time draws (default: whatIf.seed, 1)")
    p.add_argument("--jobs", type=int, help="simulations in parallel (default: the cores this process may use)")
    p.add_argument("--json", type=Path, help="write the result as JSON ('-' for stdout)")
    p.add_argument("--plot", type=Path, help="write the cost/unserved trade-off of every setting simulated")
    p.add_argument("--patch", type=Path, help="write the stack-file change as a patch for `git apply` ('-': stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--if-configured", action="store_true",
                   help="exit 0 without a result when the stack has no whatIf.trace (for CI over every stack)")
    p.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _percent(option: str, text: str, low: float, high: float, example: str) -> tuple[float | None, Problem | None]:
    match = re.fullmatch(r"\s*([^%\s]+)\s*%?\s*", text)
    value = _number(match.group(1)) if match else None
    if value is None or not low <= value < high:
        return None, Problem(option, text, f"is not a percentage from {low:g} up to {high:g} (exclusive)",
                             f"give it like {example} (a share of the demand, in %)")
    return value, None


def _duration(option: str, text: str) -> tuple[float | None, Problem | None]:
    seconds = go_duration_seconds(text.strip())
    if seconds is None or seconds < 0:
        bare = _number(text) is not None
        return None, Problem(option, text, "is not a duration with a unit" if bare else "is not a duration ≥ 0",
                             "give it like 5m, 90s or 1m30s")
    return seconds, None


def _range(text: str) -> tuple[str, Range | None, Problem | None]:
    path, sep, ends = text.partition("=")
    low_text, dots, high_text = ends.partition("..")
    if not sep or not dots or not path:
        return path, None, Problem("--range", text, "is not PATH=LOW..HIGH",
                                   "write it like gpuPool.minNodes=1..3 (an end may be left out: gpuPool.minNodes=2..)")
    is_duration = path.startswith(CLUSTER + ".")
    values: list[float | None] = []
    for end in (low_text, high_text):
        if not end.strip():
            values.append(None)
            continue
        value = go_duration_seconds(end.strip()) if is_duration else _number(end)
        if value is None:
            kind = "a duration with a unit (5m)" if is_duration else "a number"
            return path, None, Problem("--range", text, f"has an end {end!r} that is not {kind}",
                                       "write both ends like the stack file would (e.g. 1..3, 5m..30m)")
        values.append(value)
    low, high = values
    if low is not None and high is not None and low > high:
        return path, None, Problem("--range", text, "has its lower end above its upper end",
                                   f"swap them: {path}={high_text}..{low_text}")
    return path, Range(low, high), None


def request_from(args: argparse.Namespace) -> Request:
    """The command line as a Request: every problem at once (UsageError), before anything is read or simulated."""
    problems: list[Problem | None] = []
    unserved, problem = _percent("--max-unserved", args.max_unserved, 0, 100, "1%")
    problems.append(problem)
    p95: float | None = None
    if args.p95_time_to_capacity is not None:
        p95, problem = _duration("--p95-time-to-capacity", args.p95_time_to_capacity)
        problems.append(problem)
    attainment: float | None = None
    if args.min_attainment is not None:
        attainment, problem = _percent("--min-attainment", args.min_attainment, 0, 100, "97%")
        if attainment is not None and attainment <= 0:
            attainment, problem = None, Problem("--min-attainment", args.min_attainment, "asks for nothing", "give a "
                                                "share above 0, like 97% (of the demand, in %)")
        problems.append(problem)
    hold_out, problem = _percent("--hold-out", args.hold_out, 0, 100, "30%")
    problems.append(problem)
    ranges: dict[str, Range] = {}
    for text in args.range:
        path, rng, problem = _range(text)
        problems.append(problem)
        if rng is not None:
            if path in ranges:
                problems.append(Problem("--range", text, f"gives {path} a second range",
                                        "give each setting one --range"))
            ranges[path] = rng
    both = sorted(set(ranges) & set(args.keep))
    if both:
        problems.append(Problem("--keep", both[0], "has a --range too", "either keep it or give it a range"))
    if args.max_nodes is not None and not 2 <= args.max_nodes <= 200:
        problems.append(Problem("--max-nodes", args.max_nodes, "is outside 2..200 (gpuPool.maxNodes must exceed "
                                "minNodes ≥ 1, and the config model allows at most 200)", "give a quota from 2 to 200"))
    if not 0 <= args.reorderings <= 20:
        problems.append(Problem("--reorderings", args.reorderings, "is outside 0..20",
                                "give a small count, e.g. --reorderings 3 (0 checks the trace as it is only)"))
    if args.jobs is not None and args.jobs < 1:
        problems.append(Problem("--jobs", args.jobs, "is not a positive number of processes", "give --jobs 1 or more"))
    problems += trace_option_problems(args.days, args.per_gpu)
    if args.timezone is not None:
        try:
            ZoneInfo(args.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            problems.append(Problem("--timezone", args.timezone, "is not an IANA time zone",
                                    "give one like Europe/Luxembourg or UTC"))
    for option, path in (("--json", args.json), ("--patch", args.patch)):
        if path is not None and str(path) != "-":
            problems.append(_output_problem(option, path))
    if args.json is not None and args.patch is not None and str(args.json) == str(args.patch) == "-":
        problems.append(Problem("--json", "-", "and --patch - would both go to stdout", "send one of them to a file"))
    if args.plot is not None:
        problems.append(_output_problem("--plot", args.plot) or _plot_format_problem(args.plot))
    found = [p for p in problems if p is not None]
    if found:
        raise UsageError(found)
    assert unserved is not None and hold_out is not None
    jobs = args.jobs if args.jobs is not None else max(1, len(os.sched_getaffinity(0)))
    level = Level(unserved, None if p95 is None else p95 / 60, attainment)
    return Request(stack=args.stack, root=args.root, level=level, hold_out=hold_out / 100,
                   trace=args.trace, column=args.column, per_gpu=args.per_gpu, workload=args.workload,
                   days=args.days, seed=args.seed, max_nodes=args.max_nodes, ranges=ranges, keep=tuple(args.keep),
                   timezone=args.timezone, jobs=jobs, reorderings=args.reorderings)


# --- what is printed -------------------------------------------------------------------------------------------


class ProgressLine:
    """Progress on stderr: one line rewritten in place on a terminal; elsewhere a line per phase and every 10 s."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.phase = ""
        self.last = 0.0
        self.began = time.monotonic()

    def __call__(self, phase: str, simulated: int, best: Point | None) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        bar = f"best meeting the level: {best.cost:,.0f} USD/month" if best else "none meets the level yet"
        text = f"  [{now - self.began:5.0f} s] {phase}: {simulated} simulations; {bar}"
        if self.tty:
            if now - self.last > 0.2 or phase != self.phase:
                print(f"\r{text:<100}", end="", file=sys.stderr, flush=True)
                self.last = now
        elif phase != self.phase or now - self.last > 10:
            print(text, file=sys.stderr, flush=True)
            self.last = now
        self.phase = phase

    def note(self, text: str) -> None:
        if not self.quiet:
            print(f"{chr(10) if self.tty and self.phase else ''}  {text}", file=sys.stderr, flush=True)

    def done(self) -> None:
        if not self.quiet and self.tty and self.phase:
            print(file=sys.stderr, flush=True)


def _span(from_h: float, to_h: float) -> str:
    if from_h % 24 == 0 and to_h % 24 == 0:
        return f"days {from_h / 24:g}–{to_h / 24:g}"
    if from_h.is_integer() and to_h.is_integer():
        return f"hours {from_h:g}–{to_h:g}"
    return f"minutes {from_h * 60:g}–{to_h * 60:g}"


def table(title: str, part: dict[str, Any]) -> list[str]:
    cols = ("current", "recommended", "oracle", "static")
    static_nodes = part["static"]["maxNodes"]
    static_h = part["static"]["gpuHoursBilled"] or math.inf
    head = f"{title:34}" + "".join(f"{c:>14}" for c in cols[:3]) + f"{f'static ({static_nodes})':>14}"
    rows: list[tuple[str, list[str]]] = []

    def cell(name: str, fn: Any) -> str:
        try:
            return str(fn(part[name]))
        except KeyError:
            return "–"

    def pct(e: dict[str, Any]) -> str:
        demand = part["current"]["gpuHoursDemand"]
        return f"{e['gpuHoursUnserved']:.2f} ({100 * e['gpuHoursUnserved'] / demand:.2f}%)" if demand else "0"

    rows.append(("cost per month (USD)", [cell(c, lambda e: f"{e['costPerMonth']:,.0f}") for c in cols]))
    rows.append(("unserved GPU-h (% of demand)", [cell(c, pct) for c in cols]))
    rows.append(("p95 / max time to capacity (min)", [
        cell(c, lambda e: f"{e['timeToCapacityMinutes']['p95']:.1f} / {e['timeToCapacityMinutes']['max']:.1f}")
        for c in cols]))
    rows.append(("  within reach, p95 / max (min)", [
        cell(c, lambda e: f"{e['serviceLevel']['p95TimeToCapacityMinutes']:.1f} / "
                          f"{e['serviceLevel']['maxTimeToCapacityMinutes']:.1f}") for c in cols]))
    if "serving" in part["current"]:
        rows.append(("latency objective attainment", [
            cell(c, lambda e: f"{100 * e['serving']['objectiveAttainment']:.2f}%") for c in cols]))
        rows.append(("GPU-hours billed (× static)", [
            cell(c, lambda e: f"{e['gpuHoursBilled']:,.0f} ({e['gpuHoursBilled'] / static_h:.2f}×)") for c in cols]))
    rows.append(("peak nodes", [cell(c, lambda e: f"{e['peakNodes']}") for c in cols]))
    rows.append(("service level met", [cell(c, lambda e: "yes" if e["serviceLevel"]["met"] else "NO")
                                       for c in cols]))
    return [head] + [f"{label:34}" + "".join(f"{v:>14}" for v in values) for label, values in rows]


def set_options(changes: dict[str, Any]) -> str:
    """The change as `python -m capacity --set` options (a flow value where it is a list or a mapping)."""
    def text(value: Any) -> str:
        return json.dumps(value) if isinstance(value, list | dict) or value is None else scalar(value)

    return " ".join(f"--set '{path}={text(value)}'" for path, value in changes.items())


def summary(out: Outcome, diff: str) -> str:
    r = out.result
    lv, tp, held = r["serviceLevel"], r["tuningPart"], r["heldOut"]
    if lv.get("minObjectiveAttainmentPercent") is not None:
        judged = (f"the latency objective met for at least {lv['minObjectiveAttainmentPercent']:g} % of the demand "
                  "(the workload's serving profile)")
    else:
        judged = (f"p95 time to capacity within reach (up to {lv['withinReachGpus']:g} GPUs) at most "
                  f"{lv['p95TimeToCapacityMinutes']:g} min")
    lines = [f"{r['stack']} / {r['workload']}: {r['trace']['file']} ({r['trace']['column']} / "
             f"{r['trace']['perGpu']:g} per GPU-minute), tuned on {_span(tp['fromHour'], tp['toHour'])}"
             + (f", held out {_span(held['fromHour'], held['toHour'])}" if held else ", nothing held out"),
             f"service level: at most {lv['maxUnservedPercent']:g} % of the demand unserved, {judged}",
             ""]
    lines += table(f"tuning part ({_span(tp['fromHour'], tp['toHour'])})", r)
    if held:
        lines += ["", *table(f"held out ({_span(held['fromHour'], held['toHour'])})", held)]
    rec, oracle, cur = r["recommended"], r["oracle"], r["current"]
    ratio = rec["costPerMonth"] / oracle["costPerMonth"] if oracle["costPerMonth"] else math.inf
    cheaper = "; cheaper only by leaving more demand unserved" if rec["costPerMonth"] < oracle["costPerMonth"] else ""
    lines += ["", f"recommended: {ratio:.2f}× the oracle's cost on the tuning part"
              + (f", {held['recommended']['costPerMonth'] / held['oracle']['costPerMonth']:.2f}× held out"
                 if held and held["oracle"]["costPerMonth"] else "")
              + f" (oracle: nodes the minute they are needed, minNodes {oracle['minNodes']}..maxNodes "
                f"{oracle['maxNodes']}, at most {oracle['maxReplicas']} replicas{cheaper})"]
    if held and not held["met"]:
        sl = held["recommended"]["serviceLevel"]
        lines.append(f"WARNING: on the held-out part the recommendation misses the level ({sl['unservedPercent']:.2f} "
                     f"% unserved, {judged_text(sl)}): the later demand differs from the "
                     "tuning part's. Tune on all of it (--hold-out 0), or ask for a stricter level.")
    lines.append(f"current: {cur['costPerMonth']:,.0f} USD/month; recommended {rec['costPerMonth']:,.0f} "
                 f"({rec['costPerMonth'] - cur['costPerMonth']:+,.0f})")
    rv = r["reactive"]
    if rv is not None:
        saving = rv["costPerMonth"] - rec["costPerMonth"]
        how = set_options(rv["settings"]) or "the stack as it is"
        without = (f"the best setting found without any cron window ({how}) costs {rv['costPerMonth']:,.0f} "
                   f"USD/month at {rv['unservedPercent']:.2f} % unserved, {judged_text(rv)}")
        if saving < MIN_SAVING * rec["costPerMonth"]:
            lines.append(f"the recommendation's cron windows buy nothing worth their lines here ({saving:+,.0f} "
                         f"USD/month): {without}")
        else:
            lines.append(f"the cron windows buy {saving:,.0f} USD/month against reactive scaling alone: {without}")
    elif WINDOWS_HELD not in out.notes:
        lines.append("the recommendation has no cron window: reactive scaling alone was cheapest on this trace")
    loose = min((p for p in out.points if p.unserved_pct <= lv["maxUnservedPercent"] + 1e-9),
                key=lambda p: (p.cost, p.cand), default=None)
    if loose is not None and loose.cost < rec["costPerMonth"] * (1 - MIN_SAVING):
        what = ("the latency objective" if lv.get("minObjectiveAttainmentPercent") is not None
                else "the time to capacity")
        shown = (f"objective met for {loose.attainment_pct:.2f} % of the demand" if loose.attainment_pct is not None
                 else f"p95 {loose.p95:.1f} min within reach")
        lines.append(f"{what} is what costs here: the cheapest setting simulated that meets the unserved "
                     f"level alone costs {loose.cost:,.0f} USD/month ({shown}; "
                     f"{set_options(loose.changes) or 'the stack as it is'})")
    dom = cur.get("dominatedBy")
    if dom:
        lines.append(f"the stack's own settings are dominated: {set_options(dom['settings'])} costs "
                     f"{dom['savingPerMonth']:,.0f} USD/month less and leaves {dom['gpuHoursUnservedLess']:.2f} "
                     "GPU-hours less unserved over the whole trace")
    lines += ["", *out.notes]
    lines += ["", f"reproduce: python -m capacity {r['stack']} {set_options(out.changes)}" if out.changes else
              "the stack's own settings are the recommendation: nothing to change"]
    if diff:
        lines += ["", diff.rstrip("\n")]
    s = r["search"]
    lines += ["", f"tuned in {out.seconds:.0f} s: {s['simulated']} simulations in {out.jobs} process(es), "
                  f"{s['skippedAsDearer']} settings skipped (their floor alone costs more than a setting that meets "
                  f"the level), {s['refusedByConfig']} refused by the config model"]
    return "\n".join(lines)


def stack_diff(out: Outcome, args: argparse.Namespace) -> str:
    """The recommendation as a diff of the stack file, checked: the edited file loads to the recommended config."""
    if not out.changes:
        return ""
    text = out.stack_path.read_text(encoding="utf-8")
    project = project_name(args.root)
    new = edited(text, project, out.changes)
    config = yaml.safe_load(new)["config"]
    mine = {k.split(":", 1)[1] if k.startswith(f"{project}:") else k: v for k, v in config.items()
            if k.startswith(f"{project}:") or ":" not in k}
    raw = stackfile.read_stack_file(args.stack, args.root)
    wanted = stackfile.apply_overrides(raw, [f"{p}={json.dumps(v)}" for p, v in out.changes.items()])
    if load_stack_config(mine) != load_stack_config(wanted):
        raise AssertionError("the edited stack file does not load to the recommended settings")
    return unified_diff(text, new, out.stack_path.name)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(list(sys.argv[2:] if argv is None else argv))
    progress = ProgressLine(args.quiet)
    try:
        request = request_from(args)
        whatif = stackfile.load(args.stack, [], args.root).what_if
        if args.if_configured and request.trace is None and (whatif is None or whatif.trace is None):
            print(f"{args.stack}: no whatIf.trace in the stack, nothing to tune", file=sys.stderr)
            return 0
        out = Tuner(request, progress, progress.note).run()
    except ConfigError as exc:
        progress.done()
        print(exc, file=sys.stderr)
        return USAGE
    except (FileNotFoundError, UsageError, TraceError) as exc:
        progress.done()
        print(f"python -m capacity tune: error: {exc}", file=sys.stderr)
        return USAGE
    progress.done()
    diff = stack_diff(out, args)
    if args.plot is not None:
        from capacity.plot import tradeoff

        tradeoff(out, args.plot)
    text = json.dumps(out.result, indent=2, sort_keys=True) + "\n"
    # Files first, then at most one of them on stdout (a pipe): `--patch - --json out.json` writes both.
    for path, content in ((args.patch, diff), (args.json, text)):
        if path is not None and str(path) != "-":
            path.write_text(content, encoding="utf-8")
    for path, content in ((args.patch, diff), (args.json, text)):
        if path is not None and str(path) == "-":
            sys.stdout.write(content)
            return 0
    print(summary(out, diff))
    return 0
