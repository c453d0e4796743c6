"""The stack outputs: the contract other stacks read through `pulumi.StackReference` (docs/outputs.md).

`stack_outputs` builds them, under their contract names, from the config and the components `__main__.py` wired;
`__main__.py` exports them. The values that follow from config alone are plain functions
(`gpu_pool_output`, `gpu_pools_output`, `workload_outputs`, `headroom_output`), so the tests read the same.
"""

from __future__ import annotations

from typing import Any

from components.cluster import GpuCluster
from components.existing_cluster import ExistingCluster
from components.gpu_operator import GpuOperator
from components.keda import Keda
from components.monitoring import Monitoring
from components.workload import WorkloadNamespaces, WorkloadPriority
from renderers import promql, workload_specs
from renderers.headroom_specs import max_replicas, replicas
from renderers.scaling_triggers import scaling_triggers
from stackconfig import GpuPoolConfig, HeadroomConfig, StackConfig
from stacknames import (
    HEADROOM_NAMESPACE,
    HEADROOM_PRIORITY,
    HEADROOM_PRIORITY_CLASS,
    placeholder_name,
)


def stack_outputs(
    cfg: StackConfig,
    *,
    cluster: GpuCluster | ExistingCluster,
    gpu_operator: GpuOperator,
    keda: Keda,
    monitoring: Monitoring,
    namespaces: WorkloadNamespaces,
    workload_priority: WorkloadPriority,
) -> dict[str, Any]:
    """Every output of the stack under its contract name."""
    pools = gpu_pools_output(cfg)
    return {
        "clusterName": cluster.cluster_name,
        "clusterId": cluster.cluster_id,  # None for an existing cluster: not created here
        "kubeconfig": cluster.kubeconfig,  # secret: the provider does not mark it, the cluster components do
        "kubernetesVersion": cluster.kubernetes_version,
        # The first GPU pool, as the one pool of stacks before there were several (consumers written for them).
        "gpuPool": gpu_pool_output(cfg),
        "gpuPools": pools,
        "namespaces": {
            "gpuOperator": gpu_operator.namespace,
            "keda": keda.namespace,
            "monitoring": monitoring.namespace,
            "workloads": sorted(namespaces.names),
        },
        "prometheusUrl": monitoring.prometheus_url,
        "grafanaAdminPassword": monitoring.grafana_password,  # secret (a generated password)
        "chartVersions": cfg.charts.model_dump(by_alias=True, exclude={"mirror"}),
        "workloads": workload_outputs(cfg),
        "priorityClasses": {"workload": workload_priority.priority_class.metadata.name},
        "headroom": pools[cfg.pools[0].name]["headroom"],  # the first pool's
    }


def gpu_pool_output(cfg: StackConfig, pool: GpuPoolConfig | None = None) -> dict[str, Any]:
    """Flavor, node range, GPUs, and the labels and taints a GPU pod must select and tolerate (of `pool`, else of
    the first pool: the `gpuPool` output, unchanged for a stack with one pool)."""
    pool = pool if pool is not None else cfg.pools[0]
    return {
        "name": pool.name,
        "flavor": pool.flavor,
        "minNodes": pool.min_nodes,
        "maxNodes": pool.max_nodes,
        "gpusPerNode": pool.gpus,
        "minGpus": pool.min_nodes * pool.gpus,
        "maxGpus": pool.max_nodes * pool.gpus,
        "labels": dict(pool.labels),
        "taints": dict(pool.taints),
    }


def gpu_pools_output(cfg: StackConfig) -> dict[str, Any]:
    """Per GPU pool, by name: what `gpu_pool_output` says of it, whether it is spot, its price estimate and the
    hourly cost at its floor and at maxNodes, its headroom, and the workloads on it."""
    out = {}
    for pool in cfg.pools:
        price = pool.price_per_gpu_hour
        out[pool.name] = {
            **gpu_pool_output(cfg, pool),
            "spot": pool.spot,
            "pricePerGpuHour": price,
            "hourlyCost": {"min": round(pool.min_nodes * pool.gpus * price, 2),
                           "max": round(pool.max_nodes * pool.gpus * price, 2)},
            "headroom": headroom_output(pool.headroom, cfg.headroom_pod_gpus(pool), price,
                                        placeholder_name(pool.name, cfg.first_pool(pool))),
            "workloads": [w.name for w in cfg.workloads_on(pool)],
        }
    return out


def workload_outputs(cfg: StackConfig) -> dict[str, Any]:
    """Per workload: where it runs, and what scales it: its ScaledObject's triggers, as rendered."""
    return {
        w.name: {
            "namespace": w.namespace,
            "deployment": w.name,
            "scaledObject": w.name,
            "hpa": promql.hpa_name(w.name),
            "triggers": scaling_triggers(w),
            "gpusPerPod": w.gpus_per_pod,
            "minReplicas": w.min_replicas,
            "maxReplicas": w.max_replicas,
            "service": workload_specs.service_address(w),
            "pool": pool.name if (pool := cfg.pool_of(w)) is not None else None,
        }
        for w in cfg.workloads
    }


def headroom_output(h: HeadroomConfig | None, pod_gpus: int, price_per_gpu_hour: float,
                    deployment: str) -> dict[str, Any] | None:
    """A pool's headroom (the `headroom` stack output is the first pool's): what is held, where, and what holding it
    costs per hour (an estimate at the pool's `pricePerGpuHour`). None without headroom."""
    if h is None:
        return None
    most = max_replicas(h, pod_gpus) * pod_gpus
    return {
        "gpus": h.gpus,
        "podGpus": pod_gpus,
        "placeholders": replicas(h, pod_gpus),
        "maxGpus": most,
        "namespace": HEADROOM_NAMESPACE,
        "deployment": deployment,
        "priorityClass": HEADROOM_PRIORITY_CLASS,
        "priority": HEADROOM_PRIORITY,
        "schedules": [s.model_dump(by_alias=True) for s in h.schedules],
        "pricePerGpuHour": price_per_gpu_hour,
        "hourlyCost": round(h.gpus * price_per_gpu_hour, 2),
        "maxHourlyCost": round(most * price_per_gpu_hour, 2),
    }
