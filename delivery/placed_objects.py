"""What reaches the cluster from a stack: every object of the rendered charts, of the GPU Operator's run time and of
the program itself, each with the namespace it lands in; and the `Finding` every render check reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from delivery.render import RELEASE_TYPE, StackRender, unwrap
from offline.engine import Recording

#: Pulumi type tokens of Kubernetes objects: `kubernetes:<group>/<version>:<Kind>`.
K8S_PREFIX = "kubernetes:"
NOT_OBJECTS = (RELEASE_TYPE, "pulumi:providers:kubernetes")
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Finding:
    check: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.where}: {self.detail}"


def program_objects(rec: Recording) -> list[dict[str, Any]]:
    """Every Kubernetes object the program registers itself (not the releases), as a manifest."""
    out = []
    for res in rec.resources:
        if not res.type.startswith(K8S_PREFIX) or res.type in NOT_OBJECTS or not res.custom:
            continue
        group_version, _, kind = res.type.removeprefix(K8S_PREFIX).partition(":")
        group, _, version = group_version.partition("/")
        body = {k: v for k, v in unwrap(dict(res.inputs)).items() if k not in ("apiVersion", "kind")}
        api_version = res.inputs.get("apiVersion") or (version if group == "core" else f"{group}/{version}")
        out.append({"apiVersion": api_version, "kind": res.inputs.get("kind") or kind, **body})
    return out


def describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {ns}{meta.get('name')}"


@dataclass(frozen=True)
class Placed:
    """An object with the namespace it lands in (Helm puts namespaced objects without one in the release's)."""

    origin: str
    obj: Mapping[str, Any]
    namespace: str


def everything(rec: Recording, rendered: StackRender) -> list[Placed]:
    out = []
    by_chart = {r.release.chart: r.release.namespace for r in rendered.releases}
    for origin, obj in rendered.objects():
        chart = origin.split(" ", 1)[0]
        ns = (obj.get("metadata") or {}).get("namespace") or by_chart.get(chart, "")
        out.append(Placed(origin, obj, ns))
    for obj in program_objects(rec):
        out.append(Placed("program", obj, (obj.get("metadata") or {}).get("namespace") or ""))
    return out


def namespace_labels(placed: Sequence[Placed]) -> dict[str, dict[str, str]]:
    """Labels of every Namespace the program or a chart creates (plus the one the API server adds)."""
    out = {}
    for p in placed:
        if p.obj.get("kind") == "Namespace":
            meta = p.obj.get("metadata") or {}
            out[meta["name"]] = {**(meta.get("labels") or {}), NAMESPACE_NAME_LABEL: meta["name"]}
    return out


def of_kind(placed: Sequence[Placed], *kinds: str) -> list[Placed]:
    return [p for p in placed if p.obj.get("kind") in kinds]

