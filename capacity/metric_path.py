"""What Prometheus holds of the workload's GPU series, and what KEDA's query reads from it.

The query (renderers/promql.py `gpu_utilization_query`) is `sum(max by (UUID) (clamp(avg_over_time(
DCGM_FI_DEV_GPU_UTIL{pod=~"<workload>-..."}[25s]), 0, 100)))`: an average per series over the samples of the
window, then a sum over the series. Each of a pod's GPUs is one series (dcgm-exporter labels it with the pod that
holds it), from the first scrape after the pod is bound until its last samples leave the window (a series that is
no longer exported gets a staleness marker, which range functions skip; the samples before it still count:
prometheus/prometheus docs "Staleness"). So a pod's series counts with its own average as soon as it has one
sample: a new pod at 100 % adds 100 at once, not a quarter of it, and a deleted pod's series keeps counting for up
to a window. Averaging the per-scrape totals instead (the model before issue 16's calibration) makes the metric
climb several times slower while pods are added, and fall later while they are removed.

`max by (UUID)` is not modelled: it differs from the sum only while one GPU carries two workload pods' series in
one window (a pod replaced on the same GPU), and then it takes the larger instead of both.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable, Iterable, Mapping


class _History:
    """The samples several series share: the same values at the same scrape times. The exporter serves every Ready
    pod of a workload the same value, so a handful of these stand for all the pods' series, and a scrape that
    sees the exporter's last values again appends once per history instead of once per series."""

    __slots__ = ("times", "values", "members", "now", "mean")

    def __init__(self, times: Iterable[float] = (), values: Iterable[float] = ()) -> None:
        self.times: deque[float] = deque(times)
        self.values: deque[float] = deque(values)
        #: The series that have this history.
        self.members: list[Hashable] = []
        #: The value its series got at the last scrape (None: they were not exported then).
        self.now: float | None = None
        #: The average of `values` (set by `QueryWindow.value`).
        self.mean = 0.0


class QueryWindow:
    """Series keyed by who holds the GPUs (a pod), each the samples (scrape time, value summed over its GPUs) of
    the last `window` seconds. Series with the same samples share one `_History`; each series is still its own
    term of the query's sum, added in the order the series first had a sample (floating-point sums depend on it)."""

    def __init__(self, window: float) -> None:
        self.window = window
        #: Every series with a sample in the window -> its history, in the order the series appeared.
        self._of: dict[Hashable, _History] = {}
        #: The distinct histories of `_of`.
        self._histories: list[_History] = []
        #: What the exporter served at its last refresh: holder -> value (a scrape copies it).
        self.exported: dict[Hashable, float] = {}
        # The exporter's dict at the last scrape: when the next scrape sees the same one (no refresh changed it)
        # and no series expired, every history goes on as a whole.
        self._scraped: Mapping[Hashable, float] | None = None
        # The query's last answer until a scrape or an expiry changes it (the simulator asks at every HPA sync
        # of a 14-day trace), and the oldest sample, so that nothing is scanned before one expires.
        self._oldest = math.inf
        self._value: float | None = None
        self._fresh = False

    @property
    def series(self) -> dict[Hashable, list[tuple[float, float]]]:
        """Each series' samples, oldest first (for the end-to-end calibration's look at the window)."""
        return {key: list(zip(h.times, h.values, strict=True)) for key, h in self._of.items()}

    def export(self, values: Mapping[Hashable, float]) -> None:
        self.exported = dict(values)

    def scrape(self, t: float) -> None:
        exported = self.exported
        if exported is self._scraped:
            for h in self._histories:
                if h.now is not None:
                    h.times.append(t)
                    h.values.append(h.now)
        else:
            self._regroup(t, exported)
            self._scraped = exported
        if self._oldest == math.inf and self._of:
            self._oldest = t
        self._fresh = False
        self._prune(t)

    def _regroup(self, t: float, exported: Mapping[Hashable, float]) -> None:
        """A scrape of values the last scrape did not see: the series of one history that got different values
        (or no value) part ways; new series start their own."""
        of = self._of
        olds = {id(h): h for h in self._histories}
        parts: dict[tuple[int, float], list[Hashable]] = {}
        for key, value in exported.items():
            old = of.get(key)
            if old is None:
                of[key] = None  # type: ignore[assignment]  # its place in the order; its history below
            parts.setdefault((0 if old is None else id(old), value), []).append(key)
        histories: list[_History] = []
        for old in olds.values():
            old.now = None
        for (oid, value), keys in parts.items():
            old = olds.get(oid)
            if old is not None and len(keys) == len(old.members):
                h = old  # all its series got the same value: it goes on as a whole
            else:
                h = _History() if old is None else _History(old.times, old.values)
                h.members = keys
                histories.append(h)
                if old is not None:
                    gone = set(keys)
                    old.members = [key for key in old.members if key not in gone]
            h.times.append(t)
            h.values.append(value)
            h.now = value
            for key in keys:
                of[key] = h
        self._histories = [h for h in olds.values() if h.members] + histories

    def _prune(self, t: float) -> None:
        # Prometheus 2.x selects [t - window, t]; scrape times carry milliseconds of jitter, so a sample exactly
        # one window old is as good as never in a real range; (t - window, t] keeps five 5 s scrapes in 25 s.
        edge = t - self.window
        if self._oldest > edge:
            return
        oldest = math.inf
        of = self._of
        kept = []
        for h in self._histories:
            times, values = h.times, h.values
            while times and times[0] <= edge:
                times.popleft()
                values.popleft()
            if not times:
                for key in h.members:
                    del of[key]
                self._scraped = None  # the next scrape starts these series afresh
                continue
            kept.append(h)
            if times[0] < oldest:
                oldest = times[0]
        self._histories = kept
        self._oldest = oldest
        self._fresh = False

    def value(self, t: float) -> float | None:
        """The query at `t`: the sum of the series' averages, None when no series has a sample (an empty
        result: KEDA's scaler error, its fallback)."""
        self._prune(t)
        if not self._fresh:
            # Summed afresh, series by series, as Prometheus does (a running sum drifts, and ceil(total /
            # threshold) is exact); each history's average once.
            of = self._of
            if of:
                for h in self._histories:
                    h.mean = sum(h.values) / len(h.values)
                self._value = sum([h.mean for h in of.values()])
            else:
                self._value = None
            self._fresh = True
        return self._value

    def reset(self, values: Mapping[Hashable, float], times: Iterable[float]) -> None:
        """Series that read `values` at each of `times` (a steady state), and the exporter serving the same."""
        stamps = sorted(times)
        self.seed({key: [(ts, v) for ts in stamps] for key, v in values.items()}, values)

    def seed(self, series: Mapping[Hashable, Iterable[tuple[float, float]]],
             exported: Mapping[Hashable, float]) -> None:
        """Series as a real Prometheus holds them (the end-to-end calibration starts from a live cluster)."""
        self._of = {}
        shared: dict[tuple[tuple[float, float], ...], _History] = {}
        for key, samples in series.items():
            ordered = tuple(sorted(samples))
            if not ordered:
                continue
            h = shared.get(ordered)
            if h is None:
                h = shared[ordered] = _History([ts for ts, _ in ordered], [v for _, v in ordered])
            h.members.append(key)
            self._of[key] = h
        self._histories = list(shared.values())
        self._oldest = min((h.times[0] for h in self._histories), default=math.inf)
        self._scraped = None
        self._fresh = False
        self.exported = dict(exported)
