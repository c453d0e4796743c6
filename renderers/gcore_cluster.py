"""The Gcore cluster's inputs derived from config: the Cluster Autoscaler's flags and the resource's timeouts.

Pure functions: gpu_platform/cluster.py hands them to `gcore.K8sv2`, and the what-if (capacity/config.py) runs the
simulated autoscaler on the very same flags.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from stackconfig import GpuPoolConfig, WorkloadConfig
from stacknames import AUTOSCALER_EXPENDABLE_CUTOFF


def autoscaler_config(
    pools: Sequence[GpuPoolConfig], workloads: Sequence[WorkloadConfig], overrides: Mapping[str, str]
) -> dict[str, str]:
    """Cluster Autoscaler flags derived from the GPU pools and the workloads they serve. The flags are the cluster's
    (Gcore's `autoscaler_config` is one map for every pool), so each is the one the slowest pool needs.

    - `max-node-provision-time`: the portal default of 15 min is shorter than a bare-metal GPU node
      takes (20-25 min, then 5-10 min until GPUs are allocatable); with it the autoscaler gives up on
      nodes that are still booting and asks for more (Gcore docs, "Configure GPU autoscaling for Kubernetes":
      https://gcore.com/docs/cloud/kubernetes/clusters/autoscaling/configure-gpu-autoscaling-for-kubernetes).
      The longest `provisionMinutes` of the pools: a shorter one would give up on the slower pool's nodes.
    - `scale-down-unneeded-time`: the longer of two floors. (1) The longest HPA scale-down window (plus KEDA's
      cooldown for workloads that scale to zero) and 5 minutes, so the node is not removed while pods are still
      winding down. (2) The slowest pool's lead time, `provisionMinutes` (Ready plus GPUs allocatable): a node
      removed and needed again comes back only that much later, billed while it boots. Keeping an idle node for
      as long as a replacement takes to come costs at most what one re-order costs (billed boot alone, before any
      demand goes unserved), the break-even rule of rent-or-buy, so whatever the demand does next the pool pays
      at most twice the best choice made in hindsight. A stack that has measured better on its own trace sets the
      key (`python -m capacity tune` searches it; prod's is tuned).
    - `scale-down-delay-after-add`: a fresh node must not be judged idle before its GPUs appear.
    - `expendable-pods-priority-cutoff` (with headroom on any pool): stated at its default, -10, which the
      placeholders' priority must not be below (cluster-autoscaler FAQ.md, "How does Cluster Autoscaler
      work with Pod Priority and Preemption?"); stackconfig refuses an override above it.
    Explicit `cluster.autoscaler` keys win.
    """
    windows = [
        w.scale_down_stabilization_seconds + (w.cooldown_period if w.min_replicas == 0 else 0) for w in workloads
    ]
    provision = max(p.provision_minutes for p in pools)
    unneeded_minutes = max(10, math.ceil(max(windows, default=300) / 60) + 5, provision)
    derived = {
        "max-node-provision-time": f"{provision}m",
        "scale-down-unneeded-time": f"{unneeded_minutes}m",
        "scale-down-delay-after-add": f"{max(15, provision // 2)}m",
    }
    if any(p.headroom is not None for p in pools):
        # Explicit, so the placeholders' contract is visible in the cluster: their priority is not below it.
        derived["expendable-pods-priority-cutoff"] = str(AUTOSCALER_EXPENDABLE_CUTOFF)
    return {**derived, **overrides}


#: The v0 provider awaits every Gcore task it starts (cluster create, version upgrade, cluster update, each pool
#: create or delete, cluster delete) for at most `K8sCreateTimeout = 3600` seconds, hard-coded
#: (G-Core/terraform-provider-gcore v0.34.3, gcore/resource_gcore_k8sv2.go). Nothing configures it.
GCORE_TASK_MINUTES = 60
#: After its last task the provider reads the cluster and its pools back (several API calls).
READ_BACK_MINUTES = 10


def gcore_timeouts(pools: Sequence[GpuPoolConfig]) -> dict[str, str]:
    """The resource's own Terraform `timeouts` (create and update; it declares no delete timeout).

    Why these and not Pulumi's `custom_timeouts`: the provider is served by the Pulumi Terraform bridge's Plugin
    Framework path, whose Create/Update/Delete never read the engine's timeout (pulumi/pulumi-terraform-bridge
    pkg/pf/tfbridge/provider_create.go; issue #827, open). The `timeouts` block is an ordinary input there.
    What it does: the resource declares `Timeouts{Create, Update}` of 3600 s, and the Terraform plugin SDK turns
    them into the deadline of the context handed to create/update; the v0 create/update code calls the Gcore client
    and `tasks.WaitTaskAndReturnResult(..., K8sCreateTimeout, ...)` without that context (gcore/
    resource_gcore_k8sv2.go). So today these values only guarantee that the deadline never undercuts the provider's
    own waits (should a release start honouring it); the 60-minute task cap is what really counts. Each value is
    the longest chain of Gcore tasks the operation can run, plus the read-back:
    - create: one task (the cluster with all its pools), capped at 60 min, then the read-back;
    - update: the longest update this program can plan is recreating a GPU pool (flavor or publicIpv4 changed,
      behind the preview guard): the old pool's delete task (capped at 60 min), then the new pool's create task,
      whose nodes need the pool's `provisionMinutes` (the slowest pool's; capped at 60 min), then the read-back.
    Neither extends the 60-minute cap of a single task: see docs/timeouts-and-recovery.md.
    """
    create = GCORE_TASK_MINUTES + READ_BACK_MINUTES
    slowest = max(p.provision_minutes for p in pools)
    update = GCORE_TASK_MINUTES + min(slowest, GCORE_TASK_MINUTES) + READ_BACK_MINUTES
    return {"create": f"{create}m", "update": f"{update}m"}
