"""Rules across the workloads' keys: unique names, their own namespaces, a pool of the stack, and pods that fit it."""

from __future__ import annotations

import difflib

from stackconfig.errors import UNSET, Problem
from stackconfig.packing import pack
from stackconfig.stack import StackConfig
from stackconfig.workloads import WorkloadConfig
from stacknames import (
    DEFAULT_WORKLOAD_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
    KEDA_NAMESPACE,
    KUBERNETES_NAMESPACE_PREFIX,
    KUBERNETES_NAMESPACES,
    MONITORING_NAMESPACE,
    NODE_EXPORTER_NAMESPACE,
    RESERVED_NAMESPACES,
)

#: Who creates each reserved namespace, for the message.
_OWNERS = {
    GPU_OPERATOR_NAMESPACE: "the platform's GPU Operator release",
    KEDA_NAMESPACE: "the platform's KEDA release",
    MONITORING_NAMESPACE: "the platform's kube-prometheus-stack release",
    NODE_EXPORTER_NAMESPACE: "the platform's node-exporter (Pod Security privileged)",
}


def namespace_problem(key: str, namespace: str) -> Problem | None:
    """A workload namespace the program would create although Kubernetes or the platform already has it.

    The program registers a Namespace for every workload namespace: one that exists already fails with
    AlreadyExists in the middle of `pulumi up`, and `default` could not even be deleted again.
    """
    fix = f"use a namespace of your own, e.g. '{DEFAULT_WORKLOAD_NAMESPACE}' (the default)"
    if namespace in KUBERNETES_NAMESPACES:
        return Problem(key, namespace, "is created by Kubernetes itself in every cluster; the program would create "
                       "it a second time (AlreadyExists mid-`pulumi up`)", fix)
    if namespace.startswith(KUBERNETES_NAMESPACE_PREFIX):
        return Problem(key, namespace, f"starts with '{KUBERNETES_NAMESPACE_PREFIX}', which Kubernetes reserves "
                       "for its own namespaces", fix)
    if namespace in RESERVED_NAMESPACES:
        owner = _OWNERS.get(namespace, "the platform")
        return Problem(key, namespace, f"is reserved: {owner} creates it (a second Namespace of that name fails "
                       "mid-`pulumi up`)", fix)
    return None


def fit_problems(key: str, w: WorkloadConfig, gpus_per_node: int, max_nodes: int,
                 pool_key: str | None = None) -> list[Problem]:
    """Whether one workload fits a GPU pool at all; shared with stacks that deploy onto this platform.
    `pool_key` names the pool (`gpuPools[1]`) on a stack with several."""
    where = f" of {pool_key}" if pool_key else ""
    if w.gpus_per_pod > gpus_per_node:
        return [Problem(f"{key}.gpusPerPod", w.gpus_per_pod,
                        f"exceeds the GPUs of one pool node ({gpus_per_node}{f', {pool_key}' if pool_key else ''}); "
                        "such a pod never schedules",
                        f"use at most {gpus_per_node} GPUs per pod" + (", or choose a pool with larger nodes"
                                                                        if pool_key else ""))]
    per_node = gpus_per_node // w.gpus_per_pod
    if w.max_replicas > per_node * max_nodes:
        return [Problem(f"{key}.maxReplicas", w.max_replicas,
                        f"cannot fit: {max_nodes} node(s){where} hold {per_node} pod(s) of {w.gpus_per_pod} GPU(s) per "
                        f"node, {per_node * max_nodes} in all; extra replicas stay Pending and stall the HPA",
                        f"lower maxReplicas to {per_node * max_nodes} or raise {pool_key or 'gpuPool'}.maxNodes")]
    return []


def pool_choice_problems(cfg: StackConfig, key: str, w: WorkloadConfig) -> list[Problem]:
    """The pool a workload names: one the stack has (or none when it has only one), and spot capacity only for
    a workload that tolerates interruption."""
    names = [p.name for p in cfg.pools]
    choices = ", ".join(names)
    if w.pool is None and len(names) > 1:
        return [Problem(f"{key}.pool", UNSET, f"must be stated: the stack has {len(names)} GPU pools ({choices}), "
                        "and a workload's pods run on one of them", f"set {key}.pool to one of: {choices}")]
    pool = cfg.pool_of(w)
    if pool is None:
        guess = difflib.get_close_matches(str(w.pool), names, n=1)
        hint = f"did you mean '{guess[0]}'? " if guess else ""
        return [Problem(f"{key}.pool", w.pool, f"is not one of the stack's GPU pools ({choices})",
                        f"{hint}use one of: {choices}, or add a pool of that name to gpuPools")]
    if pool.spot and not w.interruptible:
        on_demand = [p.name for p in cfg.pools if not p.spot]
        other = f", or choose an on-demand pool ({', '.join(on_demand)})" if on_demand else ""
        return [Problem(f"{key}.pool", pool.name,
                        "is a spot pool: Gcore may reclaim its nodes (24 hours' notice), and the workload does not say "
                        "it tolerates losing its pods",
                        f"set {key}.interruptible: true if it does (batch work, requests that are retried){other}")]
    return []


def workload_problems(cfg: StackConfig) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, w in enumerate(cfg.workloads):
        key = f"workloads[{i}]"
        if w.name in seen:
            out.append(Problem(f"{key}.name", w.name, f"is already used by workloads[{seen[w.name]}]",
                               "give every workload its own name"))
        seen.setdefault(w.name, i)
        out += own_problems(key, w)
        out += pool_choice_problems(cfg, key, w)
        pool = cfg.pool_of(w)
        if pool is not None and pool.gpus:
            out += fit_problems(key, w, pool.gpus, pool.max_nodes,
                                cfg.pool_key(pool) if len(cfg.pools) > 1 else None)
    return out


def own_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    """The rules across one workload's own keys: a stack file's workload and the GpuWorkload component's
    arguments (gpu_platform/workload.py) both go through them."""
    out: list[Problem] = []
    reserved = namespace_problem(f"{key}.namespace", w.namespace)
    if reserved is not None:
        out.append(reserved)
    if w.min_replicas > w.max_replicas:
        out.append(Problem(f"{key}.minReplicas", w.min_replicas,
                           f"is greater than maxReplicas ({w.max_replicas})",
                           "lower minReplicas or raise maxReplicas"))
    if w.min_replicas == 0 and w.wake_trigger is None:
        out.append(Problem(f"{key}.minReplicas", 0,
                           "scales to zero, but GPU utilisation cannot wake a workload with no pods",
                           f"add {key}.wakeTrigger (a demand query such as queue length) or set "
                           "minReplicas ≥ 1"))
    if w.fallback_replicas is not None and not w.min_replicas <= w.fallback_replicas <= w.max_replicas:
        out.append(Problem(f"{key}.fallbackReplicas", w.fallback_replicas,
                           f"is outside minReplicas..maxReplicas ({w.min_replicas}..{w.max_replicas})",
                           "pick a value in that range"))
    return out


def packing_problems(cfg: StackConfig) -> list[Problem]:
    """All workloads of each pool at their peak, pod by pod, onto its maxNodes nodes (first-fit decreasing,
    stackconfig/packing.py).

    Runs for a pool only when each of its workloads fits it on its own (else fit_problems already named it).
    """
    out: list[Problem] = []
    for key, pool in zip(cfg.pool_keys, cfg.pools, strict=True):
        gpus, nodes = pool.gpus, pool.max_nodes
        workloads = cfg.workloads_on(pool)
        if not gpus or not workloads or any(fit_problems("", w, gpus, nodes) for w in workloads):
            continue
        pods = [w.gpus_per_pod for w in workloads for _ in range(w.max_replicas)]
        if pack(pods, gpus, nodes) is not None:
            continue
        total = sum(pods)
        peak = " + ".join(f"{w.max_replicas}×{w.gpus_per_pod} GPU ({w.name})" for w in workloads)
        where = f" of {key}" if len(cfg.pools) > 1 else ""
        out.append(Problem("workloads[*].maxReplicas", total,
                           f"GPUs at maxReplicas ({peak}) cannot be placed on {nodes} node(s){where} of {gpus} GPUs "
                           f"(capacity of {nodes * gpus}): pods are not split across nodes, and first-fit decreasing "
                           "leaves pods over; they would stay Pending and stall the HPA",
                           f"lower maxReplicas or gpusPerPod, or raise {key}.maxNodes"))
    return out
