"""The GPU platform's components for programs that deploy onto it: from Python directly, from any Pulumi language
through `pulumi package add` (PulumiPlugin.yaml)."""

from gpu_platform.workload import GpuWorkload, GpuWorkloadArgs, MetricsArgs, PoolArgs, PortArgs, RequestsArgs

__all__ = ["GpuWorkload", "GpuWorkloadArgs", "MetricsArgs", "PoolArgs", "PortArgs", "RequestsArgs"]
