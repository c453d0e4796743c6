"""The tuner's service level (`python -m capacity tune`): what a setting is judged on, per workload.

A workload scaled on GPU utilisation is judged on unserved demand and the p95 time to capacity within reach
(capacity/tune.py); a workload with a serving profile (`workloads[].serving`) on unserved demand and its latency
objective's attainment (capacity/service.py: the share of the demand that arrived while both P90s were within the
objective), issue 21's measure of what its users feel. The command line leaves unset what it was not given;
`resolve_level` fills it in for the workload, and refuses the one that does not apply with why and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from capacity.cli import UsageError
from stackconfig import Problem


@dataclass(frozen=True)
class Level:
    """The service level: unserved demand (% of the demand), and either the p95 time to capacity within reach (a
    workload scaled on GPU utilisation) or the latency objective's attainment (a workload with a serving profile,
    capacity/service.py: the share of the demand that arrived while both P90s were within the objective). None:
    not judged."""

    max_unserved_pct: float
    p95_minutes: float | None
    min_attainment_pct: float | None = None

    def met(self, unserved_pct: float, p95: float, attainment_pct: float | None = None) -> bool:
        return (unserved_pct <= self.max_unserved_pct + 1e-9
                and (self.p95_minutes is None or p95 <= self.p95_minutes + 1e-9)
                and (self.min_attainment_pct is None
                     or (attainment_pct is not None and attainment_pct >= self.min_attainment_pct - 1e-9)))

    def violation(self, unserved_pct: float, p95: float, attainment_pct: float | None = None) -> float:
        """How far from the level, in multiples of it (0 when met): ranks settings when none meets it."""
        out = max(0.0, unserved_pct - self.max_unserved_pct) / max(self.max_unserved_pct, 0.01)
        if self.p95_minutes is not None:
            out += max(0.0, p95 - self.p95_minutes) / max(self.p95_minutes, 0.5)
        if self.min_attainment_pct is not None:
            short = self.min_attainment_pct - (attainment_pct if attainment_pct is not None else 0.0)
            out += max(0.0, short) / max(100 - self.min_attainment_pct, 0.5)
        return out


def attainment_percent(result: dict[str, Any]) -> float | None:
    """The run's latency-objective attainment in % (None: the workload has no serving profile)."""
    serving = result.get("serving")
    return 100 * serving["objectiveAttainment"] if isinstance(serving, dict) else None


#: The level's defaults: the p95 time to capacity within reach (a workload on GPU utilisation), the
#: latency objective's attainment (a workload with a serving profile; issue 21 aims at ≥ 97 %).
DEFAULT_P95_MINUTES = 5.0
DEFAULT_ATTAINMENT_PCT = 97.0


def resolve_level(serving: bool, name: str, level: Level) -> Level:
    """The level for this workload: attainment for a serving profile, time to capacity otherwise; the other asked
    for is refused, with why and what to give instead."""
    if serving:
        if level.p95_minutes is not None:
            raise UsageError([Problem(
                "--p95-time-to-capacity", f"{level.p95_minutes:g}m",
                f"does not apply to workload {name!r}: it scales on its serving profile, whose service level is its "
                "latency objective's attainment (a wait for capacity is in the users' time to first token)",
                f"give --min-attainment instead (default {DEFAULT_ATTAINMENT_PCT:g}%), e.g. --min-attainment 97%")])
        attainment = level.min_attainment_pct
        return Level(level.max_unserved_pct, None, DEFAULT_ATTAINMENT_PCT if attainment is None else attainment)
    if level.min_attainment_pct is not None:
        raise UsageError([Problem(
            "--min-attainment", f"{level.min_attainment_pct:g}%",
            f"needs a latency model: workload {name!r} has no serving profile (workloads[].serving with perGpu), so "
            "the what-if reports no latency-objective attainment for it",
            "drop --min-attainment (this workload's level is --max-unserved and --p95-time-to-capacity), or give it "
            "a serving profile first (docs/serving-workloads.md#serving-profile)")])
    p95 = level.p95_minutes
    return Level(level.max_unserved_pct, DEFAULT_P95_MINUTES if p95 is None else p95, None)


def judged_text(sl: dict[str, Any]) -> str:
    """The level's second part as a service level entry reports it: attainment, else the p95 within reach."""
    if sl.get("objectiveAttainmentPercent") is not None:
        return f"latency objective met for {sl['objectiveAttainmentPercent']:.2f} % of the demand"
    return f"p95 {sl['p95TimeToCapacityMinutes']:.1f} min within reach"
