"""Headroom: the GPU headroom's namespace and PriorityClass, and per GPU pool with headroom its placeholder Deployment
and (with schedules) its ScaledObject; what they hold and why is renderers/headroom_specs.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.kube import namespace
from renderers.headroom_specs import (
    headroom_priority_class_args,
    placeholder_deployment_spec,
    placeholder_labels,
    placeholder_scaled_object_spec,
)
from renderers.placement import PoolPlacement
from stackconfig import HeadroomConfig
from stacknames import (
    HEADROOM_NAMESPACE,
    HEADROOM_PRIORITY_CLASS,
    PLATFORM_LABELS,
    placeholder_name,
)


@dataclass(frozen=True)
class PoolHeadroom:
    """One GPU pool's spare GPUs: what its placeholders hold, and where they go."""

    pool: str
    headroom: HeadroomConfig
    pod_gpus: int
    placement: PoolPlacement
    #: The first GPU pool keeps the names of a one-pool stack (stacknames.placeholder_name).
    first: bool = True

    @property
    def name(self) -> str:
        return placeholder_name(self.pool, self.first)


@dataclass(frozen=True)
class HeadroomArgs:
    pools: list[PoolHeadroom]
    #: What the placeholders need before they can hold GPUs (the GPU Operator's device plugin).
    gpu_ready: list[pulumi.Resource] = field(default_factory=list)
    #: What the ScaledObject needs (the KEDA release: CRD and operator, destroyed after the ScaledObject).
    scaler_ready: list[pulumi.Resource] = field(default_factory=list)


class Headroom(pulumi.ComponentResource):
    """Namespace and PriorityClass; per pool, a placeholder Deployment and (with schedules) its ScaledObject."""

    priority_class: k8s.scheduling.v1.PriorityClass
    #: Per pool, its placeholder Deployment's name, read from it.
    placeholders: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: HeadroomArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:scaling:Headroom", name, None, opts)
        ns = namespace(f"{name}-ns", HEADROOM_NAMESPACE, self, pod_security="restricted")
        self.priority_class = k8s.scheduling.v1.PriorityClass(
            f"{name}-priority",
            metadata={"name": HEADROOM_PRIORITY_CLASS, "labels": dict(PLATFORM_LABELS)},
            **headroom_priority_class_args(),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.placeholders = {}
        for pool in args.pools:
            self._placeholders(name, pool, ns, args)
        self.register_outputs({"namespace": ns.metadata.name, "priorityClass": self.priority_class.metadata.name,
                               "deployments": self.placeholders})

    def _placeholders(self, name: str, pool: PoolHeadroom, ns: k8s.core.v1.Namespace, args: HeadroomArgs) -> None:
        """One pool's placeholder Deployment (and ScaledObject); the first pool's children keep the names of a
        one-pool stack (`headroom-deployment`), the others carry the pool's name (`headroom-<pool>-deployment`)."""
        h = pool.headroom
        role = name if pool.first else f"{name}-{pool.pool}"
        labels = {**placeholder_labels(pool.name), **PLATFORM_LABELS}
        spec = placeholder_deployment_spec(h, pool.pod_gpus, pool.placement, pool.name)
        # The Output makes the Deployment wait for the class its pods' admission resolves.
        spec["template"]["spec"]["priorityClassName"] = self.priority_class.metadata.name
        deployment = k8s.apps.v1.Deployment(
            f"{role}-deployment",
            metadata={
                "name": pool.name,
                "namespace": ns.metadata.name,
                "labels": labels,
                # Placeholders serve nobody: `pulumi up` need not wait for them to run (a placeholder that
                # waits for a node would otherwise hold the update for the node's 20-25 minutes).
                "annotations": {"pulumi.com/skipAwait": "true"},
            },
            spec=spec,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.gpu_ready)),
        )
        self.placeholders[pool.pool] = deployment.metadata.name
        if h.schedules:
            k8s.apiextensions.CustomResource(
                f"{role}-scaledobject",
                api_version="keda.sh/v1alpha1",
                kind="ScaledObject",
                metadata={"name": pool.name, "namespace": ns.metadata.name, "labels": labels},
                spec=placeholder_scaled_object_spec(h, pool.pod_gpus, pool.name),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[deployment, *args.scaler_ready]),
            )
