"""Entry point: read the stack's config, wire the components, export the outputs other stacks use.

What a stack may say is stackconfig/, what gets created is components/ and, for workloads, the component package
gpu_platform/ (specs: renderers/); config, secrets, workload arguments and the output contract are program/. This
file only connects them, so that tests and the offline plan run exactly what `pulumi up` runs.
"""

from __future__ import annotations

from pathlib import Path

import pulumi

from components.gpu_operator import GpuOperator, GpuOperatorArgs
from components.headroom import Headroom, HeadroomArgs, PoolHeadroom
from components.keda import Keda, KedaArgs
from components.kube import deleted_with
from components.monitoring import Monitoring, MonitoringArgs
from components.workload import WorkloadNamespaces, WorkloadPriority
from gpu_platform import ExistingCluster, GpuCluster, GpuWorkload, PlatformWiring, TeamAccess
from program.cluster import cluster_args
from program.config import secret_config, stack_config
from program.outputs import stack_outputs
from program.workloads import workload_args
from renderers import alertmanager_config, chart_values, dashboards, rule_groups, workload_specs
from renderers.gcore_cluster import autoscaler_config
from renderers.gpu_ready_gate import Gate
from renderers.placement import PoolPlacement
from stackconfig import secret_config_keys, versions
from stacknames import CLUSTER_COMPONENT as CLUSTER
from stacknames import GPU_OPERATOR_NAMESPACE, KEDA_NAMESPACE

cfg = stack_config(Path(__file__).parent)
secrets = secret_config(secret_config_keys(cfg))
pools = cfg.pools
autoscaler = autoscaler_config(pools, cfg.workloads, cfg.cluster.autoscaler)

existing = cfg.cluster.existing
gpu_cluster: GpuCluster | ExistingCluster
# A fixed logical name: renaming `cluster.name` changes the cluster's `name` input (a replacement that
# delete_before_replace and `protect` govern), never its URN, which would create a second cluster first.
if existing is None:
    gpu_cluster = GpuCluster(
        CLUSTER, cluster_args(cfg, autoscaler),
        # Its type before it came from the package (gpu_platform/cluster.py TYPE): the cluster is not replaced.
        opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(type_="gpu-platform:cluster:GpuCluster")]),
    )
else:
    gpu_cluster = ExistingCluster(
        CLUSTER,
        {
            "kubeconfig": (
                secrets[existing.kubeconfig_secret]
                if existing.kubeconfig_secret
                else pulumi.StackReference(str(existing.stack_reference)).require_output("kubeconfig")
            ),
            "cluster_name": cfg.cluster.name,
            "kubernetes_version": cfg.cluster.version,
            "autoscaler": autoscaler,
        },
        opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(type_="gpu-platform:cluster:ExistingCluster")]),
    )
in_cluster = pulumi.ResourceOptions(
    providers={"kubernetes": gpu_cluster.provider},
    # Deleting a cluster this stack created deletes what runs in it (components/kube.py deleted_with); one made
    # elsewhere stays, so destroy removes this stack's objects from it one by one.
    transforms=[deleted_with(gpu_cluster.cluster)] if isinstance(gpu_cluster, GpuCluster) else None,
)
mirror = cfg.charts.mirror

# The three releases are independent of each other: Pulumi installs them in parallel.
gates = [Gate.of(p) for p in pools if p.gpu_ready_gate]
gpu_operator = GpuOperator(
    "gpu-operator",
    GpuOperatorArgs(cfg.charts.gpu_operator, [p.node_taints for p in pools], mirror=mirror, gates=gates,
                    kubectl_image=versions.kubectl_image(cfg.cluster.minor) if gates else ""),
    opts=in_cluster,
)
keda = Keda("keda", KedaArgs(cfg.charts.keda, mirror=mirror), opts=in_cluster)
monitoring = Monitoring(
    "monitoring",
    MonitoringArgs(
        version=cfg.charts.kube_prometheus_stack,
        retention=cfg.monitoring.retention,
        storage=(
            chart_values.storage_spec(cfg.monitoring.storage_size, cfg.monitoring.storage_class)
            if cfg.monitoring.storage_size
            else None
        ),
        rule_groups=rule_groups.rule_groups(
            cfg, gpu_operator_namespace=GPU_OPERATOR_NAMESPACE, keda_namespace=KEDA_NAMESPACE
        ),
        dashboards=dashboards.dashboards(cfg),
        service_monitors={chart_values.KEDA_OPERATOR: chart_values.keda_service_monitor(KEDA_NAMESPACE)},
        extra_values=chart_values.kube_state_metrics_values(cfg),
        alertmanager_config=(
            pulumi.Output.secret(
                pulumi.Output.all(**{k: secrets[k] for k in cfg.alerting.secret_keys}).apply(
                    lambda v: alertmanager_config.render(cfg.alerting, v)
                )
            )
            if cfg.alerting.any_receiver
            else None
        ),
        query_url=cfg.monitoring.query_url,
        mirror=mirror,
    ),
    opts=in_cluster,
)

namespaces = WorkloadNamespaces(
    "workloads",
    [w.namespace for w in cfg.workloads] + [t.name for t in cfg.teams],
    opts=in_cluster,
    pod_security={w.namespace: workload_specs.pod_security_level(cfg.workloads, w.namespace) for w in cfg.workloads},
    retained=[t.name for t in cfg.teams],
)
# Each team deploys from its own stack with its own kubeconfig, into its namespace, within its GPU quota.
teams = {t.name: TeamAccess(f"team-{t.name}", {"namespace": namespaces.names[t.name], "gpus": t.gpus,
                                               "cluster_kubeconfig": gpu_cluster.kubeconfig}, opts=in_cluster)
         for t in cfg.teams}
workload_priority = WorkloadPriority("workload-priority", opts=in_cluster)
headroom = [PoolHeadroom(p.name, p.headroom, cfg.headroom_pod_gpus(p), PoolPlacement.of(p), first=cfg.first_pool(p))
            for p in pools if p.headroom is not None]
placeholders = Headroom(
    "headroom",
    HeadroomArgs(pools=headroom, gpu_ready=[gpu_operator.release], scaler_ready=[keda.release]),
    opts=in_cluster,
).placeholders if headroom else {}
workloads: dict[str, GpuWorkload] = {}
for w in cfg.workloads:
    pool = cfg.pool_of(w)
    assert pool is not None  # stackconfig refuses a workload without a pool of the stack
    workloads[w.name] = GpuWorkload(
        w.name,
        workload_args(w, pool, secrets, monitoring.prometheus_url, workload_priority.priority_class.metadata.name),
        # Its type before the workloads came from the package (gpu_platform/workload.py TYPE): nothing is replaced.
        opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(
            aliases=[pulumi.Alias(type_="gpu-platform:workloads:GpuWorkload")])),
        wiring=PlatformWiring(namespace=namespaces.names[w.namespace], gpu_ready=[gpu_operator.release],
                              scaler_ready=[keda.release, monitoring.release],
                              provision_minutes=pool.provision_minutes, pool=pool.name),
    )

# The contract other stacks read (README "Stack outputs", docs/outputs.md).
for output, value in stack_outputs(cfg, cluster=gpu_cluster, gpu_operator=gpu_operator, keda=keda,
                                   monitoring=monitoring, namespaces=namespaces, workload_priority=workload_priority,
                                   workloads=workloads, placeholders=placeholders, teams=teams).items():
    pulumi.export(output, value)
