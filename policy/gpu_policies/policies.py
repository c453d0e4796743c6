"""Guardrails that protect money and uptime on the GPU platform, as Pulumi policies.

Each policy names the failure it prevents and the upstream source it rests on.
Props are the engine's camelCase names (`pools[].flavorId`, `spec.template.spec.containers`), the same keys
the mocks record, so the same functions run under `pulumi preview --policy-pack policy` and in the tests.

One file over 400 lines: the pack's eleven policies with their helpers, as the CLI loads them; to be split by
concern (resources, stack, headroom) once the budget policies' GPUs-per-node fix (issue 17) has landed here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from podspec import POD_TEMPLATES, image_unpinned
from stacknames import (
    AUTOSCALER_EXPENDABLE_CUTOFF,
    CLUSTER_TYPE,
    COMPONENT_LABEL,
    GPU_RESOURCE,
    PLACEHOLDER_COMPONENT,
    RELEASE_TYPE,
)

HELM_RELEASE_TYPES = (RELEASE_TYPE, "kubernetes:helm.sh/v4:Chart")
SCALED_OBJECT_TYPE = "kubernetes:keda.sh/v1alpha1:ScaledObject"
DEPLOYMENT_TYPE = "kubernetes:apps/v1:Deployment"

#: Where each workload kind keeps its pod spec, by Pulumi type token (podspec.py's table).
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    f"kubernetes:{group_version}:{kind}": (*template, "spec")
    for kind, (group_version, template) in POD_TEMPLATES.items()
}
#: Kinds whose pods are placed on purpose; DaemonSets tolerate taints to run everywhere, not to get a GPU.
GPU_PLACED_KINDS = frozenset(POD_SPEC_PATHS) - {"kubernetes:apps/v1:DaemonSet"}

#: An exact chart version (SemVer, optional leading `v` as NVIDIA's charts use), never a range.
_EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
#: Gcore GPU flavors: bare-metal `bm3-ai-…` and anything naming a GPU model (A100, H100, H200, L40s: Gcore docs,
#: https://gcore.com/docs/edge-ai/managed-kubernetes/overview).
_GPU_FLAVOR = re.compile(r"(^|-)(ai|gpu)(-|$)|h100|h200|a100|l40s", re.IGNORECASE)


# ----------------------------------------------------------------------------------------------------------------
# Helpers over engine props


def _get(props: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(props, Mapping):
            return None
        props = props.get(key)
    return props


def _name(props: Mapping[str, Any], fallback: str) -> str:
    """`namespace/name` of a Kubernetes object for messages and matching."""
    meta = props.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or fallback}"


def pod_spec(resource_type: str, props: Mapping[str, Any]) -> Mapping[str, Any] | None:
    path = POD_SPEC_PATHS.get(resource_type)
    spec = _get(props, *path) if path else None
    return spec if isinstance(spec, Mapping) else None


def containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if isinstance(container, Mapping):
                yield container


def _gpu_quantity(container: Mapping[str, Any], kind: str) -> Any:
    return _get(container, "resources", kind, GPU_RESOURCE)


def _count(quantity: Any) -> float | str | None:
    """A GPU quantity as a number (`"1"`, `1` and the engine's `1.0` are the same), else as written."""
    if quantity is None:
        return None
    try:
        return float(str(quantity))
    except ValueError:
        return str(quantity)


def _positive(quantity: Any) -> bool:
    count = _count(quantity)
    return isinstance(count, float) and count > 0


def has_gpu_limit(spec: Mapping[str, Any]) -> bool:
    return any(_positive(_gpu_quantity(c, "limits")) for c in containers(spec))


def image_problem(image: Any) -> str | None:
    """Why an image reference is not pinned, or None. Pinned = a digest, or a tag other than `latest`."""
    if not isinstance(image, str) or not image.strip():
        return "has no image"
    reason = image_unpinned(image)
    if reason is None:
        return None
    return {"digest": f"has a malformed digest (`{image}`)", "untagged": f"has no tag (`{image}` means `latest`)",
            "latest": f"uses the `latest` tag (`{image}`)"}[reason]


def is_gpu_flavor(flavor: Any) -> bool:
    return isinstance(flavor, str) and bool(_GPU_FLAVOR.search(flavor))


def gpu_pools(props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [p for p in props.get("pools") or [] if isinstance(p, Mapping) and is_gpu_flavor(p.get("flavorId"))]


@dataclass(frozen=True)
class GpuPlacement:
    """What puts a pod on the GPU pool: tolerating one of its taint keys or selecting one of its labels."""

    taint_keys: frozenset[str]
    labels: frozenset[tuple[str, str]]


#: When the stack holds no GPU pool to learn from (a consumer stack, a partial plan): the pool's default taint.
DEFAULT_GPU_PLACEMENT = GpuPlacement(frozenset({GPU_RESOURCE}), frozenset())


def gpu_placement(resources: Iterable[PolicyResource]) -> GpuPlacement:
    """The taint keys and labels of every GPU pool of the Gcore clusters in the stack.

    Learned rather than assumed because `gpuPool.taints` and `gpuPool.labels` are stack config: a rule that only
    knew `nvidia.com/gpu` went silent for a pool tainted with any other key. Gcore writes taints as
    `{key: "value:Effect"}`; a toleration names the key, so the keys are what matters.
    """
    taint_keys: set[str] = set()
    labels: set[tuple[str, str]] = set()
    found = False
    for cluster in resources:
        if cluster.resource_type != CLUSTER_TYPE:
            continue
        for pool in gpu_pools(cluster.props):
            found = True
            taint_keys.update(str(key) for key in pool.get("taints") or {})
            labels.update((str(key), str(value)) for key, value in (pool.get("labels") or {}).items())
    return GpuPlacement(frozenset(taint_keys), frozenset(labels)) if found else DEFAULT_GPU_PLACEMENT


def gpu_placement_reason(spec: Mapping[str, Any], placement: GpuPlacement) -> str | None:
    """Why pods with this spec land on the GPU pool (a tolerated taint, a selected label), or None.

    A `nodeSelector` key under `nvidia.com/gpu` (`nvidia.com/gpu.present`, `.product`) counts whatever the pool's
    own labels are: the GPU Operator's feature discovery puts those labels on every GPU node and nowhere else.
    """
    for toleration in spec.get("tolerations") or []:
        if isinstance(toleration, Mapping) and toleration.get("key") in placement.taint_keys:
            return f"tolerates its taint `{toleration.get('key')}`"
    selector = spec.get("nodeSelector") or {}
    for key, value in selector.items():
        if (str(key), str(value)) in placement.labels:
            return f"selects its label `{key}={value}`"
    for key in selector:
        if str(key).startswith(GPU_RESOURCE):
            return f"selects the GPU node label `{key}`"
    return None


def _num(value: Any) -> str:
    """Engine numbers arrive as floats: show 2.0 as 2."""
    return f"{value:g}" if isinstance(value, float | int) and not isinstance(value, bool) else str(value)


def _money(value: float) -> str:
    return f"{value:.2f}"


# ----------------------------------------------------------------------------------------------------------------
# Resource policies


def _helm_chart_pinned(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in HELM_RELEASE_TYPES:
        return
    chart = str(args.props.get("chart") or "")
    if chart.startswith((".", "/")):
        return  # a chart directory in this repository is pinned by the commit
    version = args.props.get("version")
    if not isinstance(version, str) or not version.strip():
        report_violation(
            f"Helm release `{args.name}` (chart `{chart}`) has no chart `version`: every `pulumi up` may install "
            "whatever the repository serves that day. Pin an exact version (see stackconfig/versions.py)."
        )
    elif not _EXACT_VERSION.match(version.strip()):
        report_violation(
            f"Helm release `{args.name}` (chart `{chart}`) pins `version: {version}`, which is a range or not a "
            "version: pin one exact chart version so preview and up install the same chart."
        )


helm_chart_pinned = ResourceValidationPolicy(
    name="helm-release-pins-chart-version",
    description="Every Helm release pins one exact chart version (no empty version, no range).",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_helm_chart_pinned,
)


def _container_image_pinned(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    spec = pod_spec(args.resource_type, args.props)
    if spec is None:
        return
    for container in containers(spec):
        problem = image_problem(container.get("image"))
        if problem:
            report_violation(
                f"Container `{container.get('name')}` of {_name(args.props, args.name)} {problem}: nodes that pull "
                "at different times run different builds. Use an explicit version tag or a digest."
            )


container_image_pinned = ResourceValidationPolicy(
    name="container-image-pinned",
    description="Every container of a Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job or CronJob "
    "pins its image by tag (not `latest`) or digest.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_container_image_pinned,
)


def _gpu_container_limits(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    spec = pod_spec(args.resource_type, args.props)
    if spec is None:
        return
    where = _name(args.props, args.name)
    for container in containers(spec):
        request, limit = _gpu_quantity(container, "requests"), _gpu_quantity(container, "limits")
        if request is not None and limit is None:
            report_violation(
                f"Container `{container.get('name')}` of {where} requests `{GPU_RESOURCE}: {_num(request)}` without a "
                f"limit: Kubernetes rejects extended-resource requests without an equal limit. Set "
                f"`resources.limits[{GPU_RESOURCE}]`."
            )
        elif request is not None and _count(request) != _count(limit):
            report_violation(
                f"Container `{container.get('name')}` of {where} requests {_num(request)} but limits {_num(limit)} "
                f"`{GPU_RESOURCE}`: Kubernetes requires the two to be equal."
            )


gpu_container_limits = ResourceValidationPolicy(
    name="gpu-container-sets-gpu-limit",
    description=f"A container that requests `{GPU_RESOURCE}` sets an equal limit.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_gpu_container_limits,
)


def _scaled_object_safe(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != SCALED_OBJECT_TYPE:
        return
    where = f"ScaledObject {_name(args.props, args.name)}"
    spec = args.props.get("spec") or {}
    fallback = spec.get("fallback")
    floor = max(1, int(spec.get("minReplicaCount") or 0))
    if not isinstance(fallback, Mapping):
        report_violation(
            f"{where} has no `spec.fallback`: when Prometheus or the query fails, KEDA's HPA has no metric and "
            f"the workload is stuck or scaled in. Set `fallback.failureThreshold` and `fallback.replicas` (≥ {floor})."
        )
    else:
        threshold, replicas = fallback.get("failureThreshold"), fallback.get("replicas")
        if not isinstance(threshold, int | float) or threshold < 1:
            report_violation(f"{where}: `spec.fallback.failureThreshold` must be a number ≥ 1, got {_num(threshold)}.")
        if not isinstance(replicas, int | float) or replicas < floor:
            report_violation(
                f"{where}: `spec.fallback.replicas` is {_num(replicas)}; it must keep serving capacity while the "
                f"metric is missing (≥ max(1, minReplicaCount) = {floor})."
            )
    for index, trigger in enumerate(spec.get("triggers") or []):
        if not isinstance(trigger, Mapping):
            continue
        label = f"{where} trigger {trigger.get('name') or index}"
        metadata = trigger.get("metadata") or {}
        if "metricName" in metadata:
            report_violation(
                f"{label}: `metadata.metricName` was removed in KEDA 2.12 and is silently ignored; use the "
                "trigger's `name` instead."
            )
        if trigger.get("type") == "prometheus" and metadata.get("ignoreNullValues") != "false":
            report_violation(
                f'{label}: `metadata.ignoreNullValues` must be the string "false" (got '
                f"{metadata.get('ignoreNullValues')!r}): with the default, an empty Prometheus result (broken "
                "scrape, missing DCGM labels) reads as 0 load and KEDA scales the workload in (keda#3065)."
            )


scaled_object_safe = ResourceValidationPolicy(
    name="scaledobject-safe-fallback",
    description="Every ScaledObject has a fallback (failureThreshold, replicas) and its Prometheus triggers "
    'treat missing data as an error (`ignoreNullValues: "false"`, no `metricName`).',
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_scaled_object_safe,
)


def _gpu_pool_autohealing_off(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != CLUSTER_TYPE:
        return
    for pool in gpu_pools(args.props):
        if pool.get("autoHealingEnabled") is True:
            report_violation(
                f"GPU pool `{pool.get('name')}` ({pool.get('flavorId')}) has autohealing on: a bare-metal GPU node "
                "needs 20–25 min to boot and 5–10 more until its GPUs are allocatable, so autohealing replaces "
                "healthy nodes mid-initialisation, each time a new billed node. Set `auto_healing_enabled=False` "
                "(Gcore's GPU autoscaling guide, step 7)."
            )


gpu_pool_autohealing_off = ResourceValidationPolicy(
    name="gpu-pool-autohealing-off",
    description="GPU node pools of the Gcore cluster keep autohealing off.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_gpu_pool_autohealing_off,
)


def _cluster_protected(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != CLUSTER_TYPE or not args.get_config().get("requireProtect", False):
        return
    if not args.opts.protect:
        report_violation(
            f"Cluster `{args.name}` is not protected, but this stack requires it (`requireProtect`): a stray "
            "`pulumi destroy` or an accidental replacement would delete the cluster with every GPU node and "
            "workload. Set `protect: true` in the stack config (ResourceOptions(protect=True))."
        )


cluster_protected = ResourceValidationPolicy(
    name="production-cluster-protected",
    description="Where the stack's policy config sets `requireProtect`, the Gcore cluster has `protect` on.",
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "requireProtect": {
                "type": "boolean",
                "default": False,
                "description": "Require ResourceOptions(protect=True) on the gcore K8sv2 cluster (production).",
            }
        }
    ),
    validate=_cluster_protected,
)


#: How the budget policies' stack facts get into their config (delivery/policy_config.py writes them).
REGENERATE = "python -m delivery.policy_config <stack> --write"


@dataclass(frozen=True)
class Pricing:
    """What a budget policy prices with: each GPU pool's `pricePerGpuHour` (by pool name; `per_gpu_hour`, the first
    pool's, for a pool the config does not name) and GPUs per node by flavor (the flavor table, stackconfig/
    flavors.py, plus an unlisted flavor's `gpusPerNode`), all generated into the policy config from the stack, so
    the policy keeps no price and reads no GPU count off a flavor's name."""

    per_gpu_hour: float
    gpus_per_node: Mapping[str, Any]
    by_pool: Mapping[str, Any] = field(default_factory=dict)

    def price(self, pool: Mapping[str, Any]) -> float:
        own = self.by_pool.get(str(pool.get("name")))
        return float(own) if isinstance(own, int | float) and not isinstance(own, bool) and own > 0 \
            else self.per_gpu_hour

    def gpus(self, pool: Mapping[str, Any]) -> int | None:
        count = self.gpus_per_node.get(str(pool.get("flavorId")))
        return int(count) if isinstance(count, int | float) and not isinstance(count, bool) and count > 0 else None


def _pricing(config: Mapping[str, Any], report_violation: ReportViolation) -> tuple[Pricing, float] | None:
    """(pricing, budget) when the config sets a budget; None without one (the check is off). A budget without the
    stack's facts, or with the old `pricePerNodeHour`, is reported rather than silently not checked."""
    budget = config.get("maxHourlyBudget")
    if budget is None:
        return None
    price, table = config.get("pricePerGpuHour"), config.get("gpusPerNode")
    if "pricePerNodeHour" in config or not isinstance(price, int | float) or not isinstance(table, Mapping):
        report_violation(
            f"The policy config sets `maxHourlyBudget: {_num(budget)}` but not the stack's `pricePerGpuHour` and "
            f"`gpusPerNode`{' (it still has the retired `pricePerNodeHour`)' if 'pricePerNodeHour' in config else ''}"
            f", so the budget cannot be checked. Generate them from the stack: `{REGENERATE}`."
        )
        return None
    by_pool = config.get("pricePerGpuHourByPool")
    return Pricing(float(price), table, by_pool if isinstance(by_pool, Mapping) else {}), float(budget)


def _unpriced(pool: Mapping[str, Any], report_violation: ReportViolation, urn: str | None = None) -> None:
    report_violation(
        f"GPU pool `{pool.get('name')}` has flavor `{pool.get('flavorId')}`, which the policy config's `gpusPerNode` "
        f"does not list, so its cost is unknown. Regenerate the config from the stack: `{REGENERATE}`.",
        urn,
    )


def _gpu_pool_budget(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    pools = gpu_pools(args.props) if args.resource_type == CLUSTER_TYPE else []
    if not pools:
        return
    priced = _pricing(args.get_config(), report_violation)
    if priced is None:
        return  # optional: without a budget there is nothing to compare
    pricing, budget = priced
    parts, total = [], 0.0
    for pool in pools:
        gpus = pricing.gpus(pool)
        if gpus is None:
            _unpriced(pool, report_violation)
            continue
        nodes = pool.get("maxNodeCount") or pool.get("minNodeCount") or 0
        cost = float(nodes) * gpus * pricing.price(pool)
        total += cost
        parts.append(f"pool `{pool.get('name')}` up to {_num(nodes)} nodes × {gpus} GPUs × "
                     f"{_money(pricing.price(pool))}/GPU-hour = {_money(cost)}/hour")
    if total > budget:
        report_violation(
            f"The GPU pools of `{args.name}` can cost up to {_money(total)}/hour ({'; '.join(parts)}), over the "
            f"stack's budget of {_money(budget)}/hour (`maxHourlyBudget`). Lower the pool's maxNodes, or raise "
            "the budget in policy/config/<stack>.json after agreeing the spend."
        )


def _budget_properties(budget: str) -> dict[str, Any]:
    """The config both budget policies take: the most the stack may cost per hour (a decision, set by hand) and
    the stack's own price and GPUs per node (facts, generated from the stack: delivery/policy_config.py)."""
    positive = {"type": "number", "exclusiveMinimum": 0}
    return {
        "maxHourlyBudget": {**positive, "description": budget},
        "pricePerGpuHour": {**positive, "description": "The first GPU pool's pricePerGpuHour (generated)."},
        "pricePerGpuHourByPool": {
            "type": "object",
            "additionalProperties": positive,
            "description": "Each GPU pool's pricePerGpuHour by pool name (generated).",
        },
        "gpusPerNode": {
            "type": "object",
            "additionalProperties": {"type": "integer", "minimum": 1},
            "description": "GPUs per node by flavor id: stackconfig/flavors.py and the stack's gpuPool.gpusPerNode "
            "(generated).",
        },
    }


gpu_pool_budget = ResourceValidationPolicy(
    name="gpu-pool-hourly-budget",
    description="The GPU pools' maximum hourly cost (maxNodeCount × GPUs per node × pricePerGpuHour) stays within "
    "maxHourlyBudget, when the stack's policy config sets one.",
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties=_budget_properties("Most the GPU pools may cost per hour at their maximum size.")
    ),
    validate=_gpu_pool_budget,
)


# ----------------------------------------------------------------------------------------------------------------
# Stack policies (need two resources at once)


def _gpu_scaled_workloads(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    deployments = {_name(r.props, r.name): r for r in args.resources if r.resource_type == DEPLOYMENT_TYPE}
    for so in args.resources:
        if so.resource_type != SCALED_OBJECT_TYPE:
            continue
        spec = so.props.get("spec") or {}
        queries = [str(_get(t, "metadata", "query") or "") for t in spec.get("triggers") or []]
        if not any("DCGM_" in q for q in queries):
            continue  # scales on something other than GPU metrics
        ref = spec.get("scaleTargetRef") or {}
        if ref.get("kind", "Deployment") != "Deployment":
            continue
        namespace = _get(so.props, "metadata", "namespace") or "default"
        target = f"{namespace}/{ref.get('name')}"
        deployment = deployments.get(target)
        where = f"ScaledObject {_name(so.props, so.name)}"
        if deployment is None:
            report_violation(
                f"{where} scales Deployment {target} on GPU metrics, but no such Deployment is in this stack: "
                "KEDA would scale nothing.",
                so.urn,
            )
            continue
        spec_of_pods = pod_spec(DEPLOYMENT_TYPE, deployment.props) or {}
        if not has_gpu_limit(spec_of_pods):
            report_violation(
                f"{where} scales Deployment {target} on DCGM GPU utilisation, but no container of it sets "
                f"`resources.limits[{GPU_RESOURCE}]`: dcgm-exporter only labels GPU series with the pods that were "
                "allocated the GPU, so the query stays empty and KEDA stays on its fallback. Set the GPU limit.",
                deployment.urn,
            )


gpu_scaled_workloads = StackValidationPolicy(
    name="gpu-scaled-workload-has-gpu-limit",
    description="Every Deployment that a ScaledObject scales on DCGM GPU metrics exists in the stack and "
    f"sets `{GPU_RESOURCE}` limits.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_gpu_scaled_workloads,
)


def _gpu_pool_workloads(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    placement = gpu_placement(args.resources)
    for res in args.resources:
        if res.resource_type not in GPU_PLACED_KINDS:
            continue
        spec = pod_spec(res.resource_type, res.props)
        if spec is None or has_gpu_limit(spec):
            continue
        reason = gpu_placement_reason(spec, placement)
        if reason is None:
            continue
        report_violation(
            f"{_name(res.props, res.name)} runs on the GPU pool ({reason}) but no container sets "
            f"`resources.limits[{GPU_RESOURCE}]`: its pods hold a bare-metal GPU node without being allocated a "
            "GPU, and dcgm-exporter cannot attribute GPU metrics to them. Set the GPU limit.",
            res.urn,
        )


gpu_pool_workloads = StackValidationPolicy(
    name="gpu-pool-workload-sets-gpu-limit",
    description="A workload other than a DaemonSet that the GPU pool accepts (it tolerates one of the pool's taints "
    "or selects one of its labels, read from the Gcore cluster in the stack) has a container with a "
    f"`{GPU_RESOURCE}` limit.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_gpu_pool_workloads,
)


# ----------------------------------------------------------------------------------------------------------------
# GPU headroom (placeholder pods that hold spare GPUs; renderers/headroom_specs.py)

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


POLICIES: Sequence[ResourceValidationPolicy | StackValidationPolicy] = (
    helm_chart_pinned,
    container_image_pinned,
    gpu_container_limits,
    scaled_object_safe,
    gpu_pool_autohealing_off,
    cluster_protected,
    gpu_pool_budget,
    gpu_scaled_workloads,
    gpu_pool_workloads,
    headroom_priority,
    headroom_budget,
)
