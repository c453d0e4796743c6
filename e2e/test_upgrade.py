"""A stack made by an earlier version of this program, brought up to date by `pulumi up` without replacing what runs.

The platform's cluster and workloads were `gpu-platform:cluster:GpuCluster` (or `...:ExistingCluster`) and
`gpu-platform:workloads:GpuWorkload` components before they came from the component package
(`gpu-platform:index:...`, gpu_platform/cluster.py and workload.py). Every child's URN carries its parent's type, so
without the aliases `__main__.py` gives them, the next `up` would create each one's resources anew and delete the
old ones: a second Gcore cluster ordered beside the first (whose name it shares), a GPU Deployment replaced, its
pods restarted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e.harness import Kube, platform
from realengine.stack import project_dir
from realengine.toolchain import ROOT, Toolchain

#: The program as it was: its cluster and workloads under their former types.
FORMER_TYPES = ("import gpu_platform.cluster as c\nc.TYPE = 'gpu-platform:cluster:GpuCluster'\n"
                "c.EXISTING_TYPE = 'gpu-platform:cluster:ExistingCluster'\n"
                "import gpu_platform.workload as w\nw.TYPE = 'gpu-platform:workloads:GpuWorkload'")


def _cluster_id(result: Any) -> Any:
    out = result.outputs.get("clusterId")  # None for an existing cluster
    return out.value if out is not None else None


#: The existing cluster first: destroying the Gcore cluster stops the local control plane standing for it.
@pytest.mark.parametrize("existing_cluster", [True, False], ids=["existing-cluster", "gcore-cluster"])
def test_the_cluster_and_workloads_moved_into_the_component_package_are_kept(tc: Toolchain, kube: Kube,
                                                                             workdir: Path,
                                                                             existing_cluster: bool) -> None:
    with platform("dev", tc, kube, workdir / f"upgrade-{existing_cluster}", existing_cluster=existing_cluster,
                  prelude=FORMER_TYPES) as ls:
        try:
            cluster_id = _cluster_id(ls.up())
            before = kube.get("deployment", "inference", "-n", "gpu-workloads")["metadata"]["uid"]
            project_dir(ROOT, ls.workdir, "")  # the program as it is now
            result = ls.up()
            assert set(result.summary.resource_changes) == {"same"}, result.summary.resource_changes
            assert _cluster_id(result) == cluster_id
            assert kube.get("deployment", "inference", "-n", "gpu-workloads")["metadata"]["uid"] == before
        finally:
            ls.destroy()  # a Gcore cluster's deletes the local control plane standing for it
