"""What a GPU workload's objects say: the Deployment, its ScaledObject (and the HPA KEDA makes of it), Service,
PodMonitor and PodDisruptionBudget, rendered from the workload's config.

The Deployment never sets `spec.replicas`: KEDA's HPA owns the scale, and a value here would reset it on every
`pulumi up` (Kubernetes docs, "Horizontal Pod Autoscaling", "Migrating Deployments and StatefulSets to horizontal
autoscaling"). The ScaledObject's triggers are renderers/scaling_triggers.py's; missing data holds the replicas
(kedacore/keda-docs content/docs/2.20/reference/scaledobject-spec.md, `fallback`). Pure functions:
components/workload.py creates the resources, capacity/config.py reads the same ScaledObject for the what-if.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Sequence
from typing import Any

from renderers import promql
from renderers.placement import PoolPlacement
from renderers.scaling_triggers import triggers
from stackconfig import ModelCacheConfig, ProbesConfig, WorkloadConfig
from stackconfig.gpu_pool import DEFAULT_PROVISION_MINUTES
from stacknames import GPU_RESOURCE, NAME_LABEL, PLATFORM_LABELS


def selector(w: WorkloadConfig) -> dict[str, str]:
    """The label that selects exactly this workload's pods (Deployment, Service, PodMonitor, PDB)."""
    return {NAME_LABEL: w.name}


def labels(w: WorkloadConfig) -> dict[str, str]:
    """The labels of every object of the workload."""
    return {NAME_LABEL: w.name, **PLATFORM_LABELS}


#: A rolling update replaces a quarter of the replicas at a time (Kubernetes rounds down, and takes one when that is
#: 0: pkg/controller/deployment/util `ResolveFenceposts`), with no surge: a surge pod needs a free GPU that a full
#: pool does not have. One pod at a time would keep more capacity, but 16 pods with a 30-minute start-up budget
#: would take 8 hours; a quarter keeps three quarters serving and bounds the rollout to at most 7 rounds.
MAX_UNAVAILABLE_PERCENT = 25
#: Pulling a multi-GB image and starting the container, before the startup probe's budget begins.
IMAGE_PULL_MINUTES = 10


def rollout_rounds(max_replicas: int) -> int:
    """The most rounds of a rolling update at any replica count up to maxReplicas (the HPA decides which)."""
    return max(math.ceil(r / max(1, r * MAX_UNAVAILABLE_PERCENT // 100)) for r in range(1, max_replicas + 1))


def pod_start_minutes(w: WorkloadConfig) -> int:
    """One round: the old pod's graceful stop frees its GPU, the new one pulls and starts, then its startup probe's
    budget (`probes.startupMinutes`) runs out at the latest."""
    startup = w.probes.startup_minutes if w.probes is not None else 0
    return math.ceil(w.termination_grace_period_seconds / 60) + IMAGE_PULL_MINUTES + startup


def rollout_timeouts(w: WorkloadConfig, provision_minutes: int) -> tuple[int, int]:
    """Minutes `pulumi up` waits for the Deployment on create and on update (pulumi-kubernetes honours
    `custom_timeouts`; its default of 10 minutes would fail while a GPU node boots).

    Both may first wait for a new bare-metal node (`gpuPool.provisionMinutes`). Create starts every pod at once:
    one round. Update replaces the pods round by round (`rollout_rounds`), so a timeout that ignores them reports a
    failure while the rollout goes on.
    """
    create = provision_minutes + pod_start_minutes(w)
    return create, provision_minutes + rollout_rounds(w.max_replicas) * pod_start_minutes(w)


def progress_deadline_seconds(w: WorkloadConfig, provision_minutes: int) -> int:
    """The Deployment's own deadline without progress (Kubernetes' default 600 s): one round, a node included. A
    pod that loads for 30 minutes would otherwise mark the rollout failed (ProgressDeadlineExceeded), which the
    rollout alerts and `pulumi up` read as a failure."""
    return (provision_minutes + pod_start_minutes(w)) * 60


def scaled_object_spec(w: WorkloadConfig, prometheus_url: str) -> dict[str, Any]:
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
                "name": promql.hpa_name(w.name),
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
        "triggers": triggers(w, prometheus_url),
    }
    if w.min_replicas == 0:
        spec["cooldownPeriod"] = w.cooldown_period
    return spec


def deployment_spec(
    w: WorkloadConfig, placement: PoolPlacement, provision_minutes: int = DEFAULT_PROVISION_MINUTES
) -> dict[str, Any]:
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
    pod_extra = serve_container(w, container)
    return {
        # No `replicas`: KEDA's HPA owns the scale.
        "selector": {"matchLabels": selector(w)},
        # A surge pod needs a free GPU that a full pool does not have: replace a quarter at a time instead.
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxSurge": 0, "maxUnavailable": f"{MAX_UNAVAILABLE_PERCENT}%"}},
        "progressDeadlineSeconds": progress_deadline_seconds(w, provision_minutes),
        "template": {
            "metadata": {"labels": labels(w)},
            "spec": {
                "containers": [container],
                "nodeSelector": dict(placement.labels),
                "tolerations": placement.tolerations(),
                "terminationGracePeriodSeconds": w.termination_grace_period_seconds,
                **pod_extra,
            },
        },
    }


# --- serving (issue 10): ports, probes, secrets, shared memory, model cache, own metrics ------------

#: Where the model cache sends Hugging Face downloads (vLLM, transformers): HF_HOME under the cache mount.
HF_HOME = "HF_HOME"


def env_secret_name(workload: str) -> str:
    return f"{workload}-env"


def registry_secret_name(workload: str) -> str:
    return f"{workload}-registry"


def startup_failure_threshold(probes: ProbesConfig) -> int:
    """Startup checks allowed before a restart: the budget `startupMinutes` in probe periods."""
    return math.ceil(probes.startup_minutes * 60 / probes.period_seconds)


def probe_specs(p: ProbesConfig) -> dict[str, Any]:
    """Startup holds off the other two while the model loads; readiness gates Service traffic and the
    rollout (`maxUnavailable: 1` waits for Ready); liveness restarts a wedged server, slowly."""
    check = {"httpGet": {"path": p.path, "port": p.port}, "periodSeconds": p.period_seconds, "timeoutSeconds": 5}
    return {
        "startupProbe": {**check, "failureThreshold": startup_failure_threshold(p)},
        "readinessProbe": {**check, "failureThreshold": p.failure_threshold, "successThreshold": 1},
        "livenessProbe": {**check, "failureThreshold": p.failure_threshold * 3},
    }


def cache_volume(c: ModelCacheConfig) -> dict[str, Any]:
    """The model cache as a pod volume (kinds explained on ModelCacheConfig)."""
    if c.type == "hostPath":
        return {"name": "model-cache", "hostPath": {"path": c.host_path, "type": "DirectoryOrCreate"}}
    if c.type == "nfs":
        return {"name": "model-cache", "nfs": {"server": c.server, "path": c.path, "readOnly": c.read_only}}
    return {"name": "model-cache", "persistentVolumeClaim": {"claimName": c.claim_name, "readOnly": c.read_only}}


def serve_container(w: WorkloadConfig, container: dict[str, Any]) -> dict[str, Any]:
    """Add ports, probes, secret env, /dev/shm and the model cache to `container`; return pod-level fields."""
    pod: dict[str, Any] = {}
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if w.ports:
        container["ports"] = [{"name": p.name, "containerPort": p.port, "protocol": "TCP"} for p in w.ports]
        # Scale-down and rollouts then drop no request that was already routed to the pod: SIGTERM only follows
        # the preStop hook, while the pod's address leaves the Service's EndpointSlices and every node's proxy
        # (kubernetes.io/docs/concepts/containers/container-lifecycle-hooks; the `sleep` action needs no shell in
        # the image, Kubernetes ≥ 1.30).
        # With a serving profile it also waits for the longest request in flight (serving.longestRequest).
        container["lifecycle"] = {"preStop": {"sleep": {"seconds": w.prestop_seconds}}}
    if w.probes is not None:
        container.update(probe_specs(w.probes))
    env = list(container.get("env", []))
    env += [
        {"name": k, "valueFrom": {"secretKeyRef": {"name": env_secret_name(w.name), "key": k}}}
        for k in sorted(w.secret_env)
    ]
    if w.shm_size is not None:
        # The container runtime's /dev/shm is 64 MiB; NCCL and PyTorch workers need far more.
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": w.shm_size}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    if w.model_cache is not None:
        volumes.append(cache_volume(w.model_cache))
        mounts.append({"name": "model-cache", "mountPath": w.model_cache.mount_path,
                       "readOnly": w.model_cache.read_only})
        if HF_HOME not in w.env:
            env.append({"name": HF_HOME, "value": f"{w.model_cache.mount_path}/huggingface"})
    if env:
        container["env"] = env
    if mounts:
        container["volumeMounts"] = mounts
        pod["volumes"] = volumes
    if w.image_pull_secret is not None:
        pod["imagePullSecrets"] = [{"name": registry_secret_name(w.name)}]
    return pod


def dockerconfigjson(server: str, username: str, password: str) -> str:
    """The `.dockerconfigjson` of a `kubernetes.io/dockerconfigjson` Secret (kubectl create secret docker-registry)."""
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    return json.dumps({"auths": {server: {"username": username, "password": password, "auth": auth}}})


def pod_security_level(workloads: Sequence[WorkloadConfig], namespace_name: str) -> str:
    """`privileged` where a workload mounts a hostPath model cache (baseline forbids hostPath volumes)."""
    uses_host = any(w.namespace == namespace_name and w.model_cache is not None and w.model_cache.type == "hostPath"
                    for w in workloads)
    return "privileged" if uses_host else "baseline"


def pdb_spec(w: WorkloadConfig, placement: PoolPlacement | None = None) -> dict[str, Any]:
    """Voluntary disruptions (autoscaler drains) take one GPU pod at a time.

    On a spot pool a node's pods go together: Gcore reclaims the whole server (its notice gives a day to drain it,
    then the node is deleted with whatever still runs there: Gcore docs, "Spot Bare Metal GPU",
    https://gcore.com/docs/edge-ai/ai-infrastructure/spot-bare-metal-gpu). A budget of one pod would hold the drain
    of a reclaimed node for a node provisioning per pod; so the budget is a node's worth of the workload's pods, and
    pods that are not Ready may always be evicted (`unhealthyPodEvictionPolicy: AlwaysAllow`, GA in Kubernetes
    1.31), so a pod still loading its model never blocks the drain."""
    spec: dict[str, Any] = {"maxUnavailable": 1, "selector": {"matchLabels": selector(w)}}
    if placement is not None and placement.spot:
        spec["maxUnavailable"] = max(1, placement.gpus_per_node // w.gpus_per_pod)
        spec["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
    return spec


def service_spec(w: WorkloadConfig) -> dict[str, Any]:
    """A ClusterIP Service over the workload's ports (only with `ports`)."""
    return {
        "type": "ClusterIP",
        "selector": selector(w),
        "ports": [{"name": p.name, "port": p.port, "targetPort": p.name, "protocol": "TCP"} for p in w.ports],
    }


def pod_monitor_spec(w: WorkloadConfig) -> dict[str, Any]:
    """The workload's own metrics endpoint (only with `metrics`).

    PodMonitor, not ServiceMonitor: every pod is scraped whether Ready or not (a loading server's queue is still
    worth seeing), and Prometheus selects PodMonitors in every namespace (renderers/chart_values.py:
    podMonitorSelectorNilUsesHelmValues false).
    """
    assert w.metrics is not None
    return {
        "selector": {"matchLabels": selector(w)},
        "podMetricsEndpoints": [{"port": w.metrics.port, "path": w.metrics.path, "interval": w.metrics.interval}],
    }

