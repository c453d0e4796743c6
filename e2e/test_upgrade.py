"""A stack made by an earlier version of this program, brought up to date by `pulumi up` without replacing what runs.

The platform's workloads were `gpu-platform:workloads:GpuWorkload` components before they came from the component
package (`gpu-platform:index:GpuWorkload`, gpu_platform/workload.py TYPE). Every child's URN carries its parent's
type, so without the alias `__main__.py` gives them, the next `up` would create each workload's objects anew and
delete the old ones: a GPU Deployment replaced, its pods restarted.
"""

from __future__ import annotations

from pathlib import Path

from e2e.harness import Kube, platform
from realengine.stack import project_dir
from realengine.toolchain import ROOT, Toolchain

#: The program as it was: its workloads under their former type.
FORMER_TYPE = "import gpu_platform.workload as w\nw.TYPE = 'gpu-platform:workloads:GpuWorkload'"


def test_the_workloads_moved_into_the_component_package_are_kept(tc: Toolchain, kube: Kube, workdir: Path) -> None:
    with platform("dev", tc, kube, workdir / "upgrade", existing_cluster=True, prelude=FORMER_TYPE) as ls:
        try:
            ls.up()
            before = kube.get("deployment", "inference", "-n", "gpu-workloads")["metadata"]["uid"]
            project_dir(ROOT, ls.workdir, "")  # the program as it is now
            changes = ls.up().summary.resource_changes
            assert set(changes) == {"same"}, changes
            assert kube.get("deployment", "inference", "-n", "gpu-workloads")["metadata"]["uid"] == before
        finally:
            ls.destroy()
