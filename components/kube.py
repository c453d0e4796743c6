"""Small Kubernetes helpers shared by the components."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

PLATFORM_LABELS = {"app.kubernetes.io/part-of": "gpu-platform", "app.kubernetes.io/managed-by": "pulumi"}


def tolerations_for(taints: Mapping[str, str]) -> list[dict[str, Any]]:
    """Tolerations matching Gcore pool taints written as `{key: "value:Effect"}`."""
    out = []
    for key, spec in taints.items():
        value, _, effect = spec.rpartition(":")
        if value:
            out.append({"key": key, "operator": "Equal", "value": value, "effect": effect})
        else:
            out.append({"key": key, "operator": "Exists", "effect": effect})
    return out


def namespace(
    resource_name: str,
    name: str,
    parent: pulumi.Resource,
    pod_security: str = "baseline",
) -> k8s.core.v1.Namespace:
    """A namespace with a Pod Security level: `privileged` only where GPU system pods need it."""
    return k8s.core.v1.Namespace(
        resource_name,
        metadata={
            "name": name,
            "labels": {**PLATFORM_LABELS, "pod-security.kubernetes.io/enforce": pod_security},
        },
        opts=pulumi.ResourceOptions(parent=parent),
    )
