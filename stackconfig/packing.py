"""First-fit-decreasing bin packing of GPU pods onto identical GPU nodes.

The Kubernetes scheduler places each pod on one node that has enough free `nvidia.com/gpu`, so "do these
pods fit on N nodes of G GPUs" is a bin-packing question. First-fit decreasing (largest pod first, each
onto the first node with room) is what the config rules and tests use: it never claims a fit that does
not exist (the assignment it returns is a real placement), and when every pod size divides the next larger
one and the node size (1, 2, 4 or 8 GPUs on 8-GPU nodes) it finds a fit whenever one exists (Coffman, Garey
and Johnson, "Bin packing with divisible item sizes", J. Complexity 3, 1987). With other sizes (3 GPUs on
8-GPU nodes) it may refuse a packing that exists: the rules then err on the side of asking for a node.
"""

from __future__ import annotations

from collections.abc import Sequence


def pack(pod_gpus: Sequence[int], gpus_per_node: int, nodes: int) -> list[list[int]] | None:
    """Place pods (their GPU counts) onto `nodes` nodes of `gpus_per_node` GPUs each, first-fit decreasing.

    Returns the per-node assignment (one list of pod sizes per node, `nodes` lists, largest pods first), or
    None when the pods do not fit. A pod of 0 GPUs takes no room; a negative size is a caller's bug.
    """
    if gpus_per_node < 1 or nodes < 0:
        raise ValueError(f"need gpus_per_node >= 1 and nodes >= 0, got {gpus_per_node} and {nodes}")
    if any(size < 0 for size in pod_gpus):
        raise ValueError(f"pod sizes must be >= 0, got {list(pod_gpus)}")
    assignment: list[list[int]] = [[] for _ in range(nodes)]
    free = [gpus_per_node] * nodes
    for size in sorted(pod_gpus, reverse=True):
        for node, room in enumerate(free):
            if size <= room:
                assignment[node].append(size)
                free[node] -= size
                break
        else:
            return None
    return assignment
