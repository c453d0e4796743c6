"""GPU headroom: spare GPUs held by low-priority placeholder pods, and the PriorityClasses that rank them.

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kube import namespace, tolerations_for
from components.workload import PoolPlacement, schedule_triggers
from stackconfig import HeadroomConfig
from stackconfig.versions import PAUSE_IMAGE
from stacknames import (
    GPU_RESOURCE,
    HEADROOM_NAMESPACE,
    HEADROOM_PRIORITY,
    HEADROOM_PRIORITY_CLASS,
    NAME_LABEL,
    PLACEHOLDER_LABELS,
    PLACEHOLDER_NAME,
    PLATFORM_LABELS,
    WORKLOAD_PRIORITY,
    WORKLOAD_PRIORITY_CLASS,
)

#: pause runs as nobody (65535) in its image; stated so `runAsNonRoot` can be verified without the image.
PAUSE_UID = 65535


def workload_priority_class_spec() -> dict[str, Any]:
    """The workloads' class: 0 (the value pods without a class get), preempting lower pods when needed."""
    return {
        "value": WORKLOAD_PRIORITY,
        "globalDefault": False,
        "preemptionPolicy": "PreemptLowerPriority",
        "description": "GPU workloads of the platform: preempt the GPU headroom placeholders when they need GPUs.",
    }


def headroom_priority_class_spec() -> dict[str, Any]:
    """The placeholders' class: -10, at the autoscaler's expendable cutoff (not expendable), below workloads.

    `preemptionPolicy: Never`: a placeholder waits for a node instead of evicting anything.
    """
    return {
        "value": HEADROOM_PRIORITY,
        "globalDefault": False,
        "preemptionPolicy": "Never",
        "description": "GPU headroom placeholders: preempted by any workload; Pending ones make the cluster "
        "autoscaler add a GPU node.",
    }


def _snake(fields: dict[str, Any]) -> dict[str, Any]:
    """PriorityClass fields as the SDK's keyword arguments (`globalDefault` -> `global_default`)."""
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value for key, value in fields.items()}


def replicas(h: HeadroomConfig, pod_gpus: int) -> int:
    """Placeholder pods held outside any window (stackconfig guarantees whole pods)."""
    return h.gpus // pod_gpus


def max_replicas(h: HeadroomConfig, pod_gpus: int) -> int:
    """Placeholder pods held at most (the busiest window, or the base)."""
    return max([replicas(h, pod_gpus), *(s.min_replicas for s in h.schedules)])


def placeholder_deployment_spec(
    h: HeadroomConfig, pod_gpus: int, placement: PoolPlacement, priority_class: str = HEADROOM_PRIORITY_CLASS
) -> dict[str, Any]:
    """A Deployment of pause pods, each holding `pod_gpus` GPUs of the pool, Pod Security `restricted`."""
    gpus = str(pod_gpus)
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {NAME_LABEL: PLACEHOLDER_NAME}},
        # A surge placeholder would be Pending on a full pool and make the autoscaler add a node: replace
        # placeholders by deleting them first.
        "strategy": {"type": "Recreate"},
        "template": {
            "metadata": {"labels": {**PLACEHOLDER_LABELS, **PLATFORM_LABELS}},
            "spec": {
                "priorityClassName": priority_class,
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


def placeholder_scaled_object_spec(h: HeadroomConfig, pod_gpus: int) -> dict[str, Any]:
    """KEDA scales the placeholders between the base headroom and each window's `minReplicas` (cron only).

    The fallback holds the busiest window's placeholders if the cron scaler ever errors: spare GPUs too many
    for a while cost less than a burst that waits half an hour.
    """
    base, most = replicas(h, pod_gpus), max_replicas(h, pod_gpus)
    return {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": PLACEHOLDER_NAME},
        "pollingInterval": 30,
        "minReplicaCount": base,
        "maxReplicaCount": most,
        "fallback": {"failureThreshold": 3, "replicas": max(most, 1)},
        "triggers": schedule_triggers(h.schedules),
    }


@dataclass(frozen=True)
class HeadroomArgs:
    headroom: HeadroomConfig
    pod_gpus: int
    placement: PoolPlacement
    #: What the placeholders need before they can hold GPUs (the GPU Operator's device plugin).
    gpu_ready: list[pulumi.Resource] = field(default_factory=list)
    #: What the ScaledObject needs (the KEDA release: CRD and operator, destroyed after the ScaledObject).
    scaler_ready: list[pulumi.Resource] = field(default_factory=list)


class WorkloadPriority(pulumi.ComponentResource):
    """The workloads' PriorityClass, created whether or not headroom is set, so that turning headroom on
    later does not change (and roll) every GPU workload's pod template."""

    priority_class: k8s.scheduling.v1.PriorityClass

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:workloads:WorkloadPriority", name, None, opts)
        self.priority_class = k8s.scheduling.v1.PriorityClass(
            f"{name}-class",
            metadata={"name": WORKLOAD_PRIORITY_CLASS, "labels": dict(PLATFORM_LABELS)},
            **_snake(workload_priority_class_spec()),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"name": self.priority_class.metadata.name})


class Headroom(pulumi.ComponentResource):
    """Namespace, PriorityClass, placeholder Deployment and (with schedules) its ScaledObject."""

    deployment: k8s.apps.v1.Deployment
    priority_class: k8s.scheduling.v1.PriorityClass
    scaled_object: k8s.apiextensions.CustomResource | None

    def __init__(self, name: str, args: HeadroomArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:scaling:Headroom", name, None, opts)
        h = args.headroom
        labels = {**PLACEHOLDER_LABELS, **PLATFORM_LABELS}
        ns = namespace(f"{name}-ns", HEADROOM_NAMESPACE, self, pod_security="restricted")
        self.priority_class = k8s.scheduling.v1.PriorityClass(
            f"{name}-priority",
            metadata={"name": HEADROOM_PRIORITY_CLASS, "labels": dict(PLATFORM_LABELS)},
            **_snake(headroom_priority_class_spec()),
            opts=pulumi.ResourceOptions(parent=self),
        )
        spec = placeholder_deployment_spec(h, args.pod_gpus, args.placement)
        # The Output makes the Deployment wait for the class its pods' admission resolves.
        spec["template"]["spec"]["priorityClassName"] = self.priority_class.metadata.name
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata={
                "name": PLACEHOLDER_NAME,
                "namespace": ns.metadata.name,
                "labels": labels,
                # Placeholders serve nobody: `pulumi up` need not wait for them to run (a placeholder that
                # waits for a node would otherwise hold the update for the node's 20-25 minutes).
                "annotations": {"pulumi.com/skipAwait": "true"},
            },
            spec=spec,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.gpu_ready)),
        )
        self.scaled_object = None
        if h.schedules:
            self.scaled_object = k8s.apiextensions.CustomResource(
                f"{name}-scaledobject",
                api_version="keda.sh/v1alpha1",
                kind="ScaledObject",
                metadata={"name": PLACEHOLDER_NAME, "namespace": ns.metadata.name, "labels": labels},
                spec=placeholder_scaled_object_spec(h, args.pod_gpus),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.deployment, *args.scaler_ready]),
            )
        self.register_outputs({
            "namespace": ns.metadata.name,
            "deployment": self.deployment.metadata.name,
            "priorityClass": self.priority_class.metadata.name,
        })


def headroom_output(h: HeadroomConfig | None, pod_gpus: int, price_per_gpu_hour: float) -> dict[str, Any] | None:
    """The `headroom` stack output: what is held, where, and what holding it costs per hour (an estimate at
    `gpuPool.pricePerGpuHour`). None without headroom."""
    if h is None:
        return None
    most = max_replicas(h, pod_gpus) * pod_gpus
    return {
        "gpus": h.gpus,
        "podGpus": pod_gpus,
        "placeholders": replicas(h, pod_gpus),
        "maxGpus": most,
        "namespace": HEADROOM_NAMESPACE,
        "deployment": PLACEHOLDER_NAME,
        "priorityClass": HEADROOM_PRIORITY_CLASS,
        "priority": HEADROOM_PRIORITY,
        "schedules": [s.model_dump(by_alias=True) for s in h.schedules],
        "pricePerGpuHour": price_per_gpu_hour,
        "hourlyCost": round(h.gpus * price_per_gpu_hour, 2),
        "maxHourlyCost": round(most * price_per_gpu_hour, 2),
    }
