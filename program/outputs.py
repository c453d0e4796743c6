"""The stack outputs: the contract other stacks read through `pulumi.StackReference` (docs/outputs.md).

`stack_outputs` builds them, under their contract names, from the components `__main__.py` wired and, where no
resource holds the value (a pool's price, its headroom's cost), from the config; `__main__.py` exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from components.gpu_operator import GpuOperator
from components.keda import Keda
from components.monitoring import Monitoring
from components.workload import WorkloadNamespaces, WorkloadPriority
from gpu_platform import ExistingCluster, GpuCluster, GpuWorkload, TeamAccess
from renderers.headroom_specs import max_replicas, replicas
from stackconfig import HeadroomConfig, StackConfig
from stacknames import HEADROOM_NAMESPACE, HEADROOM_PRIORITY, HEADROOM_PRIORITY_CLASS


def stack_outputs(
    cfg: StackConfig,
    *,
    cluster: GpuCluster | ExistingCluster,
    gpu_operator: GpuOperator,
    keda: Keda,
    monitoring: Monitoring,
    namespaces: WorkloadNamespaces,
    workload_priority: WorkloadPriority,
    workloads: Mapping[str, GpuWorkload],
    placeholders: Mapping[str, pulumi.Output[str]],
    teams: Mapping[str, TeamAccess],
) -> dict[str, Any]:
    """Every output of the stack under its contract name; `placeholders`: each pool's headroom Deployment's name."""
    pools = gpu_pools_output(cfg, placeholders)
    return {
        "clusterName": cluster.cluster_name,
        "clusterId": cluster.cluster_id,  # None for an existing cluster: not created here
        "kubeconfig": cluster.kubeconfig,  # secret: the provider does not mark it, the cluster components do
        "kubernetesVersion": cluster.kubernetes_version,
        # The first GPU pool, as the one pool of stacks before there were several (consumers written for them).
        "gpuPool": {k: pools[cfg.pools[0].name][k] for k in GPU_POOL_FIELDS},
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
        "workloads": {name: w.summary for name, w in workloads.items()},
        "priorityClasses": {"workload": workload_priority.priority_class.metadata.name},
        "headroom": pools[cfg.pools[0].name]["headroom"],  # the first pool's
        "teams": {name: {"namespace": t.namespace, "gpus": t.gpus} for name, t in teams.items()},
        # secret: each team's own credential (docs/use-it-from-your-program.md, "A team's access")
        "teamKubeconfigs": pulumi.Output.secret({name: t.kubeconfig for name, t in teams.items()}),
    }


#: The fields of the `gpuPool` output: the first pool's entry of `gpuPools`, without what came after one pool.
GPU_POOL_FIELDS = ("name", "flavor", "minNodes", "maxNodes", "gpusPerNode", "minGpus", "maxGpus", "labels", "taints")


def gpu_pools_output(cfg: StackConfig, placeholders: Mapping[str, pulumi.Output[str]]) -> dict[str, Any]:
    """Per GPU pool, by name: flavor, node range, GPUs, the labels and taints a GPU pod must select and tolerate,
    whether it is spot, its price estimate and the hourly cost at its floor and at maxNodes, its headroom, and the
    workloads on it."""
    out = {}
    for pool in cfg.pools:
        price, gpus = pool.price_per_gpu_hour, pool.gpus
        out[pool.name] = {
            "name": pool.name, "flavor": pool.flavor, "minNodes": pool.min_nodes, "maxNodes": pool.max_nodes,
            "gpusPerNode": gpus, "minGpus": pool.min_nodes * gpus, "maxGpus": pool.max_nodes * gpus,
            "labels": dict(pool.labels), "taints": dict(pool.taints), "spot": pool.spot, "pricePerGpuHour": price,
            "hourlyCost": {"min": round(pool.min_nodes * gpus * price, 2),
                           "max": round(pool.max_nodes * gpus * price, 2)},
            "headroom": headroom_output(pool.headroom, cfg.headroom_pod_gpus(pool), price, placeholders.get(pool.name)),
            "workloads": [w.name for w in cfg.workloads_on(pool)],
        }
    return out


def headroom_output(h: HeadroomConfig | None, pod_gpus: int, price_per_gpu_hour: float,
                    deployment: pulumi.Output[str] | None) -> dict[str, Any] | None:
    """A pool's headroom (the `headroom` stack output is the first pool's): what is held, where, and what holding it
    costs per hour (an estimate at the pool's `pricePerGpuHour`). None without headroom."""
    if h is None or deployment is None:
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
