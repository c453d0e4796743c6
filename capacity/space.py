"""The settings `python -m capacity tune` may change, in one place: for each, its stack-file path (as `--set`
writes it), the ladder of values tried, the stack's own value, and the bounds.

A candidate is one index per knob. Its stack-file change is the knobs whose index is not the stack's own
value; the tuner applies it as `--set` overrides and validates it with the stack's config model
(capacity/config.py `apply_overrides` and `stackconfig.load_stack_config`), so a combination the model refuses
is never simulated, let alone recommended.

Knobs come per pool (`pool_knobs`) and per workload (`workload_knobs`), so that a stack with several GPU pools
(issue 19) adds one call per pool; the cluster-wide autoscaler timings are `autoscaler_knobs`.

Bounds: by default a knob ranges over what the config model allows, except the floors and the ceiling: minNodes
and minReplicas stay at or above the stack's own values (they guard against a node or a pod failing, which the
simulator does not model, so it cannot weigh them), and maxNodes at or below the stack's own value (the pool's
quota) unless `--max-nodes` raises it. `--range PATH=LOW..HIGH` narrows or widens any numeric knob (the floors
too: `--range gpuPool.minNodes=1..`); `--keep PATH` holds one at the stack's value.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from capacity.settings import go_duration_seconds

INT, NUMBER, DURATION, CHOICE = "int", "number", "duration", "choice"
#: The autoscaler timings the tuner moves (kubernetes/autoscaler cluster-autoscaler/FAQ.md): how long a node
#: must be unneeded before removal, and how long after a scale-up nothing is removed.
UNNEEDED = "scale-down-unneeded-time"
DELAY_AFTER_ADD = "scale-down-delay-after-add"
#: Ladders (the values tried between the bounds; the stack's own value is always added).
TARGETS = tuple(range(10, 101, 5))
STABILIZATION_SECONDS = (0, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600)
UNNEEDED_SECONDS = (60, 120, 300, 600, 900, 1200, 1800, 2700, 3600)
DELAY_AFTER_ADD_SECONDS = (60, 120, 300, 600, 900, 1200, 1800)
#: Quantiles over days of each hour's peak for the learned schedules (capacity/shape.py): half the days, most
#: days, nearly all, every day.
LEARNED_LEVELS = (0.5, 0.75, 0.9, 1.0)
#: Coarse grid of target utilisations (the nearest ladder values).
COARSE_TARGETS = (30, 40, 50, 60, 75, 90)
#: Integer ladders longer than this are thinned to roughly geometric steps.
MAX_INT_STEPS = 24
#: A serving profile's hysteresis band on the latency ratio P90 / objective (stackconfig/serving.py `BandConfig`):
#: above `scaleUp` replicas are added, below `scaleDown` removed. The band is the profile's policy, what it
#: trades cost against attainment with, so the tuner moves it; the config model refuses scaleDown ≥ scaleUp.
SCALE_UP, SCALE_DOWN = "serving.band.scaleUp", "serving.band.scaleDown"
BAND_UP = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
BAND_DOWN = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7)
COARSE_BAND_UP = (0.5, 0.8)
#: The profile's other keys, which the tuner never moves, and why (the message of a --range or --keep on them).
SERVING_HELD = {
    "serving.engine": "names the model server whose metrics the triggers read: a fact of the deployment",
    "serving.perGpu": "is measured (`vllm bench serve`): what one GPU delivers is a fact, not a setting",
    "serving.latencyObjective": "is what the attainment is judged against: tuning it would move the goal",
    "serving.longestRequest": "is measured (the engine's longest request) and sizes the drain, which the what-if "
                              "does not model",
    "serving.queuePerReplica": "drives the queue trigger, which the what-if's service model cannot replay (it has no "
                               "request count, capacity/service.py), so the tuner cannot weigh it",
    "serving.kvCacheUsage": "is where the engine's KV cache counts as saturated; above it vLLM preempts requests, "
                            "which the service model does not model, so the tuner can weigh only its cost, not its "
                            "risk",
}


@dataclass(frozen=True)
class Learned:
    """A `schedules` value: the windows learned from the trace at this quantile, resolved per candidate."""

    q: float

    def __str__(self) -> str:
        return f"learned at the {self.q:.0%} day"


@dataclass(frozen=True)
class Range:
    """`--range PATH=LOW..HIGH` (either end may be left out); numbers, or seconds for durations."""

    low: float | None = None
    high: float | None = None

    def clamp(self, low: float, high: float) -> tuple[float, float]:
        return (low if self.low is None else self.low), (high if self.high is None else self.high)


@dataclass(frozen=True)
class Knob:
    """One setting: its path, the ladder of values in increasing order, the stack's own value's index."""

    path: str
    kind: str
    values: tuple[Any, ...]
    #: Index of the stack's own value (None: it lies outside the bounds, so every candidate changes it).
    current: int | None
    coarse: tuple[int, ...]
    #: The stack's value as written, for `--keep` and the messages.
    stack_value: Any = None
    #: Maps a ladder value to the stack-file changes it stands for (default: {path: value}).
    expand: Callable[[Any], dict[str, Any]] | None = field(default=None, compare=False)

    def changes(self, i: int) -> dict[str, Any]:
        value = self.values[i]
        return self.expand(value) if self.expand is not None else {self.path: value}

    def show(self, i: int) -> str:
        return show_value(self.values[i])


def show_value(value: Any) -> str:
    if isinstance(value, Learned):
        return str(value)
    if value is None or value == []:
        return "none"
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


Candidate = tuple[int, ...]


@dataclass(frozen=True)
class Space:
    knobs: tuple[Knob, ...]

    def start(self) -> Candidate:
        """The stack's own settings, or the nearest value inside the bounds where they lie outside."""
        out = []
        for k in self.knobs:
            if k.current is not None:
                out.append(k.current)
            elif k.kind == CHOICE:
                out.append(0)
            else:
                own = _number(k, k.stack_value)
                out.append(min(range(len(k.values)), key=lambda i: abs(_number(k, k.values[i]) - own)))
        return tuple(out)

    def changes(self, cand: Candidate) -> dict[str, Any]:
        """The stack-file paths and values a candidate changes (Learned schedules still unresolved)."""
        out: dict[str, Any] = {}
        for knob, i in zip(self.knobs, cand, strict=True):
            if i != knob.current:
                out.update(knob.changes(i))
        return out

    def changed_knobs(self, cand: Candidate) -> list[int]:
        return [n for n, (k, i) in enumerate(zip(self.knobs, cand, strict=True)) if i != k.current]

    def index(self, path: str) -> int:
        return next(n for n, k in enumerate(self.knobs) if k.path == path)

    def with_value(self, cand: Candidate, path: str, i: int) -> Candidate:
        n = self.index(path)
        return cand[:n] + (i,) + cand[n + 1:]

    def coarse(self) -> list[Candidate]:
        """The coarse grid: every combination of the knobs' coarse values, in a fixed order."""
        return [tuple(c) for c in itertools.product(*(k.coarse for k in self.knobs))]

    def neighbours(self, cand: Candidate, frozen: frozenset[int] = frozenset()) -> Iterator[Candidate]:
        """Candidates one knob away: ±1 and ±2 steps on its ladder (±4 too on long ladders)."""
        for n, knob in enumerate(self.knobs):
            if n in frozen:
                continue
            steps = (1, 2, 4) if len(knob.values) > 12 else (1, 2)
            for step in steps:
                for j in (cand[n] - step, cand[n] + step):
                    if 0 <= j < len(knob.values):
                        yield cand[:n] + (j,) + cand[n + 1:]

    def describe(self) -> list[str]:
        lines = []
        for k in self.knobs:
            own = "" if k.current is not None else f" (the stack's {show_value(k.stack_value)} is outside)"
            if len(k.values) == 1:
                lines.append(f"{k.path}: {k.show(0)} (held){own}")
            elif k.kind == CHOICE:
                lines.append(f"{k.path}: {' | '.join(k.show(i) for i in range(len(k.values)))}{own}")
            else:
                lines.append(f"{k.path}: {k.show(0)}..{k.show(len(k.values) - 1)} "
                             f"({len(k.values)} values){own}")
        return lines


def _number(knob: Knob, value: Any) -> float:
    return go_duration_seconds(value) if knob.kind == DURATION else float(value)


def int_ladder(low: int, high: int, own: int | None) -> tuple[int, ...]:
    """Every integer from low to high, thinned to about geometric steps when there are many."""
    if high < low:
        return ()
    values = set(range(low, high + 1))
    if len(values) > MAX_INT_STEPS:
        ratio = (high / max(low, 1)) ** (1 / (MAX_INT_STEPS - 1))
        values = {low, high, *(round(max(low, 1) * ratio**i) for i in range(MAX_INT_STEPS))}
        values = {v for v in values if low <= v <= high}
    if own is not None and low <= own <= high:
        values.add(own)
    return tuple(sorted(values))


def _numeric_knob(path: str, kind: str, values: Sequence[float], own: Any, coarse: Sequence[float] = ()) -> Knob:
    ladder = tuple(values)
    shown: tuple[Any, ...]
    if kind == DURATION:
        shown = tuple(_duration_text(v) for v in ladder)
        own_s = go_duration_seconds(own)
        current = next((i for i, v in enumerate(ladder) if v == own_s), None)
        # the stack's own text ("20m") where it is on the ladder, so that "unchanged" reads as written
        shown = tuple(own if i == current else s for i, s in enumerate(shown))
    else:
        shown = tuple(int(v) if float(v).is_integer() else v for v in ladder)
        current = next((i for i, v in enumerate(ladder) if v == own), None)
    picks = {current} if current is not None else set()
    for target in coarse:
        if ladder:
            picks.add(min(range(len(ladder)), key=lambda i: (abs(ladder[i] - target), i)))
    if not picks and ladder:
        picks.add(min(range(len(ladder)), key=lambda i: abs(ladder[i] - _own_number(kind, own))))
    return Knob(path, kind, shown, current, tuple(sorted(p for p in picks if p is not None)), own)


def _own_number(kind: str, own: Any) -> float:
    return go_duration_seconds(own) if kind == DURATION else float(own)


def _duration_text(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}m" if s % 60 == 0 and s else f"{s}s"


def _between(values: Sequence[float], low: float, high: float, own: float) -> list[float]:
    out = {v for v in values if low <= v <= high}
    if low <= own <= high:
        out.add(own)
    return sorted(out)


# --- the knobs ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeBounds:
    min_low: int
    min_high: int
    max_low: int
    max_high: int


def node_bounds(prefix: str, own_min: int, quota: int, ranges: Mapping[str, Range]) -> NodeBounds:
    """The pool's floor and ceiling as the tuner may move them. By default minNodes stays at or above the
    stack's own (a floor of nodes is an availability decision the simulator cannot weigh: it does not model a
    node failing) and maxNodes at or below the quota (`--max-nodes`, default the stack's maxNodes)."""
    lo_min, _ = ranges.get(f"{prefix}.minNodes", Range()).clamp(own_min, math.inf)
    lo_max, hi_max = ranges.get(f"{prefix}.maxNodes", Range()).clamp(lo_min + 1, quota)
    _, hi_min = ranges.get(f"{prefix}.minNodes", Range()).clamp(lo_min, hi_max - 1)
    return NodeBounds(int(lo_min), int(min(hi_min, hi_max - 1)), int(max(lo_max, lo_min + 1)), int(hi_max))


def replica_low(prefix: str, own_min: int, model_min: int, ranges: Mapping[str, Range]) -> int:
    """The workload's lowest minReplicas: the stack's own (what it guards against, a pod failing, is not
    simulated), or the lower end of its --range."""
    low, _ = ranges.get(f"{prefix}.minReplicas", Range()).clamp(max(own_min, model_min), math.inf)
    return int(low)


def pool_knobs(prefix: str, min_nodes: int, max_nodes: int, b: NodeBounds) -> list[Knob]:
    """minNodes and maxNodes of one GPU pool, within `b` (node_bounds)."""
    min_knob = _numeric_knob(f"{prefix}.minNodes", INT, int_ladder(b.min_low, b.min_high, min_nodes), min_nodes)
    n = len(min_knob.values)
    min_knob = dataclasses.replace(min_knob, coarse=tuple(range(n)) if n <= 4 else
                                   tuple(sorted({0, 1, n // 2, n - 1})))
    max_knob = _numeric_knob(f"{prefix}.maxNodes", INT, int_ladder(b.max_low, b.max_high, max_nodes), max_nodes)
    return [min_knob, max_knob]


def headroom_knob(prefix: str, headroom: Mapping[str, Any] | None, pod_gpus: int, gpus_per_node: int) -> Knob:
    """None or placeholder GPUs in whole pods (up to a node's worth), and the stack's own headroom as it is."""
    path = f"{prefix}.headroom"
    own = dict(headroom) if headroom is not None else None
    values: list[Any] = [None]
    for g in range(pod_gpus, gpus_per_node + 1, pod_gpus):
        values.append({**{k: v for k, v in (own or {}).items() if k != "schedules"}, "gpus": g})
    current: int | None
    if own is None:
        current = 0
    elif own in values:
        current = values.index(own)
    else:  # with schedules (or more than a node): its own place, after the plain value of its size
        at = sum(1 for v in values if v is None or v["gpus"] <= own.get("gpus", 0))
        values.insert(at, own)
        current = at

    def expand(value: Any) -> dict[str, Any]:
        if value is None or own is None:
            return {path: value}
        out: dict[str, Any] = {}
        for key in sorted(set(own) | set(value)):
            if own.get(key) != value.get(key):
                out[f"{path}.{key}"] = value.get(key, [] if key == "schedules" else None)
        return out

    return Knob(path, CHOICE, tuple(values), current, tuple(sorted({current, 0})), own, expand)


def workload_knobs(prefix: str, w: Mapping[str, Any], min_replicas_low: int, max_replicas_high: int,
                   levels: Sequence[float], ranges: Mapping[str, Range]) -> list[Knob]:
    """The scaling settings of one workload (`w`: its effective values, camelCase), minReplicas from
    `min_replicas_low` (replica_low) and maxReplicas up to `max_replicas_high` (what fits the widest pool). A
    workload with a serving profile (`w["band"]` set) is tuned on its band, never on `targetUtilization` (which
    the config model refuses beside a profile)."""
    own_min, own_max = int(w["minReplicas"]), int(w["maxReplicas"])
    lo_min = min_replicas_low
    _, hi_min = ranges.get(f"{prefix}.minReplicas", Range()).clamp(lo_min, max_replicas_high)
    lo_max, hi_max = ranges.get(f"{prefix}.maxReplicas", Range()).clamp(max(lo_min, 1), max_replicas_high)
    hi_min = min(hi_min, hi_max)
    lo_s, hi_s = ranges.get(f"{prefix}.scaleDownStabilizationSeconds", Range()).clamp(0, max(STABILIZATION_SECONDS))
    own_s = int(w["scaleDownStabilizationSeconds"])
    schedules = list(w.get("schedules") or [])
    choices: list[Any] = [schedules] + ([[]] if schedules else []) + [Learned(q) for q in levels]
    band = w.get("band")
    if band is None:
        lo_t, hi_t = ranges.get(f"{prefix}.targetUtilization", Range()).clamp(min(TARGETS), max(TARGETS))
        own_t = w["targetUtilization"]
        drive = [_numeric_knob(f"{prefix}.targetUtilization", INT, _between(TARGETS, lo_t, hi_t, own_t), own_t,
                               COARSE_TARGETS)]
    else:
        drive = []
        for key, ladder, coarse in ((SCALE_UP, BAND_UP, COARSE_BAND_UP), (SCALE_DOWN, BAND_DOWN, ())):
            path, own = f"{prefix}.{key}", float(band[key.rsplit(".", 1)[1]])
            low, high = ranges.get(path, Range()).clamp(min(ladder), max(ladder))
            drive.append(_numeric_knob(path, NUMBER, _between(ladder, low, high, own), own, coarse))
    return [
        _numeric_knob(f"{prefix}.minReplicas", INT, int_ladder(int(lo_min), int(hi_min), own_min), own_min),
        _numeric_knob(f"{prefix}.maxReplicas", INT, int_ladder(int(lo_max), int(hi_max), own_max), own_max),
        *drive,
        _numeric_knob(f"{prefix}.scaleDownStabilizationSeconds", INT,
                      _between(STABILIZATION_SECONDS, lo_s, hi_s, own_s), own_s),
        Knob(f"{prefix}.schedules", CHOICE, tuple(choices), 0, tuple(range(len(choices))), schedules),
    ]


def autoscaler_knobs(prefix: str, effective: Mapping[str, str], ranges: Mapping[str, Range]) -> list[Knob]:
    """The Cluster Autoscaler's scale-down timings (`effective`: the flags as the stack sends them)."""
    out = []
    for flag, ladder in ((UNNEEDED, UNNEEDED_SECONDS), (DELAY_AFTER_ADD, DELAY_AFTER_ADD_SECONDS)):
        path = f"{prefix}.{flag}"
        own = effective[flag]
        low, high = ranges.get(path, Range()).clamp(min(ladder), max(ladder))
        out.append(_numeric_knob(path, DURATION, _between(ladder, low, high, go_duration_seconds(own)), own))
    return out


def tunable_paths(pool: str, workload: str, cluster: str, serving: bool = False) -> tuple[str, ...]:
    """Every path `--range` and `--keep` accept, for the messages (`serving`: the workload has a profile)."""
    drive = (f"{workload}.{SCALE_UP}", f"{workload}.{SCALE_DOWN}") if serving else (f"{workload}.targetUtilization",)
    return (f"{pool}.minNodes", f"{pool}.maxNodes", f"{pool}.headroom", f"{workload}.minReplicas",
            f"{workload}.maxReplicas", *drive, f"{workload}.scaleDownStabilizationSeconds",
            f"{workload}.schedules", f"{cluster}.{UNNEEDED}", f"{cluster}.{DELAY_AFTER_ADD}")


def floor_cost_per_month(min_nodes: int, gpus_per_node: int, price: float) -> float:
    """What the pool's floor alone costs a month: no setting with this minNodes can cost less."""
    return min_nodes * gpus_per_node * price * 730

