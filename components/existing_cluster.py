"""ExistingCluster: a cluster this stack does not create, reached through its kubeconfig.

For a cluster made in the Gcore portal, or by another stack: the add-ons and workloads are deployed into it
exactly as into a cluster GpuCluster creates, through a Kubernetes provider of the same settings. Nothing of the
cluster itself (pools, Cluster Autoscaler flags, version) is created or changed; the autoscaler flags the
workloads and headroom need are reported once, as a warning, for the cluster's owner to set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class ExistingClusterArgs:
    #: The cluster's kubeconfig (a secret config value, or another stack's secret output).
    kubeconfig: pulumi.Input[str]
    cluster_name: str
    kubernetes_version: str
    #: The Cluster Autoscaler flags this stack would send to a cluster it created (renderers/gcore_cluster.py).
    autoscaler: Mapping[str, str] = field(default_factory=dict)


class ExistingCluster(pulumi.ComponentResource):
    """The same `provider` and `kubeconfig` GpuCluster gives, for a cluster made elsewhere."""

    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    cluster_name: pulumi.Output[str]
    cluster_id: pulumi.Output[str | None]
    kubernetes_version: pulumi.Output[str]

    def __init__(self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:cluster:ExistingCluster", name, None, opts)
        self.kubeconfig = pulumi.Output.secret(args.kubeconfig)
        self.provider = k8s.Provider(
            f"{name}-provider",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.cluster_name = pulumi.Output.from_input(args.cluster_name)
        self.cluster_id = pulumi.Output.from_input(None)
        self.kubernetes_version = pulumi.Output.from_input(args.kubernetes_version)
        if args.autoscaler:
            flags = ", ".join(f"{k}={v}" for k, v in sorted(args.autoscaler.items()))
            pulumi.log.warn(
                "cluster.existing: this stack does not manage the cluster's Cluster Autoscaler; for the GPU pool, "
                f"headroom and rollouts it assumes these settings, to be set by the cluster's owner: {flags}",
                resource=self,
            )
        self.register_outputs({"clusterName": self.cluster_name, "kubeconfig": self.kubeconfig})
