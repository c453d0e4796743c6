"""The platform's policies, importable without starting a policy pack (tests call `validate` directly).

One module per concern: readers over the engine's props (`props`), policies on one resource (`resources`), the
hourly budget (`budget`), stack policies over a workload and its ScaledObject or pool (`workloads`), and GPU
headroom (`headroom`). Each policy names the failure it prevents and the upstream source it rests on.
"""

from collections.abc import Sequence

from pulumi_policy import ResourceValidationPolicy, StackValidationPolicy

from .budget import gpu_pool_budget
from .headroom import headroom_budget, headroom_priority
from .resources import (
    cluster_protected,
    container_image_pinned,
    gpu_container_limits,
    gpu_pool_autohealing_off,
    helm_chart_pinned,
    scaled_object_safe,
)
from .workloads import gpu_pool_workloads, gpu_scaled_workloads

#: The pack in the order `pulumi preview --policy-pack policy` reports it.
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

__all__ = [
    "POLICIES",
    "cluster_protected",
    "container_image_pinned",
    "gpu_container_limits",
    "gpu_pool_autohealing_off",
    "gpu_pool_budget",
    "gpu_pool_workloads",
    "gpu_scaled_workloads",
    "headroom_budget",
    "headroom_priority",
    "helm_chart_pinned",
    "scaled_object_safe",
]
