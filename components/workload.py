"""GpuWorkload: a GPU Deployment and the KEDA ScaledObject that scales it on its GPUs' utilisation.

The Deployment never sets `spec.replicas`: KEDA's HPA owns the scale, and a value here would reset it
on every `pulumi up` (Kubernetes docs, "Horizontal Pod Autoscaling", "Migrating Deployments and StatefulSets to
horizontal autoscaling"). The ScaledObject's trigger is built by components/scaling.py; a broken scrape is an error
with a fallback, never zero load (kedacore/keda pkg/scalers/prometheus_scaler.go, `ignoreNullValues`;
kedacore/keda-docs content/docs/2.20/reference/scaledobject-spec.md, `fallback`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import scaling
from components.kube import PLATFORM_LABELS, namespace, tolerations_for
from stackconfig import WorkloadConfig

GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class PoolPlacement:
    """Where GPU pods go: the pool's node labels (selected) and taints (tolerated)."""

    labels: Mapping[str, str]
    taints: Mapping[str, str]


@dataclass(frozen=True)
class GpuWorkloadArgs:
    workload: WorkloadConfig
    namespace: pulumi.Input[str]
    placement: PoolPlacement
    prometheus_url: pulumi.Input[str]
    #: What the pods need before they can start (the GPU Operator's device plugin).
    gpu_ready: Sequence[pulumi.Resource] = field(default_factory=list)
    #: What the ScaledObject needs: the KEDA release (CRD, operator; destroyed after the SO) and what its
    #: query reads (the Prometheus release).
    scaler_ready: Sequence[pulumi.Resource] = field(default_factory=list)
    #: How long `pulumi up` waits for the Deployment to become ready (see rollout_timeout_minutes).
    rollout_timeout_minutes: int = 45


def rollout_timeout_minutes(provision_minutes: int) -> int:
    """Minutes `pulumi up` waits for a Deployment (pulumi-kubernetes honours `custom_timeouts`, default 10 min).

    Its first pod may wait for a new bare-metal node (`gpuPool.provisionMinutes` until the GPUs are allocatable)
    and then pull a multi-GB image: at least 45 min, and always 10 min more than the pool's provisioning time.
    """
    return max(45, provision_minutes + 10)


def trigger_metadata(w: WorkloadConfig, prometheus_url: str) -> dict[str, str]:
    return {
        "serverAddress": prometheus_url,
        "query": scaling.gpu_utilization_query(w.name, w.namespace),
        "threshold": scaling.format_number(scaling.threshold_value(w.target_utilization, w.gpus_per_pod)),
        "ignoreNullValues": "false",
        "unsafeSsl": "false",
    }


def scaled_object_spec(w: WorkloadConfig, prometheus_url: str) -> dict[str, Any]:
    triggers: list[dict[str, Any]] = [
        {
            "type": "prometheus",
            "name": "gpu-utilization",
            "metricType": "AverageValue",
            "metadata": trigger_metadata(w, prometheus_url),
        }
    ]
    if w.wake_trigger is not None:
        triggers.append(
            {
                "type": "prometheus",
                "name": "demand",
                "metricType": "AverageValue",
                "metadata": {
                    "serverAddress": prometheus_url,
                    "query": w.wake_trigger.query,
                    "threshold": scaling.format_number(w.wake_trigger.threshold),
                    "activationThreshold": scaling.format_number(w.wake_trigger.activation_threshold),
                    "ignoreNullValues": "false",
                    "unsafeSsl": "false",
                },
            }
        )
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": w.name},
        "pollingInterval": w.polling_interval,
        "minReplicaCount": w.min_replicas,
        "maxReplicaCount": w.max_replicas,
        # Missing data holds the current size (or the fallback, if higher) instead of scaling in.
        "fallback": {
            "failureThreshold": w.fallback_failure_threshold,
            "replicas": w.fallback,
            "behavior": "currentReplicasIfHigher",
        },
        "advanced": {
            "horizontalPodAutoscalerConfig": {
                "name": scaling.hpa_name(w.name),
                "behavior": {
                    # GPU pods are expensive to restart: shed one at a time after a calm window.
                    "scaleDown": {
                        "stabilizationWindowSeconds": w.scale_down_stabilization_seconds,
                        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
                    },
                    "scaleUp": {
                        "stabilizationWindowSeconds": 0,
                        "policies": [
                            {"type": "Percent", "value": 100, "periodSeconds": 15},
                            {"type": "Pods", "value": 4, "periodSeconds": 15},
                        ],
                        "selectPolicy": "Max",
                    },
                },
            }
        },
        "triggers": triggers,
    }
    if w.min_replicas == 0:
        spec["cooldownPeriod"] = w.cooldown_period
    return spec


def deployment_spec(w: WorkloadConfig, placement: PoolPlacement) -> dict[str, Any]:
    selector = {"app.kubernetes.io/name": w.name}
    requests: dict[str, str] = {GPU_RESOURCE: str(w.gpus_per_pod)}
    if w.requests.cpu:
        requests["cpu"] = w.requests.cpu
    if w.requests.memory:
        requests["memory"] = w.requests.memory
    container: dict[str, Any] = {
        "name": w.name,
        "image": w.image,
        # Kubernetes rejects a GPU request without the same limit; dcgm-exporter maps GPUs to pods only then.
        "resources": {"limits": {GPU_RESOURCE: str(w.gpus_per_pod)}, "requests": requests},
    }
    if w.command:
        container["command"] = list(w.command)
    if w.args:
        container["args"] = list(w.args)
    if w.env:
        container["env"] = [{"name": k, "value": v} for k, v in sorted(w.env.items())]
    return {
        # No `replicas`: KEDA's HPA owns the scale.
        "selector": {"matchLabels": selector},
        # A surge pod needs a free GPU that a full pool does not have: replace pods one by one instead.
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
        "template": {
            "metadata": {"labels": {**selector, **PLATFORM_LABELS}},
            "spec": {
                "containers": [container],
                "nodeSelector": dict(placement.labels),
                "tolerations": tolerations_for(placement.taints),
                "terminationGracePeriodSeconds": w.termination_grace_period_seconds,
            },
        },
    }


class GpuWorkload(pulumi.ComponentResource):
    deployment: k8s.apps.v1.Deployment
    scaled_object: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: GpuWorkloadArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:workloads:GpuWorkload", name, None, opts)
        w = args.workload
        labels = {"app.kubernetes.io/name": w.name, **PLATFORM_LABELS}
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata={"name": w.name, "namespace": args.namespace, "labels": labels},
            spec=deployment_spec(w, args.placement),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(args.gpu_ready),
                # The first pod may wait for a bare-metal node and a multi-GB image.
                custom_timeouts=pulumi.CustomTimeouts(
                    create=f"{args.rollout_timeout_minutes}m", update=f"{args.rollout_timeout_minutes}m"
                ),
            ),
        )
        # Voluntary disruptions (autoscaler drains) take one GPU pod at a time.
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb",
            metadata={"name": w.name, "namespace": args.namespace, "labels": labels},
            spec={"maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": w.name}}},
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.scaled_object = k8s.apiextensions.CustomResource(
            f"{name}-scaledobject",
            api_version="keda.sh/v1alpha1",
            kind="ScaledObject",
            metadata={"name": w.name, "namespace": args.namespace, "labels": labels},
            spec=pulumi.Output.from_input(args.prometheus_url).apply(lambda url: scaled_object_spec(w, url)),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[self.deployment, *args.scaler_ready, *args.gpu_ready]
            ),
        )
        self.register_outputs(
            {"deployment": self.deployment.metadata["name"], "scaledObject": self.scaled_object.metadata["name"]}
        )


class WorkloadNamespaces(pulumi.ComponentResource):
    """One namespace per distinct workload namespace (several workloads may share one)."""

    names: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, namespaces: Sequence[str], opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:workloads:WorkloadNamespaces", name, None, opts)
        self.names = {
            ns: namespace(f"{name}-{ns}", ns, self).metadata.name for ns in dict.fromkeys(namespaces)
        }
        self.register_outputs({"names": list(self.names.values())})
