"""Keys set where they cannot take effect: refused rather than silently ignored."""

from __future__ import annotations

from stackconfig.errors import Problem
from stackconfig.stack import StackConfig
from stackconfig.system_pool import SystemPoolConfig
from stackconfig.workloads import WorkloadConfig


def inert_key_problems(cfg: StackConfig) -> list[Problem]:
    out: list[Problem] = []
    s = cfg.system_pool
    if not s.enabled:
        for name in sorted(s.model_fields_set - {"enabled"}):
            key = SystemPoolConfig.model_fields[name].alias or name
            out.append(Problem(f"systemPool.{key}", getattr(s, name),
                               "is set, but systemPool.enabled is false, so no system pool is created",
                               f"drop systemPool.{key}, or set systemPool.enabled to true"))
    m = cfg.monitoring
    if m.storage_class is not None and m.storage_size is None:
        out.append(Problem("monitoring.storageClass", m.storage_class,
                           "is set without monitoring.storageSize, so Prometheus gets no volume to put it on",
                           "set monitoring.storageSize (e.g. '100Gi'), or drop monitoring.storageClass"))
    return out + [p for i, w in enumerate(cfg.workloads) for p in inert_workload_problems(f"workloads[{i}]", w)]


def inert_workload_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    """One workload's, apart from its other rules: reading which keys it was given reads all of them."""
    if "cooldown_period" in w.model_fields_set and w.min_replicas > 0:
        return [Problem(f"{key}.cooldownPeriod", w.cooldown_period, "only applies when scaling to zero (KEDA's "
                        f"cooldownPeriod), but minReplicas is {w.min_replicas}",
                        "drop cooldownPeriod, or set minReplicas to 0 with a wakeTrigger")]
    return []
