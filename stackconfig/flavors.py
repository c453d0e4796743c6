"""The bare-metal GPU flavors Gcore offers for Managed Kubernetes pools, and how many GPUs each node has.

Why a table: the GPU count of a pool node drives every capacity rule (pods per node, bin-packing, the
autoscaler's maxGpus output, the alerts). Reading it off the flavor id's trailing number silently turned a
flavor with its count dropped (`bm3-ai-1xlarge-h100-80`) into 80 GPUs per node. Only this table may give a
GPU count; a flavor newer than the table is accepted only with an explicit count and acknowledgement
(`gpuPool.gpusPerNode` + `gpuPool.acceptUnlistedFlavor: true`, see docs/configuration-checks.md).

Sources (checked 2026-11-30). Gcore lists the flavors of a region with
`GET /cloud/v1/k8s/{project_id}/{region_id}/flavors` (needs an account; not callable from the tests):

- Gcore docs, "Create a GPU Kubernetes cluster" and "Managed Kubernetes overview"
  (https://gcore.com/docs/edge-ai/managed-kubernetes/create-a-gpu-kubernetes-cluster,
  https://gcore.com/docs/edge-ai/managed-kubernetes/overview): `bm3-ai-ndp2-1xlarge-h100-80-8`,
  `bm3-ai-1xlarge-h100-80-8`, `bm3-ai-1xlarge-a100-80-8`, spot variants such as
  `bm3-ai-ndp2-spot-1xlarge-h100-80-8`; 8 GPUs per server.
- Gcore API reference, "Create bare metal GPU cluster" (https://gcore.com/docs/api-reference/cloud/gpu-cloud/
  create-bare-metal-gpu-cluster-1): `bm3-ai-1xlarge-h100-80-8`.
- G-Core/terraform-provider-gcore v0.34.3: `examples/resources/gcore_k8sv2/with-vast.tf`
  (`bm3-ai-ndp-1xlarge-h100-80-8`, a k8sv2 pool) and `examples/resources/gcore_ai_cluster/
  gpu-with-vast-manual-mount.tf` (`bm3-ai-1xlarge-h200-141-8`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

#: When the table was last compared with the sources above.
CHECKED = "2026-11-30"


@dataclass(frozen=True)
class GpuFlavor:
    """One bare-metal GPU flavor: its id as the API takes it, the GPU model, the GPUs per server, and whether it
    is spot capacity (discounted, reclaimed by Gcore when it needs it back)."""

    id: str
    gpu_model: str
    gpus: int
    spot: bool = False


GPU_FLAVORS: dict[str, GpuFlavor] = {
    f.id: f
    for f in (
        GpuFlavor("bm3-ai-1xlarge-h100-80-8", "H100 80GB", 8),
        GpuFlavor("bm3-ai-ndp-1xlarge-h100-80-8", "H100 80GB", 8),
        GpuFlavor("bm3-ai-ndp2-1xlarge-h100-80-8", "H100 80GB", 8),
        GpuFlavor("bm3-ai-ndp2-spot-1xlarge-h100-80-8", "H100 80GB", 8, spot=True),
        GpuFlavor("bm3-ai-1xlarge-a100-80-8", "A100 80GB", 8),
        GpuFlavor("bm3-ai-1xlarge-h200-141-8", "H200 141GB", 8),
    )
}


def gpus_of(flavor: str) -> int | None:
    """GPUs per node of a listed flavor; None for a flavor the table does not know (never guessed from the id)."""
    listed = GPU_FLAVORS.get(flavor)
    return listed.gpus if listed else None


def is_spot(flavor: str) -> bool | None:
    """Whether a listed flavor is spot capacity; None for a flavor the table does not know."""
    listed = GPU_FLAVORS.get(flavor)
    return listed.spot if listed else None


def closest(flavor: str) -> str | None:
    """The listed flavor a misspelled one most likely meant (a dropped count, a swapped letter)."""
    guesses = difflib.get_close_matches(flavor, list(GPU_FLAVORS), n=1, cutoff=0.8)
    return guesses[0] if guesses else None
