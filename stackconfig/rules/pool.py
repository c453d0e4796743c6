"""Rules across the GPU and system pools' keys: pools stated one way, each named once and selected by labels of its
own, a pool the autoscaler can grow, GPUs per node and spot from the table."""

from __future__ import annotations

import re

from stackconfig import flavors, versions
from stackconfig.errors import Problem
from stackconfig.gpu_pool import GpuPoolConfig
from stackconfig.stack import StackConfig
from stacknames import GPU_READY_TAINT_KEY, STARTUP_TAINT_PREFIX

BARE_METAL_GPU_FLAVOR = re.compile(r"^bm\d+-ai-[a-z0-9-]+$")


def _minor(version: str) -> int | None:
    """`v1.35.3` -> 35; None for a version the cluster rules refuse."""
    parts = version.lstrip("v").split(".")
    return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else None


def _labels(labels: dict[str, str]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(labels.items())) or "none"


def pool_problems(cfg: StackConfig) -> list[Problem]:
    out: list[Problem] = []
    if cfg.gpu_pools is not None and cfg.gpu_pool is not None:
        out.append(Problem("gpuPool", cfg.gpu_pool.name,
                           "is set beside gpuPools: a stack states its GPU pools one way",
                           "move gpuPool into gpuPools as its first item, with its name (`gpu` when it had none), "
                           "so that Gcore keeps the pool (docs/gpu-pools.md, 'From gpuPool to gpuPools'), or "
                           "remove gpuPool"))
    if cfg.gpu_pools is not None and not cfg.gpu_pools:
        return [*out, Problem("gpuPools", [], "holds no pool; the platform needs at least one GPU pool",
                              "add a pool, e.g. gpuPools: [{name: h100, flavor: bm3-ai-1xlarge-h100-80-8}]")]
    pools, keys = cfg.pools, cfg.pool_keys
    seen: dict[str, str] = {}
    for key, p in zip(keys, pools, strict=True):
        if p.name in seen:
            out.append(Problem(f"{key}.name", p.name, f"is already the name of {seen[p.name]}: Gcore matches a "
                               "cluster's pools by name, and workloads choose their pool by it",
                               "give every GPU pool its own name"))
        seen.setdefault(p.name, key)
        if not BARE_METAL_GPU_FLAVOR.match(p.flavor):
            out.append(Problem(f"{key}.flavor", p.flavor, "is not a bare-metal GPU flavor (bm<gen>-ai-...)",
                               "use a flavor such as 'bm3-ai-1xlarge-h100-80-8' (list: GET /cloud/v1/k8s/"
                               "{project}/{region}/flavors)"))
        for taint in p.taints:
            if taint.startswith(STARTUP_TAINT_PREFIX):
                # The pool's pods tolerate every key of `taints`, so a start-up taint there would hold nothing back,
                # and no gate would remove it: the autoscaler would count every node as still starting, for good.
                out.append(Problem(f"{key}.taints", {taint: p.taints[taint]},
                                   f"holds a Cluster Autoscaler start-up taint ({STARTUP_TAINT_PREFIX}...): the "
                                   "pool's workloads tolerate every taint listed here, and nothing would remove it",
                                   f"remove it from {key}.taints: {key}.gpuReadyGate (on by default) registers the "
                                   f"nodes with {GPU_READY_TAINT_KEY} and removes it once their GPUs are allocatable"))
        minor = _minor(cfg.cluster.version)
        if p.gpu_ready_gate and minor is not None and minor not in versions.KUBECTL_IMAGES:
            out.append(Problem(f"{key}.gpuReadyGate", True,
                               f"needs kubectl for Kubernetes 1.{minor} (cluster.version {cfg.cluster.version}), and "
                               "stackconfig/versions.py KUBECTL_IMAGES pins it only for "
                               f"1.{', 1.'.join(str(m) for m in sorted(versions.KUBECTL_IMAGES))}",
                               f"set {key}.gpuReadyGate: false, or pin a kubectl image for that minor there"))
        if p.max_nodes <= p.min_nodes:
            out.append(Problem(f"{key}.maxNodes", p.max_nodes,
                               f"must be greater than {key}.minNodes ({p.min_nodes}), or the autoscaler never "
                               "adds a node (min == max disables it)",
                               f"set {key}.maxNodes to at least {p.min_nodes + 1}"))
    return out + selector_problems(cfg)


def selector_problems(cfg: StackConfig) -> list[Problem]:
    """Each pool's workloads select all of its labels: a pool whose labels another pool also carries would let them
    onto that pool's nodes (a batch job on the H100s, an interactive model on spot capacity)."""
    pools, keys = cfg.pools, cfg.pool_keys
    if len(pools) < 2:
        return []
    out: list[Problem] = []
    for key, p in zip(keys, pools, strict=True):
        for other_key, other in zip(keys, pools, strict=True):
            if other_key != key and other.name != p.name and p.labels.items() <= other.labels.items():
                out.append(Problem(f"{key}.labels", dict(p.labels),
                                   f"are all carried by {other_key} ('{other.name}': {_labels(other.labels)}) too, "
                                   f"so a workload of pool '{p.name}', which selects them, could be scheduled onto the "
                                   f"nodes of '{other.name}'",
                                   f"give every pool a label of its own, e.g. platform.gcore-gpu/pool: {p.name} "
                                   "(the default)"))
                break
    return out


def system_pool_problems(cfg: StackConfig) -> list[Problem]:
    """The system pool beside the GPU pools: a name of its own, a VM flavor, or GPU pools others can run on."""
    out: list[Problem] = []
    s = cfg.system_pool
    if s.enabled:
        for key, p in zip(cfg.pool_keys, cfg.pools, strict=True):
            if s.name == p.name:
                which = f"the name of the GPU pool {key}" if len(cfg.pools) > 1 else "the GPU pool's name"
                out.append(Problem("systemPool.name", s.name, f"is {which} too; Gcore matches pools by name",
                                   "give the system pool another name"))
        if not re.match(r"^[ga]\d", s.flavor):
            out.append(Problem("systemPool.flavor", s.flavor, "is not a VM flavor (g…/a…)",
                               "use a VM flavor such as 'g1-standard-4-8'"))
        if s.max_nodes < s.min_nodes:
            out.append(Problem("systemPool.maxNodes", s.max_nodes, f"is below systemPool.minNodes ({s.min_nodes})",
                               f"set systemPool.maxNodes to at least {s.min_nodes}"))
    elif all(_repels(p.taints) for p in cfg.pools):
        out.append(Problem("systemPool.enabled", False,
                           "leaves only tainted GPU pools, so KEDA, Prometheus and the operators cannot schedule",
                           "keep the system pool, or remove a GPU pool's NoSchedule/NoExecute taints"))
    elif all(_repels(p.node_taints) for p in cfg.pools):
        # The untainted pools are all gated: the GPU Operator's own Deployment has nowhere to run until a gate
        # opens, and no gate opens before the operator has made the GPUs allocatable.
        for key, p in zip(cfg.pool_keys, cfg.pools, strict=True):
            if not _repels(p.taints):
                out.append(Problem(f"{key}.gpuReadyGate", True,
                                   "with systemPool.enabled: false leaves the GPU Operator itself nowhere to run: "
                                   "its nodes register with the start-up taint, which only the gate removes, once "
                                   "the operator has made their GPUs allocatable",
                                   f"set {key}.gpuReadyGate: false, or keep the system pool"))
    return out


def _repels(taints: dict[str, str]) -> bool:
    """Whether a pod that tolerates none of these taints is kept off the node."""
    return any(spec.endswith((":NoSchedule", ":NoExecute")) for spec in taints.values())


def flavor_problems(cfg: StackConfig) -> list[Problem]:
    """The GPU count comes from the flavor table only; an unlisted flavor needs an explicit, acknowledged count.
    Spot follows the table too: a spot flavor is reclaimed by Gcore whatever the stack calls it."""
    return [problem for key, p in zip(cfg.pool_keys, cfg.pools, strict=True) for problem in _flavor_problems(key, p)]


def _flavor_problems(key: str, p: GpuPoolConfig) -> list[Problem]:
    listed = flavors.gpus_of(p.flavor)
    table = f"the table of Gcore's bare-metal GPU flavors (stackconfig/flavors.py, checked {flavors.CHECKED})"
    if listed is not None:
        out = []
        if p.gpus_per_node is not None and p.gpus_per_node != listed:
            out.append(Problem(f"{key}.gpusPerNode", p.gpus_per_node,
                               f"contradicts {table}: {p.flavor} has {listed} GPUs per node",
                               f"remove {key}.gpusPerNode (it is derived from the flavor)"))
        if p.accept_unlisted_flavor:
            out.append(Problem(f"{key}.acceptUnlistedFlavor", True, f"is set, but {p.flavor} is in {table}",
                               f"remove {key}.acceptUnlistedFlavor"))
        spot = flavors.is_spot(p.flavor)
        if "spot" in p.model_fields_set and p.spot != spot:
            what = ("a spot flavor: Gcore may reclaim its nodes, so only interruptible workloads may use it"
                    if spot else "an on-demand flavor: Gcore bills it at its standard rate and never reclaims it")
            out.append(Problem(f"{key}.spot", p.spot, f"contradicts {table}: {p.flavor} is {what}",
                               f"remove {key}.spot (it is derived from the flavor)"))
        return out
    if p.accept_unlisted_flavor:
        out = []
        if p.gpus_per_node is None:
            out.append(Problem(f"{key}.gpusPerNode", None,
                               f"is required with {key}.acceptUnlistedFlavor: {p.flavor} is not in {table}",
                               f"set {key}.gpusPerNode to the GPUs of one node of that flavor (Gcore's flavor list)"))
        if "spot" in p.flavor.split("-") and "spot" not in p.model_fields_set:
            out.append(Problem(f"{key}.spot", None, f"must be stated for {p.flavor}, which is not in {table} and "
                               "looks like spot capacity", f"set {key}.spot: true if Gcore may reclaim its nodes, "
                               "false if not"))
        return out
    guess = flavors.closest(p.flavor)
    hint = f"did you mean '{guess}'? " if guess else ""
    return [Problem(f"{key}.flavor", p.flavor,
                    f"is not in {table}, so its GPUs per node are unknown",
                    f"{hint}use one of {', '.join(flavors.GPU_FLAVORS)}; for a flavor newer than the table set "
                    f"{key}.gpusPerNode and {key}.acceptUnlistedFlavor: true")]
