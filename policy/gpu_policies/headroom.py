"""GPU headroom: placeholder pods that hold spare GPUs (renderers/headroom_specs.py) must rank below every
workload, stay non-expendable for the Cluster Autoscaler, and fit in the budget with the pools' floor."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from stacknames import AUTOSCALER_EXPENDABLE_CUTOFF, CLUSTER_TYPE, COMPONENT_LABEL, PLACEHOLDER_COMPONENT

from .budget import _budget_properties, _pricing, _unpriced
from .props import (
    DEPLOYMENT_TYPE,
    GPU_PLACED_KINDS,
    POD_SPEC_PATHS,
    SCALED_OBJECT_TYPE,
    _count,
    _get,
    _gpu_quantity,
    _money,
    _name,
    _num,
    containers,
    gpu_pools,
    has_gpu_limit,
    pod_spec,
)

PRIORITY_CLASS_TYPE = "kubernetes:scheduling.k8s.io/v1:PriorityClass"


def _is_placeholder(spec_props: Mapping[str, Any], resource_type: str) -> bool:
    labels = _get(spec_props, *POD_SPEC_PATHS[resource_type][:-1], "metadata", "labels") or {}
    return labels.get(COMPONENT_LABEL) == PLACEHOLDER_COMPONENT


def _pod_priority(spec: Mapping[str, Any], classes: Mapping[str, float], default: float) -> float | None:
    """The priority admission gives the pods: their class's value, the global default's, else 0.

    None when the class is not in this stack (a cluster-wide class this graph cannot see)."""
    name = spec.get("priorityClassName")
    if not name:
        return default
    return classes.get(str(name))


def _priority_classes(resources: Iterable[PolicyResource]) -> tuple[dict[str, float], float]:
    classes: dict[str, float] = {}
    default = 0.0
    for res in resources:
        if res.resource_type != PRIORITY_CLASS_TYPE:
            continue
        name, value = _get(res.props, "metadata", "name"), res.props.get("value")
        if isinstance(name, str) and isinstance(value, int | float):
            classes[name] = float(value)
            if res.props.get("globalDefault") is True:
                default = float(value)
    return classes, default


def _headroom_priority(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    classes, default = _priority_classes(args.resources)
    cutoffs = [
        _get(r.props, "autoscalerConfig", "expendable-pods-priority-cutoff")
        for r in args.resources if r.resource_type == CLUSTER_TYPE
    ]
    placeholders: list[tuple[PolicyResource, float | None]] = []
    workloads: list[tuple[PolicyResource, float | None]] = []
    for res in args.resources:
        if res.resource_type not in GPU_PLACED_KINDS:
            continue
        spec = pod_spec(res.resource_type, res.props)
        if spec is None or not has_gpu_limit(spec):
            continue
        (placeholders if _is_placeholder(res.props, res.resource_type) else workloads).append(
            (res, _pod_priority(spec, classes, default))
        )
    for res, priority in placeholders:
        where = f"Headroom placeholders {_name(res.props, res.name)}"
        if priority is None:
            continue
        for cutoff in cutoffs:
            try:
                value = int(float(cutoff)) if cutoff is not None else AUTOSCALER_EXPENDABLE_CUTOFF
            except ValueError:
                continue
            if priority < value:
                report_violation(
                    f"{where} have priority {_num(priority)}, below the cluster autoscaler's "
                    f"expendable-pods-priority-cutoff ({value}): Pending placeholders are expendable and never "
                    "trigger a scale-up, so the headroom is gone after the first burst. Give them a priority ≥ the "
                    "cutoff (the platform uses -10).",
                    res.urn,
                )
        for workload, theirs in workloads:
            if theirs is not None and priority >= theirs:
                report_violation(
                    f"{where} have priority {_num(priority)}, not below GPU workload "
                    f"{_name(workload.props, workload.name)} ({_num(theirs)}): the scheduler preempts only lower "
                    "priorities, so a burst of that workload waits for a new node while placeholders hold the "
                    "GPUs. Give the placeholders a lower PriorityClass (or the workload a higher one).",
                    res.urn,
                )


headroom_priority = StackValidationPolicy(
    name="gpu-headroom-priority-below-workloads",
    description="GPU headroom placeholder pods (label app.kubernetes.io/component=headroom) have a priority below "
    "every GPU workload's and not below the cluster autoscaler's expendable-pods-priority-cutoff.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_headroom_priority,
)


def _held_replicas(deployment: PolicyResource, resources: Sequence[PolicyResource]) -> float:
    """Placeholders held at most: the Deployment's replicas, or the maxReplicaCount of the ScaledObject on it."""
    namespace = _get(deployment.props, "metadata", "namespace")
    name = _get(deployment.props, "metadata", "name")
    for so in resources:
        if so.resource_type != SCALED_OBJECT_TYPE:
            continue
        ref = _get(so.props, "spec", "scaleTargetRef") or {}
        if _get(so.props, "metadata", "namespace") == namespace and ref.get("name") == name:
            return float(_get(so.props, "spec", "maxReplicaCount") or 0)
    replicas = _get(deployment.props, "spec", "replicas")
    return float(replicas) if isinstance(replicas, int | float) else 1.0  # Kubernetes' default


def _placeholder_pool(res: PolicyResource, pools: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The GPU pool a placeholder Deployment holds GPUs on: the one whose labels its pods select (the first pool
    when none matches, as for a stack from before there were several)."""
    selector = (pod_spec(res.resource_type, res.props) or {}).get("nodeSelector") or {}
    for pool in pools:
        labels = pool.get("labels") or {}
        if labels and all(selector.get(k) == v for k, v in labels.items()):
            return pool
    return pools[0]


def _headroom_budget(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    pools = [pool for r in args.resources if r.resource_type == CLUSTER_TYPE for pool in gpu_pools(r.props)]
    if not pools:
        return
    priced = _pricing(args.get_config(), report_violation)
    if priced is None:
        return
    pricing, budget = priced
    floor, floors = 0.0, []
    for pool in pools:
        gpus_per_node = pricing.gpus(pool)
        if gpus_per_node is None:
            _unpriced(pool, report_violation)
            return
        price = gpus_per_node * pricing.price(pool)  # one node-hour
        floor += float(pool.get("minNodeCount") or 0) * price
        floors.append(f"`{pool.get('name')}` {_num(pool.get('minNodeCount'))} nodes × {_money(price)}")
    held, total = [], floor
    for res in args.resources:
        if res.resource_type != DEPLOYMENT_TYPE or not _is_placeholder(res.props, res.resource_type):
            continue
        spec = pod_spec(res.resource_type, res.props) or {}
        gpus_per_pod = sum(float(_count(_gpu_quantity(c, "limits")) or 0) for c in containers(spec)
                           if isinstance(_count(_gpu_quantity(c, "limits")), float))
        gpus = _held_replicas(res, args.resources) * gpus_per_pod
        per_gpu = pricing.price(_placeholder_pool(res, pools))
        cost = gpus * per_gpu
        total += cost
        held.append((res, f"{_name(res.props, res.name)} holds up to {_num(gpus)} idle GPUs × "
                          f"{_money(per_gpu)}/GPU-hour = {_money(cost)}/hour"))
    if held and total > budget:
        together = "" if len(held) == 1 else f" and the other pools' headroom ({_money(total - floor)}/hour in all)"
        for res, line in held:
            report_violation(
                f"Headroom {line}; on top of the GPU pools' floor ({'; '.join(floors)} = {_money(floor)}/hour)"
                f"{together} that is {_money(total)}/hour, over the stack's budget of {_money(budget)}/hour "
                "(`maxHourlyBudget`). Lower the pools' headroom (or its schedules' minReplicas), or raise the budget "
                "in policy/config/<stack>.json after agreeing the spend.",
                res.urn,
            )


headroom_budget = StackValidationPolicy(
    name="gpu-headroom-hourly-budget",
    description="The GPU pools' floor (minNodeCount × GPUs per node × the pool's pricePerGpuHour, summed) plus the "
    "GPUs every pool's headroom placeholders hold at most (× their pool's price) stays within maxHourlyBudget.",
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties=_budget_properties("Most the GPU pool's floor plus the idle headroom may cost per hour.")
    ),
    validate=_headroom_budget,
)
