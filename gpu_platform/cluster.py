"""GpuCluster: a Gcore Managed Kubernetes cluster with its bare-metal GPU pools and its system pool, its kubeconfig
(secret) and a Kubernetes provider for it. ExistingCluster: the same provider and outputs for a cluster made
elsewhere (the Gcore portal, another stack), reached through its kubeconfig.

The arguments are a stack file's `cluster`, `gpuPools` and `systemPool` keys (docs/configuration.md), under the same
names in the component's schema; a pool states only what differs from the defaults (an H100 node of 8 GPUs, 1 to 2
nodes, the pool's own label, the GPU taint, the GPU-ready gate). They are plain values, not Outputs: each is checked
before any child is registered, with the platform's own rules (stackconfig), and a bad one raises
`pulumi.InputPropertiesError` naming the argument, its value and the fix.

Which input changes replace the cluster or recreate a pool is delivery/guard.py's (it stops such a pull request).
"""

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_gcore as gcore
import pulumi_kubernetes as k8s
from pydantic import ValidationError

from gpu_platform.arguments import camel, refuse, whole
from renderers.gcore_cluster import autoscaler_config, gcore_timeouts
from stackconfig import Problem, StackConfig
from stackconfig.errors import from_validation_error
from stackconfig.rules import cluster as cluster_rules
from stackconfig.rules import pool as pool_rules
from stackconfig.stack import KNOWN_KEYS, REQUIRED_KEYS


class Cluster(TypedDict):
    name: str
    """The cluster's name in Gcore: 2-20 characters, a lowercase letter first. Changing it replaces the cluster."""
    keypair: str
    """An SSH keypair of the Gcore project. Changing it replaces the cluster."""
    version: NotRequired[str]
    """The Kubernetes version, one Gcore offers for new clusters, e.g. `v1.35.3` (default: the newest checked)."""
    project_id: NotRequired[int]
    """The Gcore project, by id (or `project_name`: exactly one of them)."""
    project_name: NotRequired[str]
    """The Gcore project, by name."""
    region_id: NotRequired[int]
    """The Gcore region, by id (or `region_name`: exactly one of them)."""
    region_name: NotRequired[str]
    """The Gcore region, by name."""
    network: NotRequired[str]
    """An existing network's id (default: Gcore makes one). Changing it replaces the cluster."""
    subnet: NotRequired[str]
    """A subnet of `network`. Changing it replaces the cluster."""
    cni: NotRequired[str]
    """`calico` (default) or `cilium`. Changing it replaces the cluster."""
    autoscaler: NotRequired[Mapping[str, str]]
    """Gcore's managed Cluster Autoscaler flags, e.g. `{"scale-down-unneeded-time": "40m"}`, over the ones derived
    from the pools (`max-node-provision-time` the slowest pool's `provisionMinutes`, ...)."""


class GpuPool(TypedDict):
    name: str
    """The pool's name in Gcore (2-20 characters), which workloads choose it by."""
    flavor: NotRequired[str]
    """A bare-metal GPU flavor, e.g. `bm3-ai-1xlarge-h100-80-8` (the default). Changing it recreates the pool."""
    gpus_per_node: NotRequired[int]
    """GPUs of one node: only for a flavor newer than the platform's table (with `accept_unlisted_flavor`)."""
    accept_unlisted_flavor: NotRequired[bool]
    """Accept a flavor the platform's table does not list (its GPUs per node then stated)."""
    spot: NotRequired[bool]
    """Spot capacity (Gcore may reclaim a node): only for a flavor the table does not list; else the table says."""
    min_nodes: NotRequired[int]
    """The fewest nodes (default 1; Gcore refuses 0)."""
    max_nodes: NotRequired[int]
    """The most nodes the autoscaler may grow the pool to (default 2), above `min_nodes`."""
    public_ipv4: NotRequired[bool]
    """Public IPv4 addresses on the nodes (default false). Changing it recreates the pool."""
    labels: NotRequired[Mapping[str, str]]
    """The nodes' labels, which the pool's workloads select (default `{platform.gcore-gpu/pool: <name>}`)."""
    taints: NotRequired[Mapping[str, str]]
    """The nodes' taints as `{key: "value:Effect"}`, which the pool's workloads tolerate (default the GPU taint, and
    the spot taint on a spot pool)."""
    provision_minutes: NotRequired[int]
    """Minutes a new node needs until its GPUs are allocatable (default 35, at least 25: Gcore's bare-metal boot)."""
    gpu_ready_gate: NotRequired[bool]
    """Register the nodes with a start-up taint that the platform's gate removes once their GPUs are allocatable,
    so the autoscaler does not order a second node meanwhile (default true)."""


class SystemPool(TypedDict):
    enabled: NotRequired[bool]
    """A VM pool for the platform's own pods (default true): without it they have nowhere to run."""
    name: NotRequired[str]
    """Its name in Gcore (default `system`)."""
    flavor: NotRequired[str]
    """A VM flavor (default `g1-standard-4-8`)."""
    min_nodes: NotRequired[int]
    """The fewest nodes (default 1)."""
    max_nodes: NotRequired[int]
    """The most nodes (default 3)."""
    servergroup_policy: NotRequired[str]
    """`anti-affinity`, `soft-anti-affinity` (default) or `affinity`."""
    boot_volume_size: NotRequired[int]
    """The boot volume's size in GiB (default 50)."""
    boot_volume_type: NotRequired[str]
    """`standard` (default), `ssd_hiiops`, `cold` or `ultra`."""


class ExistingClusterArgs(TypedDict):
    kubeconfig: pulumi.Input[str]
    """The cluster's kubeconfig: a secret config value, or another stack's `kubeconfig` output. Secret here even when
    given in plain text."""
    cluster_name: str
    """The cluster's name, as the stack outputs report it."""
    kubernetes_version: str
    """The version the cluster runs (`kubectl version`'s server version), e.g. `v1.35.3`."""
    autoscaler: NotRequired[Mapping[str, str]]
    """The Cluster Autoscaler flags a cluster created by GpuCluster would get: nothing of the cluster is changed, so
    they are reported once, as a warning, for the cluster's owner to set."""


class GpuClusterArgs(TypedDict):
    cluster: Cluster
    """The cluster: its name, version, keypair, project, region and network."""
    gpu_pools: list[GpuPool]
    """The bare-metal GPU pools, at least one, each with a name of its own."""
    system_pool: NotRequired[SystemPool]
    """The VM pool for the platform's own pods."""
    protect: NotRequired[bool]
    """Protect the cluster against `pulumi destroy` and replacement (production)."""


#: The components' type tokens. The platform program's clusters were `gpu-platform:cluster:<class>` before they came
#: from this package: __main__.py gives them that as an alias, so no cluster and no provider is replaced.
TYPE = "gpu-platform:index:GpuCluster"
EXISTING_TYPE = "gpu-platform:index:ExistingCluster"


class GpuCluster(pulumi.ComponentResource):
    """A `gcore.K8sv2` with its bare-metal GPU pools, its kubeconfig (secret) and a Kubernetes provider."""

    cluster_name: pulumi.Output[str]
    """The cluster's name, read from it."""
    cluster_id: pulumi.Output[str]
    """The cluster's Gcore id."""
    kubernetes_version: pulumi.Output[str]
    """The version the cluster runs."""
    kubeconfig: pulumi.Output[str]
    """The cluster's kubeconfig, secret."""

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, {}, opts)
        cfg = self._config(args)
        c, s = cfg.cluster, cfg.system_pool
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
            for p in cfg.pools
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
        #: The `gcore.K8sv2` (what deleting the cluster deletes along with it: components/kube.py deleted_with).
        self.cluster = gcore.K8sv2(
            f"{name}-cluster",
            name=c.name,  # explicit: an auto-name would break Gcore's 20-character limit
            keypair=c.keypair,
            version=c.version,
            **location,
            fixed_network=c.network,
            fixed_subnet=c.subnet,
            cni=gcore.K8sv2CniArgs(provider=c.cni),
            autoscaler_config=autoscaler_config(cfg.pools, [], c.autoscaler),
            pools=pools,
            timeouts=gcore.K8sv2TimeoutsArgs(**gcore_timeouts(cfg.pools)),
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=cfg.protect,
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
        #: A Kubernetes provider for the cluster (server-side apply), for the platform's releases and workloads.
        self.provider = k8s.Provider(
            f"{name}-provider",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster]),
        )
        self.register_outputs({"clusterName": self.cluster_name, "clusterId": self.cluster_id,
                               "kubernetesVersion": self.kubernetes_version, "kubeconfig": self.kubeconfig})

    def _config(self, args: GpuClusterArgs) -> StackConfig:
        """The arguments as the stack file's sections, checked by the platform's model and its rules over the
        cluster and its pools before any child exists."""
        raw: dict[str, Any] = {"cluster": camel(whole(args.get("cluster"))),
                               "gpuPools": camel(whole(args.get("gpu_pools") or []))}
        if "system_pool" in args:
            raw["systemPool"] = camel(whole(args["system_pool"]))
        if "protect" in args:
            raw["protect"] = args["protect"]
        try:
            cfg = StackConfig.model_validate(raw)
        except ValidationError as exc:
            refuse(self, "GpuCluster", from_validation_error(exc, KNOWN_KEYS, required_keys=REQUIRED_KEYS))
            raise  # not reached: refuse raised
        if cfg.cluster.existing is not None:  # the stack file's key for a cluster made elsewhere
            refuse(self, "GpuCluster", [Problem("cluster.existing", raw["cluster"].get("existing"),
                                                "is not an argument of GpuCluster, which creates its cluster",
                                                "remove it; reach a cluster made elsewhere through its kubeconfig")])
        rules = (cluster_rules.cluster_problems, pool_rules.pool_problems, pool_rules.system_pool_problems,
                 pool_rules.flavor_problems, cluster_rules.autoscaler_problems, cluster_rules.provision_time_problems)
        refuse(self, "GpuCluster", [problem for rule in rules for problem in rule(cfg)])
        return cfg


class ExistingCluster(pulumi.ComponentResource):
    """The `provider` and outputs GpuCluster gives, for a cluster made elsewhere: nothing of the cluster itself
    (pools, Cluster Autoscaler flags, version) is created or changed."""

    cluster_name: pulumi.Output[str]
    """The cluster's name, as given."""
    kubernetes_version: pulumi.Output[str]
    """The version the cluster runs, as given."""
    kubeconfig: pulumi.Output[str]
    """The cluster's kubeconfig, secret."""

    def __init__(self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(EXISTING_TYPE, name, {}, opts)
        version = args.get("kubernetes_version")
        if not isinstance(version, str) or cluster_rules.version_tuple(version, "v") is None:  # the stack file's rule
            refuse(self, "ExistingCluster", [Problem("kubernetesVersion", version, "is not a Kubernetes version",
                                                     "write it like v1.35.3, as `kubectl version` reports the server")])
        self.kubeconfig = pulumi.Output.secret(args["kubeconfig"])
        self.provider = k8s.Provider(
            f"{name}-provider",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.cluster_name = pulumi.Output.from_input(args["cluster_name"])
        self.cluster_id: pulumi.Output[str | None] = pulumi.Output.from_input(None)  # not created here
        self.kubernetes_version = pulumi.Output.from_input(version)
        if flags := args.get("autoscaler"):
            pulumi.log.warn(
                "cluster.existing: this stack does not manage the cluster's Cluster Autoscaler; for the GPU pool, "
                "headroom and rollouts it assumes these settings, to be set by the cluster's owner: "
                + ", ".join(f"{k}={v}" for k, v in sorted(flags.items())), resource=self)
        self.register_outputs({"clusterName": self.cluster_name, "kubernetesVersion": self.kubernetes_version,
                               "kubeconfig": self.kubeconfig})
