"""What Prometheus holds of the workload's GPU series, and what KEDA's query reads from it.

The query (renderers/promql.py `gpu_utilization_query`) is `sum(max by (UUID) (clamp(avg_over_time(
DCGM_FI_DEV_GPU_UTIL{pod=~"<workload>-..."}[1m]), 0, 100)))`: an average per series over the samples of the
window, then a sum over the series. Each of a pod's GPUs is one series (dcgm-exporter labels it with the pod that
holds it), from the first scrape after the pod is bound until its last samples leave the window (a series that is
no longer exported gets a staleness marker, which range functions skip; the samples before it still count:
prometheus/prometheus docs "Staleness"). So a pod's series counts with its own average as soon as it has one
sample: a new pod at 100 % adds 100 at once, not a quarter of it, and a deleted pod's series keeps counting for up
to a window. Averaging the per-scrape totals instead (the model before issue 16's calibration) makes the metric
climb up to four times slower while pods are added, and fall later while they are removed.

`max by (UUID)` is not modelled: it differs from the sum only while one GPU carries two workload pods' series in
one window (a pod replaced on the same GPU), and then it takes the larger instead of both.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable, Iterable, Mapping


class QueryWindow:
    """Series keyed by who holds the GPUs (a pod), each a deque of (scrape time, value summed over its GPUs)."""

    def __init__(self, window: float) -> None:
        self.window = window
        self.series: dict[Hashable, deque[tuple[float, float]]] = {}
        #: The same series' values alone, so that the query sums each series without a generator (it runs every sync).
        self._values: dict[Hashable, deque[float]] = {}
        #: What the exporter served at its last refresh: holder -> value (a scrape copies it).
        self.exported: dict[Hashable, float] = {}
        # The query's last answer until a scrape or an expiry changes it (the simulator asks at every HPA sync
        # of a 14-day trace), and the oldest sample, so that nothing is scanned before one expires.
        self._oldest = math.inf
        self._value: float | None = None
        self._fresh = False

    def export(self, values: Mapping[Hashable, float]) -> None:
        self.exported = dict(values)

    def scrape(self, t: float) -> None:
        series, values = self.series, self._values
        for key, value in self.exported.items():
            samples = series.get(key)
            if samples is None:
                samples = series[key] = deque()
                values[key] = deque()
                self._oldest = min(self._oldest, t)
            samples.append((t, value))
            values[key].append(value)
        self._fresh = False
        self._prune(t)

    def _prune(self, t: float) -> None:
        # Prometheus 2.x selects [t - window, t]; scrape times carry milliseconds of jitter, so a sample exactly
        # one window old is as good as never in a real range; (t - window, t] keeps four 15 s scrapes in 1 min.
        edge = t - self.window
        if self._oldest > edge:
            return
        oldest = math.inf
        series, values = self.series, self._values
        for key in list(series):
            samples, vals = series[key], values[key]
            while samples and samples[0][0] <= edge:
                samples.popleft()
                vals.popleft()
            if not samples:
                del series[key], values[key]
            elif samples[0][0] < oldest:
                oldest = samples[0][0]
        self._oldest = oldest
        self._fresh = False

    def value(self, t: float) -> float | None:
        """The query at `t`: the sum of the series' averages, None when no series has a sample (an empty
        result: KEDA's scaler error, its fallback)."""
        self._prune(t)
        if not self._fresh:
            # Summed afresh as Prometheus does (a running sum drifts, and ceil(total / threshold) is exact).
            self._value = (sum([sum(v) / len(v) for v in self._values.values()])
                           if self._values else None)
            self._fresh = True
        return self._value

    def reset(self, values: Mapping[Hashable, float], times: Iterable[float]) -> None:
        """Series that read `values` at each of `times` (a steady state), and the exporter serving the same."""
        stamps = sorted(times)
        self.seed({key: [(ts, v) for ts in stamps] for key, v in values.items()}, values)

    def seed(self, series: Mapping[Hashable, Iterable[tuple[float, float]]],
             exported: Mapping[Hashable, float]) -> None:
        """Series as a real Prometheus holds them (the end-to-end calibration starts from a live cluster)."""
        self.series = {key: deque(sorted(s)) for key, s in series.items()}
        self.series = {key: s for key, s in self.series.items() if s}
        self._values = {key: deque(v for _, v in s) for key, s in self.series.items()}
        self._oldest = min((s[0][0] for s in self.series.values()), default=math.inf)
        self._fresh = False
        self.exported = dict(exported)
