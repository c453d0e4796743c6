"""What the suites read off Kubernetes objects, whichever node autoscaler runs: a pod's GPUs, a condition, whether
kube-scheduler found no node for a pod, and the taint Cluster Autoscaler puts on a node it is removing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stacknames import GPU_RESOURCE

#: Cluster Autoscaler's taint on a node it drains and deletes (cluster-autoscaler utils/taints/taints.go
#: `ToBeDeletedTaint`).
TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler"


def pod_gpus(pod: Mapping[str, Any]) -> int:
    return sum(int(c.get("resources", {}).get("requests", {}).get(GPU_RESOURCE, 0)) for c in pod["spec"]["containers"])


def condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    return next((c for c in obj.get("status", {}).get("conditions") or [] if c["type"] == kind), None)


def unschedulable(pod: Mapping[str, Any]) -> bool:
    """kube-scheduler marked it PodScheduled=False, reason Unschedulable (the pods Cluster Autoscaler acts on)."""
    cond = condition(pod, "PodScheduled")
    return bool(not pod["spec"].get("nodeName") and cond is not None and cond["status"] == "False"
                and cond.get("reason") == "Unschedulable" and not pod["metadata"].get("deletionTimestamp"))
