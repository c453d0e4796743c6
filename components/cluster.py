"""GpuCluster: the Gcore Managed Kubernetes cluster, its bare-metal GPU pools, and a provider for it.

Which input changes replace the cluster or recreate a pool is delivery/guard.py's (it stops such a pull request).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcore as gcore
import pulumi_kubernetes as k8s

from renderers.gcore_cluster import gcore_timeouts
from stackconfig import ClusterConfig, GpuPoolConfig, SystemPoolConfig


@dataclass(frozen=True)
class GpuClusterArgs:
    cluster: ClusterConfig
    #: The GPU pools, in stack-file order (Gcore is given them first, then the system pool).
    pools: Sequence[GpuPoolConfig]
    system_pool: SystemPoolConfig
    autoscaler: Mapping[str, str] = field(default_factory=dict)
    #: Protect the cluster against `pulumi destroy` and replacement (production).
    protect: bool = False


TYPE = "gpu-platform:cluster:GpuCluster"


class GpuCluster(pulumi.ComponentResource):
    """A `gcore.K8sv2` with its bare-metal GPU pools, its kubeconfig (secret) and a Kubernetes provider."""

    cluster: gcore.K8sv2
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    cluster_name: pulumi.Output[str]
    cluster_id: pulumi.Output[str]
    kubernetes_version: pulumi.Output[str]

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        c, s = args.cluster, args.system_pool
        if not args.pools:
            raise ValueError("GpuCluster needs at least one GPU pool")
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
                taints=p.node_taints,  # the pods tolerate `taints`; the gate removes the start-up taint
            )
            for p in args.pools
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
        # Where the cluster is: the cluster and its kubeconfig lookup name the same project and region.
        location: dict[str, Any] = {"project_id": c.project_id, "project_name": c.project_name,
                                    "region_id": c.region_id, "region_name": c.region_name}
        self.cluster = gcore.K8sv2(
            f"{name}-cluster",
            name=c.name,  # explicit: an auto-name would break Gcore's 20-character limit
            keypair=c.keypair,  # required without cluster.existing (stackconfig/rules/cluster.py)
            version=c.version,
            **location,
            fixed_network=c.network,
            fixed_subnet=c.subnet,
            cni=gcore.K8sv2CniArgs(provider=c.cni),
            autoscaler_config=dict(args.autoscaler),
            pools=pools,
            timeouts=gcore.K8sv2TimeoutsArgs(**gcore_timeouts(args.pools)),
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                # Two clusters cannot share a name: a replacement must delete the old one first.
                delete_before_replace=True,
                # No custom_timeouts: the bridge's Plugin Framework path ignores them (see gcore_timeouts).
            ),
        )
        self.cluster_name, self.cluster_id, self.kubernetes_version = (
            self.cluster.name, self.cluster.id, self.cluster.version)
        kubeconfig = gcore.get_k8sv2_kubeconfig_output(
            cluster_name=self.cluster.name,
            **location,
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
