"""Headroom: the GPU headroom's namespace, PriorityClass, placeholder Deployment and (with schedules) its
ScaledObject; what they hold and why is renderers/headroom_specs.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.kube import namespace
from renderers.headroom_specs import (
    headroom_priority_class_spec,
    placeholder_deployment_spec,
    placeholder_scaled_object_spec,
    priority_class_args,
)
from renderers.placement import PoolPlacement
from stackconfig import HeadroomConfig
from stacknames import (
    HEADROOM_NAMESPACE,
    HEADROOM_PRIORITY_CLASS,
    PLACEHOLDER_LABELS,
    PLACEHOLDER_NAME,
    PLATFORM_LABELS,
)


@dataclass(frozen=True)
class HeadroomArgs:
    headroom: HeadroomConfig
    pod_gpus: int
    placement: PoolPlacement
    #: What the placeholders need before they can hold GPUs (the GPU Operator's device plugin).
    gpu_ready: list[pulumi.Resource] = field(default_factory=list)
    #: What the ScaledObject needs (the KEDA release: CRD and operator, destroyed after the ScaledObject).
    scaler_ready: list[pulumi.Resource] = field(default_factory=list)


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
            **priority_class_args(headroom_priority_class_spec()),
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
