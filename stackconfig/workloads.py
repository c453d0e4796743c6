"""`workloads`: the GPU Deployments KEDA scales, with what they serve (ports, probes, secrets, caches, triggers)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from stackconfig.gpu_pool import MAX_GPUS_PER_NODE, MAX_POOL_GPUS, ScheduleConfig
from stackconfig.serving import ServingConfig
from stackconfig.serving import seconds as serving_seconds
from stackconfig.values import (
    AbsPath,
    CpuQuantity,
    DnsLabel,
    Env,
    EnvName,
    HttpPath,
    Image,
    MemoryQuantity,
    MetricName,
    Model,
    Percent,
    PortName,
    Quantity,
    RegistryHost,
    SecretKey,
    ShortDuration,
    WorkloadName,
)
from stacknames import DEFAULT_WORKLOAD_NAMESPACE, SERVING_DRAIN_SECONDS

#: With a serving profile the GPU trigger is a guardrail: at 100 % per GPU its proposal never exceeds the replicas
#: running (utilisation cannot pass 100), so it cannot drive a scale-up, only hold replicas whose GPUs are full.
GPU_GUARDRAIL_UTILIZATION = 100.0


class WakeTriggerConfig(Model):
    """A demand signal (queue length, request rate) that can wake a workload scaled to zero.

    GPU utilisation cannot: with no pods there are no GPU series (keda-gpu-scaler #142).
    """

    query: str = Field(min_length=1)
    threshold: float = Field(gt=0)
    activation_threshold: float = Field(default=0, ge=0)


class PortConfig(Model):
    """A container port, also exposed by the workload's ClusterIP Service."""

    name: PortName
    port: int = Field(ge=1, le=65535)


class ProbesConfig(Model):
    """HTTP checks: startup (model loading), readiness (gates traffic and rollouts), liveness (restarts)."""

    #: Name of one of the workload's `ports`.
    port: PortName
    #: Readiness and liveness path (vLLM: /health).
    path: HttpPath = "/health"
    #: How long loading may take before the container is restarted: a 16 GB model from a cold cache, a
    #: CUDA-graph capture and a torch.compile take minutes.
    startup_minutes: int = Field(default=30, ge=1, le=120)
    period_seconds: int = Field(default=10, ge=1, le=300)
    #: Failed readiness checks before the pod leaves the Service; liveness restarts after three times as many.
    failure_threshold: int = Field(default=3, ge=1, le=30)


class ImagePullSecretConfig(Model):
    """Credentials for a private registry; the password (or token) comes from secret config."""

    server: RegistryHost
    username: str = Field(min_length=1)
    password_secret: SecretKey


class ModelCacheConfig(Model):
    """Where model weights persist between pods, so that a new pod does not download them again.

    `hostPath`: a directory on the node's local NVMe (bare-metal GPU nodes have it); fastest, one copy per
    node, needs the namespace at Pod Security `privileged`. `nfs`: a Gcore File Share mounted by every pod;
    one copy for the pool, reads over the network. `pvc`: an existing PersistentVolumeClaim (ReadWriteMany
    for more than one pod), e.g. bound to a File Share through a CSI driver.
    """

    type: Literal["hostPath", "nfs", "pvc"]
    mount_path: AbsPath = "/models"
    #: On the node: its root disk, which is local NVMe on Gcore bare-metal GPU flavors.
    host_path: AbsPath = "/var/lib/model-cache"
    server: str | None = None
    path: AbsPath | None = None
    claim_name: DnsLabel | None = None
    read_only: bool = False


class MetricsConfig(Model):
    """The workload's own Prometheus endpoint, scraped through a PodMonitor."""

    port: PortName
    path: HttpPath = "/metrics"
    interval: ShortDuration = "15s"


class ServingTriggerConfig(Model):
    """A KEDA trigger on one of the workload's own series, summed over exactly its pods."""

    name: DnsLabel
    metric: MetricName
    #: Target value per replica (AverageValue), e.g. 5 waiting requests per pod.
    threshold: float = Field(gt=0)
    window: ShortDuration = "1m"


class ResourcesConfig(Model):
    cpu: CpuQuantity = None
    memory: MemoryQuantity = None


class WorkloadConfig(Model):
    """A GPU Deployment scaled by KEDA on its GPUs' utilisation."""

    name: WorkloadName
    namespace: DnsLabel = DEFAULT_WORKLOAD_NAMESPACE
    #: The GPU pool the pods run on, by its name (`gpuPools[].name`); required when the stack has several pools.
    pool: str | None = None
    #: The workload tolerates losing a pod at any moment (batch, retried requests): required on a spot pool, whose
    #: nodes Gcore may reclaim.
    interruptible: bool = False
    image: Image
    command: list[str] = Field(default_factory=list)
    args: list[str] = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    requests: ResourcesConfig = Field(default_factory=ResourcesConfig)
    gpus_per_pod: int = Field(default=1, ge=1, le=MAX_GPUS_PER_NODE)
    min_replicas: int = Field(default=1, ge=0, le=MAX_POOL_GPUS)
    max_replicas: int = Field(ge=1, le=MAX_POOL_GPUS)
    #: Average utilisation per GPU (%) the workload is scaled to hold.
    target_utilization: Percent = Field(default=60, gt=0, le=100)
    polling_interval: int = Field(default=15, ge=5, le=300)
    #: Seconds of lower recommendations before the HPA removes replicas (GPU pods start slowly).
    scale_down_stabilization_seconds: int = Field(default=300, ge=0, le=3600)
    #: Seconds before scaling from 1 to 0 (only with minReplicas: 0).
    cooldown_period: int = Field(default=300, ge=0)
    #: Replicas to hold while the metric is unavailable (at least the current count is kept).
    fallback_replicas: int | None = Field(default=None, ge=0, le=MAX_POOL_GPUS)
    fallback_failure_threshold: int = Field(default=3, ge=1)
    termination_grace_period_seconds: int = Field(default=60, ge=0, le=3600)
    wake_trigger: WakeTriggerConfig | None = None
    #: Windows of minimum replicas (KEDA cron triggers beside the utilisation trigger).
    schedules: list[ScheduleConfig] = Field(default_factory=list)
    # --- serving (issue 10) ---
    ports: list[PortConfig] = Field(default_factory=list)
    probes: ProbesConfig | None = None
    #: ENV_NAME -> key in the `secrets:` config namespace (set with `pulumi config set --secret`).
    secret_env: dict[EnvName, SecretKey] = Field(default_factory=dict)
    image_pull_secret: ImagePullSecretConfig | None = None
    #: Size of the memory-backed /dev/shm (vLLM, NCCL, PyTorch data loaders); counts against memory.
    shm_size: Quantity | None = None
    model_cache: ModelCacheConfig | None = None
    metrics: MetricsConfig | None = None
    triggers: list[ServingTriggerConfig] = Field(default_factory=list)
    # --- serving profile (issue 21) ---
    #: Scale on the engine's latency, queue and KV cache; GPU utilisation becomes a guardrail.
    serving: ServingConfig | None = None

    @property
    def gpu_target_utilization(self) -> float:
        """The GPU trigger's per-GPU target: `targetUtilization`, or with a serving profile the guardrail at 100 %
        (it never asks for more replicas than run, and holds those whose GPUs are saturated)."""
        return GPU_GUARDRAIL_UTILIZATION if self.serving is not None else self.target_utilization

    @property
    def prestop_seconds(self) -> int:
        """How long a removed serving pod keeps answering before SIGTERM: its address leaves the Service everywhere
        (SERVING_DRAIN_SECONDS), then, with a serving profile, the longest request in flight finishes."""
        if self.serving is None:
            return SERVING_DRAIN_SECONDS
        return SERVING_DRAIN_SECONDS + math.ceil(serving_seconds(self.serving.longest_request))

    @property
    def fallback(self) -> int:
        return self.fallback_replicas if self.fallback_replicas is not None else max(self.min_replicas, 1)
