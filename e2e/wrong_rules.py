"""Deliberately wrong rules for the what-if's simulator, to show that the comparison with the real run can fail.

Each is a change to one `capacity.sim.Simulation` before it runs (e2e/prediction.py `predict(tweak=...)`). The
autoscaling suite (e2e/test_autoscaling.py) and the fast suite's replay of a recorded run
(tests/test_autoscaling_calibration.py) both require every one of them to break the agreement: a comparison that
passes with a wrong model proves nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC

from capacity.metric_path import QueryWindow
from capacity.sim import Simulation
from stacknames import WORKLOAD_PRIORITY


class TotalsWindow(QueryWindow):
    """The model before the calibration: the average of the per-scrape totals instead of the sum of the series'
    own averages (a new pod's series then counts a quarter at its first scrape, not in full)."""

    def value(self, t: float) -> float | None:
        self._prune(t)  # expiry only: the running sums are not used
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


def deletion_without_rank(sim: Simulation) -> None:
    """The ReplicaSet deletes the oldest pods first, without its rank of pods on the busiest node (the model before
    the calibration): one node empties early and the autoscaler removes it early."""
    state = sim.state
    grow = state.scale_to

    def scale_to(target: int) -> None:
        current = len(state.workload)
        if target >= current:
            grow(target)
            return
        state.workload.sort(key=lambda p: (p.node is not None, p.ready_at is not None))
        for pod in state.workload[: current - target]:
            state.unplace(pod)
        del state.workload[: current - target]
        state.next_event = -math.inf
        state.version += 1

    state.scale_to = scale_to  # type: ignore[method-assign]


def cutoff_inclusive(sim: Simulation) -> None:
    """Pods AT `expendable-pods-priority-cutoff` taken as expendable (Cluster Autoscaler's FAQ: only pods below
    it are): the placeholders (-10 at the cutoff -10) then never make the autoscaler add a node."""
    sim.state.s = replace(sim.state.s, expendable_cutoff=sim.state.s.expendable_cutoff + 1)


def placeholders_not_preemptible(sim: Simulation) -> None:
    """Priority preemption left out: the placeholders as important as the workloads, so a burst waits for a node
    instead of taking their GPUs."""
    sim.s = replace(sim.s, placeholder_priority=WORKLOAD_PRIORITY)
    sim.state.s = sim.s


def cron_in_utc(sim: Simulation) -> None:
    """The cron windows read in UTC, their `timezone` ignored (KEDA's cron scaler reads them in it)."""
    for window in sim.keda.replica_windows:
        window.origin = window.origin.astimezone(UTC)


#: Name -> the wrong rule. Every one must make at least one scenario disagree with the prediction.
WRONG_RULES: dict[str, Callable[[Simulation], None]] = {
    "HPA tolerance ignored": hpa_tolerance_ignored,
    "query window as the average of per-scrape totals": window_of_totals,
    "ReplicaSet deletes without its node rank": deletion_without_rank,
    "placeholders at the expendable cutoff taken as expendable": cutoff_inclusive,
    "placeholders not preemptible": placeholders_not_preemptible,
    "cron windows read in UTC": cron_in_utc,
}
