"""The GPU platform's components for programs that deploy onto it: from Python directly, from any Pulumi language
through `pulumi package add` (PulumiPlugin.yaml)."""

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

__all__ = ["GpuWorkload", "GpuWorkloadArgs", "Metrics", "ModelCache", "PlatformWiring", "Pool", "Port", "Probes",
           "RegistryCredentials", "ResourceRequests", "Schedule", "Serving", "Trigger", "WakeTrigger"]
