"""The stack as `python -m capacity tune` changes it, and the bounds of the search, checked by the config model.

`Stack` applies a candidate's stack-file change like `--set` (capacity/config.py `apply_overrides`) and validates
it with `stackconfig.load_stack_config`: the only way a setting reaches the simulator. `find_bounds` works out the
widest pool the bounds allow (the oracle's, and the cap of "within reach", see capacity/tune.py) and refuses a bound
the model would refuse, naming the option, the value and why; `unmeetable` refuses an unserved level that even the
oracle misses, with the fix (a higher `--max-nodes`, or the level the bounds can meet).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from capacity import config as stackfile
from capacity import shape as shapes
from capacity.cli import UsageError
from capacity.search import Level
from capacity.settings import CA_DEFAULTS, SimSettings
from capacity.space import (
    LEARNED_LEVELS,
    SCALE_UP,
    SERVING_HELD,
    NodeBounds,
    Range,
    Space,
    autoscaler_knobs,
    headroom_knob,
    node_bounds,
    pool_knobs,
    replica_low,
    tunable_paths,
    workload_knobs,
)
from capacity.trace import Segment
from renderers.gcore_cluster import autoscaler_config
from stackconfig import ConfigError, GpuPoolConfig, Problem, StackConfig, WhatIfConfig, load_stack_config

CLUSTER = "cluster.autoscaler"
GPU_POOL_MAX_NODES = 200  # stackconfig/gpu_pool.py: maxNodes ≤ 200


@dataclass(frozen=True)
class Request:
    """What the command line asks for (already checked for its own form by capacity/tune_cli.py)."""

    stack: str
    root: Path
    level: Level
    hold_out: float = 0.3
    trace: str | None = None
    column: str | None = None
    per_gpu: float | None = None
    workload: str | None = None
    days: float | None = None
    seed: int | None = None
    max_nodes: int | None = None
    ranges: Mapping[str, Range] = field(default_factory=dict)
    keep: tuple[str, ...] = ()
    timezone: str | None = None
    jobs: int = 1
    #: Reordered copies of the tuning part the level must hold on too (capacity/shape.py `reordered`).
    reorderings: int = 8


def _problem(option: str, value: Any, message: str, fix: str) -> UsageError:
    return UsageError([Problem(option, value, message, fix)])


class Stack:
    """The stack as the tuner changes it: its raw keys, validation of a change, and the simulator's settings."""

    def __init__(self, request: Request) -> None:
        self.raw = stackfile.read_stack_file(request.stack, request.root)
        self.cfg = load_stack_config(self.raw)
        self.whatif = self.cfg.what_if or WhatIfConfig()
        workload = stackfile.pick_workload(self.cfg, request.workload or self.whatif.workload)
        self.index = next(i for i, w in enumerate(self.cfg.workloads) if w.name == workload.name)
        self.name = workload.name
        self.prefix = f"workloads.{self.index}"
        #: The workload scales on a serving profile: tuned on its band, judged on its latency objective.
        self.serving = workload.serving is not None
        #: The workload's pool (the one the tuner changes): its index among the pools and its stack-file path.
        own = stackfile.workload_pool(self.cfg, workload)
        self.pool_index = next(i for i, p in enumerate(self.cfg.pools) if p == own)
        self.pool = f"gpuPools.{self.pool_index}" if self.cfg.gpu_pools is not None else "gpuPool"
        #: The wall clock of the trace's first row when its times are ISO timestamps (else whatIf.start).
        self.start: datetime | None = None

    def load(self, changes: dict[str, Any]) -> StackConfig:
        sets = [f"{path}={json.dumps(value)}" for path, value in changes.items()]
        return load_stack_config(stackfile.apply_overrides(self.raw, sets))

    def valid(self, changes: dict[str, Any]) -> StackConfig | None:
        try:
            return self.load(changes)
        except ConfigError:
            return None

    def pool_of(self, cfg: StackConfig) -> GpuPoolConfig:
        """The workload's pool in `cfg` (this stack, or a candidate of it)."""
        return cfg.pools[self.pool_index]

    def raw_pool(self) -> dict[str, Any]:
        """The workload's pool as the stack file writes it."""
        if self.cfg.gpu_pools is not None:
            return dict(self.raw["gpuPools"][self.pool_index])
        return dict(self.raw.get("gpuPool") or {})

    def settings(self, cfg: StackConfig) -> SimSettings:
        s = stackfile.settings_from_config(cfg, cfg.workloads[self.index], self.whatif)
        return s if self.start is None else dataclasses.replace(s, start=self.start)


def build_space(stack: Stack, request: Request, bounds: Bounds, shape: shapes.Shape | None) -> Space:
    cfg, raw = stack.cfg, stack.raw
    pool, w = stack.pool_of(cfg), cfg.workloads[stack.index]
    raw_w = raw["workloads"][stack.index]
    effective: dict[str, Any] = {"minReplicas": w.min_replicas, "maxReplicas": w.max_replicas,
                                 "scaleDownStabilizationSeconds": w.scale_down_stabilization_seconds,
                                 "schedules": raw_w.get("schedules") or []}
    if w.serving is not None:
        effective["band"] = {"scaleUp": w.serving.band.scale_up, "scaleDown": w.serving.band.scale_down}
    else:
        effective["targetUtilization"] = w.target_utilization
    flags = {**CA_DEFAULTS, **autoscaler_config(cfg.pools, cfg.workloads, cfg.cluster.autoscaler)}
    raw_headroom = stack.raw_pool().get("headroom")
    knobs = [
        *pool_knobs(stack.pool, pool.min_nodes, pool.max_nodes, bounds.nodes),
        headroom_knob(stack.pool, raw_headroom, cfg.headroom_pod_gpus(pool), pool.gpus),
        *workload_knobs(stack.prefix, effective, bounds.min_replicas, bounds.max_replicas,
                        LEARNED_LEVELS if shape else (), request.ranges),
        *autoscaler_knobs(CLUSTER, flags, request.ranges),
    ]
    kept = set(request.keep)
    out = []
    for k in knobs:
        if k.path in kept:
            own = k.current if k.current is not None else 0
            k = dataclasses.replace(k, values=(k.values[own],), current=0 if k.current is not None else None,
                                    coarse=(0,))
        out.append(k)
    return Space(tuple(out))


def loosest(stack: Stack, min_nodes: int, max_nodes: int, max_replicas: int, min_replicas: int) -> dict[str, Any]:
    """The stack-file change to the bounds' widest pool: the oracle's and the largest capacity's."""
    pool = stack.pool
    return {f"{pool}.minNodes": min_nodes, f"{pool}.maxNodes": max_nodes, f"{pool}.headroom": None,
            f"{stack.prefix}.minReplicas": min_replicas, f"{stack.prefix}.maxReplicas": max_replicas,
            f"{stack.prefix}.schedules": []}


def max_replicas_at(stack: Stack, min_nodes: int, max_nodes: int, min_replicas: int) -> int | None:
    """The most replicas the config model lets the workload have on `max_nodes` nodes (None: none)."""
    cfg = stack.cfg
    per_node = stack.pool_of(cfg).gpus // cfg.workloads[stack.index].gpus_per_pod
    for m in range(per_node * max_nodes, max(min_replicas, 1) - 1, -1):
        if stack.valid(loosest(stack, min_nodes, max_nodes, m, min_replicas)) is not None:
            return m
    return None


def _excess(segs: Sequence[Segment], cap: float) -> float:
    """GPU-hours of demand above `cap`: unserved by every setting whose Ready GPUs never exceed it."""
    return sum((s.gpus - cap) * (s.end - s.start) for s in segs if s.gpus > cap) / 3600


def _demand(segs: Sequence[Segment]) -> float:
    return sum(s.gpus * (s.end - s.start) for s in segs) / 3600


# --- the bounds ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bounds:
    nodes: NodeBounds
    min_replicas: int
    max_replicas: int
    #: The most GPUs any setting within the bounds gives the workload (the cap of "within reach").
    cap: float

    @property
    def min_nodes(self) -> int:
        return self.nodes.min_low

    @property
    def max_nodes(self) -> int:
        return self.nodes.max_high


def check_paths(stack: Stack, request: Request) -> None:
    serving = stack.serving
    paths = tunable_paths(stack.pool, stack.prefix, CLUSTER, serving)
    problems = []
    for option, path in [*(("--range", p) for p in request.ranges), *(("--keep", p) for p in request.keep)]:
        key = path.removeprefix(f"{stack.prefix}.")
        held = next((k for k in SERVING_HELD if key == k or key.startswith(k + ".")), None)
        if serving and key == "targetUtilization":
            problems.append(Problem(option, path, f"is not a setting of workload {stack.name!r}: it scales on its "
                                    "serving profile, where the config model refuses targetUtilization (GPU "
                                    "utilisation is only its guardrail, at 100 %)",
                                    f"tune the profile's band instead: {option} {stack.prefix}.{SCALE_UP}"
                                    + ("=0.5..0.8" if option == "--range" else "")))
        elif serving and held is not None:
            problems.append(Problem(option, path, f"is not a setting the tuner changes: {stack.prefix}.{held} "
                                    f"{SERVING_HELD[held]}", f"use one of: {', '.join(paths)}"))
        elif not serving and key.startswith("serving."):
            problems.append(Problem(option, path, f"is not a setting of workload {stack.name!r}: it has no serving "
                                    "profile (it scales on GPU utilisation)",
                                    f"tune {stack.prefix}.targetUtilization, or give the workload a serving profile "
                                    "first (docs/serving-workloads.md#serving-profile)"))
        elif path not in paths:
            problems.append(Problem(option, path, f"is not a setting the tuner changes (workload {stack.name!r} is "
                                    f"{stack.prefix})", f"use one of: {', '.join(paths)}"))
        elif option == "--range" and path.endswith((".headroom", ".schedules")):
            problems.append(Problem(option, path, "is not a number, so it has no range",
                                    f"hold it with --keep {path}, or leave it to the tuner"))
    if problems:
        raise UsageError(problems)


def _range_text(path: str, r: Range) -> str:
    def end(v: float | None) -> str:
        if v is None:
            return ""
        if path.startswith(CLUSTER):
            return f"{v:g}s"
        return f"{v:g}"

    return f"{path}={end(r.low)}..{end(r.high)}"


def _end_value(path: str, end: float) -> Any:
    if path.startswith(CLUSTER):
        return f"{end:g}s"
    return int(end) if float(end).is_integer() else end


def _model_key(path: str) -> str:
    """`workloads.0.minReplicas` as the config model names it: `workloads[0].minReplicas`."""
    return re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", path)


def _range_ends(ranges: Mapping[str, Range]) -> list[tuple[str, Range, str, Any]]:
    """(path, range, "a lower"/"an upper", the end as a stack-file value) for every end the command line gave."""
    return [(path, rng, which, _end_value(path, end)) for path, rng in ranges.items()
            for which, end in (("a lower", rng.low), ("an upper", rng.high)) if end is not None]


def check_range_ends(stack: Stack, ranges: Mapping[str, Range]) -> None:
    """Each end of each --range on its own, set in the stack: refused when the model refuses that key's value."""
    problems = []
    for path, rng, which, value in _range_ends(ranges):
        try:
            stack.load({path: value})
        except ConfigError as exc:
            own = [p for p in exc.problems if p.key == _model_key(path)]
            if own:
                problems.append(Problem("--range", _range_text(path, rng),
                                        f"has {which} end the config model refuses ({own[0].key}: "
                                        f"{own[0].value!r} {own[0].message})", own[0].fix))
    if problems:
        raise UsageError(problems)


def find_bounds(stack: Stack, request: Request) -> Bounds:
    """The widest pool the bounds allow, checked by the config model; every bound it refuses is named."""
    cfg = stack.cfg
    w = cfg.workloads[stack.index]
    r = request.ranges
    check_range_ends(stack, r)
    pool, key = stack.pool_of(cfg), stack.pool
    quota = request.max_nodes if request.max_nodes is not None else pool.max_nodes
    nodes = node_bounds(key, pool.min_nodes, quota, r)
    lo_n, hi_m = nodes.min_low, nodes.max_high
    lo_r = replica_low(stack.prefix, w.min_replicas, 0 if w.wake_trigger is not None else 1, r)
    hi_r_asked = r.get(f"{stack.prefix}.maxReplicas", Range()).high
    if hi_r_asked is not None and hi_r_asked < lo_r:
        own = r.get(f"{stack.prefix}.minReplicas", Range()).low is None
        why = (f"the stack's own {stack.prefix}.minReplicas ({w.min_replicas}), below which the tuner does not go "
               "unless asked" if own else f"the lower end of --range {stack.prefix}.minReplicas ({lo_r:g})")
        raise _problem("--range", _range_text(f"{stack.prefix}.maxReplicas", r[f"{stack.prefix}.maxReplicas"]),
                       f"puts maxReplicas at most {hi_r_asked:g}, below {why}: no setting is within both",
                       f"raise the upper end to at least {lo_r:g}, or allow fewer replicas with --range "
                       f"{stack.prefix}.minReplicas={max(0 if w.wake_trigger else 1, 1)}..{hi_r_asked:g}")
    if lo_n >= hi_m:
        floor = f"the lower end of --range {key}.minNodes" if f"{key}.minNodes" in r else (
            f"the stack's own {key}.minNodes, below which the tuner does not go unless asked")
        raise _problem("--range" if f"{key}.maxNodes" in r else "--max-nodes", hi_m,
                       f"puts {key}.maxNodes at most {hi_m}, not above {key}.minNodes ≥ {lo_n} ({floor}): a pool "
                       "whose maxNodes is not greater than its minNodes cannot grow",
                       f"allow {key}.maxNodes of at least {lo_n + 1} (--max-nodes {lo_n + 1}), or lower the floor "
                       f"with --range {key}.minNodes=1..{max(1, hi_m - 1)}")
    fits = max_replicas_at(stack, lo_n, hi_m, lo_r)
    if fits is None:
        try:
            stack.load(loosest(stack, lo_n, hi_m, max(lo_r, 1), lo_r))
        except ConfigError as exc:
            raise _problem("bounds", f"minNodes {lo_n:g}, maxNodes {hi_m:g}, minReplicas {lo_r:g}",
                           f"make a stack the config model refuses: {exc.problems[0]}",
                           "widen the bounds (--max-nodes, --range) so that the stack is valid at their widest",
                           ) from None
        raise _problem("bounds", f"maxNodes {hi_m:g}", "leave no maxReplicas the config model accepts",
                       "raise --max-nodes")
    hi_r = int(min(fits, hi_r_asked)) if hi_r_asked is not None else fits
    bounds = Bounds(nodes, lo_r, hi_r, hi_r * w.gpus_per_pod)
    # every end the command line gave, at the widest other bounds, through the config model
    widest = loosest(stack, bounds.min_nodes, bounds.max_nodes, bounds.max_replicas, bounds.min_replicas)
    problems = []
    for path, rng, which, value in _range_ends(r):
        try:
            stack.load({**widest, path: value})
        except ConfigError as exc:
            first = exc.problems[0]
            problems.append(Problem("--range", _range_text(path, rng),
                                    f"has {which} end ({value}) that the config model refuses even at the widest "
                                    f"other bounds ({first.key}: {first.value!r} {first.message})",
                                    f"keep the end within what the model accepts ({first.fix})"))
    if problems:
        raise UsageError(problems)
    return bounds


def unmeetable(stack: Stack, request: Request, bounds: Bounds, tune_part: Sequence[Segment]) -> None:
    """Exit 2 before the search when even the oracle (nodes the minute they are needed) misses the unserved level."""
    demand = _demand(tune_part)
    if demand <= 0:
        return
    excess = _excess(tune_part, bounds.cap)
    pct = 100 * excess / demand
    budget = request.level.max_unserved_pct
    if pct <= budget + 1e-9:
        return
    w = stack.cfg.workloads[stack.index]
    peak = max(s.gpus for s in tune_part)
    why = (f"even nodes that appear the minute they are needed leave {pct:.3g} % of the demand unserved "
           f"({excess:.2f} of {demand:.1f} GPU-hours): demand reaches {peak:.1f} GPUs, and the bounds allow the "
           f"workload at most {bounds.max_replicas} replicas × {w.gpus_per_pod} GPU(s) = {bounds.cap:g} GPUs "
           f"(at most {bounds.max_nodes} nodes of {stack.pool_of(stack.cfg).gpus} GPUs")
    reserved = sum(o.gpus_per_pod * o.max_replicas for o in stack.cfg.workloads_on(stack.pool_of(stack.cfg))
                   if o.name != stack.name)
    why += (f", less the {reserved} GPUs the other workloads may take at their maxReplicas, which must fit too)"
            if reserved else ")")
    fixes = [f"allow at least {math.ceil(pct * 100) / 100:g} % (--max-unserved {math.ceil(pct * 100) / 100:g}%)"]
    if f"{stack.prefix}.maxReplicas" not in request.ranges:
        for nodes in range(bounds.max_nodes + 1, GPU_POOL_MAX_NODES + 1):
            fits = max_replicas_at(stack, bounds.min_nodes, nodes, bounds.min_replicas)
            if fits is not None and 100 * _excess(tune_part, fits * w.gpus_per_pod) / demand <= budget + 1e-9:
                fixes.append(f"raise the quota to --max-nodes {nodes} (then at most {fits} replicas)")
                break
    else:
        fixes.append(f"raise the upper end of --range {stack.prefix}.maxReplicas")
    raise _problem("--max-unserved", f"{budget:g}%", f"cannot be met by any setting within the bounds: {why}",
                   " or ".join(fixes))


