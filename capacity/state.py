"""The simulated cluster: nodes, pods and the metric path, and the transitions every control loop shares.

One `ClusterState` is what the control loops (capacity/hpa.py, keda.py, scheduler.py, autoscaler.py) read and
change; capacity/sim.py runs them over it tick by tick. Nodes go ordered -> registered after a draw from
`node_ready_range` (Gcore bare metal: 20-25 min) -> GPUs allocatable after a draw from `gpu_ready_range` (GPU
Operator: 5-10 min), billed from the order to the delete; a node not registered within `max-node-provision-time`
is given up and its node group backs off. Pods are Ready `pod_start` seconds after they are scheduled.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from capacity.metric_path import QueryWindow
from capacity.settings import SimSettings
from stacknames import WORKLOAD_PRIORITY

#: Below this, demand and capacity count as equal (floating point).
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



class ClusterState:
    """Nodes, the workload's pods, the other workloads' pods, the placeholders, and what the metric path holds."""

    def __init__(self, s: SimSettings, seed: int = 1) -> None:
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
        #: The metric path: what dcgm-exporter last exported per pod, and the series the query reads
        #: (capacity/metric_path.py).
        self.window = QueryWindow(s.query_window)
        #: The node group's failures (a node given up), which the autoscaler backs off from.
        self.last_failure = -math.inf
        self.backoff_until = -math.inf
        self.nodes_ordered = 0
        self.nodes_failed = 0

    def pods(self) -> tuple[Pod, ...]:
        return (*self.workload, *self.others, *self.placeholders)

    def order_node(self, t: float) -> None:
        s = self.s
        registered = t + self.rng.uniform(*s.node_ready_range)
        gpus_at = registered + self.rng.uniform(*s.gpu_ready_range)
        fails_at = t + s.max_node_provision if registered - t > s.max_node_provision else None
        self.nodes.append(Node(t, registered, gpus_at, fails_at, s.gpus_per_node))
        self.nodes_ordered += 1
        self.next_event = min(self.next_event, fails_at if fails_at is not None else gpus_at)
        self.version += 1

    def place(self, pod: Pod, node: Node, t: float) -> None:
        pod.node = node
        node.pods.append(pod)
        node.used += pod.gpus
        if pod.kind == "workload":
            pod.ready_at = t + self.s.pod_start
            self.next_event = min(self.next_event, pod.ready_at)
        self.version += 1

    def unplace(self, pod: Pod) -> None:
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

    def recount(self, t: float) -> None:
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

    def usable(self, t: float) -> list[Node]:
        return [n for n in self.nodes if n.fails_at is None and n.gpus_at <= t]

    def scale_to(self, target: int) -> None:
        """The workload's Deployment at `target` replicas (its ReplicaSet adds Pending pods or deletes some)."""
        current = len(self.workload)
        if target > current:
            k = self.s.gpus_per_pod
            self.workload.extend(Pod("workload", k, WORKLOAD_PRIORITY) for _ in range(target - current))
            self.sched_dirty = True
        elif target < current:
            # ReplicaSet deletion order (kubernetes v1.35 pkg/controller/controller_utils.go ActivePodsWithRanks,
            # ranked by pkg/controller/replicaset/replica_set.go getPodsRankedByRelatedPodsOnSameNode):
            # unscheduled, then not Ready, then the pods of the node that holds most of the workload's pods, then the
            # most recently Ready. The rank keeps the nodes balanced on the way down, so no node empties early: the
            # end-to-end calibration saw the autoscaler's unneeded node change with every deletion.
            on_node: dict[int, int] = {}
            for pod in self.workload:
                if pod.node is not None:
                    on_node[id(pod.node)] = on_node.get(id(pod.node), 0) + 1
            self.workload.sort(key=lambda p: (p.node is not None, p.ready_at is not None,
                                              -on_node.get(id(p.node), 0), -(p.ready_at or 0.0)))
            for pod in self.workload[: current - target]:
                self.unplace(pod)
            del self.workload[: current - target]
            self.next_event = -math.inf  # recount the Ready pods
        self.version += 1
