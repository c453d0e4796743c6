"""Streaming reader for demand traces: one row at a time, so memory does not grow with the trace.

Format (as the traces shipped under traces/): a CSV with a header; the time column is `minute`
(minutes from the start) or `time` (seconds from the start, or ISO 8601 timestamps); each row's value holds
until the next row's time (the last row lasts as long as the one before it). Demand in GPUs is
`row[column] / per_gpu`, where `per_gpu` is what one GPU serves per minute at 100 % utilisation.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


class TraceError(ValueError):
    """A trace that cannot be read as demand: names the file, the line and what to do."""


@dataclass(frozen=True)
class Segment:
    """Demand `gpus` from `start` to `end` seconds after the trace's first row."""

    start: float
    end: float
    gpus: float


def _parse_time(text: str, kind: str, origin: list[datetime]) -> float:
    if kind == "minute":
        return float(text) * 60.0
    try:
        return float(text)
    except ValueError:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if not origin:
            origin.append(stamp)
        return (stamp - origin[0]).total_seconds()


def segments(
    path: Path, column: str = "requests", per_gpu: float = 1.0, max_minutes: float | None = None
) -> Iterator[Segment]:
    """Yield the trace as demand segments, in order, never holding more than two rows."""
    if per_gpu <= 0:
        raise TraceError(f"--per-gpu must be > 0, got {per_gpu}")
    limit = max_minutes * 60.0 if max_minutes is not None else None
    origin: list[datetime] = []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or []
        kind = "minute" if "minute" in fields else "time" if "time" in fields else None
        if kind is None:
            raise TraceError(f"{path}: no time column: the header needs 'minute' or 'time' (has {fields})")
        if column not in fields:
            raise TraceError(f"{path}: no column {column!r}; choose --column from {[f for f in fields if f != kind]}")
        prev: tuple[float, float] | None = None
        last_step = 60.0
        for line, row in enumerate(reader, start=2):
            try:
                t = _parse_time(row[kind], kind, origin)
                raw = row[column]
                gpus = float(raw) / per_gpu if raw not in ("", None) else 0.0
            except (TypeError, ValueError) as exc:
                raise TraceError(f"{path}:{line}: cannot read {kind}={row.get(kind)!r} {column}={row.get(column)!r}"
                                 f" ({exc})") from None
            if gpus < 0:
                raise TraceError(f"{path}:{line}: negative demand {row[column]!r}")
            if prev is not None:
                if t <= prev[0]:
                    raise TraceError(f"{path}:{line}: time {row[kind]!r} does not increase")
                end = t if limit is None else min(t, limit)
                if end > prev[0]:
                    yield Segment(prev[0], end, prev[1])
                if limit is not None and t >= limit:
                    return
                last_step = t - prev[0]
            prev = (t, gpus)
        if prev is None:
            raise TraceError(f"{path}: no rows")
        end = prev[0] + last_step if limit is None else min(prev[0] + last_step, limit)
        if end > prev[0]:
            yield Segment(prev[0], end, prev[1])


def trace_start(path: Path) -> datetime | None:
    """The wall-clock time of the first row when the `time` column holds ISO timestamps."""
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        row = next(reader, None)
        if row is None or "time" not in (reader.fieldnames or []):
            return None
        try:
            float(row["time"])
            return None
        except ValueError:
            return datetime.fromisoformat(row["time"].replace("Z", "+00:00"))
