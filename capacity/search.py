"""The tuner's search: simulate candidates in parallel, a coarse grid, then a pattern search from its best points,
then the smallest change that keeps the result.

Every candidate is built by the caller (`build`: the stack-file change, validated by the config model, mapped
by `settings_from_config`), simulated by `capacity.sim.simulate` over the tuning part of the trace, and judged by
the service level. Two things keep the count of simulations down, both exact (they never skip a candidate that
could be the answer): a candidate whose floor nodes alone cost more than the cheapest setting already known to
meet the level is not simulated, and equal simulator settings (two changes that the config maps to the same
numbers) are simulated once. Simulations run in `jobs` processes (fork), each over its own copy of the trace;
the results come back in order, so the outcome does not depend on the number of processes.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from capacity.level import Level, attainment_percent
from capacity.settings import SimSettings
from capacity.sim import simulate
from capacity.space import CHOICE, Candidate, Space
from capacity.trace import Segment

#: A change whose saving is below this share of the cost is not worth a line in the stack file.
MIN_SAVING = 0.005
__all__ = ["MIN_SAVING", "Built", "Evaluator", "Level", "Point", "Search", "attainment_percent"]

#: Reorderings are simulated this many at a time, and a candidate stops at the first chunk that misses the level:
#: a fixed number, so that the search (and its result) is the same for any number of processes.
STRESS_CHUNK = 2


@dataclass(frozen=True)
class Built:
    """A valid candidate, ready to simulate: its settings, the demand cap of its run, its floor cost."""

    settings: SimSettings
    clip: float
    floor_cost: float
    changes: dict[str, Any]


@dataclass(frozen=True)
class Point:
    """A simulated candidate and how it fares."""

    cand: Candidate
    changes: dict[str, Any]
    cost: float
    unserved_h: float
    unserved_pct: float
    p95: float
    max_ttc: float
    peak_nodes: int
    #: Meets the level on the tuning part as it is, and (`met`) on every reordering of it too.
    met_trace: bool
    met: bool
    violation: float
    #: The reorderings' (unserved %, p95, attainment %) where they were simulated (only for settings that could win).
    stress: tuple[tuple[float, float, float | None], ...] = ()
    #: Latency-objective attainment in % (None: no serving profile).
    attainment_pct: float | None = None

    def key(self) -> tuple[Any, ...]:
        """Met first, by cost; otherwise by how far from the level. Ties: fewer changes, then the candidate."""
        return (not self.met, self.violation if not self.met else self.cost, len(self.changes), self.cand)


# --- simulations in worker processes -----------------------------------------------------------------------

#: The trace's parts, set before the workers fork (so each inherits them instead of receiving a copy per task).
_PARTS: dict[str, list[Segment]] = {}
_CLIPPED: dict[tuple[str, float], list[Segment]] = {}


def clipped(part: str, cap: float) -> list[Segment]:
    """The part with demand capped at `cap` GPUs (see capacity/tune.py: the same control loops, fewer episodes)."""
    key = (part, cap)
    if key not in _CLIPPED:
        _CLIPPED[key] = [s if s.gpus <= cap else Segment(s.start, s.end, cap) for s in _PARTS[part]]
    return _CLIPPED[key]


def run_one(task: tuple[SimSettings, str, float, int]) -> dict[str, Any]:
    settings, part, cap, seed = task
    result = simulate(settings, clipped(part, cap), seed=seed)
    result.pop("series", None)
    return result


class Evaluator:
    """Simulates settings over named parts of the trace, each (settings, part, cap) once, in `jobs` processes."""

    def __init__(self, parts: dict[str, list[Segment]], seed: int, jobs: int,
                 seeds: dict[str, int] | None = None) -> None:
        _PARTS.clear()
        _PARTS.update(parts)
        _CLIPPED.clear()
        self.seed, self.jobs = seed, jobs
        #: A part's own seed for the provisioning draws (the reorderings draw other node times too).
        self.seeds = dict(seeds or {})
        self.cache: dict[tuple[SimSettings, str, float], dict[str, Any]] = {}
        self.simulated = 0
        self._pool: Any = None

    def __enter__(self) -> Evaluator:
        if self.jobs > 1:
            self._pool = multiprocessing.get_context("fork").Pool(self.jobs)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def run(self, tasks: Sequence[tuple[SimSettings, str, float]],
            tick: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
        todo = list(dict.fromkeys(t for t in tasks if t not in self.cache))
        jobs = [(s, part, cap, self.seeds.get(part, self.seed)) for s, part, cap in todo]
        results: Iterable[dict[str, Any]]
        if self._pool is not None and len(jobs) > 1:
            results = self._pool.imap(run_one, jobs, chunksize=1)
        else:
            results = map(run_one, jobs)
        for n, (task, result) in enumerate(zip(todo, results, strict=True), start=1):
            self.cache[task] = result
            self.simulated += 1
            if tick is not None:
                tick(n)
        return [self.cache[t] for t in tasks]


# --- the search ------------------------------------------------------------------------------------------------


#: (phase, simulations so far in all, the cheapest setting known to meet the level)
Progress = Callable[[str, int, "Point | None"], None]


class Search:
    """Coarse grid, pattern search, smallest change: over `space`, with candidates from `build`."""

    def __init__(self, space: Space, build: Callable[[Candidate], Built | None], evaluator: Evaluator,
                 level: Level, excess: Callable[[float], float], demand_h: float, part: str,
                 progress: Progress | None = None, stress: Sequence[str] = ()) -> None:
        self.space, self.build, self.evaluator, self.level = space, build, evaluator, level
        self.excess, self.demand_h, self.part = excess, demand_h, part
        #: Reordered copies of the tuning part (capacity/shape.py `reordered`): a setting meets the level only
        #: if it meets it on each of them too (they have the same demand, so the same excess above the cap).
        self.stress = tuple(stress)
        self.progress = progress
        self.points: dict[Candidate, Point] = {}
        self.invalid: set[Candidate] = set()
        self.skipped = 0
        #: Simulations per phase (coarse, fine, simplify; a reordering counts as one), for the result's `search`.
        self.by_phase: dict[str, int] = {}
        self.best: Point | None = None  # the cheapest that meets the level

    def _record(self, point: Point) -> Point:
        self.points[point.cand] = point
        if point.met and (self.best is None or point.key() < self.best.key()):
            self.best = point
        return point

    def evaluate(self, cands: Iterable[Candidate], phase: str, bar: float | None = None) -> list[Point]:
        """Build, skip what cannot win, simulate the rest (one parallel batch); the points in order.

        A candidate whose floor costs at least `bar` (default: the cheapest known to meet the level) is skipped."""
        if bar is None and self.best is not None:
            bar = self.best.cost
        wanted = [c for c in dict.fromkeys(cands) if c not in self.invalid]
        ready: list[tuple[Candidate, Built]] = []
        known: list[Point] = []
        for cand in wanted:
            if cand in self.points:
                known.append(self.points[cand])
                continue
            built = self.build(cand)
            if built is None:
                self.invalid.add(cand)
                continue
            if bar is not None and built.floor_cost >= bar:
                self.skipped += 1
                continue
            ready.append((cand, built))

        def tick(_: int) -> None:
            self.by_phase[phase] = self.by_phase.get(phase, 0) + 1
            if self.progress is not None:
                self.progress(phase, self.evaluator.simulated, self.best)

        results = self.evaluator.run([(b.settings, self.part, b.clip) for _, b in ready], tick)
        fresh = [self.point(cand, built, r) for (cand, built), r in zip(ready, results, strict=True)]
        points = known + fresh
        if self.stress:
            points = self._stress(points, bar, tick)
        for p in points:
            self._record(p)
        return points

    def _stress(self, points: list[Point], bar: float | None, tick: Callable[[int], None]) -> list[Point]:
        """The reorderings, only for what could win: it meets the level as the trace is and is cheaper than the
        bar, cheapest first. Once one passes them all it is the bar; a candidate stops at its first failing
        reordering. The rest keeps `met` False: it cannot beat the bar anyway."""
        out = [p if p.stress or not p.met_trace else dataclasses.replace(p, met=False) for p in points]
        order = sorted((n for n, p in enumerate(points) if p.met_trace and not p.stress),
                       key=lambda n: (points[n].cost, points[n].cand))
        group = STRESS_CHUNK
        for n in order:
            if bar is not None and points[n].cost >= bar:
                break
            built = self.build(points[n].cand)
            assert built is not None
            results: list[dict[str, Any]] = []
            for i in range(0, len(self.stress), group):
                chunk = self.stress[i:i + group]
                results += self.evaluator.run([(built.settings, part, built.clip) for part in chunk], tick)
                if not all(self.level.met(*self._judged(built, r)) for r in results):
                    break
            out[n] = self.stressed(points[n], built, results)
            if out[n].met:
                bar = out[n].cost if bar is None else min(bar, out[n].cost)
        return out

    def _sl(self, built: Built, r: dict[str, Any]) -> tuple[float, float, float, float]:
        unserved = r["gpuHoursUnserved"] + self.excess(built.clip)
        pct = 100 * unserved / self.demand_h if self.demand_h > 0 else 0.0
        ttc = r["timeToCapacityMinutes"]
        return unserved, pct, ttc["p95"], ttc["max"]

    def _judged(self, built: Built, r: dict[str, Any]) -> tuple[float, float, float | None]:
        """(unserved %, p95 within reach, attainment %): what the level is judged on."""
        _, pct, p95, _ = self._sl(built, r)
        return pct, p95, attainment_percent(r)

    def point(self, cand: Candidate, built: Built, r: dict[str, Any]) -> Point:
        unserved, pct, p95, longest = self._sl(built, r)
        attained = attainment_percent(r)
        met = self.level.met(pct, p95, attained)
        return Point(cand, built.changes, r["costPerMonth"], unserved, pct, p95, longest, r["peakNodes"], met, met,
                     self.level.violation(pct, p95, attained), attainment_pct=attained)

    def stressed(self, point: Point, built: Built, results: Sequence[dict[str, Any]]) -> Point:
        figures = [self._judged(built, r) for r in results]
        met = point.met_trace and len(figures) == len(self.stress) and all(
            self.level.met(*f) for f in figures)
        worst = max((self.level.violation(*f) for f in figures), default=0.0)
        return dataclasses.replace(point, met=met, violation=max(point.violation, worst), stress=tuple(figures))

    def run(self, extra: Sequence[Candidate] = (), phase: str = "", starts: tuple[int, int] = (2, 1)) -> Point | None:
        """Coarse grid (with `extra` candidates), a pattern search from its best points, then the smallest change;
        the cheapest point that meets the level, else the closest. `starts`: how many of the best, and how many
        of the cheapest that meet the level as the trace is but not on every reordering (often one step from a
        setting that does: a replica more, a longer window)."""
        coarse = self.coarse(extra)
        for p in sorted(coarse, key=Point.key)[:starts[0]]:
            self.descend(p, phase=f"{phase}fine")
        near = sorted((p for p in self.points.values() if p.met_trace and not p.met and p.stress),
                      key=lambda p: (p.cost, p.cand))[:starts[1]]
        for p in near:
            self.descend(p, phase=f"{phase}fine")
        if self.best is not None:
            return self.simplify(self.best)
        return min(self.points.values(), key=Point.key, default=None)

    def coarse(self, extra: Sequence[Candidate] = ()) -> list[Point]:
        """The coarse grid, floor cost ascending (so that cheap floors set the bar that skips dear ones)."""
        grid = list(dict.fromkeys([*self.space.coarse(), *extra]))
        by_floor: dict[float, list[Candidate]] = {}
        for cand in grid:
            built = self.build(cand)
            if built is None:
                self.invalid.add(cand)
                continue
            by_floor.setdefault(built.floor_cost, []).append(cand)
        points: list[Point] = []
        for floor in sorted(by_floor):
            points += self.evaluate(by_floor[floor], "coarse")
        return points

    def descend(self, start: Point, frozen: frozenset[int] = frozenset(), phase: str = "fine") -> Point:
        """Pattern search: move to the best neighbour (one knob, ±1/±2 steps) while it is better."""
        here = start
        while True:
            around = self.evaluate(self.space.neighbours(here.cand, frozen), phase)
            better = min(around, key=Point.key, default=None)
            if better is None or better.key() >= here.key() or not self._worth(here, better):
                return here
            here = better

    def _worth(self, here: Point, there: Point) -> bool:
        """A move to a setting that meets the level from one that meets it must save at least MIN_SAVING."""
        if not (here.met and there.met):
            return True
        return there.cost < here.cost * (1 - MIN_SAVING) or (
            there.cost <= here.cost and len(there.changes) < len(here.changes))

    def simplify(self, best: Point) -> Point:
        """The smallest change that keeps the result: knobs back at the stack's value, then the others moved
        toward it (bisection on their ladders), while the level holds and the cost stays within MIN_SAVING of
        `best`'s."""
        limit = best.cost * (1 + MIN_SAVING)
        start = self.space.start()
        here = best
        while True:
            undo = [here.cand[:n] + (start[n],) + here.cand[n + 1:] for n in self.space.changed_knobs(here.cand)]
            options = [p for p in self.evaluate(undo, "simplify", bar=limit)
                       if p.met and p.cost <= limit and len(p.changes) < len(here.changes)]
            if not options:
                break
            here = min(options, key=lambda p: (p.cost, len(p.changes), p.cand))
        for n in self.space.changed_knobs(here.cand):
            knob = self.space.knobs[n]
            if knob.kind == CHOICE or knob.current is None:
                continue
            far, near = here.cand[n], knob.current  # the last index known to hold, the stack's own
            while abs(far - near) > 1:
                mid = (far + near) // 2
                got = self.evaluate([here.cand[:n] + (mid,) + here.cand[n + 1:]], "simplify", bar=limit)
                if got and got[0].met and got[0].cost <= limit:
                    here, far = got[0], mid
                else:
                    near = mid
        return here

    def front(self) -> list[Point]:
        """The cost/unserved trade-off: every simulated point no other beats on both."""
        pts = sorted(self.points.values(), key=lambda p: (p.cost, p.unserved_pct))
        out: list[Point] = []
        best = math.inf
        for p in pts:
            if p.unserved_pct < best - 1e-12:
                out.append(p)
                best = p.unserved_pct
        return out
