"""Whether pods of given GPU sizes fit onto a number of equal GPU nodes: first-fit decreasing.

Why not a GPU sum: GPUs are not divisible across nodes. Four pods of 3 GPUs and one of 4 want 16 GPUs and two
8-GPU nodes have 16, but each node holds at most two 3-GPU pods (6 of 8 GPUs), so one pod stays Pending and the
HPA stalls. The scheduler places whole pods, so the check has to as well.

First-fit decreasing (largest pod first, onto the first node with room) is a heuristic for bin packing (an
NP-hard problem): it never claims a packing that does not exist, but it may refuse one that does (it uses at most
11/9 OPT + 6/9 bins; Dósa 2007, "The Tight Bound of First Fit Decreasing Bin-Packing Algorithm Is
FFD(I) ≤ 11/9 OPT(I) + 6/9"). Refusing is the safe side here: the Kubernetes scheduler does not place pods
optimally either (pods arrive one at a time, in no chosen order), so a packing only an exact solver finds would
not be what the cluster reaches at peak anyway. When every pod size divides the next larger one and the node size
(1, 2, 4 or 8 GPUs on 8-GPU nodes) FFD finds a fit whenever one exists (Coffman, Garey and Johnson, "Bin packing
with divisible item sizes", J. Complexity 3, 1987); only mixed sizes such as 3 GPUs can be refused needlessly.
"""

from __future__ import annotations

from collections.abc import Sequence


def pack(pod_gpus: Sequence[int], gpus_per_node: int, nodes: int) -> list[list[int]] | None:
    """Per-node GPU sizes of the pods placed there (first-fit decreasing), or None when they do not all fit."""
    if gpus_per_node <= 0 or nodes < 0 or any(size <= 0 for size in pod_gpus):
        raise ValueError(f"pack({list(pod_gpus)}, {gpus_per_node}, {nodes}): sizes must be positive")
    bins: list[list[int]] = [[] for _ in range(nodes)]
    free = [gpus_per_node] * nodes
    for size in sorted(pod_gpus, reverse=True):
        for i in range(nodes):
            if free[i] >= size:
                bins[i].append(size)
                free[i] -= size
                break
        else:
            return None
    return bins
