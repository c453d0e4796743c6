"""The what-if simulator: demand in GPUs, step by step, through the metric path, KEDA/HPA, the scheduler and
the Cluster Autoscaler, with the delays each of them really has.

One tick is `SimSettings.tick` seconds (5 s); every control loop runs on its own period, a multiple of the
tick. The state is a handful of nodes and pods, and everything the result needs is summed on the fly, so
a 14-day trace runs in seconds and memory does not grow with its length (only the episode durations and a
bounded, down-sampled series for the plot are kept).

Sources of every rule (upstream code and docs, versions as read):
- HPA: kubernetes/kubernetes `pkg/controller/podautoscaler/horizontal.go` (sync every 15 s:
  `config/v1alpha1/defaults.go` HorizontalPodAutoscalerSyncPeriod; `stabilizeRecommendationWithBehaviors`,
  `convertDesiredReplicasWithBehaviorRate`, `calculateScaleUpLimitWithScalingRules`,
  `calculateScaleDownLimitWithBehaviors`) and `replica_calculator.go` `GetExternalPerPodMetricReplicas`
  (AverageValue: `ceil(sum / target)`, tolerance on `sum / (target × statusReplicas)` where statusReplicas
  counts Pending pods) - the arithmetic itself is `capacity.hpa.hpa_desired_replicas`.
- KEDA: `scaledobject_types.go` GetHPAMinReplicas (the HPA's min is 1 when minReplicaCount is 0),
  `scale_scaledobjects.go` (0 <-> 1 on `pollingInterval`, back to 0 after `cooldownPeriod`), the cron scaler
  `pkg/scalers/cron_scaler.go` (active while the next end comes before the next start; a trigger whose value
  the HPA maxes with the others).
- Metric path: dcgm-exporter refreshes every `EXPORTER_COLLECT_INTERVAL_MS` (NVIDIA/dcgm-exporter
  `pkg/cmd/app.go` --collect-interval), Prometheus scrapes every `SCRAPE_INTERVAL`, the query averages
  `QUERY_WINDOW` (components/dcgm.py); a GPU reports demand spread over the Ready GPUs, capped at 100 %.
- Scheduler: a pod needs `gpusPerPod` free GPUs on one node whose GPUs are allocatable; a pod of higher
  priority preempts placeholder pods (kubernetes scheduler preemption, `pkg/scheduler/framework/plugins/
  defaultpreemption`); kube-scheduler scores only cpu/memory by default, so GPU pods spread (most free first).
- Cluster Autoscaler (kubernetes/autoscaler `cluster-autoscaler/FAQ.md` @55c37cd5): a scan every
  `scan-interval`; scale-up for unschedulable pods whose priority is not below
  `expendable-pods-priority-cutoff`, as many nodes as the pods need after filling the nodes already coming,
  up to `maxNodes`; a node not registered within `max-node-provision-time` is given up (billed until then)
  and the node group backs off (initial-node-group-backoff-duration 5 m); a node whose GPU requests are
  below `scale-down-gpu-utilization-threshold` (0.5) and whose pods fit elsewhere is unneeded, and is removed
  after `scale-down-unneeded-time`, never within `scale-down-delay-after-add/-delete/-failure` of the last
  scale-up/delete/failure, never below `minNodes`; empty nodes go in bulk (`max-empty-bulk-delete`), others one
  at a time, their pods restarting elsewhere.
- Nodes: ordered -> registered after a draw from `node_ready_range` (Gcore bare metal: 20-25 min) -> GPUs
  allocatable after a draw from `gpu_ready_range` (GPU Operator: 5-10 min); billed from the order to the delete.
- Pods: Ready `pod_start` seconds after they are scheduled (image pull and model load).
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from capacity.hpa import hpa_desired_replicas
from capacity.settings import Behavior, CronWindow, SimSettings
from capacity.trace import Segment
from stacknames import WORKLOAD_PRIORITY

EPS = 1e-9


@dataclass(eq=False)
class Node:
    ordered: float
    registered: float
    gpus_at: float
    #: When the autoscaler gives up on a node that has not registered (None: it registers in time).
    fails_at: float | None
    gpus: int
    pods: list[Pod] = field(default_factory=list)
    used: int = 0

    def free(self) -> int:
        return self.gpus - self.used


@dataclass(eq=False)
class Pod:
    kind: str  # "workload", "other" (another workload of the stack) or "placeholder"
    gpus: int
    priority: int
    node: Node | None = None
    ready_at: float | None = None


class CronState:
    """Whether a KEDA cron window is active, re-evaluated only when the next start or end passes.

    KEDA's cron scaler (pkg/scalers/cron_scaler.go) is active while the next end comes before the next start.
    """

    def __init__(self, window: CronWindow, start: datetime) -> None:
        from croniter import croniter

        self._croniter = croniter
        self.window = window
        self.origin = start.astimezone(ZoneInfo(window.timezone))
        self.active = False
        self.until = -1.0

    def at(self, t: float) -> bool:
        if t >= self.until:
            now = self.origin + timedelta(seconds=t)
            next_start = self._croniter(self.window.start, now).get_next(datetime)
            next_end = self._croniter(self.window.end, now).get_next(datetime)
            self.active = next_end < next_start
            self.until = (min(next_start, next_end) - self.origin).total_seconds()
        return self.active


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


class Downsampler:
    """Keeps at most `2 × limit` points of several series by averaging (or taking the max of) buckets.

    The bucket doubles whenever the list fills, so memory stays flat for any trace length.
    """

    def __init__(self, names: tuple[str, ...], maxed: tuple[str, ...], limit: int = 1500) -> None:
        self.names, self.maxed, self.limit = names, set(maxed), limit
        self.bucket = 1
        self.points: list[tuple[float, ...]] = []  # (t, values...)
        self._acc: list[float] = [0.0] * len(names)
        self._n = 0
        self._t0 = 0.0

    def add(self, t: float, values: tuple[float, ...]) -> None:
        if self._n == 0:
            self._t0 = t
        for i, (name, v) in enumerate(zip(self.names, values, strict=True)):
            self._acc[i] = max(self._acc[i], v) if name in self.maxed else self._acc[i] + v
        self._n += 1
        if self._n == self.bucket:
            self._flush()

    def _flush(self) -> None:
        if not self._n:
            return
        vals = tuple(a if name in self.maxed else a / self._n for name, a in zip(self.names, self._acc, strict=True))
        self.points.append((self._t0, *vals))
        self._acc = [0.0] * len(self.names)
        self._n = 0
        if len(self.points) >= 2 * self.limit:
            merged = []
            for a, b in zip(self.points[::2], self.points[1::2], strict=False):
                merged.append((a[0], *(
                    max(x, y) if name in self.maxed else (x + y) / 2
                    for name, x, y in zip(self.names, a[1:], b[1:], strict=True)
                )))
            self.points = merged
            self.bucket *= 2

    def series(self) -> dict[str, list[float]]:
        self._flush()
        out = {"t": [p[0] for p in self.points]}
        for i, name in enumerate(self.names, start=1):
            out[name] = [p[i] for p in self.points]
        return out


@dataclass
class Tally:
    """Sums for one way of running the pool (the simulation, the oracle or the static pool)."""

    billed_gpu_s: float = 0.0
    busy_gpu_s: float = 0.0
    unserved_gpu_s: float = 0.0
    short_s: float = 0.0
    peak_nodes: int = 0
    node_s: float = 0.0

    def add(self, dt: float, nodes: int, gpus_per_node: int, demand: float, capacity: float) -> None:
        served = demand if demand <= capacity else capacity
        self.billed_gpu_s += nodes * gpus_per_node * dt
        self.node_s += nodes * dt
        self.busy_gpu_s += served * dt
        if demand > capacity + EPS:
            self.unserved_gpu_s += (demand - capacity) * dt
            self.short_s += dt
        if nodes > self.peak_nodes:
            self.peak_nodes = nodes

    def result(self, price: float, hours: float, reserved_gpu_s: float = 0.0) -> dict[str, Any]:
        cost = self.billed_gpu_s / 3600 * price
        return {
            "gpuHoursBilled": self.billed_gpu_s / 3600,
            "gpuHoursBusy": self.busy_gpu_s / 3600,
            "gpuHoursIdle": (self.billed_gpu_s - self.busy_gpu_s - reserved_gpu_s) / 3600,
            "gpuHoursUnserved": self.unserved_gpu_s / 3600,
            "minutesShort": self.short_s / 60,
            "nodeHours": self.node_s / 3600,
            "peakNodes": self.peak_nodes,
            "cost": cost,
            "costPerMonth": cost / hours * 730 if hours else 0.0,
        }


def _percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (the value that q % of the episodes do not exceed)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


class Simulation:
    """One run of the stack's scaling settings over a demand trace."""

    def __init__(self, s: SimSettings, seed: int = 1) -> None:
        for name, period in (("hpa_sync", s.hpa_sync), ("scan_interval", s.scan_interval),
                             ("exporter_refresh", s.exporter_refresh), ("scrape_interval", s.scrape_interval),
                             ("polling_interval", s.polling_interval)):
            if period <= 0 or period % s.tick:
                raise ValueError(f"{name}={period}s is not a positive multiple of the {s.tick}s tick")
        self.s = s
        self.rng = random.Random(seed)
        self.nodes: list[Node] = []
        self.workload: list[Pod] = []
        self.others: list[Pod] = []
        self.placeholders: list[Pod] = []
        self.version = 0  # bumped on every change of pods or nodes (caches the scale-down analysis)
        self.sched_dirty = True
        self.next_event = math.inf
        self.ready_pods = 0
        self.window: deque[float] = deque(maxlen=max(1, s.query_window // s.scrape_interval))
        self.exported = 0.0
        self.up_recs = SlidingExtreme(s.scale_up.stabilization, largest=False)
        self.down_recs = SlidingExtreme(s.scale_down.stabilization, largest=True)
        self._event_horizon = max((p.period for p in (*s.scale_up.policies, *s.scale_down.policies)), default=0)
        self.up_events: deque[tuple[float, int]] = deque()
        self.down_events: deque[tuple[float, int]] = deque()
        self.last_scale_up = -math.inf
        self.last_delete = -math.inf
        self.last_failure = -math.inf
        self.backoff_until = -math.inf
        self.unneeded: dict[int, tuple[Node, float]] = {}
        self._unneeded_version = -1
        self.last_active = 0.0
        self.replica_windows = [CronState(w, s.start) for w in s.replica_windows]
        self.headroom_windows = [CronState(w, s.start) for w in s.headroom_windows]
        self.nodes_ordered = 0
        self.nodes_failed = 0

    # --- nodes and pods -------------------------------------------------------------------------

    def _order_node(self, t: float) -> None:
        s = self.s
        registered = t + self.rng.uniform(*s.node_ready_range)
        gpus_at = registered + self.rng.uniform(*s.gpu_ready_range)
        fails_at = t + s.max_node_provision if registered - t > s.max_node_provision else None
        self.nodes.append(Node(t, registered, gpus_at, fails_at, s.gpus_per_node))
        self.nodes_ordered += 1
        self.next_event = min(self.next_event, fails_at if fails_at is not None else gpus_at)
        self.version += 1

    def _place(self, pod: Pod, node: Node, t: float) -> None:
        pod.node = node
        node.pods.append(pod)
        node.used += pod.gpus
        if pod.kind == "workload":
            pod.ready_at = t + self.s.pod_start
            self.next_event = min(self.next_event, pod.ready_at)
        self.version += 1

    def _unplace(self, pod: Pod) -> None:
        node = pod.node
        if node is not None:
            node.pods.remove(pod)
            node.used -= pod.gpus
            pod.node = None
        if pod.kind == "workload" and pod.ready_at is not None:
            pod.ready_at = None
            self.next_event = -math.inf  # recount the Ready pods
        self.sched_dirty = True
        self.version += 1

    def _recount(self, t: float) -> None:
        """Apply node and pod transitions due by `t` and find the next one."""
        nxt = math.inf
        for node in list(self.nodes):
            if node.fails_at is not None:
                if t >= node.fails_at:
                    self.nodes.remove(node)  # never registered: the autoscaler gives up, billing stops
                    self.nodes_failed += 1
                    self.last_failure = t
                    self.backoff_until = t + self.s.node_group_backoff
                    self.version += 1
                    continue
                nxt = min(nxt, node.fails_at)
            elif t < node.gpus_at:
                nxt = min(nxt, node.gpus_at)
        self.sched_dirty = True  # GPUs may just have become allocatable
        self.version += 1
        ready = 0
        for pod in self.workload:
            if pod.ready_at is not None:
                if pod.ready_at <= t:
                    ready += 1
                else:
                    nxt = min(nxt, pod.ready_at)
        self.ready_pods = ready
        self.next_event = nxt

    def _usable(self, t: float) -> list[Node]:
        return [n for n in self.nodes if n.fails_at is None and n.gpus_at <= t]

    def _schedule(self, t: float) -> None:
        """Bind Pending pods, highest priority first; real pods preempt placeholders."""
        self.sched_dirty = False
        pending = [p for p in (*self.workload, *self.others, *self.placeholders) if p.node is None]
        if not pending:
            return
        usable = self._usable(t)
        pending.sort(key=lambda p: -p.priority)
        for pod in pending:
            fits = [n for n in usable if n.free() >= pod.gpus]
            if fits:
                self._place(pod, max(fits, key=Node.free), t)
                continue
            for node in usable:
                victims = [p for p in node.pods if p.priority < pod.priority]
                if node.free() + sum(v.gpus for v in victims) < pod.gpus:
                    continue
                victims.sort(key=lambda p: p.priority)
                while node.free() < pod.gpus:
                    self._unplace(victims.pop(0))  # preempted: its ReplicaSet re-creates it, Pending
                self._place(pod, node, t)
                break
        self.sched_dirty = False

    # --- KEDA and the HPA ---------------------------------------------------------------------

    def _cron_min(self, t: float) -> int:
        return max((w.window.value for w in self.replica_windows if w.at(t)), default=0)

    def _scale_to(self, target: int) -> None:
        current = len(self.workload)
        if target > current:
            k = self.s.gpus_per_pod
            self.workload.extend(Pod("workload", k, WORKLOAD_PRIORITY) for _ in range(target - current))
            self.sched_dirty = True
        elif target < current:
            # ReplicaSet deletion order (kubernetes pkg/controller/controller_utils.go ActivePods): unscheduled,
            # then not Ready, then Ready pods.
            self.workload.sort(key=lambda p: (p.node is not None, p.ready_at is not None))
            for pod in self.workload[: current - target]:
                self._unplace(pod)
            del self.workload[: current - target]
            self.next_event = -math.inf  # recount the Ready pods
        self.version += 1

    def _hpa(self, t: float) -> None:
        s = self.s
        current = len(self.workload)
        hpa_min = max(s.min_replicas, 1)
        if current == 0:
            return  # scaled to zero: KEDA owns 0 <-> 1
        if not self.window:
            return  # no metric: KEDA's fallback (currentReplicasIfHigher) holds the size
        if current > s.max_replicas:
            desired = s.max_replicas
        elif current < hpa_min:
            desired = hpa_min
        else:
            total = sum(self.window) / len(self.window)
            proposal = max(hpa_desired_replicas(total, s.threshold, current, s.tolerance), self._cron_min(t))
            desired = self._normalize(t, current, proposal, hpa_min)
        if desired != current:
            (self.up_events if desired > current else self.down_events).append((t, abs(desired - current)))
            self._scale_to(desired)

    def _normalize(self, t: float, current: int, proposal: int, hpa_min: int) -> int:
        """horizontal.go: stabilise over the windows, then limit the rate by the policies, then min/max."""
        s = self.s
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

    def _keda(self, t: float, demand: float) -> None:
        """KEDA's own 0 <-> 1 step for minReplicaCount 0 (the wake trigger stands for demand > 0)."""
        if demand > EPS:
            self.last_active = t
            if not self.workload:
                self._scale_to(1)
        elif self.workload and t - self.last_active >= self.s.cooldown_period and self._cron_min(t) == 0:
            self._scale_to(0)

    def _headroom(self, t: float) -> None:
        s = self.s
        gpus = s.headroom_gpus
        for w in self.headroom_windows:
            if w.at(t):
                gpus = max(gpus, w.window.value)
        want = gpus // s.placeholder_gpus if s.placeholder_gpus else 0
        while len(self.placeholders) < want:
            self.placeholders.append(Pod("placeholder", s.placeholder_gpus, s.placeholder_priority))
            self.sched_dirty = True
        while len(self.placeholders) > want:
            pod = min(self.placeholders, key=lambda p: p.node is not None)
            self._unplace(pod)
            self.placeholders.remove(pod)

    # --- the cluster autoscaler ---------------------------------------------------------------

    def _autoscaler(self, t: float) -> None:
        s = self.s
        pending = [p for p in (*self.workload, *self.others, *self.placeholders)
                   if p.node is None and p.priority >= s.expendable_cutoff]
        if pending and t >= self.backoff_until:
            bins = [n.free() for n in self.nodes if n.gpus_at > t]  # coming nodes absorb pods first
            new = 0
            for pod in sorted(pending, key=lambda p: -p.gpus):
                for i, free in enumerate(bins):
                    if free >= pod.gpus:
                        bins[i] -= pod.gpus
                        break
                else:
                    bins.append(s.gpus_per_node - pod.gpus)
                    new += 1
            add = min(new, s.max_nodes - len(self.nodes))
            for _ in range(add):
                self._order_node(t)
            if add:
                self.last_scale_up = t
                return  # a loop that scaled up does not scale down
        if s.scale_down_enabled:
            self._scale_down(t)

    def _find_unneeded(self, t: float) -> None:
        s = self.s
        if self._unneeded_version == self.version:
            return
        self._unneeded_version = self.version
        usable = self._usable(t)
        free = {id(n): n.free() for n in usable}
        removable: list[Node] = []
        for node in sorted(usable, key=lambda n: n.used):
            if len(self.nodes) - len(removable) <= s.min_nodes:
                break
            if node.used / node.gpus >= s.gpu_utilization_threshold:
                continue
            trial = dict(free)
            del trial[id(node)]
            for gone in removable:
                trial.pop(id(gone), None)
            ok = True
            for pod in sorted(node.pods, key=lambda p: -p.gpus):
                if pod.priority < s.expendable_cutoff:
                    continue  # expendable pods do not block scale-down
                dest = next((k for k, f in trial.items() if f >= pod.gpus), None)
                if dest is None:
                    ok = False
                    break
                trial[dest] -= pod.gpus
            if ok:
                free = trial | {id(node): 0}
                removable.append(node)
        self.unneeded = {id(n): (n, self.unneeded.get(id(n), (n, t))[1]) for n in removable}

    def _scale_down(self, t: float) -> None:
        s = self.s
        self._find_unneeded(t)
        if not self.unneeded:
            return
        if (t < self.last_scale_up + s.scale_down_delay_after_add
                or t < self.last_delete + s.scale_down_delay_after_delete
                or t < self.last_failure + s.scale_down_delay_after_failure):
            return
        due = [n for n, since in self.unneeded.values() if t - since >= s.scale_down_unneeded]
        if not due:
            return
        empty = [n for n in due if not any(p.priority >= s.expendable_cutoff for p in n.pods)]
        victims = empty[: s.max_empty_bulk_delete] if empty else due[:1]
        for node in victims:
            if len(self.nodes) <= s.min_nodes:
                break
            for pod in list(node.pods):
                self._unplace(pod)  # drained: Pending again, restarts elsewhere
            self.nodes.remove(node)
            self.unneeded.pop(id(node), None)
        self.last_delete = t
        self._unneeded_version = -1
        self.version += 1

    # --- the run ------------------------------------------------------------------------------

    def _warm_start(self, demand: float) -> None:
        """Start in the steady state of the first demand: the replicas the HPA would hold, on enough nodes."""
        s = self.s
        util_sum = 100 * demand
        replicas = max(max(s.min_replicas, 1), math.ceil(util_sum / s.threshold - EPS), self._cron_min(0.0))
        replicas = min(replicas, s.max_replicas)
        self.others = [Pod("other", g, WORKLOAD_PRIORITY) for g in s.reserved_pods]
        gpus = replicas * s.gpus_per_pod + sum(s.reserved_pods) + s.headroom_gpus
        nodes = min(s.max_nodes, max(s.min_nodes, math.ceil(gpus / s.gpus_per_node)))
        for _ in range(nodes):
            self.nodes.append(Node(0.0, 0.0, 0.0, None, s.gpus_per_node))
        self._scale_to(replicas)
        self._headroom(0.0)
        self._schedule(0.0)
        for pod in self.workload:
            if pod.ready_at is not None:
                pod.ready_at = 0.0
        self._recount(0.0)
        self.exported = 100 * min(demand, self.ready_pods * s.gpus_per_pod)
        self.window.extend([self.exported] * self.window.maxlen)  # type: ignore[arg-type]

    def run(self, trace: Iterable[Segment], plot: bool = False) -> dict[str, Any]:
        s = self.s
        tick = s.tick
        sim, oracle, static = Tally(), Tally(), Tally()
        episodes: list[float] = []
        episode_start: float | None = None
        reserved_gpus = sum(s.reserved_pods)
        reserved_gpu_s = 0.0
        demand_gpu_s = 0.0
        reserved_version, reserved_now = -1, 0
        sampler = Downsampler(
            ("demand", "capacity", "desired", "ready", "nodes", "gpuNodes", "pending"), ("nodes", "pending")
        ) if plot else None
        per_node = s.gpus_per_node
        cap_replicas = s.max_replicas * s.gpus_per_pod
        static_cap = max(0, min(cap_replicas, s.max_nodes * per_node - reserved_gpus))
        started = False
        t = 0.0
        step = 0
        k = s.gpus_per_pod
        every_export, every_scrape = s.exporter_refresh // tick, s.scrape_interval // tick
        every_poll, every_hpa, every_scan = s.polling_interval // tick, s.hpa_sync // tick, s.scan_interval // tick
        keda_owns_zero = s.min_replicas == 0
        headroom_check = bool(self.headroom_windows)
        for seg in trace:
            demand = seg.gpus
            if not started:
                self._warm_start(demand)
                started = True
            seg_ticks = 0
            while t < seg.end - EPS:
                if t >= self.next_event:
                    self._recount(t)
                if step % every_export == 0:
                    self.exported = 100 * min(demand, self.ready_pods * k)
                if step % every_scrape == 0:
                    self.window.append(self.exported)
                if keda_owns_zero and step % every_poll == 0:
                    self._keda(t, demand)
                if step % every_hpa == 0:
                    self._hpa(t)
                    if headroom_check:
                        self._headroom(t)
                if self.sched_dirty:
                    self._schedule(t)
                    if t >= self.next_event:
                        self._recount(t)
                if step % every_scan == 0:
                    self._autoscaler(t)
                if t >= self.next_event:
                    self._recount(t)
                if sampler is not None and step % every_hpa == 0:
                    sampler.add(t, (demand, self.ready_pods * k, len(self.workload), self.ready_pods,
                                    len(self.nodes),
                                    sum(1 for n in self.nodes if n.gpus_at <= t and n.fails_at is None),
                                    sum(1 for p in (*self.workload, *self.placeholders) if p.node is None)))
                # --- tallies of this tick
                capacity = self.ready_pods * k
                sim.add(tick, len(self.nodes), per_node, demand, capacity)
                if self.version != reserved_version:
                    reserved_version = self.version
                    reserved_now = sum(p.gpus for p in self.others if p.node is not None)
                reserved_gpu_s += reserved_now * tick
                if demand > capacity + EPS:
                    if episode_start is None:
                        episode_start = t
                elif episode_start is not None:
                    episodes.append(t - episode_start)
                    episode_start = None
                t += tick
                step += 1
                seg_ticks += 1
            # the yardsticks depend on demand only: once per segment
            dt = seg_ticks * tick
            demand_gpu_s += demand * dt
            pods = min(math.ceil(demand / k - EPS), s.max_replicas)
            o_nodes = min(s.max_nodes, max(s.min_nodes, math.ceil((pods * k + reserved_gpus) / per_node - EPS)))
            oracle.add(dt, o_nodes, per_node, demand,
                       max(0, min(cap_replicas, o_nodes * per_node - reserved_gpus)))
            static.add(dt, s.max_nodes, per_node, demand, static_cap)
        if not started:
            raise ValueError("the trace is empty")
        open_episode = episode_start is not None
        if episode_start is not None:
            episodes.append(t - episode_start)
        hours = t / 3600
        price = s.price_per_gpu_hour
        result = sim.result(price, hours, reserved_gpu_s)
        result.update({
            "hours": hours,
            "gpuHoursDemand": demand_gpu_s / 3600,
            "gpuHoursOtherWorkloads": reserved_gpu_s / 3600,
            "timeToCapacityMinutes": {
                "p50": _percentile(episodes, 50) / 60,
                "p95": _percentile(episodes, 95) / 60,
                "max": max(episodes, default=0.0) / 60,
                "episodes": len(episodes),
                "openAtEnd": open_episode,
            },
            "nodesOrdered": self.nodes_ordered,
            "nodesGivenUp": self.nodes_failed,
            "oracle": oracle.result(price, hours, reserved_gpus * t),
            "static": static.result(price, hours, reserved_gpus * t),
        })
        if sampler is not None:
            result["series"] = sampler.series()
        return result


def simulate(settings: SimSettings, trace: Iterable[Segment], seed: int = 1, plot: bool = False) -> dict[str, Any]:
    """Run the settings over the trace; the result's keys are the JSON keys of `python -m capacity`."""
    return Simulation(settings, seed).run(trace, plot)
