"""KEDA: the cron triggers' windows, the 0 <-> 1 step a ScaledObject with `minReplicaCount: 0` owns, and the
headroom placeholders, whose replicas their own cron ScaledObject moves.

kedacore/keda: `scaledobject_types.go` GetHPAMinReplicas (the HPA's min is 1 when minReplicaCount is 0),
`scale_scaledobjects.go` (0 <-> 1 on `pollingInterval`, back to 0 after `cooldownPeriod`), the cron scaler
`pkg/scalers/cron_scaler.go` (active while the next end comes before the next start; a trigger whose value the
HPA maxes with the others).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from croniter import croniter

from capacity.settings import CronWindow
from capacity.state import EPS, ClusterState, Pod


def prometheus_trigger_active(value: float, activation_threshold: float) -> bool:
    """Whether a Prometheus trigger keeps (or makes) its workload active: its value above `activationThreshold`
    (kedacore/keda v2.20.2 pkg/scalers/prometheus_scaler.go `GetMetricsAndActivity`: `val > activationThreshold`).
    With every trigger inactive for `cooldownPeriod`, a ScaledObject at minReplicaCount 0 goes to zero."""
    return value > activation_threshold


class CronState:
    """Whether a KEDA cron window is active, re-evaluated only when the next start or end passes.

    KEDA's cron scaler (pkg/scalers/cron_scaler.go) is active while the next end comes before the next start.
    """

    def __init__(self, window: CronWindow, start: datetime) -> None:
        self.window = window
        self.origin = start.astimezone(ZoneInfo(window.timezone))
        self.active = False
        self.until = -1.0

    def at(self, t: float) -> bool:
        if t >= self.until:
            now = self.origin + timedelta(seconds=t)
            next_start = croniter(self.window.start, now).get_next(datetime)
            next_end = croniter(self.window.end, now).get_next(datetime)
            self.active = next_end < next_start
            self.until = (min(next_start, next_end) - self.origin).total_seconds()
        return self.active


class Keda:
    """The workload's ScaledObject: its cron windows of minimum replicas and, at minReplicaCount 0, 0 <-> 1."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.replica_windows = [CronState(w, state.s.start) for w in state.s.replica_windows]
        self.last_active = 0.0
        # The answer holds until the first window's next start or end (the HPA asks at every sync).
        self._min, self._until = 0, -math.inf

    def cron_min(self, t: float) -> int:
        """The largest `desiredReplicas` of the cron triggers active at `t` (0 outside every window)."""
        if t >= self._until:
            windows = self.replica_windows
            self._min = max((w.window.value for w in windows if w.at(t)), default=0)
            self._until = min((w.until for w in windows), default=math.inf)
        return self._min

    def poll(self, t: float, demand: float) -> None:
        """KEDA's own 0 <-> 1 step for minReplicaCount 0 (the wake trigger stands for demand > 0)."""
        state = self.state
        if demand > EPS:
            self.last_active = t
            if not state.workload:
                state.scale_to(1)
        elif state.workload and t - self.last_active >= state.s.cooldown_period and self.cron_min(t) == 0:
            state.scale_to(0)


class Headroom:
    """The placeholder Deployment: `headroom_gpus` in pods of `placeholder_gpus`, more inside its cron windows."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.windows = [CronState(w, state.s.start) for w in state.s.headroom_windows]

    def sync(self, t: float) -> None:
        state, s = self.state, self.state.s
        gpus = s.headroom_gpus
        for w in self.windows:
            if w.at(t):
                gpus = max(gpus, w.window.value)
        want = gpus // s.placeholder_gpus if s.placeholder_gpus else 0
        while len(state.placeholders) < want:
            state.placeholders.append(Pod("placeholder", s.placeholder_gpus, s.placeholder_priority))
            state.sched_dirty = True
        while len(state.placeholders) > want:
            pod = min(state.placeholders, key=lambda p: p.node is not None)
            state.unplace(pod)
            state.placeholders.remove(pod)
