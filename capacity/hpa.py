"""The Horizontal Pod Autoscaler that KEDA creates for a workload: its arithmetic and its sync loop.

kubernetes/kubernetes `pkg/controller/podautoscaler/replica_calculator.go` (`GetExternalPerPodMetricReplicas`,
AverageValue: `ceil(sum / target)`, tolerance on `sum / (target × statusReplicas)` where statusReplicas counts
Pending pods) and `horizontal.go` (sync every 15 s: `config/v1alpha1/defaults.go` HorizontalPodAutoscalerSyncPeriod;
`computeReplicasForMetrics`, `stabilizeRecommendationWithBehaviors`, `convertDesiredReplicasWithBehaviorRate`,
`calculateScaleUpLimitWithScalingRules`, `calculateScaleDownLimitWithBehaviors`). The metrics-path tests run the
arithmetic against a real Prometheus; the simulator runs the loop (`Hpa`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from capacity.settings import HPA_TOLERANCE, Behavior
from capacity.state import ClusterState


def hpa_desired_replicas(
    total: float, threshold: float, current_replicas: int, tolerance: float = HPA_TOLERANCE
) -> int:
    """The HPA's answer for an External AverageValue metric (replica_calculator.go).

    `current_replicas` counts Pending pods too (Deployment status.replicas): they add no GPU series,
    so they dilute the average and can hold scaling back (k8s.io/api apps/v1 `DeploymentStatus.Replicas`: "Total
    number of non-terminating pods targeted by this deployment").
    """
    if current_replicas <= 0:
        raise ValueError("current_replicas must be positive")
    if within_tolerance(total / (threshold * current_replicas), tolerance):
        return current_replicas
    return math.ceil(total / threshold)


def hpa_desired_replicas_value(
    value: float, target: float, current_replicas: int, ready_replicas: int, tolerance: float = HPA_TOLERANCE
) -> int:
    """The HPA's answer for an External metric of type Value (replica_calculator.go `GetExternalMetricReplicas`
    -> `getUsageRatioReplicaCount`): hold `current_replicas` while `|1 - value/target|` is within the tolerance,
    else `ceil(value/target × ready pods)`, where ready counts only Running and Ready pods (`getReadyPodsCount`):
    pods still starting add to `current_replicas` but not to the ask. At zero replicas: `ceil(value/target)`."""
    ratio = value / target
    if current_replicas == 0:
        return math.ceil(ratio)
    if within_tolerance(ratio, tolerance):
        return current_replicas
    return math.ceil(ratio * ready_replicas)


def within_tolerance(ratio: float, tolerance: float) -> bool:
    """replica_calculator.go (v1.35) `Tolerances.isWithin`: `1 - down <= ratio <= 1 + up`, so a ratio of exactly
    1.1 holds (`|1 - ratio| <= 0.1` would not: 1.0 - 1.1 is -0.10000000000000009 in floating point)."""
    return 1.0 - tolerance <= ratio <= 1.0 + tolerance


def keda_value(value: float) -> float:
    """The value KEDA hands the HPA: to a thousandth (kedacore/keda v2.20.2 pkg/scalers/scaler.go
    `quantityFromFloat64`: `resource.MustParse(fmt.Sprintf("%.3f", value))`)."""
    return round(value, 3)


def hpa_desired_replicas_all(metrics: list[tuple[float, float]], current_replicas: int) -> int:
    """With several metrics the HPA computes one proposal per metric and takes the largest.

    kubernetes pkg/controller/podautoscaler/horizontal.go, computeReplicasForMetrics: "replicas =
    max(replicas, replicaCountProposal)"; `metrics` is a list of (total, per-replica threshold).
    """
    if not metrics:
        raise ValueError("at least one metric")
    return max(hpa_desired_replicas(total, threshold, current_replicas) for total, threshold in metrics)

def hpa_desired_replicas_mixed(
    metrics: Sequence[tuple[str, float, float]], current_replicas: int, ready_replicas: int
) -> int:
    """The largest proposal of External metrics of either type: (`AverageValue` or `Value`, value, target) each
    (horizontal.go computeReplicasForMetrics takes the largest of the per-metric proposals)."""
    if not metrics:
        raise ValueError("at least one metric")
    proposals = []
    for kind, value, target in metrics:
        if kind == "AverageValue":
            proposals.append(hpa_desired_replicas(value, target, current_replicas))
        elif kind == "Value":
            proposals.append(hpa_desired_replicas_value(value, target, current_replicas, ready_replicas))
        else:
            raise ValueError(f"unknown metric type {kind!r}")
    return max(proposals)


class SlidingExtreme:
    """Min (or max) of the values recorded in the last `window` seconds, in O(1) amortised (monotonic deque).

    The HPA keeps every recommendation of its stabilisation windows and takes their min (scale-up) or max
    (scale-down); this is the same answer without rescanning the window at every sync.
    """

    def __init__(self, window: float, largest: bool) -> None:
        self.window, self.largest = window, largest
        self.q: deque[tuple[float, int]] = deque()

    def push(self, t: float, value: int) -> None:
        q = self.q
        if self.largest:
            while q and q[-1][1] <= value:
                q.pop()
        else:
            while q and q[-1][1] >= value:
                q.pop()
        q.append((t, value))

    def extreme(self, t: float, default: int) -> int:
        """Extreme of the values recorded strictly after `t - window`, and `default`."""
        q = self.q
        while q and q[0][0] <= t - self.window:
            q.popleft()
        if not q:
            return default
        return max(q[0][1], default) if self.largest else min(q[0][1], default)



class Hpa:
    """The workload's HPA: every `hpa_sync`, a proposal from the metric window and the cron windows, stabilised over
    the behaviour's windows and limited by its policies."""

    def __init__(self, state: ClusterState, cron_min: Callable[[float], int],
                 serving: Callable[[], list[float]] | None = None) -> None:
        s = state.s
        self.state = state
        self.cron_min = cron_min
        #: A serving profile's trigger values now (metric type Value, target 1; capacity/service.py).
        self.serving = serving
        self.up_recs = SlidingExtreme(s.scale_up.stabilization, largest=False)
        self.down_recs = SlidingExtreme(s.scale_down.stabilization, largest=True)
        self._event_horizon = max((p.period for p in (*s.scale_up.policies, *s.scale_down.policies)), default=0)
        self.up_events: deque[tuple[float, int]] = deque()
        self.down_events: deque[tuple[float, int]] = deque()

    def sync(self, t: float) -> None:
        state, s = self.state, self.state.s
        current = len(state.workload)
        hpa_min = max(s.min_replicas, 1)
        if current == 0:
            return  # scaled to zero: KEDA owns 0 <-> 1
        total = state.window.value(t)
        if total is None:
            return  # no metric: KEDA's fallback (currentReplicasIfHigher) holds the size
        if current > s.max_replicas:
            desired = s.max_replicas
        elif current < hpa_min:
            desired = hpa_min
        else:
            proposal = hpa_desired_replicas(keda_value(total), s.threshold, current, s.tolerance)
            if self.serving is not None:
                ready = state.ready_pods
                for v in self.serving():
                    proposal = max(proposal, hpa_desired_replicas_value(keda_value(v), 1.0, current, ready,
                                                                        s.tolerance))
            proposal = max(proposal, self.cron_min(t))
            desired = self._normalize(t, current, proposal, hpa_min)
        if desired != current:
            (self.up_events if desired > current else self.down_events).append((t, abs(desired - current)))
            state.scale_to(desired)

    def _normalize(self, t: float, current: int, proposal: int, hpa_min: int) -> int:
        """horizontal.go: stabilise over the windows, then limit the rate by the policies, then min/max."""
        s = self.state.s
        for q in (self.up_events, self.down_events):
            while q and q[0][0] <= t - self._event_horizon:
                q.popleft()
        up_rec = self.up_recs.extreme(t, proposal)
        down_rec = self.down_recs.extreme(t, proposal)
        self.up_recs.push(t, proposal)
        self.down_recs.push(t, proposal)
        desired = min(max(current, up_rec), down_rec)
        if desired > current:
            limit = max(self._rate_limit(t, current, s.scale_up, up=True), current)
            return min(desired, s.max_replicas, limit)
        if desired < current:
            limit = min(self._rate_limit(t, current, s.scale_down, up=False), current)
            return max(desired, hpa_min, limit)
        return desired

    def _changed_within(self, events: Iterable[tuple[float, int]], t: float, period: int) -> int:
        return sum(n for ts, n in events if ts > t - period)

    def _rate_limit(self, t: float, current: int, b: Behavior, up: bool) -> int:
        proposals = []
        for p in b.policies:
            added = self._changed_within(self.up_events, t, p.period)
            deleted = self._changed_within(self.down_events, t, p.period)
            if up:
                start = current - added + deleted
                proposals.append(start + p.value if p.type == "Pods" else math.ceil(start * (1 + p.value / 100)))
            else:
                start = current + deleted - added
                proposals.append(start - p.value if p.type == "Pods" else int(start * (1 - p.value / 100)))
        if not proposals:
            return 2**31 if up else 0
        if b.select == "Disabled":
            return current
        pick_most = (b.select == "Max") == up
        return max(proposals) if pick_most else min(proposals)
