"""Rules of the GPU headroom and the schedules (issue 8): whole placeholder pods that fit the pool, a priority
the autoscaler does not ignore, windows KEDA accepts."""

from __future__ import annotations

import bisect

from stackconfig import packing
from stackconfig.errors import Problem
from stackconfig.gpu_pool import GpuPoolConfig, ScheduleConfig
from stackconfig.stack import StackConfig
from stacknames import AUTOSCALER_EXPENDABLE_CUTOFF, HEADROOM_NAMESPACE, HEADROOM_PRIORITY


def headroom_problems(cfg: StackConfig) -> list[Problem]:
    out: list[Problem] = []
    for i, w in enumerate(cfg.workloads):
        key = f"workloads[{i}]"
        if w.namespace == HEADROOM_NAMESPACE:
            out.append(Problem(f"{key}.namespace", w.namespace,
                               "is the namespace of the headroom placeholders (Pod Security restricted, "
                               "counted as spare capacity by the alerts)", "use a namespace of your own"))
        for j, sch in enumerate(w.schedules):
            out += schedule_problems(f"{key}.schedules[{j}]", sch)
            if sch.min_replicas > w.max_replicas:
                out.append(Problem(f"{key}.schedules[{j}].minReplicas", sch.min_replicas,
                                   f"is greater than the workload's maxReplicas ({w.max_replicas})",
                                   "lower it, or raise maxReplicas"))
    with_headroom = [(k, p) for k, p in zip(cfg.pool_keys, cfg.pools, strict=True) if p.headroom is not None]
    for key, pool in with_headroom:
        out += _pool_headroom_problems(cfg, key, pool)
    cutoff = cfg.cluster.autoscaler.get("expendable-pods-priority-cutoff")
    if cutoff is not None and any(p.gpus for _, p in with_headroom):
        try:
            value = int(cutoff)
        except ValueError:
            out.append(Problem("cluster.autoscaler.expendable-pods-priority-cutoff", cutoff,
                               "is not an integer priority", f"remove the override or write an integer ≤ "
                               f"{HEADROOM_PRIORITY}"))
            return out
        if value > HEADROOM_PRIORITY:
            out.append(Problem("cluster.autoscaler.expendable-pods-priority-cutoff", cutoff,
                               f"is above the headroom placeholders' priority ({HEADROOM_PRIORITY}): the "
                               "autoscaler would treat Pending placeholders as expendable and never add a node "
                               "for them, so the headroom is gone after the first burst",
                               f"remove the override (default {AUTOSCALER_EXPENDABLE_CUTOFF}) or set it to an "
                               f"integer ≤ {HEADROOM_PRIORITY}"))
    return out


def _pool_headroom_problems(cfg: StackConfig, key: str, pool: GpuPoolConfig) -> list[Problem]:
    """One pool's headroom: whole placeholder pods of a size its nodes hold, that fit at minNodes beside the
    minReplicas of the workloads on that pool, and whose windows fit at maxNodes."""
    h = pool.headroom
    assert h is not None
    if not pool.gpus:
        return []
    out: list[Problem] = []
    pod_gpus = cfg.headroom_pod_gpus(pool)
    for j, sch in enumerate(h.schedules):
        out += schedule_problems(f"{key}.headroom.schedules[{j}]", sch)
    if h.gpus == 0 and not h.schedules:
        out.append(Problem(f"{key}.headroom.gpus", 0, "holds no GPUs and has no schedules",
                           f"set gpus ≥ 1, add schedules, or remove {key}.headroom"))
    if pod_gpus > pool.gpus:
        out.append(Problem(f"{key}.headroom.podGpus", pod_gpus,
                           f"exceeds the GPUs of one pool node ({pool.gpus}); such a placeholder never schedules",
                           f"use at most {pool.gpus}"))
        return out
    if h.gpus % pod_gpus:
        low, high = h.gpus // pod_gpus * pod_gpus, (h.gpus // pod_gpus + 1) * pod_gpus
        out.append(Problem(f"{key}.headroom.gpus", h.gpus,
                           f"is not a whole number of placeholder pods of {pod_gpus} GPU(s) ({key}.headroom."
                           "podGpus, default the largest gpusPerPod of the pool's workloads)",
                           f"use {high}" + (f" or {low}" if low else "")))
        return out
    workloads = cfg.workloads_on(pool)
    workload_pods = [w.gpus_per_pod for w in workloads for _ in range(w.min_replicas)]
    placeholders = h.gpus // pod_gpus
    if packing.pack([*workload_pods, *[pod_gpus] * placeholders], pool.gpus, pool.min_nodes) is None:
        # The most that fit, by bisection: a pack per halving (one per count took 23 s for 3,200 placeholders).
        fit = bisect.bisect(range(placeholders), False, key=lambda n: packing.pack(
            [*workload_pods, *[pod_gpus] * n], pool.gpus, pool.min_nodes) is None) - 1
        out.append(Problem(f"{key}.headroom.gpus", h.gpus,
                           f"does not fit the pool at minNodes ({pool.min_nodes} × {pool.gpus} GPUs) together with "
                           "the minReplicas of its workloads; the autoscaler would keep extra nodes for placeholders "
                           "alone, i.e. a hidden higher minNodes",
                           f"lower {key}.headroom.gpus to at most {max(fit, 0) * pod_gpus}, or raise "
                           f"{key}.minNodes"))
    busiest = max((s.min_replicas for s in h.schedules), default=0)
    # Windows may overlap: the workloads at their highest scheduled minimum, the placeholders at theirs.
    peak_pods = [w.gpus_per_pod for w in workloads
                 for _ in range(max([w.min_replicas, *(s.min_replicas for s in w.schedules)]))]
    if busiest and packing.pack([*peak_pods, *[pod_gpus] * busiest], pool.gpus, pool.max_nodes) is None:
        out.append(Problem(f"{key}.headroom.schedules[*].minReplicas", busiest,
                           f"placeholder pods of {pod_gpus} GPU(s) do not fit the pool even at maxNodes "
                           f"({pool.max_nodes}) beside its workloads' scheduled minimum replicas; they would stay "
                           "Pending",
                           f"lower the window's minReplicas or raise {key}.maxNodes"))
    return out


def schedule_problems(key: str, sch: ScheduleConfig) -> list[Problem]:
    if sch.start == sch.end:
        return [Problem(f"{key}.end", sch.end, "is the same as start; KEDA's cron scaler rejects such a window",
                        "give the window an end different from its start, e.g. start '0 8 * * 1-5', "
                        "end '0 18 * * 1-5'")]
    return []
