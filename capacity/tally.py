"""What a run adds up: billed, busy, idle and unserved GPU-hours per way of running the pool, time to capacity,
and a bounded, down-sampled series for the plot, all summed on the fly so memory does not grow with the trace."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from capacity.state import EPS


class Downsampler:
    """Keeps at most `2 × limit` points of several series by averaging buckets, or taking their max (`maxed`) or
    min (`minned`): a count (replicas, nodes) stays a whole number, its extreme over the bucket.

    The bucket doubles whenever the list fills, so memory stays flat for any trace length.
    """

    def __init__(self, names: tuple[str, ...], maxed: tuple[str, ...], limit: int = 1500,
                 minned: tuple[str, ...] = ()) -> None:
        self.names, self.limit = names, limit
        self.how = tuple(max if n in maxed else min if n in minned else None for n in names)
        self.bucket = 1
        # Any, not float: compiled (capacity/native.py), a float annotation would make a count 3.0
        self.points: list[tuple[Any, ...]] = []  # (t, values...)
        self._acc: list[Any] = []
        self._n = 0
        self._t0 = 0.0

    def add(self, t: float, values: tuple[Any, ...]) -> None:
        if self._n == 0:
            self._t0 = t
            self._acc = list(values)
        else:
            self._acc = [a + v if how is None else how(a, v) for how, a, v in zip(self.how, self._acc, values,
                                                                                    strict=True)]
        self._n += 1
        if self._n == self.bucket:
            self._flush()

    def _flush(self) -> None:
        if not self._n:
            return
        vals = tuple(a / self._n if how is None else a for how, a in zip(self.how, self._acc, strict=True))
        self.points.append((self._t0, *vals))
        self._n = 0
        if len(self.points) >= 2 * self.limit:
            merged = []
            for a, b in zip(self.points[::2], self.points[1::2], strict=False):
                merged.append((a[0], *[(x + y) / 2 if how is None else how(x, y)
                                       for how, x, y in zip(self.how, a[1:], b[1:], strict=True)]))
            self.points = merged
            self.bucket *= 2

    def series(self) -> dict[str, list[Any]]:
        self._flush()
        out = {"t": [p[0] for p in self.points]}
        for i, name in enumerate(self.names, start=1):
            out[name] = [p[i] for p in self.points]
        return out


@dataclass
class Tally:
    """Sums for one way of running the pool (the simulation, the oracle or the static pool)."""

    billed_gpu_s: float = 0.0
    busy_gpu_s: float = 0.0
    unserved_gpu_s: float = 0.0
    short_s: float = 0.0
    peak_nodes: int = 0
    node_s: float = 0.0

    def add(self, dt: float, nodes: int, gpus_per_node: int, demand: float, capacity: float) -> None:
        served = demand if demand <= capacity else capacity
        self.billed_gpu_s += nodes * gpus_per_node * dt
        self.node_s += nodes * dt
        self.busy_gpu_s += served * dt
        if demand > capacity + EPS:
            self.unserved_gpu_s += (demand - capacity) * dt
            self.short_s += dt
        if nodes > self.peak_nodes:
            self.peak_nodes = nodes

    def result(self, price: float, hours: float, reserved_gpu_s: float = 0.0) -> dict[str, Any]:
        cost = self.billed_gpu_s / 3600 * price
        return {
            "gpuHoursBilled": self.billed_gpu_s / 3600,
            "gpuHoursBusy": self.busy_gpu_s / 3600,
            "gpuHoursIdle": (self.billed_gpu_s - self.busy_gpu_s - reserved_gpu_s) / 3600,
            "gpuHoursUnserved": self.unserved_gpu_s / 3600,
            "minutesShort": self.short_s / 60,
            "nodeHours": self.node_s / 3600,
            "peakNodes": self.peak_nodes,
            "cost": cost,
            "costPerMonth": cost / hours * 730 if hours else 0.0,
        }


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (the value that q % of the episodes do not exceed)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]
