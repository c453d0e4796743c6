"""The whole stack's config: every section, the numbers derived across sections, and the secret keys it uses."""

from __future__ import annotations

from pydantic import Field

from stackconfig.alerting import (
    AlertingConfig,
    HeartbeatConfig,
    PagerDutyReceiverConfig,
    SlackReceiverConfig,
    WebhookReceiverConfig,
)
from stackconfig.charts import ChartsConfig
from stackconfig.cluster import ClusterConfig, ExistingClusterConfig
from stackconfig.gpu_pool import GpuPoolConfig, HeadroomConfig, ScheduleConfig
from stackconfig.monitoring import MonitoringConfig
from stackconfig.system_pool import SystemPoolConfig
from stackconfig.values import Model
from stackconfig.what_if import WhatIfConfig
from stackconfig.workloads import (
    ImagePullSecretConfig,
    MetricsConfig,
    ModelCacheConfig,
    PortConfig,
    ProbesConfig,
    ResourcesConfig,
    ServingTriggerConfig,
    WakeTriggerConfig,
    WorkloadConfig,
)


class StackConfig(Model):
    """A stack file's project keys, validated; what `__main__.py` and every tool work from."""

    cluster: ClusterConfig
    gpu_pool: GpuPoolConfig = Field(default_factory=GpuPoolConfig)
    system_pool: SystemPoolConfig = Field(default_factory=SystemPoolConfig)
    charts: ChartsConfig = Field(default_factory=ChartsConfig)
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig)
    workloads: list[WorkloadConfig] = Field(default_factory=list)
    #: Protect the cluster from `pulumi destroy` and replacements (on in production).
    protect: bool = False
    alerting: AlertingConfig = Field(default_factory=AlertingConfig)  # serving (issue 10)
    #: Demand trace and conversion for `python -m capacity` (ignored by the Pulumi program).
    what_if: WhatIfConfig | None = None

    @property
    def max_gpus(self) -> int:
        return self.gpu_pool.max_nodes * self.gpu_pool.gpus

    @property
    def headroom_pod_gpus(self) -> int:
        """GPUs per placeholder pod: `gpuPool.headroom.podGpus`, else the largest `gpusPerPod` (1 without
        workloads), so that any workload pod fits the slot one placeholder frees."""
        h = self.gpu_pool.headroom
        if h is not None and h.pod_gpus is not None:
            return h.pod_gpus
        return max((w.gpus_per_pod for w in self.workloads), default=1)


#: Accepted keys per section, for "did you mean" hints on typos.
KNOWN_KEYS: dict[str, list[str]] = {
    "": StackConfig.keys(),
    "cluster": ClusterConfig.keys(),
    "cluster.existing": ExistingClusterConfig.keys(),
    "gpuPool": GpuPoolConfig.keys(),
    "systemPool": SystemPoolConfig.keys(),
    "charts": ChartsConfig.keys(),
    "monitoring": MonitoringConfig.keys(),
    "workloads[]": WorkloadConfig.keys(),
    "workloads[].wakeTrigger": WakeTriggerConfig.keys(),
    "workloads[].requests": ResourcesConfig.keys(),
    "workloads[].schedules[]": ScheduleConfig.keys(),
    "gpuPool.headroom": HeadroomConfig.keys(),
    "gpuPool.headroom.schedules[]": ScheduleConfig.keys(),
    # serving (issue 10)
    "workloads[].ports[]": PortConfig.keys(),
    "workloads[].probes": ProbesConfig.keys(),
    "workloads[].imagePullSecret": ImagePullSecretConfig.keys(),
    "workloads[].modelCache": ModelCacheConfig.keys(),
    "workloads[].metrics": MetricsConfig.keys(),
    "workloads[].triggers[]": ServingTriggerConfig.keys(),
    "alerting": AlertingConfig.keys(),
    "alerting.webhook": WebhookReceiverConfig.keys(),
    "alerting.slack": SlackReceiverConfig.keys(),
    "alerting.pagerduty": PagerDutyReceiverConfig.keys(),
    "alerting.heartbeat": HeartbeatConfig.keys(),
    "whatIf": WhatIfConfig.keys(),
}


def secret_config_keys(cfg: StackConfig) -> list[str]:
    """Every `secrets:<key>` the stack refers to (env, registry passwords, alert receivers, an existing cluster's
    kubeconfig), sorted."""
    keys = {k for w in cfg.workloads for k in w.secret_env.values()}
    if cfg.cluster.existing is not None and cfg.cluster.existing.kubeconfig_secret:
        keys.add(cfg.cluster.existing.kubeconfig_secret)
    keys |= {w.image_pull_secret.password_secret for w in cfg.workloads if w.image_pull_secret}
    keys |= set(cfg.alerting.secret_keys)
    return sorted(keys)
