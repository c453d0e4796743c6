"""The package's provider: serves the components to any Pulumi program that added the package
(`pulumi package add`), inferring their schema from the argument types."""

from pulumi.provider.experimental import component_provider_host

from gpu_platform.cluster import ExistingCluster, GpuCluster
from gpu_platform.team import TeamAccess
from gpu_platform.workload import GpuWorkload

if __name__ == "__main__":
    component_provider_host(name="gpu-platform", components=[GpuCluster, ExistingCluster, GpuWorkload, TeamAccess])
