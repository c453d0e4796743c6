"""Readers over the engine's props that every policy shares: where a kind keeps its pod spec, GPU limits,
image pins, GPU pools and their placement, and how numbers are printed in a violation.

Props are the engine's camelCase names (`pools[].flavorId`, `spec.template.spec.containers`), the same keys the
mocks record, so the same functions run under `pulumi preview --policy-pack policy` and in the tests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import (
    PolicyResource,
)

from podspec import POD_TEMPLATES, image_unpinned
from stacknames import (
    CLUSTER_TYPE,
    GPU_RESOURCE,
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
