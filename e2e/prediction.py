"""The what-if's prediction of a scenario, from the live cluster's state at its start, on the run's own settings.

The prediction is `capacity`'s simulator (`capacity.sim.Simulation`) with the settings `python -m capacity` builds
from the deployed stack file (`capacity.config.settings_from_config`: the rendered ScaledObject, the autoscaler flags
sent to Gcore, the what-if's provisioning times), run in production seconds: the real run's seconds times the time
factor (e2e/timescale.py). What the run divides by the factor is then exactly the stack's value; what it cannot
divide (the metric path, the HPA policies' periods, cron windows) is stretched by the factor here, so both clocks
agree. The simulator starts from the cluster as it is (its nodes, where each pod runs, the samples Prometheus holds
for the query's window, what the HPA and the autoscaler remember) instead of its usual steady state, and the
provisioning times drawn for the scenario's nodes (e2e/pool_autoscaler.py) are given to it (they are the cloud's, not
a rule under test). Its state after every tick becomes an `Observation`, the same record the real run yields.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from capacity.config import load, pick_workload, settings_from_config
from capacity.settings import Behavior, CronWindow, Policy, SimSettings
from capacity.sim import Simulation
from capacity.state import ClusterState, Node, Pod
from capacity.trace import Segment
from e2e.recorder import Observation
from stackconfig import WhatIfConfig
from stacknames import WORKLOAD_PRIORITY

#: Simulation step in production seconds: every stretched and unstretched period is a multiple of it.
TICK = 5


@dataclass(frozen=True)
class RealTimes:
    """The real run's durations that the stack's objects fix and the factor cannot shorten, in real seconds."""

    exporter_refresh: float
    scrape_interval: float
    query_window: float


def run_settings(stack_root: Path, stack: str, factor: float, real: RealTimes) -> SimSettings:
    """The what-if's settings for the deployed stack file, in production seconds on this run's clock."""
    cfg = load(stack, root=stack_root)
    base = settings_from_config(cfg, pick_workload(cfg, None), cfg.what_if or WhatIfConfig())

    def stretched(b: Behavior, stabilization: float) -> Behavior:
        return Behavior(round(stabilization), tuple(Policy(p.type, p.value, round(p.period * factor))
                                                    for p in b.policies), b.select)

    return replace(
        base,
        # The metric path runs at the stack's real settings: stretched by the factor on the model's clock.
        exporter_refresh=round(real.exporter_refresh * factor), scrape_interval=round(real.scrape_interval * factor),
        query_window=round(real.query_window * factor),
        polling_interval=round(base.polling_interval * factor),
        # The deployed stabilisation windows are the stack's ÷ factor: × factor gives back the stack's numbers.
        # The scale-up policies' periods run at the stack's value (stretched here); the scale-down policy's period
        # is divided on the cluster (e2e/chain.py divide_scale_down_periods): its stack value is the model's.
        scale_up=stretched(base.scale_up, base.scale_up.stabilization * factor),
        scale_down=replace(base.scale_down, stabilization=round(base.scale_down.stabilization * factor)),
        tick=TICK,
    )


@dataclass(frozen=True)
class PodAt:
    name: str
    kind: str  # "workload" or "placeholder"
    gpus: int
    ready: bool


@dataclass(frozen=True)
class NodeAt:
    name: str
    gpus: int
    pods: tuple[PodAt, ...]


@dataclass(frozen=True)
class Start:
    """The live cluster at a scenario's start (wall-clock `t`), in the terms the simulator keeps."""

    t: float
    nodes: tuple[NodeAt, ...]
    pending: tuple[PodAt, ...]
    #: Per workload pod: the (wall time, value) samples Prometheus holds for the query's window.
    samples: Mapping[str, Sequence[tuple[float, float]]]
    #: The HPA's scale events still inside its policies' periods: (wall time, replicas added (+) or removed (-)).
    scale_events: Sequence[tuple[float, int]]
    last_scale_up: float
    last_delete: float
    unneeded_since: Mapping[str, float] = field(default_factory=dict)


class Replay(random.Random):
    """The provisioning draws made for the run's nodes (boot, GPUs, boot, ... in production seconds), in order; the
    what-if's own draws once they run out (when the model orders more nodes than the run did)."""

    def __init__(self, draws: Sequence[float], seed: int = 1) -> None:
        super().__init__(seed)
        self.draws = list(draws)

    def uniform(self, a: float, b: float) -> float:
        return self.draws.pop(0) if self.draws else super().uniform(a, b)


def predict(s: SimSettings, start: Start, loads: Sequence[tuple[float, float]], until: float, factor: float,
            draws: Sequence[float], cron_origin: float | None = None,
            tweak: Callable[[Simulation], None] | None = None,
            outages: Sequence[tuple[float, float]] = ()) -> tuple[list[Observation], dict[str, float | None]]:
    """Observations of the model from `start.t` to `until` (wall clock), the demand following `loads` ((wall time,
    GPUs), the first at or before the start). `cron_origin`: the wall time the model's clock 0 stands for in cron
    terms (cron windows are wall-clock minutes, which the factor cannot shorten; e2e/chain.py RealWindow.stretched
    picks it, with the window stretched by the factor, so that the window opens at the same moment on both
    clocks). Also returns the events the series
    cannot show: `metric_seen`, the first scrape after the first load change whose sample of a GPU that was
    already reporting differs from that GPU's sample before the change (as e2e/test_autoscaling.py measures it
    on the real Prometheus)."""
    t0 = start.t
    s = replace(s, start=datetime.fromtimestamp(cron_origin if cron_origin is not None else t0, UTC))
    sim = Simulation(s)
    sim.state.rng = Replay(draws)
    if tweak is not None:
        tweak(sim)
    if outages:
        _prometheus_down(sim, [((a - t0) * factor, (b - t0) * factor) for a, b in outages])
    out: list[Observation] = []
    change = next((t for t, _ in sorted(loads) if t > t0), None)
    before: dict[Hashable, float] = {}
    extra: dict[str, float | None] = {"metric_seen": None}

    def model(t: float) -> float:
        return (t - t0) * factor

    def begin(sim: Simulation, demand: float) -> None:
        st = sim.state
        index: dict[str, Pod] = {}
        for n in start.nodes:
            node = Node(0.0, 0.0, 0.0, None, n.gpus)
            st.nodes.append(node)
            for p in n.pods:
                pod = _pod(sim.s, p)
                st.place(pod, node, 0.0)
                if pod.kind == "workload":
                    pod.ready_at = 0.0 if p.ready else pod.ready_at
                index[p.name] = pod
        for p in start.pending:
            index[p.name] = _pod(sim.s, p)
        st.workload = [p for p in index.values() if p.kind == "workload"]
        st.placeholders = [p for p in index.values() if p.kind == "placeholder"]
        st.recount(0.0)
        _seed_window(st, start, index, model)
        for when, change in start.scale_events:
            (sim.hpa.up_events if change > 0 else sim.hpa.down_events).append((model(when), abs(change)))
        sim.autoscaler.last_scale_up = model(start.last_scale_up)
        sim.autoscaler.last_delete = model(start.last_delete)
        sim.autoscaler.unneeded = {id(node): (node, model(start.unneeded_since[n.name]))
                                   for n, node in zip(start.nodes, st.nodes, strict=True)
                                   if n.name in start.unneeded_since}
        sim.autoscaler._unneeded_version = -1

    def observe(t: float, st: ClusterState) -> None:
        if change is not None and extra["metric_seen"] is None:
            for key, samples in st.window.series.items():
                if not samples:
                    continue
                if t <= model(change):
                    before[key] = samples[-1][1]
                elif samples[-1][0] == t and key in before and abs(samples[-1][1] - before[key]) > 1e-6:
                    extra["metric_seen"] = t0 + t / factor
        wl, ph = st.workload, st.placeholders
        out.append(Observation(
            t=t0 + t / factor, desired=len(wl),
            pending=sum(1 for p in wl if p.node is None),
            starting=sum(1 for p in wl if p.node is not None and (p.ready_at is None or p.ready_at > t)),
            ready=sum(1 for p in wl if p.node is not None and p.ready_at is not None and p.ready_at <= t),
            placeholders=len(ph), placeholders_pending=sum(1 for p in ph if p.node is None),
            nodes=len(st.nodes), nodes_ready=len(st.usable(t)), metric=metric_total(st, t)))

    segments = []
    # In the order the load changed: the changes before the start all move to it and the last one holds (sorted
    # on the time alone; sorted on (time, GPUs) the largest held, which gave the model a load the run did not have).
    points = sorted([(max(t, t0), g) for t, g in loads if t <= until], key=lambda p: p[0])
    points = [p for i, p in enumerate(points) if i == len(points) - 1 or points[i + 1][0] > p[0]]
    for i, (t, gpus) in enumerate(points):
        end = points[i + 1][0] if i + 1 < len(points) else until
        if end > t:
            segments.append(Segment(model(t), model(end), gpus))
    sim.run(segments, start=begin, observe=observe)
    return _dedupe(out), extra


def _prometheus_down(sim: Simulation, outages: Sequence[tuple[float, float]]) -> None:
    """Prometheus stopped during `outages` (model seconds): no scrape, and the query has no answer, so the HPA
    holds its replicas (KEDA's fallback with `currentReplicasIfHigher`, capacity/hpa.py)."""
    window = sim.state.window
    scrape, value = window.scrape, window.value

    def down(t: float) -> bool:
        return any(a <= t < b for a, b in outages)

    def scrape_unless_down(t: float) -> None:
        if not down(t):
            scrape(t)

    def value_unless_down(t: float) -> float | None:
        return None if down(t) else value(t)

    window.scrape = scrape_unless_down  # type: ignore[method-assign]
    window.value = value_unless_down  # type: ignore[method-assign]


def _pod(s: SimSettings, p: PodAt) -> Pod:
    if p.kind == "workload":
        return Pod("workload", p.gpus, WORKLOAD_PRIORITY)
    return Pod("placeholder", p.gpus, s.placeholder_priority)


def _seed_window(st: ClusterState, start: Start, index: Mapping[str, Pod], model: Callable[[float], float]) -> None:
    """The query's series as Prometheus holds them at the start, on the model's clock: one series per workload pod
    (the sum over its GPUs at each scrape, as capacity/metric_path.py keeps them), a pod that is gone (deleted
    within the window) as a series of its own."""
    series: dict[Hashable, list[tuple[float, float]]] = {}
    exported: dict[Hashable, float] = {}
    for name, samples in start.samples.items():
        pod_name = name.split("/", 1)[0]
        key: Hashable = index.get(pod_name, pod_name)
        per_scrape: dict[float, float] = {}
        for ts, v in samples:
            per_scrape[round(ts, 3)] = per_scrape.get(round(ts, 3), 0.0) + v
        series[key] = sorted((model(ts), v) for ts, v in per_scrape.items())
        if key in index.values() and series[key]:
            exported[key] = series[key][-1][1]
    st.window.seed(series, exported)


def metric_total(st: ClusterState, t: float) -> float | None:
    """The HPA's input in the model: the query over the series at `t` (capacity/metric_path.py)."""
    return st.window.value(t)


def _dedupe(series: list[Observation]) -> list[Observation]:
    out: list[Observation] = []
    for obs in series:
        if not out or not out[-1].same_state(obs):
            out.append(obs)
    return out


# --- the prediction's inputs as JSON: timeline.json keeps them, so a recorded run can be predicted again ---------


@dataclass(frozen=True)
class Inputs:
    """Everything `predict` takes for one scenario: with the real series beside it in timeline.json, the
    comparison can be repeated without the cluster (tests/test_autoscaling_calibration.py)."""

    settings: SimSettings
    start: Start
    loads: tuple[tuple[float, float], ...]
    until: float
    factor: float
    draws: tuple[float, ...]
    cron_origin: float | None = None
    #: (wall-clock start, end) of each time the platform's Prometheus was stopped.
    outages: tuple[tuple[float, float], ...] = ()

    def predict(self, tweak: Callable[[Simulation], None] | None = None
                ) -> tuple[list[Observation], dict[str, float | None]]:
        return predict(self.settings, self.start, self.loads, self.until, self.factor, self.draws,
                       cron_origin=self.cron_origin, tweak=tweak, outages=self.outages)

    def as_json(self) -> dict[str, Any]:
        settings = asdict(self.settings)
        settings["start"] = self.settings.start.isoformat()
        start = asdict(self.start)
        start["samples"] = {k: [list(p) for p in v] for k, v in self.start.samples.items()}
        return {"settings": settings, "start": start, "loads": [list(p) for p in self.loads], "until": self.until,
                "factor": self.factor, "draws": list(self.draws), "cronOrigin": self.cron_origin,
                "outages": [list(o) for o in self.outages]}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Inputs:
        return cls(settings_from_json(doc["settings"]), start_from_json(doc["start"]),
                   tuple((float(t), float(g)) for t, g in doc["loads"]), float(doc["until"]),
                   float(doc["factor"]), tuple(float(d) for d in doc["draws"]), doc.get("cronOrigin"),
                   tuple((float(a), float(b)) for a, b in doc.get("outages", [])))


#: SimSettings fields that are the controllers' own constants, not the stack's (no stack key sets them): a recorded
#: run is predicted with the values of the code under test, so changing one is judged against the real run.
CONTROLLER_CONSTANTS = ("tolerance", "hpa_sync", "gpu_utilization_threshold", "node_group_backoff")


def settings_from_json(doc: Mapping[str, Any]) -> SimSettings:
    """The settings a recorded prediction ran with, but CONTROLLER_CONSTANTS as the code has them now."""
    def behavior(b: Mapping[str, Any]) -> Behavior:
        return Behavior(int(b["stabilization"]), tuple(Policy(**p) for p in b["policies"]), str(b["select"]))

    def windows(ws: Sequence[Mapping[str, Any]]) -> tuple[CronWindow, ...]:
        return tuple(CronWindow(**w) for w in ws)

    values = {k: v for k, v in doc.items() if k not in CONTROLLER_CONSTANTS}
    values.update(
        scale_up=behavior(doc["scale_up"]), scale_down=behavior(doc["scale_down"]),
        replica_windows=windows(doc["replica_windows"]), headroom_windows=windows(doc["headroom_windows"]),
        reserved_pods=tuple(doc["reserved_pods"]), node_ready_range=tuple(doc["node_ready_range"]),
        gpu_ready_range=tuple(doc["gpu_ready_range"]), start=datetime.fromisoformat(doc["start"]))
    return SimSettings(**values)


def start_from_json(doc: Mapping[str, Any]) -> Start:
    def pod(p: Mapping[str, Any]) -> PodAt:
        return PodAt(str(p["name"]), str(p["kind"]), int(p["gpus"]), bool(p["ready"]))

    return Start(
        t=float(doc["t"]),
        nodes=tuple(NodeAt(str(n["name"]), int(n["gpus"]), tuple(pod(p) for p in n["pods"])) for n in doc["nodes"]),
        pending=tuple(pod(p) for p in doc["pending"]),
        samples={k: [(float(t), float(v)) for t, v in series] for k, series in doc["samples"].items()},
        scale_events=[(float(t), int(n)) for t, n in doc["scale_events"]],
        last_scale_up=float(doc["last_scale_up"]), last_delete=float(doc["last_delete"]),
        unneeded_since={k: float(v) for k, v in doc["unneeded_since"].items()})
