"""The Cluster Autoscaler (kubernetes/autoscaler cluster-autoscaler/FAQ.md @55c37cd5), one loop per `scan-interval`.

Scale-up: for unschedulable pods whose priority is not below `expendable-pods-priority-cutoff`, as many nodes as
the pods need after filling the nodes already coming (first-fit decreasing, stackconfig/packing.py), up to
`maxNodes`, unless the node group backs off after a failure. Scale-down: a node whose GPU requests are below
`scale-down-gpu-utilization-threshold` (0.5) and whose pods fit elsewhere is unneeded, and is removed after
`scale-down-unneeded-time`, never within `scale-down-delay-after-add/-delete/-failure` of the last
scale-up/delete/failure, never below `minNodes`; empty nodes go in bulk (`max-empty-bulk-delete`), others one at
a time, their pods restarting elsewhere.
"""

from __future__ import annotations

import math

from capacity.state import ClusterState, Node
from stackconfig.packing import first_fit_decreasing

#: cluster-autoscaler clusterstate/clusterstate.go `MaxNodeStartupTime` (15 min): a registered node that is not ready
#: (a start-up taint makes it so: utils/taints/taints.go `FilterOutNodesWithStartupTaints`) counts as coming
#: (`GetUpcomingNodes`: NotStarted) for this long after it registered, and as unready, not coming, after that.
MAX_NODE_STARTUP = 15 * 60


class Autoscaler:
    """The autoscaler's own memory: its last scale-up and delete, and since when each node has been unneeded."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.last_scale_up = -math.inf
        self.last_delete = -math.inf
        self.unneeded: dict[int, tuple[Node, float]] = {}
        self._unneeded_version = -1

    def run(self, t: float) -> None:
        state, s = self.state, self.state.s
        pending = [p for p in state.pods() if p.node is None and p.priority >= s.expendable_cutoff]
        if pending and t >= state.backoff_until:
            # Coming nodes absorb pods first; a registered node without allocatable GPUs is one of them only when the
            # autoscaler knows its GPUs are on the way (SimSettings.gpu_aware_autoscaler), and only for
            # MAX_NODE_STARTUP after it registered: then it is unready, no longer coming.
            coming = [n.free() for n in state.nodes
                      if (n.gpus_at > t and t < n.registered + MAX_NODE_STARTUP if s.gpu_aware_autoscaler
                          else n.registered > t)]
            bins = first_fit_decreasing([p.gpus for p in pending], coming, open_size=s.gpus_per_node)
            assert bins is not None  # with open_size every pod finds a bin
            add = min(len(bins) - len(coming), s.max_nodes - len(state.nodes))
            for _ in range(add):
                state.order_node(t)
            if add:
                self.last_scale_up = t
                return  # a loop that scaled up does not scale down
        if s.scale_down_enabled:
            self._scale_down(t)

    def _find_unneeded(self, t: float) -> None:
        state, s = self.state, self.state.s
        if self._unneeded_version == state.version:
            return
        self._unneeded_version = state.version
        usable = state.usable(t)
        free = {id(n): n.free() for n in usable}
        removable: list[Node] = []
        for node in sorted(usable, key=lambda n: n.used):
            if len(state.nodes) - len(removable) <= s.min_nodes:
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
        state, s = self.state, self.state.s
        self._find_unneeded(t)
        if not self.unneeded:
            return
        if (t < self.last_scale_up + s.scale_down_delay_after_add
                or t < self.last_delete + s.scale_down_delay_after_delete
                or t < state.last_failure + s.scale_down_delay_after_failure):
            return
        due = [n for n, since in self.unneeded.values() if t - since >= s.scale_down_unneeded]
        if not due:
            return
        empty = [n for n in due if not any(p.priority >= s.expendable_cutoff for p in n.pods)]
        victims = empty[: s.max_empty_bulk_delete] if empty else due[:1]
        for node in victims:
            if len(state.nodes) <= s.min_nodes:
                break
            for pod in list(node.pods):
                state.unplace(pod)  # drained: Pending again, restarts elsewhere
            state.nodes.remove(node)
            self.unneeded.pop(id(node), None)
        self.last_delete = t
        self._unneeded_version = -1
        state.version += 1

    # --- the run ------------------------------------------------------------------------------
