"""A workload team's stack: one GPU workload on the platform, through the platform's component package.

Added once with `pulumi package add <platform checkout>/gpu_platform` (or its git URL), which generates the
`pulumi_gpu_platform` SDK into sdks/ and adds it to requirements.txt. The platform is read only through its stack's
outputs, passed to the component as Inputs; the component checks the workload with the platform's own rules, and
refuses a name the platform's own workloads have in the same namespace (`platform_workloads`).
"""

import pulumi
import pulumi_gpu_platform as gpu
import pulumi_kubernetes as k8s

config = pulumi.Config()
platform = pulumi.StackReference(config.require("platformStack"))
team = config.require("team")  # the team's entry in the platform's `teams`: its namespace, its GPU quota
workload = config.require_object("workload")
gpu_pool = platform.require_output("gpuPool")

# The team's own credential (its namespace only), not the cluster's admin kubeconfig; secret, and marked again so it
# stays secret here even if the platform stopped marking it.
kubeconfig = platform.require_output("teamKubeconfigs").apply(lambda k: k[team])
cluster = k8s.Provider("platform-cluster", kubeconfig=pulumi.Output.secret(kubeconfig), enable_server_side_apply=True)
app = gpu.GpuWorkload(
    workload["name"],
    pool=gpu.PoolArgs(name=gpu_pool["name"], labels=gpu_pool["labels"], taints=gpu_pool["taints"],
                      gpus_per_node=gpu_pool["gpusPerNode"], max_nodes=gpu_pool["maxNodes"]),
    prometheus_url=platform.require_output("prometheusUrl"),
    platform_workloads=platform.require_output("workloads"),
    name=workload["name"],
    image=workload["image"],
    namespace=workload.get("namespace", team),  # the team's own unless the team was given another
    command=workload.get("command"),
    args=workload.get("args"),
    min_replicas=workload.get("minReplicas"),
    max_replicas=workload["maxReplicas"],
    target_utilization=workload.get("targetUtilization"),
    priority_class_name=workload.get("priorityClassName"),
    opts=pulumi.ResourceOptions(providers={"kubernetes": cluster}),
)
pulumi.export("deployment", app.deployment_name)
pulumi.export("scaledObject", app.scaled_object_name)
pulumi.export("namespace", app.namespace)
