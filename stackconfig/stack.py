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
from stackconfig.gpu_pool import GpuPoolConfig, GpuPoolItem
from stackconfig.monitoring import MonitoringConfig
from stackconfig.system_pool import SystemPoolConfig
from stackconfig.teams import TeamConfig
from stackconfig.values import Model
from stackconfig.what_if import WhatIfConfig
from stackconfig.workloads import (
    WorkloadConfig,
)


class StackConfig(Model):
    """A stack file's project keys, validated; what `__main__.py` and every tool work from."""

    cluster: ClusterConfig
    #: The GPU pools (issue 19). A stack sets this or, as stacks did before there were several pools, `gpuPool`.
    gpu_pools: list[GpuPoolItem] | None = None
    #: The one GPU pool of older stacks (and the default pool of a stack that sets neither): still accepted, and the
    #: same pool as `gpuPools: [<it>]` (docs/gpu-pools.md, "From gpuPool to gpuPools").
    gpu_pool: GpuPoolConfig | None = None
    system_pool: SystemPoolConfig = Field(default_factory=SystemPoolConfig)
    charts: ChartsConfig = Field(default_factory=ChartsConfig)
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig)
    workloads: list[WorkloadConfig] = Field(default_factory=list)
    #: Protect the cluster from `pulumi destroy` and replacements (on in production).
    protect: bool = False
    alerting: AlertingConfig = Field(default_factory=AlertingConfig)  # serving (issue 10)
    #: The teams that deploy from their own stacks: a namespace, a GPU quota and a credential each.
    teams: list[TeamConfig] = Field(default_factory=list)
    #: Demand trace and conversion for `python -m capacity` (ignored by the Pulumi program).
    what_if: WhatIfConfig | None = None

    @property
    def pools(self) -> list[GpuPoolConfig]:
        """The GPU pools, in the order Gcore is given them: `gpuPools`, else the one `gpuPool` (or its defaults)."""
        if self.gpu_pools is not None:
            return list(self.gpu_pools)
        return [self.gpu_pool if self.gpu_pool is not None else GpuPoolConfig()]

    @property
    def pool_keys(self) -> list[str]:
        """Each pool's key in the stack file, for the messages: `gpuPools[i]`, or `gpuPool`."""
        if self.gpu_pools is not None:
            return [f"gpuPools[{i}]" for i in range(len(self.gpu_pools))]
        return ["gpuPool"]

    def pool_key(self, pool: GpuPoolConfig) -> str:
        return self.pool_keys[self._pool_index(pool)]

    def _pool_index(self, pool: GpuPoolConfig) -> int:
        return next(i for i, p in enumerate(self.pools) if p is pool or p == pool)

    def pool_of(self, w: WorkloadConfig) -> GpuPoolConfig | None:
        """The pool a workload runs on: the one its `pool` names, or with no name the only pool (None: it names no
        pool the stack has, or none of several; the rules refuse that)."""
        pools = self.pools
        if w.pool is None:
            return pools[0] if len(pools) == 1 else None
        return next((p for p in pools if p.name == w.pool), None)

    def workloads_on(self, pool: GpuPoolConfig) -> list[WorkloadConfig]:
        """The workloads that run on `pool`, in stack-file order."""
        return [w for w in self.workloads if self.pool_of(w) == pool]

    def first_pool(self, pool: GpuPoolConfig) -> bool:
        """Whether `pool` is the first GPU pool, which keeps the names a one-pool stack had (stacknames
        `placeholder_name`)."""
        return self._pool_index(pool) == 0

    @property
    def max_gpus(self) -> int:
        """GPUs of every GPU pool at maxNodes."""
        return sum(p.max_nodes * p.gpus for p in self.pools)

    def headroom_pod_gpus(self, pool: GpuPoolConfig) -> int:
        """GPUs per placeholder pod of `pool`: its `headroom.podGpus`, else the largest `gpusPerPod` of the workloads
        on it (1 without workloads), so that any of its workloads' pods fits the slot one placeholder frees."""
        h = pool.headroom
        if h is not None and h.pod_gpus is not None:
            return h.pod_gpus
        return max((w.gpus_per_pod for w in self.workloads_on(pool)), default=1)


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
