"""GpuCluster: the Gcore Managed Kubernetes cluster, its bare-metal GPU pool, and a provider for it.

Replacement map (G-Core/terraform-provider-gcore v0.34.3: `ForceNew` in gcore/resource_gcore_k8sv2.go,
pool handling in its `resourceK8sV2Update`; issue #67 / PR #70): name, keypair, network, subnet and cni are
ForceNew and replace the WHOLE cluster; flavor and publicIpv4 recreate the GPU pool inside an update
(and fail outright while it is the only pool); min/max nodes, labels and taints change in place.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcore as gcore
import pulumi_kubernetes as k8s

from stackconfig import ClusterConfig, GpuPoolConfig, SystemPoolConfig, WorkloadConfig
from stacknames import AUTOSCALER_EXPENDABLE_CUTOFF


def autoscaler_config(
    pool: GpuPoolConfig, workloads: Sequence[WorkloadConfig], overrides: Mapping[str, str]
) -> dict[str, str]:
    """Cluster Autoscaler flags derived from the GPU pool and the workloads it serves.

    - `max-node-provision-time`: the portal default of 15 min is shorter than a bare-metal GPU node
      takes (20-25 min, then 5-10 min until GPUs are allocatable); with it the autoscaler gives up on
      nodes that are still booting and asks for more (Gcore docs, "Configure GPU autoscaling for Kubernetes":
      https://gcore.com/docs/cloud/kubernetes/clusters/autoscaling/configure-gpu-autoscaling-for-kubernetes).
    - `scale-down-unneeded-time`: longer than the longest HPA scale-down window (plus KEDA's cooldown
      for workloads that scale to zero), so the node is not removed while pods are still winding down.
    - `scale-down-delay-after-add`: a fresh node must not be judged idle before its GPUs appear.
    - `expendable-pods-priority-cutoff` (with headroom only): stated at its default, -10, which the
      placeholders' priority must not be below (cluster-autoscaler FAQ.md, "How does Cluster Autoscaler
      work with Pod Priority and Preemption?"); stackconfig refuses an override above it.
    Explicit `cluster.autoscaler` keys win.
    """
    windows = [
        w.scale_down_stabilization_seconds + (w.cooldown_period if w.min_replicas == 0 else 0) for w in workloads
    ]
    unneeded_minutes = max(10, math.ceil(max(windows, default=300) / 60) + 5)
    derived = {
        "max-node-provision-time": f"{pool.provision_minutes}m",
        "scale-down-unneeded-time": f"{unneeded_minutes}m",
        "scale-down-delay-after-add": f"{max(15, pool.provision_minutes // 2)}m",
    }
    if pool.headroom is not None:
        # Explicit, so the placeholders' contract is visible in the cluster: their priority is not below it.
        derived["expendable-pods-priority-cutoff"] = str(AUTOSCALER_EXPENDABLE_CUTOFF)
    return {**derived, **overrides}


#: The v0 provider awaits every Gcore task it starts (cluster create, version upgrade, cluster update, each pool
#: create or delete, cluster delete) for at most `K8sCreateTimeout = 3600` seconds, hard-coded
#: (G-Core/terraform-provider-gcore v0.34.3, gcore/resource_gcore_k8sv2.go). Nothing configures it.
GCORE_TASK_MINUTES = 60
#: After its last task the provider reads the cluster and its pools back (several API calls).
READ_BACK_MINUTES = 10


def gcore_timeouts(pool: GpuPoolConfig) -> dict[str, str]:
    """The resource's own Terraform `timeouts` (create and update; it declares no delete timeout).

    Why these and not Pulumi's `custom_timeouts`: the provider is served by the Pulumi Terraform bridge's Plugin
    Framework path, whose Create/Update/Delete never read the engine's timeout (pulumi/pulumi-terraform-bridge
    pkg/pf/tfbridge/provider_create.go; issue #827, open). The `timeouts` block is an ordinary input there.
    What it does: the resource declares `Timeouts{Create, Update}` of 3600 s, and the Terraform plugin SDK turns
    them into the deadline of the context handed to create/update; the v0 create/update code calls the Gcore client
    and `tasks.WaitTaskAndReturnResult(..., K8sCreateTimeout, ...)` without that context (gcore/
    resource_gcore_k8sv2.go). So today these values only guarantee that the deadline never undercuts the provider's
    own waits (should a release start honouring it); the 60-minute task cap is what really counts. Each value is
    the longest chain of Gcore tasks the operation can run, plus the read-back:
    - create: one task (the cluster with all its pools), capped at 60 min, then the read-back;
    - update: the longest update this program can plan is recreating the GPU pool (flavor or publicIpv4 changed,
      behind the preview guard): the old pool's delete task (capped at 60 min), then the new pool's create task,
      whose nodes need `gpuPool.provisionMinutes` (capped at 60 min), then the read-back.
    Neither extends the 60-minute cap of a single task: see docs/timeouts-and-recovery.md.
    """
    create = GCORE_TASK_MINUTES + READ_BACK_MINUTES
    update = GCORE_TASK_MINUTES + min(pool.provision_minutes, GCORE_TASK_MINUTES) + READ_BACK_MINUTES
    return {"create": f"{create}m", "update": f"{update}m"}


@dataclass(frozen=True)
class GpuClusterArgs:
    cluster: ClusterConfig
    pool: GpuPoolConfig
    system_pool: SystemPoolConfig
    autoscaler: Mapping[str, str] = field(default_factory=dict)
    #: Protect the cluster against `pulumi destroy` and replacement (production).
    protect: bool = False


class GpuCluster(pulumi.ComponentResource):
    """A `gcore.K8sv2` with one bare-metal GPU pool, its kubeconfig (secret) and a Kubernetes provider."""

    cluster: gcore.K8sv2
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:cluster:GpuCluster", name, None, opts)
        c, p, s = args.cluster, args.pool, args.system_pool
        pools = [
            gcore.K8sv2PoolArgs(
                name=p.name,
                flavor_id=p.flavor,
                min_node_count=p.min_nodes,
                max_node_count=p.max_nodes,
                is_public_ipv4=p.public_ipv4,
                # Off for GPU bare metal (Gcore's guide): GPUs initialise for minutes after the node is Ready.
                auto_healing_enabled=False,
                labels=dict(p.labels),
                taints=dict(p.taints),
            )
        ]
        if s.enabled:
            pools.append(
                gcore.K8sv2PoolArgs(
                    name=s.name,
                    flavor_id=s.flavor,
                    min_node_count=s.min_nodes,
                    max_node_count=s.max_nodes,
                    is_public_ipv4=False,
                    auto_healing_enabled=True,
                    servergroup_policy=s.servergroup_policy,
                    boot_volume_size=s.boot_volume_size,
                    boot_volume_type=s.boot_volume_type,
                )
            )
        self.cluster = gcore.K8sv2(
            f"{name}-cluster",
            name=c.name,  # explicit: an auto-name would break Gcore's 20-character limit
            keypair=c.keypair,
            version=c.version,
            project_id=c.project_id,
            project_name=c.project_name,
            region_id=c.region_id,
            region_name=c.region_name,
            fixed_network=c.network,
            fixed_subnet=c.subnet,
            cni=gcore.K8sv2CniArgs(provider=c.cni),
            autoscaler_config=dict(args.autoscaler),
            pools=pools,
            timeouts=gcore.K8sv2TimeoutsArgs(**gcore_timeouts(p)),
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                # Two clusters cannot share a name: a replacement must delete the old one first.
                delete_before_replace=True,
                # No custom_timeouts: the bridge's Plugin Framework path ignores them (see gcore_timeouts).
            ),
        )
        kubeconfig = gcore.get_k8sv2_kubeconfig_output(
            cluster_name=self.cluster.name,
            project_id=c.project_id,
            project_name=c.project_name,
            region_id=c.region_id,
            region_name=c.region_name,
            opts=pulumi.InvokeOutputOptions(parent=self, depends_on=[self.cluster]),
        )
        # The provider does not mark the kubeconfig sensitive (G-Core/terraform-provider-gcore v0.34.3,
        # gcore/data_source_gcore_k8sv2_kubeconfig.go; docs/data-sources/k8sv2_kubeconfig.md): we do.
        self.kubeconfig = pulumi.Output.secret(kubeconfig.kubeconfig)
        self.provider = k8s.Provider(
            f"{name}-provider",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster]),
        )
        self.register_outputs(
            {"clusterName": self.cluster.name, "clusterId": self.cluster.id, "kubeconfig": self.kubeconfig}
        )
