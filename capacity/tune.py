"""`python -m capacity tune`: the cheapest settings of a stack that meet a service level on its demand trace.

The same simulator (capacity/sim.py) and the same validation as the stack: every candidate is a stack-file change
applied like `--set` and loaded by `stackconfig.load_stack_config`, so nothing the config model refuses is
simulated. The trace is split: the search runs on the first part and the recommendation is then replayed on the
rest (held out), so that a setting which only fits the past shows it.

The service level (`Level`) has two parts, both judged per part of the trace:
- unserved demand, in % of the demand: every GPU-hour above the Ready GPUs counts, including demand above the most
  GPUs the bounds allow (no setting could serve that);
- the p95 time to capacity *within reach*: the simulator's episodes (demand above the Ready GPUs until they cover
  it) with demand capped at the most GPUs any setting within the bounds can give the workload. Without the cap,
  a peak above that maximum is an "episode" that no setting can end, and the p95 over episodes would reward
  settings that add many short episodes to dilute it. The cap does not change what the control loops do: they
  see demand only through the GPUs' utilisation, `min(demand, Ready GPUs)`, and the Ready GPUs never exceed the
  cap. Cost, nodes and replicas are therefore those of the uncapped run, and its unserved demand is the capped
  run's plus the demand above the cap (`tests/test_tune.py` checks both). The table also shows the what-if's own
  p95 and max over every episode.

A workload with a serving profile (`workloads[].serving`, docs/serving-workloads.md) is judged on what its users
feel instead of the time to capacity: the latency objective's attainment (capacity/service.py: the share of the
demand that arrived while both P90s were within the objective) must reach `--min-attainment` (default 97 %, issue
21's aim), with the unserved level as well. Its runs are not capped: the demand above the most GPUs any setting
can give still waits in the backlog after the peak, so a capped run would count as served within the objective
what its users waited for (and attainment is judged on all the demand, as `python -m capacity` reports it).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from capacity import shape as shapes
from capacity.bounds import (
    Bounds,
    Request,
    Stack,
    _demand,
    _excess,
    _problem,
    build_space,
    check_paths,
    find_bounds,
    loosest,
    unmeetable,
)
from capacity.cli import trace_source
from capacity.level import attainment_percent, resolve_level
from capacity.search import Built, Evaluator, Point, Progress, Search
from capacity.settings import SimSettings
from capacity.space import Candidate, Learned, Space, floor_cost_per_month
from capacity.trace import _part, _split, segments, trace_start


@dataclass
class Outcome:
    """Everything the command line prints, plots and writes."""

    result: dict[str, Any]
    points: list[Point]
    front: list[Point]
    notes: list[str]
    changes: dict[str, Any]
    stack_path: Path
    seconds: float
    jobs: int


# --- the run ---------------------------------------------------------------------------------------------------


def _default_timezone(stack: Stack) -> str:
    """The time zone the stack's own windows are written in (the team's clock), else UTC."""
    w = stack.cfg.workloads[stack.index]
    headroom = stack.pool_of(stack.cfg).headroom
    for sch in (*w.schedules, *(headroom.schedules if headroom else ())):
        return sch.timezone
    return "UTC"


#: The note when no setting without a cron window exists to compare with (the summary says so instead).
WINDOWS_HELD = "no setting without a cron window to compare with: --keep holds the headroom's own windows"


def _lead_seconds(s: SimSettings) -> float:
    """From a window's start until its replicas serve: the slowest node, its GPUs, the pod's start."""
    return s.node_ready_range[1] + s.gpu_ready_range[1] + s.pod_start


class Tuner:
    """One tune: the bounds, the learned shape, the searches and the report."""

    def __init__(self, request: Request, progress: Progress | None = None,
                 note: Callable[[str], None] | None = None) -> None:
        self.request, self.progress = request, progress
        self.note = note or (lambda _: None)
        self.notes: list[str] = []
        self.stack = Stack(request)
        level = resolve_level(self.stack.serving, self.stack.name, request.level)
        self.request = request = dataclasses.replace(request, level=level)
        whatif = self.stack.whatif
        trace = request.trace or whatif.trace
        self.column, self.per_gpu, self.path = trace_source(trace, request.column, request.per_gpu, whatif,
                                                            request.root)
        self.trace_name = str(trace)
        self.stack.start = trace_start(self.path)
        self.seed = request.seed if request.seed is not None else whatif.seed
        check_paths(self.stack, request)
        self.shape: shapes.Shape | None = None
        self.bounds: Bounds | None = None

    def say(self, text: str) -> None:
        self.notes.append(text)
        self.note(text)

    # --- candidates ---

    def builder(self, space: Space) -> Callable[[Candidate], Built | None]:
        """Candidate -> its validated stack-file change and simulator settings (None: the model refuses it)."""
        stack, shape, bounds = self.stack, self.shape, self.bounds
        assert bounds is not None
        sched = f"{stack.prefix}.schedules"
        gpn = stack.pool_of(stack.cfg).gpus
        memo: dict[Candidate, Built | None] = {}

        def build(cand: Candidate) -> Built | None:
            if cand not in memo:
                memo[cand] = make(cand)
            return memo[cand]

        def make(cand: Candidate) -> Built | None:
            changes = space.changes(cand)
            learned = changes.get(sched)
            if isinstance(learned, Learned):
                pre = {k: v for k, v in changes.items() if k != sched}
                cfg0 = stack.valid(pre)
                if cfg0 is None or shape is None:
                    return None
                w0 = cfg0.workloads[stack.index]
                pool0 = stack.pool_of(cfg0)
                reserved = sum(o.gpus_per_pod * o.min_replicas for o in cfg0.workloads_on(pool0)
                               if o.name != w0.name)
                held = pool0.headroom.gpus if pool0.headroom else 0
                floor = (pool0.min_nodes * gpn - reserved - held) // w0.gpus_per_pod
                windows = shape.windows(learned.q, max(floor, w0.min_replicas), w0.gpus_per_pod, w0.max_replicas,
                                        _lead_seconds(stack.settings(cfg0)))
                own = space.knobs[space.index(sched)].stack_value or []
                changes = pre if windows == own else {**pre, sched: windows}
            cfg = stack.valid(changes)
            if cfg is None:
                return None
            s = stack.settings(cfg)
            clip = math.inf if stack.serving else max(bounds.cap, s.max_replicas * s.gpus_per_pod)
            return Built(s, clip, floor_cost_per_month(s.min_nodes, gpn, s.price_per_gpu_hour), changes)

        return build

    def hold_all(self, space: Space) -> Candidate:
        """Most capacity all the time (the floor at its highest, minReplicas = maxReplicas, no headroom, no
        window): it meets any time to capacity whenever the unserved level can be met at all, so the search
        has an answer that meets the level (unless --keep holds it off)."""
        cand = list(space.start())
        pool = self.stack.pool
        for path in (f"{pool}.minNodes", f"{pool}.maxNodes", f"{self.stack.prefix}.minReplicas",
                     f"{self.stack.prefix}.maxReplicas"):
            n = space.index(path)
            cand[n] = len(space.knobs[n].values) - 1
        for path in (f"{pool}.headroom", f"{self.stack.prefix}.schedules"):
            n = space.index(path)
            cand[n] = next((i for i, v in enumerate(space.knobs[n].values) if v is None or v == []), cand[n])
        return tuple(cand)

    # --- searches ---

    def search(self, search: Search, space: Space, phase: str = "", starts: tuple[int, int] = (2, 1)) -> Point | None:
        return search.run([space.start(), self.hold_all(space)], phase, starts)

    def uses_windows(self, search: Search, point: Point) -> bool:
        built = search.build(point.cand)
        return built is not None and bool(built.settings.replica_windows or built.settings.headroom_windows)

    def reactive(self, search: Search, space: Space,
                 best: Point | None) -> tuple[Point | None, Search | None, Search | None]:
        """The best setting without any cron window (reactive scaling alone), to show what the windows buy: the
        point, the search whose space it is in, and the reactive search (None: the best has no window)."""
        if best is None or not best.met or not self.uses_windows(search, best):
            return None, None, None
        knobs = []
        for k in space.knobs:
            if k.path == f"{self.stack.prefix}.schedules":
                k = dataclasses.replace(k, values=([],), current=None if k.stack_value else 0, coarse=(0,))
            elif k.path == f"{self.stack.pool}.headroom":
                keep = [i for i, v in enumerate(k.values) if not (isinstance(v, dict) and v.get("schedules"))]
                if not keep:  # `--keep` holds the headroom's own windows: no setting is without a window
                    self.say(WINDOWS_HELD)
                    return None, None, None
                current = keep.index(k.current) if k.current in keep else None
                k = dataclasses.replace(k, values=tuple(k.values[i] for i in keep), current=current,
                                        coarse=tuple(sorted({0, *(keep.index(i) for i in k.coarse if i in keep)})))
            knobs.append(k)
        rspace = Space(tuple(knobs))
        reactive = Search(rspace, self.builder(rspace), search.evaluator, search.level, search.excess,
                          search.demand_h, search.part, self.progress, search.stress)
        found = self.search(reactive, rspace, "reactive ", starts=(1, 0))
        # the main search may have met the level without a window too, somewhere the reactive one did not go
        plain = [(p, search) for p in search.points.values() if p.met and not self.uses_windows(search, p)]
        if found is not None and found.met:
            plain.append((found, reactive))
        if not plain:
            return found, reactive, reactive
        point, owner = min(plain, key=lambda ps: ps[0].key())
        return point, owner, reactive

    # --- the run ---

    def run(self) -> Outcome:
        began = time.perf_counter()
        request, stack = self.request, self.stack
        limit = request.days * 1440 if request.days is not None else None
        segs = list(segments(self.path, self.column, self.per_gpu, limit))
        end = segs[-1].end
        if request.hold_out > 0 and end < 20 * 60:
            raise _problem("--hold-out", f"{request.hold_out:.0%}", f"leaves too little of a trace of {end / 60:g} "
                           "minutes to tune on and to check (both parts need 10 minutes or more)",
                           "give a longer trace, or tune on all of it with --hold-out 0")
        split = _split(segs, request.hold_out) if request.hold_out > 0 else end
        tune_part, held_part = _part(segs, 0, split), _part(segs, split, end)
        self.bounds = bounds = find_bounds(stack, request)
        unmeetable(stack, request, bounds, tune_part)
        current = stack.settings(stack.cfg)
        self.shape, said = shapes.learn(tune_part, current.start, request.timezone or _default_timezone(stack))
        self.say(said)
        space = build_space(stack, request, bounds, self.shape)
        parts = {"tune": tune_part, "held": held_part, "all": segs}
        stress = [f"tune~{i}" for i in range(1, request.reorderings + 1)]
        for i, name in enumerate(stress, start=1):
            parts[name] = shapes.reordered(tune_part, self.seed * 1000 + i)
        seeds = {name: self.seed + i for i, name in enumerate(stress, start=1)}
        with Evaluator(parts, self.seed, request.jobs, seeds) as ev:
            search = Search(space, self.builder(space), ev, request.level, lambda cap: _excess(tune_part, cap),
                            _demand(tune_part), "tune", self.progress, stress)
            best = self.search(search, space)
            reactive_best, owner, reactive = self.reactive(search, space, best)
            searches = [search, *([reactive] if reactive is not None else [])]
            winner = search
            if owner is not None and reactive_best is not None and best is not None and reactive_best.met \
                    and reactive_best.cost < best.cost:
                best, winner = reactive_best, owner
            if best is None or not best.met:
                raise self.not_met(best, space)
            built = winner.build(best.cand)
            assert built is not None
            result = self.report(ev, built, current, split, end, reactive_best, searches)
            result["recommended"]["serviceLevel"]["reorderings"] = [
                {"unservedPercent": pct, "p95TimeToCapacityMinutes": p95,
                 **({"objectiveAttainmentPercent": att} if att is not None else {})} for pct, p95, att in best.stress]
        seconds = time.perf_counter() - began
        phases: dict[str, int] = {}
        for srch in searches:
            for phase, n in srch.by_phase.items():
                phases[phase] = phases.get(phase, 0) + n
        # no time and no process count here: the same seed gives the same JSON on any machine
        result["search"] = {"simulated": ev.simulated, "byPhase": phases,
                            "skippedAsDearer": sum(s.skipped for s in searches),
                            "refusedByConfig": sum(len(s.invalid) for s in searches)}
        points = [p for s in searches for p in s.points.values()]
        return Outcome(result, points, search.front(), self.notes, built.changes,
                       request.root / f"Pulumi.{request.stack}.yaml", seconds, request.jobs)

    def not_met(self, closest: Point | None, space: Space) -> Exception:
        level = self.request.level
        held = [k.path for k in space.knobs if len(k.values) == 1]
        if level.min_attainment_pct is not None:
            closest_text = (f"; the closest leaves {closest.unserved_pct:.3g} % unserved and meets the latency "
                            f"objective for {closest.attainment_pct or 0:.2f} % of the demand" if closest else "")
            option = "--max-unserved/--min-attainment"
            value = f"{level.max_unserved_pct:g}% / {level.min_attainment_pct:g}%"
        else:
            closest_text = (f"; the closest leaves {closest.unserved_pct:.3g} % unserved with a p95 time to capacity "
                            f"of {closest.p95:.1f} min within reach" if closest else "")
            option = "--max-unserved/--p95-time-to-capacity"
            value = f"{level.max_unserved_pct:g}% / {level.p95_minutes:g}m"
        why = "no setting tried within the bounds meets it" + closest_text
        fix = (f"let the tuner move {', '.join(held)} (no --keep, wider --range)" if held else
               "relax the level, or raise the quota (--max-nodes)")
        if level.min_attainment_pct is not None and closest is not None and closest.attainment_pct is not None \
                and not held:
            reach = math.floor(closest.attainment_pct * 10) / 10
            fix = (f"give a lower --min-attainment (the closest setting reaches {reach:g}%: --min-attainment "
                   f"{reach:g}%), or raise the quota (--max-nodes)")
        return _problem(option, value, f"cannot be met: {why}", fix)

    def entries(self, ev: Evaluator, runs: Sequence[tuple[str, SimSettings, str]]) -> dict[str, dict[str, Any]]:
        """The what-if's figures of each (name, settings, part), and the service level judged on them."""
        assert self.bounds is not None
        tasks = []
        for _, s, part in runs:
            tasks += [(s, part, math.inf), (s, part, max(self.bounds.cap, s.max_replicas * s.gpus_per_pod))]
        results = ev.run(tasks)
        out: dict[str, dict[str, Any]] = {}
        level = self.request.level
        for n, (name, _, _) in enumerate(runs):
            raw, capped = results[2 * n], results[2 * n + 1]
            figures = {k: v for k, v in raw.items() if k not in ("oracle", "static")}
            demand = raw["gpuHoursDemand"]
            pct = 100 * raw["gpuHoursUnserved"] / demand if demand > 0 else 0.0
            ttc = capped["timeToCapacityMinutes"]
            attained = attainment_percent(raw)
            figures["serviceLevel"] = {"unservedPercent": pct, "p95TimeToCapacityMinutes": ttc["p95"],
                                       "maxTimeToCapacityMinutes": ttc["max"],
                                       "met": level.met(pct, ttc["p95"], attained)}
            if attained is not None:
                figures["serviceLevel"]["objectiveAttainmentPercent"] = attained
            figures["_oracle"], figures["_static"] = raw["oracle"], raw["static"]
            out[name] = figures
        return out

    def report(self, ev: Evaluator, built: Built, current: SimSettings, split: float, end: float,
               reactive_best: Point | None, searches: Sequence[Search]) -> dict[str, Any]:
        stack, bounds, request = self.stack, self.bounds, self.request
        assert bounds is not None
        oracle_cfg = stack.load(loosest(stack, bounds.min_nodes, bounds.max_nodes, bounds.max_replicas,
                                        bounds.min_replicas))
        oracle_s = stack.settings(oracle_cfg)
        rec = built.settings

        def later(s: SimSettings) -> SimSettings:
            return dataclasses.replace(s, start=s.start + timedelta(seconds=split))

        runs = [("current", current, "tune"), ("recommended", rec, "tune"), ("oracle", oracle_s, "tune"),
                ("current", later(current), "held"), ("recommended", later(rec), "held"),
                ("oracle", later(oracle_s), "held")]
        got = self.entries(ev, runs[:3])
        held = self.entries(ev, runs[3:]) if split < end else None

        def table(e: dict[str, dict[str, Any]]) -> dict[str, Any]:
            oracle = {**e["oracle"]["_oracle"], "minNodes": bounds.min_nodes, "maxNodes": bounds.max_nodes,
                      "maxReplicas": bounds.max_replicas}
            static = {**e["recommended"]["_static"], "maxNodes": rec.max_nodes}
            cur = {k: v for k, v in e["current"].items() if not k.startswith("_")}
            recd = {k: v for k, v in e["recommended"].items() if not k.startswith("_")}
            return {"current": cur, "recommended": recd, "oracle": oracle, "static": static}

        out = table(got)
        out["recommended"]["settings"] = built.changes
        out["current"]["dominatedBy"] = self.dominated(ev, got["current"], current, searches)
        held_out = None
        if held is not None:
            held_out = {**table(held), "fromHour": split / 3600, "toHour": end / 3600,
                        "met": held["recommended"]["serviceLevel"]["met"]}
        met = out["recommended"]["serviceLevel"]["met"] and (held_out is None or held_out["met"])
        reactive = None
        if reactive_best is not None:
            reactive = {"costPerMonth": reactive_best.cost, "unservedPercent": reactive_best.unserved_pct,
                        "p95TimeToCapacityMinutes": reactive_best.p95, "settings": reactive_best.changes,
                        **({"objectiveAttainmentPercent": reactive_best.attainment_pct}
                           if reactive_best.attainment_pct is not None else {})}
        level = request.level
        return {
            "stack": request.stack, "workload": stack.name,
            "trace": {"file": self.trace_name, "column": self.column, "perGpu": self.per_gpu, "days": request.days},
            "seed": self.seed,
            "serviceLevel": {"maxUnservedPercent": level.max_unserved_pct,
                             "p95TimeToCapacityMinutes": level.p95_minutes,
                             "minObjectiveAttainmentPercent": level.min_attainment_pct, "withinReachGpus": bounds.cap},
            "tuningPart": {"fromHour": 0.0, "toHour": split / 3600},
            **out,
            "heldOut": held_out,
            "met": met,
            "reactive": reactive,
            "shape": self.notes[0] if self.notes else None,
        }

    def dominated(self, ev: Evaluator, cur: dict[str, Any], current: SimSettings,
                  searches: Sequence[Search]) -> dict[str, Any] | None:
        """The setting found that is both cheaper and serves more than the stack's own, with the saving over the
        whole trace (where the pull request's what-if is measured), or None."""
        cost, unserved = cur["costPerMonth"], cur["gpuHoursUnserved"]
        # with a serving profile, also no lower attainment: cheaper by serving its users worse is no dominance
        attained = cur["serviceLevel"].get("objectiveAttainmentPercent")
        better = [(p, s) for s in searches for p in s.points.values()
                  if p.cost < cost * (1 - 1e-6) and p.unserved_h < unserved - 1e-6
                  and (attained is None or (p.attainment_pct is not None and p.attainment_pct >= attained))]
        if not better:
            return None
        point, search = min(better, key=lambda ps: (ps[0].cost, ps[0].unserved_h, ps[0].cand))
        built = search.build(point.cand)
        assert built is not None
        whole = ev.run([(current, "all", math.inf), (built.settings, "all", math.inf)])
        base, other = whole
        if not (other["costPerMonth"] < base["costPerMonth"] and other["gpuHoursUnserved"] < base["gpuHoursUnserved"]):
            return None
        mine, theirs = attainment_percent(base), attainment_percent(other)
        if mine is not None and (theirs is None or theirs < mine):
            return None
        return {"settings": built.changes, "costPerMonth": other["costPerMonth"],
                "gpuHoursUnserved": other["gpuHoursUnserved"],
                "savingPerMonth": base["costPerMonth"] - other["costPerMonth"],
                "gpuHoursUnservedLess": base["gpuHoursUnserved"] - other["gpuHoursUnserved"]}
