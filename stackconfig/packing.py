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


def first_fit_decreasing(
    sizes: Sequence[int], free: Sequence[int], open_size: int | None = None
) -> list[list[int]] | None:
    """Sizes largest first, each onto the first bin (free capacity `free[i]`) with room for it.

    With `open_size`, a size that fits no bin opens a new one of that capacity (how the Cluster Autoscaler
    estimates the nodes Pending pods need); without, it makes the packing fail (None). Returns the sizes placed in
    each bin, the given bins first, then the opened ones.
    """
    room = list(free)
    bins: list[list[int]] = [[] for _ in room]
    for size in sorted(sizes, reverse=True):
        for i, left in enumerate(room):
            if left >= size:
                bins[i].append(size)
                room[i] -= size
                break
        else:
            if open_size is None:
                return None
            bins.append([size])
            room.append(open_size - size)
    return bins


def pack(pod_gpus: Sequence[int], gpus_per_node: int, nodes: int) -> list[list[int]] | None:
    """Per-node GPU sizes of the pods placed there (first-fit decreasing), or None when they do not all fit."""
    if gpus_per_node <= 0 or nodes < 0 or any(size <= 0 for size in pod_gpus):
        raise ValueError(f"pack({list(pod_gpus)}, {gpus_per_node}, {nodes}): sizes must be positive")
    return first_fit_decreasing(pod_gpus, [gpus_per_node] * nodes)
