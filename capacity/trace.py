"""Streaming reader for demand traces: one row at a time, so memory does not grow with the trace.

Format (as the traces shipped under traces/): a UTF-8 CSV with a header; the time column is `minute`
(minutes from the start) or `time` (seconds from the start, or ISO 8601 timestamps with a UTC offset, one kind
per file); times strictly increase; each row's value holds until the next row's time (the last row lasts as long
as the one before it). Every cell of the demand column is a finite number ≥ 0 (a blank is refused, not read as
0: write 0 for no demand). Demand in GPUs is `row[column] / per_gpu`, where `per_gpu` is what one GPU serves per
minute at 100 % utilisation. A trace that breaks a rule is refused with its file, line, the value and the fix.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

#: A UTF-8 byte-order mark (spreadsheet exports) is read as part of no header.
ENCODING = "utf-8-sig"
TIME_COLUMNS = ("minute", "time")


class TraceError(ValueError):
    """A trace that cannot be read as demand: names the file, the line and what to do."""


@dataclass(frozen=True)
class Segment:
    """Demand `gpus` from `start` to `end` seconds after the trace's first row."""

    start: float
    end: float
    gpus: float


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _timestamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


class _Clock:
    """Seconds from the trace's start for one time column; the first row decides numbers or timestamps."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path, self.kind = path, kind
        self.iso: bool | None = None
        self.origin: datetime | None = None

    def seconds(self, text: str, line: int) -> float:
        where = f"{self.path}:{line}: {self.kind}={text!r}"
        if not text.strip():
            raise TraceError(f"{where} is empty: every row needs its time. Fix: fill it in or delete the row")
        if self.iso is None:
            self.iso = self.kind == "time" and _number(text) is None
        if not self.iso:
            value = _number(text)
            if value is None:
                expected = "minutes from the start" if self.kind == "minute" else (
                    "seconds from the start (the first row holds a number, so every row must)")
                raise TraceError(f"{where} is not a number. Fix: write {expected}")
            if not math.isfinite(value):
                raise TraceError(f"{where} is not a finite number. Fix: write the row's time as a number")
            return value * 60.0 if self.kind == "minute" else value
        stamp = _timestamp(text)
        if stamp is None:
            raise TraceError(f"{where} is not an ISO 8601 timestamp (the first row holds one, so every row must). "
                             "Fix: write it like 2026-01-05T08:00:00Z")
        if stamp.tzinfo is None:
            raise TraceError(f"{where} has no UTC offset, so the trace's clock (and every cron window) would depend "
                             "on this machine's time zone. Fix: add Z or an offset like +01:00")
        if self.origin is None:
            self.origin = stamp
        return (stamp - self.origin).total_seconds()


def _open(path: Path) -> IO[str]:
    """The trace opened for csv; OSError (missing, a directory, unreadable) becomes a TraceError with the fix."""
    if path.is_dir():
        raise TraceError(f"{path} is a directory, not a trace. Fix: give the CSV file inside it")
    try:
        return path.open(newline="", encoding=ENCODING)
    except FileNotFoundError:
        raise TraceError(f"no trace file {path}. Fix: check the path (relative paths: the current directory, "
                         "then the repository root)") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot be read ({exc.strerror}). Fix: check the file's permissions") from None


def _header(path: Path, reader: csv.DictReader[str], column: str) -> str:
    fields = reader.fieldnames
    if not fields:
        raise TraceError(f"{path} is empty. Fix: a trace is a CSV with a header ('minute' or 'time', and the "
                         f"demand column {column!r}) and one row per time")
    doubled = sorted({f for f in fields if fields.count(f) > 1})
    if doubled:
        raise TraceError(f"{path}:1: the header names {', '.join(map(repr, doubled))} more than once, so it is "
                         "unclear which cells are meant. Fix: give every column its own name")
    kind = next((k for k in TIME_COLUMNS if k in fields), None)
    if kind is None:
        raise TraceError(f"{path}:1: no time column: the header is {list(fields)}. Fix: name the time column "
                         "'minute' (minutes from the start) or 'time' (seconds, or ISO 8601 timestamps)")
    if column not in fields:
        raise TraceError(f"{path}:1: no column {column!r}. Fix: choose --column (or whatIf.column) from "
                         f"{[f for f in fields if f != kind]}")
    return kind


def segments(
    path: Path, column: str = "requests", per_gpu: float = 1.0, max_minutes: float | None = None
) -> Iterator[Segment]:
    """Yield the trace as demand segments, in order, never holding more than two rows."""
    if not (math.isfinite(per_gpu) and per_gpu > 0):
        raise TraceError(f"--per-gpu must be a finite number > 0, got {per_gpu}")
    limit = max_minutes * 60.0 if max_minutes is not None else None
    line = 1
    with _open(path) as fh:
        reader = csv.DictReader(fh)
        try:
            kind = _header(path, reader, column)
            clock = _Clock(path, kind)
            prev: tuple[float, float] | None = None
            last_step = 60.0
            for row in reader:
                line = reader.line_num
                if None in row:
                    raise TraceError(f"{path}:{line}: more cells than the header has columns ({row[None]!r} "
                                     "left over). Fix: remove the extra cells or name their column in the header")
                if row[kind] is None or row[column] is None:
                    raise TraceError(f"{path}:{line}: fewer cells than the header has columns. Fix: give every "
                                     "row a cell per column")
                t = clock.seconds(row[kind], line)
                gpus = _demand(path, line, column, row[column], per_gpu)
                if prev is not None:
                    if t <= prev[0]:
                        raise TraceError(f"{path}:{line}: {kind}={row[kind]!r}: the time does not increase from the "
                                         "row before. Fix: sort the trace by time and merge rows with the same time")
                    end = t if limit is None else min(t, limit)
                    if end > prev[0]:
                        yield Segment(prev[0], end, prev[1])
                    if limit is not None and t >= limit:
                        return
                    last_step = t - prev[0]
                prev = (t, gpus)
        except UnicodeDecodeError:
            line, byte = _undecodable(path)
            raise TraceError(f"{path}:{line}: not UTF-8 text (byte {byte:#04x}). Fix: save the trace as UTF-8 CSV, "
                             f"e.g. `iconv -f latin1 -t utf-8 {path.name} > {path.stem}.utf8.csv`") from None
        except csv.Error as exc:
            raise TraceError(f"{path}:{reader.line_num}: not CSV ({exc}). Fix: save the trace as plain CSV") from None
        if prev is None:
            raise TraceError(f"{path}: a header but no rows. Fix: add one row per time with the demand in "
                             f"{column!r}")
        end = prev[0] + last_step if limit is None else min(prev[0] + last_step, limit)
        if end > prev[0]:
            yield Segment(prev[0], end, prev[1])


def _undecodable(path: Path) -> tuple[int, int]:
    """Line and value of the first byte that is not UTF-8 (the text reader decodes in chunks, not lines)."""
    with path.open("rb") as fh:
        for line, raw in enumerate(fh, start=1):
            try:
                raw.decode(ENCODING)
            except UnicodeDecodeError as exc:
                return line, raw[exc.start]
    return 1, 0


def _demand(path: Path, line: int, column: str, text: str, per_gpu: float) -> float:
    where = f"{path}:{line}: {column}={text!r}"
    if not text.strip():
        raise TraceError(f"{where} is empty; a blank is not read as 0. Fix: write 0 for no demand, or delete the row")
    value = _number(text)
    if value is None or not math.isfinite(value):
        raise TraceError(f"{where} is not a finite number. Fix: write the demand as a number ≥ 0")
    if value < 0:
        raise TraceError(f"{where} is negative demand. Fix: write the demand as a number ≥ 0")
    gpus = value / per_gpu
    if not math.isfinite(gpus):
        raise TraceError(f"{where} divided by the per-GPU rate {per_gpu:g} is not a finite number of GPUs. "
                         "Fix: check --per-gpu (or whatIf.perGpu) and the column's unit")
    return gpus


def trace_start(path: Path) -> datetime | None:
    """The wall-clock time of the first row when the `time` column holds ISO timestamps.

    None otherwise, and for a trace that cannot be read: `segments` then refuses it with the reason."""
    try:
        with path.open(newline="", encoding=ENCODING) as fh:
            reader = csv.DictReader(fh)
            row = next(reader, None)
            if row is None or "time" not in (reader.fieldnames or []):
                return None
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    text = row.get("time") or ""
    stamp = None if _number(text) is not None else _timestamp(text)
    return stamp if stamp is not None and stamp.tzinfo is not None else None


def _split(segs: Sequence[Segment], hold_out: float) -> float:
    """Where the held-out part starts (seconds): whole days on a trace of 3 days or more, whole hours on one of
    3 hours or more, whole minutes otherwise."""
    end = segs[-1].end
    cut = end * (1 - hold_out)
    for unit in (86400, 3600, 60):
        if end >= 3 * unit:
            cut = round(cut / unit) * unit
            break
    return min(max(cut, 600.0), end - 600.0)


def _part(segs: Sequence[Segment], start: float, end: float) -> list[Segment]:
    """Segments between `start` and `end`, re-based to start at 0."""
    out = []
    for s in segs:
        a, b = max(s.start, start), min(s.end, end)
        if b > a:
            out.append(Segment(a - start, b - start, s.gpus))
    return out
