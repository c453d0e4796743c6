"""Stack policies that need two resources at once: a GPU-scaled Deployment and its ScaledObject, a GPU workload
and the pool it can land on."""

from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from stacknames import GPU_RESOURCE

from .props import (
    DEPLOYMENT_TYPE,
    GPU_PLACED_KINDS,
    SCALED_OBJECT_TYPE,
    _get,
    _name,
    gpu_placement,
    gpu_placement_reason,
    has_gpu_limit,
    pod_spec,
)


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
