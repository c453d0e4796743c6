"""Rules of the what-if section: a real workload, ordered ranges, a start time `python -m capacity` can read."""

from __future__ import annotations

from datetime import datetime

from stackconfig.errors import Problem
from stackconfig.stack import StackConfig


def what_if_problems(cfg: StackConfig) -> list[Problem]:
    w = cfg.what_if
    if w is None:
        return []
    out: list[Problem] = []
    names = [x.name for x in cfg.workloads]
    if w.workload is not None and w.workload not in names:
        out.append(Problem("whatIf.workload", w.workload, "is not one of the stack's workloads",
                           f"use one of: {', '.join(names) or '(none: add a workload)'}"))
    for key, (low, high) in (("whatIf.nodeReadyMinutes", w.node_ready_minutes),
                             ("whatIf.gpuReadyMinutes", w.gpu_ready_minutes)):
        if not 0 <= low <= high:
            out.append(Problem(key, [low, high], "is not a range [low, high] with 0 ≤ low ≤ high",
                               "write it like [20, 25]"))
    try:
        datetime.fromisoformat(w.start)
    except ValueError:
        out.append(Problem("whatIf.start", w.start, "is not an ISO 8601 time",
                           "write it like '2026-01-05T00:00:00+00:00'"))
    return out
