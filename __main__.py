"""Entry point: read the stack's config, wire the components, export the contract other stacks use.

Logic lives in stackconfig/ (what a stack may say) and components/ (what gets created); this file only
connects them, so that tests and the offline plan run exactly what `pulumi up` runs.
"""

from __future__ import annotations

from pathlib import Path

import pulumi
from pulumi.runtime import config as runtime_config

from components import alerting, alerts, dashboards, scaling
from components.cluster import GpuCluster, GpuClusterArgs, autoscaler_config
from components.gpu_operator import GpuOperator, GpuOperatorArgs
from components.headroom import Headroom, HeadroomArgs, WorkloadPriority, headroom_output
from components.keda import Keda, KedaArgs
from components.monitoring import Monitoring, MonitoringArgs, storage_spec
from components.workload import (
    GpuWorkload,
    GpuWorkloadArgs,
    PoolPlacement,
    WorkloadNamespaces,
    pod_security_level,
    rollout_timeout_minutes,
    service_address,
)
from stackconfig import ConfigError, Problem, StackConfig, check_config, secret_config_keys
from stackconfig.stackfile import read_stack_file
from stacknames import GPU_OPERATOR_NAMESPACE, KEDA_NAMESPACE, SECRETS_NAMESPACE


class InvalidStackConfig(ConfigError, pulumi.RunError):
    """A RunError, so that `pulumi up` prints the problems without a traceback: the Python language host logs a
    RunError's message alone (pulumi/pulumi, sdk/python/cmd/pulumi-language-python-exec)."""


def stack_config() -> StackConfig:
    """The stack file's YAML (duplicate keys, tabs) when it is beside the program, then every config key."""
    stack_file = Path(__file__).parent / f"Pulumi.{pulumi.get_stack()}.yaml"
    try:
        if stack_file.exists():
            read_stack_file(stack_file)
        everything = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
        return check_config(everything, pulumi.get_project())
    except ConfigError as exc:
        raise InvalidStackConfig(exc.problems) from None

def secret_config(keys: list[str]) -> dict[str, pulumi.Output[str]]:
    """The values of `secrets:<key>` as secret Outputs; unset or plain-text keys are refused, all at once.

    A plain value would sit readable in the stack file and in git: Pulumi marks a key secret only when it
    was set with `--secret`. The CLI passes the secret keys in PULUMI_CONFIG_SECRET_KEYS, and Pulumi's
    python executor hands them to `pulumi.runtime.set_all_config` (pulumi/pulumi sdk/python/cmd/
    pulumi-language-python-exec), which `is_config_secret` reads; the variable is checked too for SDKs that
    configured the runtime differently.
    """
    conf, out, problems = pulumi.Config(SECRETS_NAMESPACE), {}, []
    secret_keys = set(runtime_config.get_config_secret_keys_env())
    for key in keys:
        full = f"{SECRETS_NAMESPACE}:{key}"
        command = f"pulumi config set --secret {full} <value>"
        if runtime_config.get_config(full) is None:
            problems.append(Problem(full, None, "is referenced by the stack config but not set", f"run `{command}`"))
        elif not (runtime_config.is_config_secret(full) or full in secret_keys):
            problems.append(Problem(full, "(plain text, not shown)",
                                    "is stored in plain text in the stack file, and would be in the state too",
                                    f"run `pulumi config rm {full}` and `{command}`"))
        else:
            out[key] = conf.require_secret(key)
    if problems:
        raise InvalidStackConfig(problems)
    return out


cfg = stack_config()
secrets = secret_config(secret_config_keys(cfg))
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
        rule_groups=alerts.rule_groups(
            cfg, gpu_operator_namespace=GPU_OPERATOR_NAMESPACE, keda_namespace=KEDA_NAMESPACE
        ),
        dashboards=dashboards.dashboards(cfg),
        service_monitors={"keda-operator": alerts.keda_service_monitor(KEDA_NAMESPACE)},
        extra_values=alerts.kube_state_metrics_values(cfg),
        alertmanager_config=(
            pulumi.Output.secret(
                pulumi.Output.all(**{k: secrets[k] for k in cfg.alerting.secret_keys}).apply(
                    lambda v: alerting.render(cfg.alerting, v)
                )
            )
            if cfg.alerting.any_receiver
            else None
        ),
    ),
    opts=in_cluster,
)

namespaces = WorkloadNamespaces(
    "workloads",
    [w.namespace for w in cfg.workloads],
    opts=in_cluster,
    pod_security={w.namespace: pod_security_level(cfg.workloads, w.namespace) for w in cfg.workloads},
)
placement = PoolPlacement(labels=pool.labels, taints=pool.taints)
workload_priority = WorkloadPriority("workload-priority", opts=in_cluster)
if pool.headroom is not None:
    Headroom(
        "headroom",
        HeadroomArgs(
            headroom=pool.headroom,
            pod_gpus=cfg.headroom_pod_gpus,
            placement=placement,
            gpu_ready=[gpu_operator.release],
            scaler_ready=[keda.release],
        ),
        opts=in_cluster,
    )
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
            priority_class=workload_priority.priority_class.metadata.name,
            secret_env={env: secrets[key] for env, key in w.secret_env.items()},
            registry_password=secrets[w.image_pull_secret.password_secret] if w.image_pull_secret else None,
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
            "service": service_address(w),
        }
        for w in cfg.workloads
    },
)
pulumi.export("priorityClasses", {"workload": workload_priority.priority_class.metadata.name})
pulumi.export("headroom", headroom_output(pool.headroom, cfg.headroom_pod_gpus, pool.price_per_gpu_hour))
