"""Rules across the workloads' keys: unique names, their own namespaces, and pods that fit the GPU pool."""

from __future__ import annotations

from stackconfig.errors import Problem
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


def fit_problems(key: str, w: WorkloadConfig, gpus_per_node: int, max_nodes: int) -> list[Problem]:
    """Whether one workload fits a GPU pool at all; shared with stacks that deploy onto this platform."""
    if w.gpus_per_pod > gpus_per_node:
        return [Problem(f"{key}.gpusPerPod", w.gpus_per_pod,
                        f"exceeds the GPUs of one pool node ({gpus_per_node}); such a pod never schedules",
                        f"use at most {gpus_per_node} GPUs per pod")]
    per_node = gpus_per_node // w.gpus_per_pod
    if w.max_replicas > per_node * max_nodes:
        return [Problem(f"{key}.maxReplicas", w.max_replicas,
                        f"cannot fit: {max_nodes} node(s) hold {per_node} pod(s) of {w.gpus_per_pod} GPU(s) each; "
                        "extra replicas stay Pending and stall the HPA",
                        f"lower maxReplicas to {per_node * max_nodes} or raise gpuPool.maxNodes")]
    return []


def workload_problems(cfg: StackConfig) -> list[Problem]:
    gpus_per_node = cfg.gpu_pool.gpus
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, w in enumerate(cfg.workloads):
        key = f"workloads[{i}]"
        if w.name in seen:
            out.append(Problem(f"{key}.name", w.name, f"is already used by workloads[{seen[w.name]}]",
                               "give every workload its own name"))
        seen.setdefault(w.name, i)
        reserved = namespace_problem(f"{key}.namespace", w.namespace)
        if reserved is not None:
            out.append(reserved)
        if w.min_replicas > w.max_replicas:
            out.append(Problem(f"{key}.minReplicas", w.min_replicas,
                               f"is greater than maxReplicas ({w.max_replicas})",
                               "lower minReplicas or raise maxReplicas"))
        if gpus_per_node:
            out += fit_problems(key, w, gpus_per_node, cfg.gpu_pool.max_nodes)
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
    """All workloads at their peak, pod by pod, onto maxNodes nodes (first-fit decreasing, stackconfig/packing.py).

    Runs only when each workload fits the pool on its own (else fit_problems already named the workload).
    """
    gpus, nodes = cfg.gpu_pool.gpus, cfg.gpu_pool.max_nodes
    if not gpus or not cfg.workloads or any(fit_problems("", w, gpus, nodes) for w in cfg.workloads):
        return []
    pods = [w.gpus_per_pod for w in cfg.workloads for _ in range(w.max_replicas)]
    if pack(pods, gpus, nodes) is not None:
        return []
    total = sum(pods)
    peak = " + ".join(f"{w.max_replicas}×{w.gpus_per_pod} GPU ({w.name})" for w in cfg.workloads)
    return [Problem("workloads[*].maxReplicas", total,
                    f"GPUs at maxReplicas ({peak}) cannot be placed on {nodes} node(s) of {gpus} GPUs (capacity of "
                    f"{cfg.max_gpus}): pods are not split across nodes, and first-fit decreasing leaves pods over; "
                    "they would stay Pending and stall the HPA",
                    "lower maxReplicas or gpusPerPod, or raise gpuPool.maxNodes")]
