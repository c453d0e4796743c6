"""The what-if's per-GPU service model (issue 21): what a model server's users feel for a given load, and the
serving profile's triggers computed from it.

A fluid model of one pool of identical engines, in the trace's unit of work (GPU-seconds at the knee:
`whatIf.perGpu` is what one GPU serves per minute at 100 %). Each tick, the work that arrives joins a backlog
and the Ready GPUs serve up to their capacity:

- load `ρ` = served / capacity (0-1): below the knee the engine batches what comes, so the P90 time per output
  token rises linearly from `perGpu.tpotP90` (a request alone) to `perGpu.tpotP90AtKnee` (a full batch);
- above the knee the batch is full and the excess waits: the backlog `B` (GPU-seconds) is served first in,
  first out, so a new request waits `B / capacity` seconds before its prefill; P90 TTFT = `perGpu.ttftP90` +
  that wait;
- KV-cache usage follows the batch: `ρ` (a full batch at the knee fills the cache vLLM reserved).

An instant attains the objective when both P90s are within `serving.latencyObjective`; attainment is the share
of the demand that arrived at such instants, goodput the GPU-hours of work served at them. The triggers are the
rendered ones (renderers/serving_profile.py), with the memory of their queries: the latency trigger is the P90
of the requests the histograms' rate window holds, not the P90 of the instant. A `rate(...[1m])` over 15 s
scrapes spans its first to its last sample, one scrape interval less than the window (Prometheus
promql/functions.go `extrapolatedRate`; the quantile is a ratio of bucket rates, so the extrapolation cancels;
tests/test_serving_whatif.py checks the span against the rendered query on promtool),
and the P90 of that span stays high while more than a tenth of the work it saw waited. That P90 per histogram,
each over its objective, the larger clamped at CLAMP, is averaged over the scrapes of the smoothing window and
banded. After a queue the trigger so remembers it for about the span plus the smoothing: on the real chain
(e2e/test_serving_chain.py) the profile went on asking for replicas some 100 s after the queue had gone, which
an instant P90 does not see (tests/test_serving_chain_replay.py replays that run's readings through this
model). The KV-cache usage is averaged over the query window and taken over its saturation level. The model has
no request count, so the queue trigger is left out: here a queue exists only above the knee, where the latency
trigger sees it in the TTFT. A model, not a measurement: the knee and the P90s come from `vllm bench serve` on
the real model.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, fields
from operator import itemgetter
from typing import Any

from renderers import serving_profile
from renderers.serving_profile import QUANTILE
from stackconfig.serving import ServingConfig, seconds
from stackconfig.workloads import WorkloadConfig


@dataclass(frozen=True)
class ServiceModel:
    """A serving profile's numbers in seconds: what one GPU delivers, the objective, the band and saturation."""

    ttft_low: float
    tpot_low: float
    tpot_knee: float
    ttft_objective: float | None
    tpot_objective: float | None
    band_up: float
    band_down: float
    kv_saturation: float
    clamp: float = serving_profile.CLAMP
    #: Scrapes the latency ratio is averaged over (SMOOTHING at the scrape interval).
    smoothing_scrapes: int = 4
    #: Seconds of finished requests a scrape's P90 is taken over: the rate window less one scrape interval.
    span: float = 45.0

    @classmethod
    def from_config(cls, s: ServingConfig, scrape_interval: int) -> ServiceModel | None:
        """None without `perGpu` (then there is nothing to model the latency from)."""
        if s.per_gpu is None:
            return None
        o = s.latency_objective
        smoothing = seconds(serving_profile.SMOOTHING)
        return cls(
            ttft_low=seconds(s.per_gpu.ttft_p90), tpot_low=seconds(s.per_gpu.tpot_p90),
            tpot_knee=seconds(s.per_gpu.tpot_p90_at_knee),
            ttft_objective=seconds(o.ttft_p90) if o is not None and o.ttft_p90 is not None else None,
            tpot_objective=seconds(o.tpot_p90) if o is not None and o.tpot_p90 is not None else None,
            band_up=s.band.scale_up, band_down=s.band.scale_down, kv_saturation=s.kv_cache_usage,
            smoothing_scrapes=max(1, round(smoothing / scrape_interval)),
            span=max(float(scrape_interval), seconds(serving_profile.RATE_WINDOW) - scrape_interval),
        )

    def __reduce__(self) -> tuple[type[ServiceModel], tuple[Any, ...]]:
        """Rebuilt by its constructor when pickled to the tuner's worker processes: compiled by mypyc
        (capacity/native.py), a frozen dataclass cannot be unpickled field by field."""
        return ServiceModel, tuple(getattr(self, f.name) for f in fields(self))

    def latency(self, load: float, wait: float) -> tuple[float, float]:
        """(P90 TTFT, P90 TPOT) at load `load` (0-1) with `wait` seconds of backlog ahead of a new request."""
        tpot = self.tpot_low + (self.tpot_knee - self.tpot_low) * min(max(load, 0.0), 1.0)
        return self.ttft_low + wait, tpot

    def ratio(self, ttft: float, tpot: float) -> float | None:
        """The larger P90 / objective (None without an objective), before the clamp."""
        parts = [v / o for v, o in ((ttft, self.ttft_objective), (tpot, self.tpot_objective)) if o is not None]
        return max(parts) if parts else None

    def banded(self, s: float) -> float:
        """renderers/serving_profile.py `banded`: s/up above the band, s/down below it, 1 inside."""
        return max(s / self.band_up, 1.0) * min(s / self.band_down, 1.0)


def _span_quantile(finished: Iterable[tuple[float, float, float, float]], column: int) -> float:
    """The QUANTILE of one column of `Service.finished` (a P90 per tick), each tick weighted by the work it served:
    what a histogram of the span's requests gives."""
    ranked = sorted(finished, key=itemgetter(column))
    goal, seen = QUANTILE * sum([f[1] for f in ranked]), 0.0
    for f in ranked:
        seen += f[1]
        if seen >= goal:
            return f[column]
    return ranked[-1][column]


class Service:
    """The model's state over a run: the backlog, the scraped signals, and the attainment tallies."""

    def __init__(self, model: ServiceModel, scrape_window: int) -> None:
        self.m = model
        self.clock = 0.0
        #: (time, work served, P90 TTFT, P90 TPOT) of the ticks within the span: what the histograms hold.
        self.finished: deque[tuple[float, float, float, float]] = deque()
        self.backlog = 0.0
        #: The clock of the last tick whose requests waited (a backlog ahead of them).
        self._waited = -math.inf
        #: The clock of the first tick at the current TPOT.
        self._tpot_since = -math.inf
        # The last tick without a backlog before it: its (demand, capacity, dt) and what followed from them.
        self._quiet_key: tuple[float, float, float] | None = None
        self._quiet: tuple[float, float, float, float, float, float, float, bool] = (
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, True)
        self.load = 0.0
        self.ttft, self.tpot = model.ttft_low, model.tpot_low
        self.ratios: deque[float] = deque(maxlen=model.smoothing_scrapes)
        self.kv: deque[float] = deque(maxlen=max(1, scrape_window))
        self.demand_s = 0.0
        self.attained_s = 0.0
        self.goodput_s = 0.0
        self.worst_ttft = 0.0
        self.worst_tpot = 0.0

    def step(self, demand: float, capacity: float, dt: float) -> None:
        """One tick: `demand` GPUs of work arrive, `capacity` Ready GPUs serve (every tick of a 14-day trace: the
        locals and the early outs are for speed)."""
        m = self.m
        key = (demand, capacity, dt)
        if self.backlog == 0.0 and key == self._quiet_key:
            # No backlog and the same load as the last such tick: the same figures (most ticks of a trace).
            arrived, served, backlog, load, wait, ttft, tpot, met = self._quiet
        else:
            arrived = demand * dt
            work = self.backlog + arrived
            full = capacity * dt
            served = work if work <= full else full
            backlog = work - served
            if capacity > 0:
                load = served / full
                wait = backlog / capacity
            else:
                load, wait = 0.0, math.inf
            ttft, tpot = m.latency(load, wait)
            met = (m.ttft_objective is None or ttft <= m.ttft_objective) and (
                m.tpot_objective is None or tpot <= m.tpot_objective)
            if self.backlog == 0.0:
                self._quiet_key, self._quiet = key, (arrived, served, backlog, load, wait, ttft, tpot, met)
        self.backlog = backlog
        self.clock = clock = self.clock + dt
        if tpot != self.tpot:
            self._tpot_since = clock
        self.load, self.ttft, self.tpot = load, ttft, tpot
        if wait:
            self._waited = clock
        finished = self.finished
        if served > 0:
            finished.append((clock, served, ttft, tpot))
        edge = clock - m.span
        while finished and finished[0][0] <= edge:
            finished.popleft()
        self.demand_s += arrived
        if arrived > 0:
            if ttft > self.worst_ttft:
                self.worst_ttft = ttft
            if tpot > self.worst_tpot:
                self.worst_tpot = tpot
        if met:
            self.attained_s += arrived
            self.goodput_s += served

    def scrape(self, ready_pods: int) -> None:
        """What Prometheus holds of the engines' series: nothing while no pod is ready (an engine that is not
        serving exports no histogram); the ratio is 0 when no request finished within the span
        (renderers/serving_profile.py), else the P90s of the span's requests over their objectives."""
        if ready_pods == 0:
            self.ratios.clear()
            self.kv.clear()
            return
        if self.m.ttft_objective is not None or self.m.tpot_objective is not None:
            self.ratios.append(self._span_ratio())
        self.kv.append(self.load)

    def _span_ratio(self) -> float:
        # `step` has already dropped what left the span, so every finished tick counts.
        done = self.finished
        if not done:
            return 0.0
        m = self.m
        # No request within the span waited: every TTFT is the engine's own. One TPOT all along the span: that one.
        ttft = m.ttft_low if self._waited <= self.clock - m.span else _span_quantile(done, 2)
        tpot = done[-1][3] if self._tpot_since <= done[0][0] else _span_quantile(done, 3)
        r = m.ratio(ttft, tpot)
        return 0.0 if r is None else min(r, m.clamp)

    def values(self) -> list[float]:
        """Each modelled trigger's value (metric type Value, target 1), as KEDA would read it now."""
        out = []
        if self.ratios:
            out.append(self.m.banded(sum(self.ratios) / len(self.ratios)))
        if self.kv:
            out.append(sum(self.kv) / len(self.kv) / self.m.kv_saturation)
        return out

    def result(self) -> dict[str, float]:
        demand = self.demand_s
        return {
            "objectiveAttainment": self.attained_s / demand if demand > 0 else 1.0,
            "goodputGpuHours": self.goodput_s / 3600,
            "worstTtftP90Seconds": self.worst_ttft,
            "worstTpotP90Seconds": self.worst_tpot,
        }


def gpu_only_threshold(gpus_per_pod: int) -> float:
    """The GPU-utilisation-only comparison's per-replica target: WorkloadConfig's default targetUtilization."""
    return float(WorkloadConfig.model_fields["target_utilization"].default) * gpus_per_pod
