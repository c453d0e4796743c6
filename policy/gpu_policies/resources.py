"""Policies on one resource at a time: pinned charts and images, GPU limits, safe ScaledObjects, the GPU pool's
autohealing and the production cluster's protection."""

from __future__ import annotations

from collections.abc import Mapping

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from stacknames import CLUSTER_TYPE, GPU_RESOURCE

from .props import (
    _EXACT_VERSION,
    HELM_RELEASE_TYPES,
    SCALED_OBJECT_TYPE,
    _count,
    _gpu_quantity,
    _name,
    _num,
    containers,
    gpu_pools,
    image_problem,
    pod_spec,
)


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
