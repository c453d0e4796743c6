"""Deliberately wrong rules for the what-if's simulator, to show that the comparison with the real run can fail.

Each is a change to one `capacity.sim.Simulation` before it runs (e2e/prediction.py `predict(tweak=...)`). The
autoscaling suite (e2e/test_autoscaling.py) and the fast suite's replay of a recorded run
(tests/test_autoscaling_calibration.py) both require every one of them to break the agreement: a comparison that
passes with a wrong model proves nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from capacity.metric_path import QueryWindow
from capacity.sim import Simulation


class TotalsWindow(QueryWindow):
    """The model before the calibration: the average of the per-scrape totals instead of the sum of the series'
    own averages (a new pod's series then counts a quarter at its first scrape, not in full)."""

    def value(self, t: float) -> float | None:
        self._prune(t)
        stamps = sorted({ts for s in self.series.values() for ts, _ in s})
        if not stamps:
            return None
        totals = [sum(v for s in self.series.values() for ts, v in s if ts == stamp) for stamp in stamps]
        return sum(totals) / len(totals)


def hpa_tolerance_ignored(sim: Simulation) -> None:
    """The HPA acts on any ratio other than 1 (kubernetes' 0.1 tolerance left out)."""
    sim.state.s = replace(sim.state.s, tolerance=0.0)


def window_of_totals(sim: Simulation) -> None:
    """The query window as the model had it before the calibration (TotalsWindow)."""
    sim.state.window = TotalsWindow(sim.state.window.window)


#: Name -> the wrong rule. Every one must make the recorded step scenario disagree with the prediction.
WRONG_RULES: dict[str, Callable[[Simulation], None]] = {
    "HPA tolerance ignored": hpa_tolerance_ignored,
    "query window as the average of per-scrape totals": window_of_totals,
}
