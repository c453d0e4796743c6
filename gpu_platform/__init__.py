"""The GPU platform's components, for the programs that build it (GpuCluster) and that deploy onto it (GpuWorkload):
from Python directly, from any Pulumi language through `pulumi package add` (PulumiPlugin.yaml)."""

from gpu_platform.cluster import (
    Cluster,
    ExistingCluster,
    ExistingClusterArgs,
    GpuCluster,
    GpuClusterArgs,
    GpuPool,
    SystemPool,
)
from gpu_platform.team import TeamAccess, TeamAccessArgs
from gpu_platform.workload import (
    GpuWorkload,
    GpuWorkloadArgs,
    Metrics,
    ModelCache,
    PlatformWiring,
    Pool,
    Port,
    Probes,
    RegistryCredentials,
    ResourceRequests,
    Schedule,
    Serving,
    Trigger,
    WakeTrigger,
)

__all__ = [
    "Cluster", "ExistingCluster", "ExistingClusterArgs", "GpuCluster", "GpuClusterArgs", "GpuPool", "GpuWorkload",
    "GpuWorkloadArgs", "Metrics", "ModelCache", "PlatformWiring", "Pool", "Port", "Probes", "RegistryCredentials",
    "ResourceRequests", "Schedule", "Serving", "SystemPool", "TeamAccess", "TeamAccessArgs", "Trigger", "WakeTrigger",
]
