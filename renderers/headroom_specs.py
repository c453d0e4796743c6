"""GPU headroom: the specs of the placeholder pods that hold spare GPUs, and of the PriorityClasses that rank them.

The cluster-autoscaler's overprovisioning recipe (kubernetes/autoscaler, cluster-autoscaler/FAQ.md, "How can I
configure overprovisioning with Cluster Autoscaler?") applied to a bare-metal GPU pool:

- a placeholder Deployment of `pause` pods, each requesting one pod-sized slice of `nvidia.com/gpu`, placed on
  the pool like a workload (its node labels selected, its taints tolerated);
- their PriorityClass (-10) is *not below* the autoscaler's `expendable-pods-priority-cutoff` (-10), so a Pending
  placeholder makes the autoscaler add a node, and it is *below* the workloads' class (0), so the scheduler
  preempts placeholders the moment a workload pod needs their GPUs;
- `terminationGracePeriodSeconds: 0`: a preempted placeholder frees its GPUs at once.

A burst thus starts on the placeholders' GPUs within seconds, and the evicted placeholders, now Pending, start
the next node (20-25 min on Gcore bare metal) while the burst is already served. With `schedules` the
placeholder Deployment is scaled by its own ScaledObject (KEDA cron triggers), otherwise it has fixed replicas
(no HPA owns it, so `spec.replicas` is safe here).

Pure functions: components/headroom.py (Headroom) and components/workload.py (WorkloadPriority) create them.
"""

from __future__ import annotations

from typing import Any

from renderers.placement import PoolPlacement, tolerations_for
from renderers.scaling_triggers import schedule_triggers
from stackconfig import HeadroomConfig
from stackconfig.versions import PAUSE_IMAGE
from stacknames import (
    GPU_RESOURCE,
    HEADROOM_PRIORITY,
    HEADROOM_PRIORITY_CLASS,
    NAME_LABEL,
    PLACEHOLDER_LABELS,
    PLATFORM_LABELS,
    WORKLOAD_PRIORITY,
)

#: pause runs as nobody (65535) in its image; stated so `runAsNonRoot` can be verified without the image.
PAUSE_UID = 65535


def workload_priority_class_args() -> dict[str, Any]:
    """The workloads' class: 0 (the value pods without a class get), preempting lower pods when needed."""
    return {
        "value": WORKLOAD_PRIORITY,
        "global_default": False,
        "preemption_policy": "PreemptLowerPriority",
        "description": "GPU workloads of the platform: preempt the GPU headroom placeholders when they need GPUs.",
    }


def headroom_priority_class_args() -> dict[str, Any]:
    """The placeholders' class: -10, at the autoscaler's expendable cutoff (not expendable), below workloads.

    `preemptionPolicy: Never`: a placeholder waits for a node instead of evicting anything.
    """
    return {
        "value": HEADROOM_PRIORITY,
        "global_default": False,
        "preemption_policy": "Never",
        "description": "GPU headroom placeholders: preempted by any workload; Pending ones make the cluster "
        "autoscaler add a GPU node.",
    }


def replicas(h: HeadroomConfig, pod_gpus: int) -> int:
    """Placeholder pods held outside any window (stackconfig guarantees whole pods)."""
    return h.gpus // pod_gpus


def max_replicas(h: HeadroomConfig, pod_gpus: int) -> int:
    """Placeholder pods held at most (the busiest window, or the base)."""
    return max([replicas(h, pod_gpus), *(s.min_replicas for s in h.schedules)])


def placeholder_labels(name: str) -> dict[str, str]:
    """The labels of one pool's placeholder pods (`name`: stacknames.placeholder_name): the component label marks
    every placeholder, the name label tells one pool's from another's."""
    return {**PLACEHOLDER_LABELS, NAME_LABEL: name}


def placeholder_deployment_spec(h: HeadroomConfig, pod_gpus: int, placement: PoolPlacement,
                                name: str) -> dict[str, Any]:
    """A Deployment of pause pods, each holding `pod_gpus` GPUs of the pool, Pod Security `restricted`."""
    gpus = str(pod_gpus)
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {NAME_LABEL: name}},
        # A surge placeholder would be Pending on a full pool and make the autoscaler add a node: replace
        # placeholders by deleting them first.
        "strategy": {"type": "Recreate"},
        "template": {
            "metadata": {"labels": {**placeholder_labels(name), **PLATFORM_LABELS}},
            "spec": {
                "priorityClassName": HEADROOM_PRIORITY_CLASS,
                # Preempted placeholders must free their GPUs at once, not after the default 30 s.
                "terminationGracePeriodSeconds": 0,
                "automountServiceAccountToken": False,
                "enableServiceLinks": False,
                "nodeSelector": dict(placement.labels),
                "tolerations": tolerations_for(placement.taints),
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": PAUSE_UID,
                    "runAsGroup": PAUSE_UID,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [
                    {
                        "name": "pause",
                        "image": PAUSE_IMAGE,
                        "resources": {
                            # GPU requests = limits (Kubernetes requires it for extended resources).
                            "requests": {GPU_RESOURCE: gpus, "cpu": "10m", "memory": "16Mi"},
                            "limits": {GPU_RESOURCE: gpus, "memory": "16Mi"},
                        },
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True,
                            "capabilities": {"drop": ["ALL"]},
                        },
                    }
                ],
            },
        },
    }
    if not h.schedules:
        # Fixed size: no HPA owns this Deployment, so replicas here cannot fight a controller.
        spec["replicas"] = replicas(h, pod_gpus)
    return spec


def placeholder_scaled_object_spec(h: HeadroomConfig, pod_gpus: int, name: str) -> dict[str, Any]:
    """KEDA scales the placeholders between the base headroom and each window's `minReplicas` (cron only).

    The fallback holds the busiest window's placeholders if the cron scaler ever errors: spare GPUs too many
    for a while cost less than a burst that waits half an hour.
    """
    base, most = replicas(h, pod_gpus), max_replicas(h, pod_gpus)
    return {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
        "pollingInterval": 30,
        "minReplicaCount": base,
        "maxReplicaCount": most,
        "fallback": {"failureThreshold": 3, "replicas": max(most, 1)},
        "triggers": schedule_triggers(h.schedules),
    }
