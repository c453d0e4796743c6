"""The scheduler: binds Pending pods to nodes whose GPUs are allocatable, preempting lower priorities.

A pod needs `gpusPerPod` free GPUs on one node; pods are bound highest priority first, and a pod that finds no
room evicts pods of lower priority (the placeholders) from one node (kubernetes scheduler preemption,
`pkg/scheduler/framework/plugins/defaultpreemption`). kube-scheduler scores only cpu and memory by default, so GPU
pods spread: each goes to the node with the most free GPUs.
"""

from __future__ import annotations

from capacity.state import ClusterState, Node


def schedule(state: ClusterState, t: float) -> None:
    """Bind Pending pods, highest priority first; real pods preempt placeholders."""
    state.sched_dirty = False
    pending = [p for p in state.pods() if p.node is None]
    if not pending:
        return
    usable = state.usable(t)
    pending.sort(key=lambda p: -p.priority)
    for pod in pending:
        fits = [n for n in usable if n.free() >= pod.gpus]
        if fits:
            state.place(pod, max(fits, key=Node.free), t)
            continue
        for node in usable:
            victims = [p for p in node.pods if p.priority < pod.priority]
            if node.free() + sum(v.gpus for v in victims) < pod.gpus:
                continue
            victims.sort(key=lambda p: p.priority)
            while node.free() < pod.gpus:
                state.unplace(victims.pop(0))  # preempted: its ReplicaSet re-creates it, Pending
            state.place(pod, node, t)
            break
    state.sched_dirty = False
