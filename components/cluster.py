"""GpuCluster: the Gcore Managed Kubernetes cluster, its bare-metal GPU pool, and a provider for it.

Replacement map (facts: gcore-provider.md §1.2, §5.1): name, keypair, network, subnet and cni are
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
from stackconfig.model import AUTOSCALER_EXPENDABLE_CUTOFF


def autoscaler_config(
    pool: GpuPoolConfig, workloads: Sequence[WorkloadConfig], overrides: Mapping[str, str]
) -> dict[str, str]:
    """Cluster Autoscaler flags derived from the GPU pool and the workloads it serves.

    - `max-node-provision-time`: the portal default of 15 min is shorter than a bare-metal GPU node
      takes (20-25 min, then 5-10 min until GPUs are allocatable); with it the autoscaler gives up on
      nodes that are still booting and asks for more (facts: gcore-provider.md §4).
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
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                # Two clusters cannot share a name: a replacement must delete the old one first.
                delete_before_replace=True,
                # v0 waits up to 60 min per Gcore task itself; bare-metal GPU pools can take longer.
                custom_timeouts=pulumi.CustomTimeouts(create="90m", update="90m", delete="60m"),
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
        # The provider does not mark the kubeconfig sensitive (gcore-provider.md §1.4): we do.
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
