"""Entry point: read the stack's config, wire the components, export the contract other stacks use.

Logic lives in stackconfig/ (what a stack may say) and components/ (what gets created); this file only
connects them, so that tests and the offline plan run exactly what `pulumi up` runs.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from components import alerts, dashboards, scaling
from components.cluster import GpuCluster, GpuClusterArgs, autoscaler_config
from components.gpu_operator import GpuOperator, GpuOperatorArgs
from components.keda import Keda, KedaArgs
from components.monitoring import Monitoring, MonitoringArgs, storage_spec
from components.workload import (
    GpuWorkload,
    GpuWorkloadArgs,
    PoolPlacement,
    WorkloadNamespaces,
    rollout_timeout_minutes,
)
from stackconfig import load_stack_config


def project_config() -> dict[str, Any]:
    """Every `<project>:<key>` of the stack, structured values decoded, so unknown keys can be refused."""
    prefix = f"{pulumi.get_project()}:"
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if not key.startswith(prefix):
            continue
        try:
            out[key.removeprefix(prefix)] = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError:
            out[key.removeprefix(prefix)] = value
    return out


cfg = load_stack_config(project_config())
pool = cfg.gpu_pool

gpu_cluster = GpuCluster(
    cfg.cluster.name,
    GpuClusterArgs(
        cluster=cfg.cluster,
        pool=pool,
        system_pool=cfg.system_pool,
        autoscaler=autoscaler_config(pool, cfg.workloads, cfg.cluster.autoscaler),
        protect=cfg.protect,
    ),
)
in_cluster = pulumi.ResourceOptions(providers={"kubernetes": gpu_cluster.provider})

# The three releases are independent of each other: Pulumi installs them in parallel.
gpu_operator = GpuOperator("gpu-operator", GpuOperatorArgs(cfg.charts.gpu_operator, pool.taints), opts=in_cluster)
keda = Keda("keda", KedaArgs(cfg.charts.keda), opts=in_cluster)
monitoring = Monitoring(
    "monitoring",
    MonitoringArgs(
        version=cfg.charts.kube_prometheus_stack,
        retention=cfg.monitoring.retention,
        storage=(
            storage_spec(cfg.monitoring.storage_size, cfg.monitoring.storage_class)
            if cfg.monitoring.storage_size
            else None
        ),
        rule_groups=alerts.rule_groups(cfg, gpu_operator_namespace="gpu-operator", keda_namespace="keda"),
        dashboards=dashboards.dashboards(cfg),
        service_monitors={"keda-operator": alerts.keda_service_monitor("keda")},
        extra_values=alerts.kube_state_metrics_values(cfg),
    ),
    opts=in_cluster,
)

namespaces = WorkloadNamespaces("workloads", [w.namespace for w in cfg.workloads], opts=in_cluster)
placement = PoolPlacement(labels=pool.labels, taints=pool.taints)
for w in cfg.workloads:
    GpuWorkload(
        w.name,
        GpuWorkloadArgs(
            workload=w,
            namespace=namespaces.names[w.namespace],
            placement=placement,
            prometheus_url=monitoring.prometheus_url,
            gpu_ready=[gpu_operator.release],
            scaler_ready=[keda.release, monitoring.release],
            rollout_timeout_minutes=rollout_timeout_minutes(pool.provision_minutes),
        ),
        opts=in_cluster,
    )

# --- outputs: a contract for other stacks (README: "Stack outputs") -----------------------------------
pulumi.export("clusterName", gpu_cluster.cluster.name)
pulumi.export("clusterId", gpu_cluster.cluster.id)
pulumi.export("kubeconfig", gpu_cluster.kubeconfig)
pulumi.export("kubernetesVersion", gpu_cluster.cluster.version)
pulumi.export(
    "gpuPool",
    {
        "name": pool.name,
        "flavor": pool.flavor,
        "minNodes": pool.min_nodes,
        "maxNodes": pool.max_nodes,
        "gpusPerNode": pool.gpus,
        "minGpus": pool.min_nodes * pool.gpus,
        "maxGpus": cfg.max_gpus,
        "labels": dict(pool.labels),
        "taints": dict(pool.taints),
    },
)
pulumi.export(
    "namespaces",
    {
        "gpuOperator": gpu_operator.namespace,
        "keda": keda.namespace,
        "monitoring": monitoring.namespace,
        "workloads": sorted(namespaces.names),
    },
)
pulumi.export("prometheusUrl", monitoring.prometheus_url)
pulumi.export("grafanaAdminPassword", monitoring.grafana_password)
pulumi.export("chartVersions", cfg.charts.model_dump(by_alias=True))
pulumi.export(
    "workloads",
    {
        w.name: {
            "namespace": w.namespace,
            "deployment": w.name,
            "scaledObject": w.name,
            "hpa": scaling.hpa_name(w.name),
            "query": scaling.gpu_utilization_query(w.name, w.namespace),
            "threshold": scaling.format_number(scaling.threshold_value(w.target_utilization, w.gpus_per_pod)),
            "gpusPerPod": w.gpus_per_pod,
            "minReplicas": w.min_replicas,
            "maxReplicas": w.max_replicas,
            "targetUtilization": w.target_utilization,
        }
        for w in cfg.workloads
    },
)
