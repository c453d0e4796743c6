"""A workload's objects (a GPU Deployment, the KEDA ScaledObject that scales it, what it serves) for the component
package's GpuWorkload (gpu_platform/workload.py), and the platform's WorkloadNamespaces and WorkloadPriority. Every
object's spec comes from renderers/workload_specs.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kube import namespace
from renderers import workload_specs as specs
from renderers.headroom_specs import workload_priority_class_args
from renderers.placement import PoolPlacement
from renderers.scaling_triggers import trigger_summary
from stackconfig import WorkloadConfig
from stackconfig.gpu_pool import DEFAULT_PROVISION_MINUTES
from stacknames import GPU_RESOURCE, PLATFORM_LABELS, WORKLOAD_PRIORITY_CLASS


@dataclass(frozen=True)
class GpuWorkloadArgs:
    workload: WorkloadConfig
    namespace: pulumi.Input[str]
    #: The pool's labels, taints and kind; an Output where they come from another stack.
    placement: pulumi.Input[PoolPlacement]
    prometheus_url: pulumi.Input[str]
    #: What the pods need before they can start (the GPU Operator's device plugin).
    gpu_ready: Sequence[pulumi.Resource] = field(default_factory=list)
    #: What the ScaledObject needs: the KEDA release (CRD, operator; destroyed after the SO) and what its
    #: query reads (the Prometheus release).
    scaler_ready: Sequence[pulumi.Resource] = field(default_factory=list)
    #: PriorityClass of the pods (the platform's `gpu-workload`, above the headroom placeholders); the
    #: Output of the class's name, so the Deployment waits for the class its pods' admission needs.
    priority_class: pulumi.Input[str] | None = None
    # --- serving (issue 10): secret values resolved by __main__ from the stack's secret config ---
    #: ENV_NAME -> secret value (a secret Output), for `workload.secret_env`.
    secret_env: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    #: The registry password for `workload.image_pull_secret` (a secret Output).
    registry_password: pulumi.Input[str] | None = None
    #: The pool's `provisionMinutes`: a pod may first wait for a new node (renderers/workload_specs.py
    #: rollout_timeouts, progress_deadline_seconds).
    provision_minutes: int = DEFAULT_PROVISION_MINUTES

def workload_summary(deployment: k8s.apps.v1.Deployment, scaled_object: k8s.apiextensions.CustomResource,
                     service: k8s.core.v1.Service | None, pool: str | None) -> pulumi.Output[dict[str, Any]]:
    """The workload's entry of the `workloads` stack output (docs/outputs.md), read from its objects."""
    return pulumi.Output.all(
        deployment.metadata, deployment.spec, scaled_object.metadata, scaled_object.spec,
        service.spec.ports[0].port if service is not None else None,
    ).apply(lambda v: {**_summary(*v), "pool": pool})


def _summary(meta: Mapping[str, Any], spec: Mapping[str, Any], scaled_meta: Mapping[str, Any],
             scaled: Mapping[str, Any], port: int | None) -> dict[str, Any]:
    """Where the workload runs and what scales it, from its objects (typed outputs arrive as mappings)."""
    name, namespace = meta["name"], meta["namespace"]
    return {
        "namespace": namespace,
        "deployment": name,
        "scaledObject": scaled_meta["name"],
        "hpa": scaled["advanced"]["horizontalPodAutoscalerConfig"]["name"],
        "triggers": trigger_summary(scaled["triggers"]),
        "gpusPerPod": int(spec["template"]["spec"]["containers"][0]["resources"]["limits"][GPU_RESOURCE]),
        "minReplicas": scaled["minReplicaCount"],
        "maxReplicas": scaled["maxReplicaCount"],
        "service": f"http://{name}.{namespace}.svc.cluster.local:{port}" if port is not None else None,
    }


def workload_children(parent: pulumi.Resource, name: str, args: GpuWorkloadArgs) -> tuple[
        k8s.apps.v1.Deployment, k8s.apiextensions.CustomResource, k8s.core.v1.Service | None]:
    """The workload's objects under `parent` (the package's GpuWorkload). `args.placement` may be an Output (a
    consumer's pool labels and taints read from the platform stack): the specs it shapes are rendered when known."""
    w = args.workload
    labels = specs.labels(w)
    pod_inputs, service = serving_children(parent, name, args, labels)
    placement = pulumi.Output.from_input(args.placement)
    create_minutes, update_minutes = specs.rollout_timeouts(w, args.provision_minutes)

    def deployment_spec(pl: PoolPlacement, priority_class: str | None) -> dict[str, Any]:
        spec = specs.deployment_spec(w, pl, args.provision_minutes)
        if priority_class is not None:
            spec["template"]["spec"]["priorityClassName"] = priority_class
        return spec

    deployment = k8s.apps.v1.Deployment(
        f"{name}-deployment",
        metadata={"name": w.name, "namespace": args.namespace, "labels": labels},
        spec=pulumi.Output.all(placement, args.priority_class).apply(lambda v: deployment_spec(v[0], v[1])),
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=[*args.gpu_ready, *pod_inputs],
            # A pod may wait for a bare-metal node and a multi-GB image; an update replaces the pods round by
            # round (renderers/workload_specs.py rollout_timeouts).
            custom_timeouts=pulumi.CustomTimeouts(create=f"{create_minutes}m", update=f"{update_minutes}m"),
        ),
    )
    k8s.policy.v1.PodDisruptionBudget(
        f"{name}-pdb",
        metadata={"name": w.name, "namespace": args.namespace, "labels": labels},
        spec=placement.apply(lambda pl: specs.pdb_spec(w, pl)),
        opts=pulumi.ResourceOptions(parent=parent),
    )
    scaled_object = k8s.apiextensions.CustomResource(
        f"{name}-scaledobject",
        api_version="keda.sh/v1alpha1",
        kind="ScaledObject",
        metadata={"name": w.name, "namespace": args.namespace, "labels": labels},
        spec=pulumi.Output.from_input(args.prometheus_url).apply(lambda url: specs.scaled_object_spec(w, url)),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[deployment, *args.scaler_ready, *args.gpu_ready]),
    )
    return deployment, scaled_object, service


def serving_children(parent: pulumi.Resource, name: str, args: GpuWorkloadArgs, labels: dict[str, str]
                     ) -> tuple[list[pulumi.Resource], k8s.core.v1.Service | None]:
    """Secrets the pods read, their Service and PodMonitor; returns what the pods need first, and the Service."""
    w = args.workload
    child = pulumi.ResourceOptions(parent=parent)
    needed: list[pulumi.Resource] = []
    missing = sorted(set(w.secret_env) ^ set(args.secret_env))
    if missing:
        raise ValueError(f"workload {w.name}: secret values for {missing} do not match secretEnv")
    if w.secret_env:
        needed.append(k8s.core.v1.Secret(
            f"{name}-env-secret",
            metadata={"name": specs.env_secret_name(w.name), "namespace": args.namespace, "labels": labels},
            type="Opaque",
            string_data={k: pulumi.Output.secret(v) for k, v in sorted(args.secret_env.items())},
            opts=child,
        ))
    if w.image_pull_secret is not None:
        if args.registry_password is None:
            raise ValueError(f"workload {w.name}: imagePullSecret needs a registry password")
        reg = w.image_pull_secret
        needed.append(k8s.core.v1.Secret(
            f"{name}-registry-secret",
            metadata={"name": specs.registry_secret_name(w.name), "namespace": args.namespace, "labels": labels},
            type="kubernetes.io/dockerconfigjson",
            string_data={".dockerconfigjson": pulumi.Output.secret(args.registry_password).apply(
                lambda pw: specs.dockerconfigjson(reg.server, reg.username, pw))},
            opts=child,
        ))
    service = None
    if w.ports:
        service = k8s.core.v1.Service(
            f"{name}-service",
            metadata={"name": w.name, "namespace": args.namespace, "labels": labels},
            spec=specs.service_spec(w),
            opts=child,
        )
    if w.metrics is not None:
        k8s.apiextensions.CustomResource(
            f"{name}-podmonitor",
            api_version="monitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata={"name": w.name, "namespace": args.namespace, "labels": labels},
            spec=specs.pod_monitor_spec(w),
            # The PodMonitor CRD comes with kube-prometheus-stack (in scaler_ready).
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(args.scaler_ready)),
        )
    return needed, service


class WorkloadNamespaces(pulumi.ComponentResource):
    """One namespace per distinct workload namespace (several workloads may share one) and per team; a team's is
    `retained`: removing the team from the stack revokes its access, and leaves what its own stack runs there."""

    names: dict[str, pulumi.Output[str]]

    def __init__(
        self,
        name: str,
        namespaces: Sequence[str],
        opts: pulumi.ResourceOptions | None = None,
        pod_security: Mapping[str, str] | None = None,
        retained: Sequence[str] = (),
    ) -> None:
        super().__init__("gpu-platform:workloads:WorkloadNamespaces", name, None, opts)
        levels = dict(pod_security or {})
        self.names = {
            ns: namespace(f"{name}-{ns}", ns, self, levels.get(ns, "baseline"), ns in retained).metadata.name
            for ns in dict.fromkeys(namespaces)
        }
        self.register_outputs({"names": list(self.names.values())})


class WorkloadPriority(pulumi.ComponentResource):
    """The workloads' PriorityClass, created whether or not headroom is set, so that turning headroom on
    later does not change (and roll) every GPU workload's pod template."""

    priority_class: k8s.scheduling.v1.PriorityClass

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:workloads:WorkloadPriority", name, None, opts)
        self.priority_class = k8s.scheduling.v1.PriorityClass(
            f"{name}-class",
            metadata={"name": WORKLOAD_PRIORITY_CLASS, "labels": dict(PLATFORM_LABELS)},
            **workload_priority_class_args(),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"name": self.priority_class.metadata.name})
