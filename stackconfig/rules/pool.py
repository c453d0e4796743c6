"""Rules across the GPU and system pools' keys: a pool the autoscaler can grow, and GPUs per node from the table."""

from __future__ import annotations

import re

from stackconfig import flavors
from stackconfig.errors import Problem
from stackconfig.stack import StackConfig

BARE_METAL_GPU_FLAVOR = re.compile(r"^bm\d+-ai-[a-z0-9-]+$")


def pool_problems(cfg: StackConfig) -> list[Problem]:
    p = cfg.gpu_pool
    out: list[Problem] = []
    if not BARE_METAL_GPU_FLAVOR.match(p.flavor):
        out.append(Problem("gpuPool.flavor", p.flavor, "is not a bare-metal GPU flavor (bm<gen>-ai-...)",
                           "use a flavor such as 'bm3-ai-1xlarge-h100-80-8' (list: GET /cloud/v1/k8s/"
                           "{project}/{region}/flavors)"))
    if p.max_nodes <= p.min_nodes:
        out.append(Problem("gpuPool.maxNodes", p.max_nodes,
                           f"must be greater than gpuPool.minNodes ({p.min_nodes}), or the autoscaler never "
                           "adds a node (min == max disables it)",
                           f"set gpuPool.maxNodes to at least {p.min_nodes + 1}"))
    return out


def system_pool_problems(cfg: StackConfig) -> list[Problem]:
    """The system pool beside the GPU pool: a name of its own, a VM flavor, or a GPU pool others can run on."""
    p = cfg.gpu_pool
    out: list[Problem] = []
    s = cfg.system_pool
    if s.enabled:
        if s.name == p.name:
            out.append(Problem("systemPool.name", s.name, "is the GPU pool's name too; Gcore matches pools by name",
                               "give the system pool another name"))
        if not re.match(r"^[ga]\d", s.flavor):
            out.append(Problem("systemPool.flavor", s.flavor, "is not a VM flavor (g…/a…)",
                               "use a VM flavor such as 'g1-standard-4-8'"))
        if s.max_nodes < s.min_nodes:
            out.append(Problem("systemPool.maxNodes", s.max_nodes, f"is below systemPool.minNodes ({s.min_nodes})",
                               f"set systemPool.maxNodes to at least {s.min_nodes}"))
    elif any(spec.endswith((":NoSchedule", ":NoExecute")) for spec in p.taints.values()):
        out.append(Problem("systemPool.enabled", False,
                           "leaves only the tainted GPU pool, so KEDA, Prometheus and the operators cannot schedule",
                           "keep the system pool, or remove the GPU pool's NoSchedule/NoExecute taints"))
    return out


def flavor_problems(cfg: StackConfig) -> list[Problem]:
    """The GPU count comes from the flavor table only; an unlisted flavor needs an explicit, acknowledged count."""
    p = cfg.gpu_pool
    listed = flavors.gpus_of(p.flavor)
    table = f"the table of Gcore's bare-metal GPU flavors (stackconfig/flavors.py, checked {flavors.CHECKED})"
    if listed is not None:
        out = []
        if p.gpus_per_node is not None and p.gpus_per_node != listed:
            out.append(Problem("gpuPool.gpusPerNode", p.gpus_per_node,
                               f"contradicts {table}: {p.flavor} has {listed} GPUs per node",
                               "remove gpuPool.gpusPerNode (it is derived from the flavor)"))
        if p.accept_unlisted_flavor:
            out.append(Problem("gpuPool.acceptUnlistedFlavor", True, f"is set, but {p.flavor} is in {table}",
                               "remove gpuPool.acceptUnlistedFlavor"))
        return out
    if p.accept_unlisted_flavor:
        if p.gpus_per_node is None:
            return [Problem("gpuPool.gpusPerNode", None,
                            f"is required with gpuPool.acceptUnlistedFlavor: {p.flavor} is not in {table}",
                            "set gpuPool.gpusPerNode to the GPUs of one node of that flavor (Gcore's flavor list)")]
        return []
    guess = flavors.closest(p.flavor)
    hint = f"did you mean '{guess}'? " if guess else ""
    return [Problem("gpuPool.flavor", p.flavor,
                    f"is not in {table}, so its GPUs per node are unknown",
                    f"{hint}use one of {', '.join(flavors.GPU_FLAVORS)}; for a flavor newer than the table set "
                    "gpuPool.gpusPerNode and gpuPool.acceptUnlistedFlavor: true")]
