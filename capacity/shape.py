"""The daily and weekly shape of a demand trace, and the cron windows `python -m capacity tune` learns from it.

A reactive autoscaler can only follow demand: on bare metal a node takes 25-35 minutes from order to allocatable
GPUs, so a rise that outgrows the nodes already on waits that long. Where demand rises at the same hours every
day (or every weekday), a KEDA cron window of minimum replicas (`workloads[].schedules`) orders the nodes before
the rise. This module finds those hours: per hour of the day (in the windows' time zone), the peak demand of
that hour on each day of the trace, and its `level`-quantile over the days ("on most days the 10:00 hour peaks at
7.4 GPUs"). Hours whose usual peak needs more replicas than the floor nodes hold become windows, opened early by
the provisioning lead time, and with the replicas that peak needs at 100 % utilisation as `minReplicas`.

The windows are stack-file values (`start`, `end`, `timezone`, `minReplicas`); the tuner validates them with the
stack's own config model (cron syntax, time zone, minReplicas ≤ maxReplicas) and simulates them like any other
setting, so a window that does not pay for itself is simply not recommended.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from capacity.trace import Segment

#: Fewer complete days than this is no daily shape: one day does not say what the next will do.
MIN_DAYS = 2
#: A day counts when this many of its hours are in the trace (a trace starting at 00:30 still has day one).
MIN_HOURS_OF_A_DAY = 20
#: Weekends are learned apart when their usual peak is below this share of the weekdays' (weekly shape).
WEEKEND_RATIO = 0.75
#: A median day whose busiest hour peaks below this multiple of its quietest is described as flat.
FLAT_RATIO = 1.2
#: Windows closer than this are merged: the node ordered for the first would stay through the gap anyway
#: (the HPA's scale-down window plus the autoscaler's scale-down-unneeded-time).
MERGE_GAP_HOURS = 1
#: A window over this many hours of the day is a higher floor: `minNodes`/`minReplicas` say that better.
MAX_WINDOW_HOURS = 20
#: Window starts are rounded down to this many minutes.
START_STEP_MINUTES = 15
WEEKDAYS = (1, 2, 3, 4, 5)  # cron day-of-week: 0 Sunday .. 6 Saturday
WEEKEND = (0, 6)


@dataclass(frozen=True)
class DayType:
    """Days that share one profile: every day, or weekdays and weekends apart (cron day-of-week numbers)."""

    name: str
    days: tuple[int, ...]
    #: Per hour of the day (0-23): the peak demand (GPUs) of that hour on each day of this type.
    peaks: tuple[tuple[float, ...], ...]

    def level(self, hour: int, q: float) -> float:
        """The q-quantile (nearest rank) of the hour's daily peaks: the peak that q of the days do not exceed,
        but never above the second-highest day's. A peak seen on one day only is an event (a burst), not a
        shape: a window for it would be paid every day for a rise that does not come back at that hour."""
        values = sorted(self.peaks[hour])
        if not values:
            return 0.0
        rank = max(0, math.ceil(q * len(values)) - 1)
        return values[min(rank, max(0, len(values) - 2))]


@dataclass(frozen=True)
class Shape:
    """What the trace's clock says about its demand, in the time zone the windows will be written in."""

    timezone: str
    day_types: tuple[DayType, ...]
    days: int
    weekend_ratio: float | None
    #: The median day's busiest and quietest hour (GPUs), for the description.
    busiest: tuple[int, float]
    quietest: tuple[int, float]

    @property
    def weekly(self) -> bool:
        return len(self.day_types) > 1

    def describe(self) -> str:
        (bh, bv), (qh, qv) = self.busiest, self.quietest
        if bv <= FLAT_RATIO * qv:
            text = (f"no daily shape over {self.days} days ({self.timezone}): on the median day every hour peaks "
                    f"between {qv:.1f} and {bv:.1f} GPUs")
        else:
            text = (f"daily shape over {self.days} days ({self.timezone}): on the median day the {bh:02d}:00 hour "
                    f"peaks at {bv:.1f} GPUs, the {qh:02d}:00 hour at {qv:.1f}")
        if self.weekend_ratio is not None:
            text += (f"; weekends peak at {self.weekend_ratio:.2f}× the weekdays' "
                     + ("(learned apart)" if self.weekly else f"(learned together: ≥ {WEEKEND_RATIO:g}×)"))
        return text

    def windows(self, q: float, floor_replicas: int, gpus_per_pod: int, max_replicas: int,
                lead_seconds: float) -> list[dict[str, object]]:
        """Cron windows (stack-file `schedules` items) holding the replicas the hours' usual peak needs.

        `q` is the quantile over days ("usual"), `floor_replicas` the replicas the floor nodes hold without a
        window (hours needing no more get none), `lead_seconds` how long before the hour the window opens (the
        time a node takes to give GPUs, plus the pod start).
        """
        out: list[dict[str, object]] = []
        for dt in self.day_types:
            need = [min(max_replicas, math.ceil(dt.level(h, q) / gpus_per_pod - 1e-9)) for h in range(24)]
            hot = [h for h in range(24) if need[h] > floor_replicas]
            if not hot or len(hot) > MAX_WINDOW_HOURS:
                continue
            for start, length in _runs(hot):
                replicas = max(need[(start + i) % 24] for i in range(length))
                out.append(_window(dt.days, start, length, replicas, lead_seconds, self.timezone))
        return out


def _runs(hours: Sequence[int]) -> list[tuple[int, int]]:
    """Circular runs of hot hours as (start, length), runs closer than MERGE_GAP_HOURS merged."""
    hot = set(hours)
    if len(hot) == 24:
        return [(0, 24)]
    # Walk the day from a hot hour that follows a cold one, so that a run across midnight is one run.
    begin = next(h for h in range(24) if h in hot and (h - 1) % 24 not in hot)
    runs: list[list[int]] = []  # [first, last + 1] in steps from `begin`
    for i in range(24):
        if (begin + i) % 24 in hot:
            if runs and i - runs[-1][1] <= MERGE_GAP_HOURS:
                runs[-1][1] = i + 1
            else:
                runs.append([i, i + 1])
    if len(runs) > 1 and 24 - runs[-1][1] <= MERGE_GAP_HOURS:  # the last run reaches round to the first
        first, _ = runs.pop()
        runs[0] = [first, runs[0][1] + 24]
    return [((begin + first) % 24, end - first) for first, end in runs]


def _dow_text(days: Iterable[int]) -> str:
    """Cron day-of-week field: '*' for every day, ranges where contiguous ('1-5', '0,6')."""
    ordered = sorted(set(d % 7 for d in days))
    if len(ordered) == 7:
        return "*"
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if j == i:
            parts.append(str(ordered[i]))
        elif j == i + 1:
            parts.append(f"{ordered[i]},{ordered[j]}")
        else:
            parts.append(f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def _window(days: tuple[int, ...], start_hour: int, length: int, replicas: int, lead_seconds: float,
            timezone: str) -> dict[str, object]:
    step = START_STEP_MINUTES * 60
    opens = start_hour * 3600 - math.ceil(lead_seconds / step) * step  # may be before midnight: the day before
    open_day, open_s = divmod(opens, 86400)
    close_day, close_h = divmod(start_hour + length, 24)
    return {
        "start": f"{open_s % 3600 // 60} {open_s // 3600} * * {_dow_text(d + open_day for d in days)}",
        "end": f"0 {close_h} * * {_dow_text(d + close_day for d in days)}",
        "timezone": timezone,
        "minReplicas": replicas,
    }


def hourly_peaks(segments: Iterable[Segment], origin: datetime, tz: ZoneInfo) -> dict[tuple[date, int], float]:
    """The peak demand of every wall-clock hour the trace covers, keyed by (local date, hour)."""
    peaks: dict[tuple[date, int], float] = defaultdict(float)
    for seg in segments:
        t = seg.start
        while t < seg.end:
            local = (origin + timedelta(seconds=t)).astimezone(tz)
            key = (local.date(), local.hour)
            if seg.gpus > peaks[key]:
                peaks[key] = seg.gpus
            # to the next wall-clock hour (a zone may be offset by 30 or 45 minutes from UTC)
            t += 3600 - (local.minute * 60 + local.second + local.microsecond / 1e6)
    return peaks


def learn(segments: Sequence[Segment], origin: datetime, timezone: str) -> tuple[Shape | None, str]:
    """The trace's shape in `timezone`, or None and why there is none to learn."""
    tz = ZoneInfo(timezone)
    peaks = hourly_peaks(segments, origin, tz)
    by_day: dict[date, dict[int, float]] = defaultdict(dict)
    for (day, hour), value in peaks.items():
        by_day[day][hour] = value
    days = sorted(d for d, hours in by_day.items() if len(hours) >= MIN_HOURS_OF_A_DAY)
    if len(days) < MIN_DAYS:
        span = (segments[-1].end - segments[0].start) / 86400 if segments else 0.0
        return None, (f"no daily shape learned: the tuning part holds {len(days)} complete day(s) "
                      f"({span:.2f} days of trace); windows need at least {MIN_DAYS}")

    def cron_dow(d: date) -> int:
        return (d.weekday() + 1) % 7

    def profile(name: str, dows: tuple[int, ...]) -> DayType:
        chosen = [d for d in days if cron_dow(d) in dows]
        return DayType(name, dows, tuple(tuple(by_day[d][h] for d in chosen if h in by_day[d]) for h in range(24)))

    everyday = profile("every day", tuple(range(7)))
    week, weekend = [d for d in days if cron_dow(d) in WEEKDAYS], [d for d in days if cron_dow(d) in WEEKEND]
    ratio: float | None = None
    day_types: tuple[DayType, ...] = (everyday,)
    if len(week) >= 3 and len(weekend) >= 2:
        def median_peak(chosen: list[date]) -> float:
            values = sorted(max(by_day[d].values()) for d in chosen)
            return values[len(values) // 2]

        ratio = median_peak(weekend) / max(median_peak(week), 1e-9)
        if ratio < WEEKEND_RATIO:
            day_types = (profile("weekdays", WEEKDAYS), profile("weekends", WEEKEND))
    medians = [everyday.level(h, 0.5) for h in range(24)]
    busiest = max(range(24), key=lambda h: medians[h])
    quietest = min(range(24), key=lambda h: medians[h])
    shape = Shape(timezone, day_types, len(days), ratio, (busiest, medians[busiest]), (quietest, medians[quietest]))
    return shape, shape.describe()


def reordered(segments: Sequence[Segment], seed: int, block: float = 600.0, period: float = 3600.0) -> list[Segment]:
    """The trace with the `block`-second pieces of every `period` in a random order (seeded): each hour keeps its
    demand, but not the minute it came in. A setting that meets the level only because the trace's rises came in
    the order they did fails on some reordering; the tuner requires the level on a few of them as well."""
    import random

    rng = random.Random(seed)
    pieces: dict[tuple[int, int], list[Segment]] = defaultdict(list)
    for seg in segments:
        t = seg.start
        while t < seg.end - 1e-9:
            edge = min(seg.end, (math.floor(t / block + 1e-9) + 1) * block)
            pieces[(int(t // period), int((t % period) // block))].append(Segment(t, edge, seg.gpus))
            t = edge
    out: list[Segment] = []
    per_period: dict[int, list[int]] = defaultdict(list)
    for p, b in pieces:
        per_period[p].append(b)
    for p in sorted(per_period):
        blocks = sorted(per_period[p])
        # only whole blocks trade places (a trace's last block may be short); the others stay where they are
        whole = [b for b in blocks if abs(sum(s.end - s.start for s in pieces[(p, b)]) - block) < 1e-6]
        order = whole[:]
        rng.shuffle(order)
        moves = dict(zip(whole, order, strict=True))
        for to in blocks:
            frm = moves.get(to, to)
            shift = (to - frm) * block
            out += [Segment(s.start + shift, s.end + shift, s.gpus) for s in pieces[(p, frm)]]
    out.sort(key=lambda s: s.start)
    return out
