"""The platform's policies, importable without starting a policy pack (tests call `validate` directly)."""

from .policies import (
    POLICIES,
    cluster_protected,
    container_image_pinned,
    gpu_container_limits,
    gpu_pool_autohealing_off,
    gpu_pool_budget,
    gpu_pool_workloads,
    gpu_scaled_workloads,
    headroom_budget,
    headroom_priority,
    helm_chart_pinned,
    scaled_object_safe,
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
