"""The whole stack's config: every section, the numbers derived across sections, and the secret keys it uses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args, get_origin

from pydantic import Field

from stackconfig.alerting import (
    AlertingConfig,
)
from stackconfig.charts import ChartsConfig
from stackconfig.cluster import ClusterConfig
from stackconfig.gpu_pool import GpuPoolConfig
from stackconfig.monitoring import MonitoringConfig
from stackconfig.system_pool import SystemPoolConfig
from stackconfig.values import Model
from stackconfig.what_if import WhatIfConfig
from stackconfig.workloads import (
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


def model_fields_within(annotation: Any) -> Iterator[tuple[type[Model], bool]]:
    """The config models inside a field's type, each with whether it is a list's item (`list[X] | None` -> X)."""
    origin = get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, Model):
        yield annotation, False
    elif origin in (list, tuple):
        for arg in get_args(annotation):
            yield from ((m, True) for m, _ in model_fields_within(arg))
    elif origin is not None:  # Union, Optional, Annotated
        for arg in get_args(annotation):
            yield from model_fields_within(arg)


def _sections(model: type[Model], path: str = "") -> Iterator[tuple[str, type[Model]]]:
    yield path, model
    for name, info in model.model_fields.items():
        alias = info.alias or name
        for inner, is_item in model_fields_within(info.annotation):
            child = f"{path}.{alias}" if path else alias
            yield from _sections(inner, f"{child}[]" if is_item else child)


#: Every section of a stack file by its path pattern (list items as `[]`), walked from the models themselves, so a
#: new section is covered by the hints below and by the message sweep (tests/test_config_messages.py).
SECTIONS: dict[str, type[Model]] = dict(_sections(StackConfig))
#: Accepted keys per section, for "did you mean" hints on typos and for what a section should hold.
KNOWN_KEYS: dict[str, list[str]] = {path: model.keys() for path, model in SECTIONS.items()}
#: The keys a section cannot do without, for the fix of a section that is missing.
REQUIRED_KEYS: dict[str, list[str]] = {
    path: [f.alias or n for n, f in model.model_fields.items() if f.is_required()] for path, model in SECTIONS.items()
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
