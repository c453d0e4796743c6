"""The resources every component creates the same way: a namespace with its Pod Security level, a pinned release."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from stackconfig.versions import Chart
from stacknames import PLATFORM_LABELS

#: In-cluster kinds that own something outside the cluster (a Gcore load balancer, a Gcore volume): deleting the
#: cluster would leave that behind, so their own delete must still run, first, while the cluster lives.
OWNS_OUTSIDE = ("kubernetes:core/v1:PersistentVolumeClaim", "kubernetes:core/v1:PersistentVolume")


def deleted_with(cluster: pulumi.Resource) -> pulumi.ResourceTransform:
    """A transform (`ResourceOptions.transforms`: the engine runs it on the resource it is given to and on every
    descendant) that marks each in-cluster resource `deleted_with` the cluster: when the cluster itself is deleted
    (destroy, or a replacement), Pulumi skips deleting them one by one against an API server that is going away,
    where Helm uninstalls and namespace finalizers can hang, and deleting the cluster deletes them all.

    It changes nothing while the cluster lives: removing a workload, replacing the KEDA release or a namespace
    deletes each resource as before, in dependency order (ScaledObjects before KEDA clears their finalizers, the
    Grafana Secret after the release). That is why the target is the cluster and never a namespace or a release,
    which do go away while the cluster lives. Left out: whatever owns something outside the cluster (a Service of
    type LoadBalancer, a PersistentVolumeClaim or PersistentVolume: a Gcore load balancer or volume), whose own
    delete must run to release it.
    """

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if not args.type_.startswith("kubernetes:") or args.type_.startswith("pulumi:providers:"):
            return None
        spec = args.props.get("spec") if isinstance(args.props, Mapping) else None
        load_balancer = args.type_ == "kubernetes:core/v1:Service" and isinstance(spec, Mapping) and (
            spec.get("type") == "LoadBalancer")
        if args.type_ in OWNS_OUTSIDE or load_balancer:
            return None
        return pulumi.ResourceTransformResult(
            args.props, pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(deleted_with=cluster)))

    return transform


def namespace(
    resource_name: str,
    name: str,
    parent: pulumi.Resource,
    pod_security: str = "baseline",
    retain: bool = False,
) -> k8s.core.v1.Namespace:
    """A namespace with a Pod Security level: `privileged` only where GPU system pods or hostPath model caches
    need it (renderers/workload_specs.py pod_security_level). `retain`: left in the cluster when this stack no
    longer has it (a team's, holding what the team's own stack made)."""
    return k8s.core.v1.Namespace(
        resource_name,
        metadata={
            "name": name,
            "labels": {**PLATFORM_LABELS, "pod-security.kubernetes.io/enforce": pod_security},
        },
        opts=pulumi.ResourceOptions(parent=parent, retain_on_delete=retain or None),
    )


def chart_source(chart: Chart, version: str, mirror: str | None) -> dict[str, Any]:
    """The Release's `chart`, `version` and `repository_opts`: the chart's own repository, or `charts.mirror` (a
    Helm repository, an `oci://` path, or a directory of packaged archives, which Helm installs from the file:
    pulumi-kubernetes helm_release.go `locateChart`; the file name carries the version)."""
    if mirror is None:
        return {"chart": chart.name, "version": version,
                "repository_opts": k8s.helm.v3.RepositoryOptsArgs(repo=chart.repo)}
    if mirror.startswith("oci://"):
        return {"chart": f"{mirror.rstrip('/')}/{chart.name}", "version": version}
    if "://" in mirror:
        return {"chart": chart.name, "version": version, "repository_opts": k8s.helm.v3.RepositoryOptsArgs(repo=mirror)}
    return {"chart": str(Path(mirror) / chart.archive(version))}


def pinned_release(
    resource_name: str,
    chart: Chart,
    version: str,
    namespace_name: pulumi.Input[str],
    values: Mapping[str, Any],
    parent: pulumi.Resource,
    timeout: int = 600,
    depends_on: list[pulumi.Resource] | None = None,
    mirror: str | None = None,
) -> k8s.helm.v3.Release:
    """A Helm release of `chart` at an exact version, named after the chart, in its own namespace.

    `helm.v3.Release` rather than `helm.v4.Chart`: one node whose inputs `pulumi preview` diffs in full,
    and whose CRDs Helm itself installs (no client-side apply of the large Prometheus CRDs).
    """
    return k8s.helm.v3.Release(
        resource_name,
        name=chart.name,
        **chart_source(chart, version, mirror),
        namespace=namespace_name,
        values=dict(values),
        timeout=timeout,
        cleanup_on_fail=True,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on),
    )


class AddonRelease(pulumi.ComponentResource):
    """An add-on: one pinned Helm release in a namespace of its own, at the Pod Security level its pods need."""

    release: k8s.helm.v3.Release
    namespace: pulumi.Output[str]

    def _install(self, name: str, namespace_name: str, chart: Chart, version: str, values: Mapping[str, Any], *,
                 pod_security: str = "baseline", timeout: int = 600, mirror: str | None = None,
                 register: bool = True) -> None:
        """The namespace, then the release in it; `register_outputs` last (`register=False`: the subclass adds
        children of its own first, then calls `_register`)."""
        ns = namespace(f"{name}-ns", namespace_name, self, pod_security=pod_security)
        self.namespace = ns.metadata.name
        self.release = pinned_release(f"{name}-release", chart, version, self.namespace, values, parent=self,
                                      timeout=timeout, mirror=mirror)
        if register:
            self._register()

    def _register(self) -> None:
        self.register_outputs({"namespace": self.namespace, "release": self.release.name})
