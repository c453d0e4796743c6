# Test double of the file that `pulumi install` generates in sdks/gcore/pulumi_gcore/ for terraform-provider
# g-core/gcore 0.34.3. Names, Python/engine property names and types mirror the generated SDK.

"""`gcore.get_k8sv2_kubeconfig[_output]` (Terraform data source `gcore_k8sv2_kubeconfig`)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pulumi

from . import _utilities

__all__ = [
    "GetK8sv2KubeconfigResult",
    "AwaitableGetK8sv2KubeconfigResult",
    "get_k8sv2_kubeconfig",
    "get_k8sv2_kubeconfig_output",
]

TOKEN = "gcore:index/getK8sv2Kubeconfig:getK8sv2Kubeconfig"


@pulumi.output_type
class GetK8sv2KubeconfigResult:
    """A collection of values returned by getK8sv2Kubeconfig. None of them is marked secret by the provider."""

    def __init__(
        __self__,
        client_certificate: str | None = None,
        client_key: str | None = None,
        cluster_ca_certificate: str | None = None,
        cluster_name: str | None = None,
        host: str | None = None,
        id: str | None = None,
        kubeconfig: str | None = None,
        project_id: float | None = None,
        project_name: str | None = None,
        region_id: float | None = None,
        region_name: str | None = None,
    ) -> None:
        values = locals()
        for py_name, expected in _RESULT_FIELDS:
            value = values[py_name]
            if value and not isinstance(value, expected):
                raise TypeError(f"Expected argument '{py_name}' to be a {expected.__name__}")
            pulumi.set(__self__, py_name, value)

    @property
    @pulumi.getter(name="clientCertificate")
    def client_certificate(self) -> str:
        """Base64-encoded client certificate."""
        return pulumi.get(self, "client_certificate")

    @property
    @pulumi.getter(name="clientKey")
    def client_key(self) -> str:
        """Base64-encoded client key."""
        return pulumi.get(self, "client_key")

    @property
    @pulumi.getter(name="clusterCaCertificate")
    def cluster_ca_certificate(self) -> str:
        """Base64-encoded cluster CA certificate."""
        return pulumi.get(self, "cluster_ca_certificate")

    @property
    @pulumi.getter(name="clusterName")
    def cluster_name(self) -> str:
        return pulumi.get(self, "cluster_name")

    @property
    @pulumi.getter
    def host(self) -> str:
        """API server URL."""
        return pulumi.get(self, "host")

    @property
    @pulumi.getter
    def id(self) -> str:
        """The cluster name."""
        return pulumi.get(self, "id")

    @property
    @pulumi.getter
    def kubeconfig(self) -> str:
        """Raw kubeconfig YAML."""
        return pulumi.get(self, "kubeconfig")

    @property
    @pulumi.getter(name="projectId")
    def project_id(self) -> float | None:
        return pulumi.get(self, "project_id")

    @property
    @pulumi.getter(name="projectName")
    def project_name(self) -> str | None:
        return pulumi.get(self, "project_name")

    @property
    @pulumi.getter(name="regionId")
    def region_id(self) -> float | None:
        return pulumi.get(self, "region_id")

    @property
    @pulumi.getter(name="regionName")
    def region_name(self) -> str | None:
        return pulumi.get(self, "region_name")


_RESULT_FIELDS: tuple[tuple[str, type], ...] = (
    ("client_certificate", str),
    ("client_key", str),
    ("cluster_ca_certificate", str),
    ("cluster_name", str),
    ("host", str),
    ("id", str),
    ("kubeconfig", str),
    ("project_id", float),
    ("project_name", str),
    ("region_id", float),
    ("region_name", str),
)


class AwaitableGetK8sv2KubeconfigResult(GetK8sv2KubeconfigResult):
    def __await__(self) -> Generator[Any, None, GetK8sv2KubeconfigResult]:
        if False:
            yield self
        return _copy(self)


def _copy(result: GetK8sv2KubeconfigResult) -> GetK8sv2KubeconfigResult:
    # `pulumi.get` instead of the getters, as generated code does.
    return GetK8sv2KubeconfigResult(**{py_name: pulumi.get(result, py_name) for py_name, _ in _RESULT_FIELDS})


def _invoke_args(
    cluster_name: Any, id: Any, project_id: Any, project_name: Any, region_id: Any, region_name: Any
) -> dict[str, Any]:
    return {
        "clusterName": cluster_name,
        "id": id,
        "projectId": project_id,
        "projectName": project_name,
        "regionId": region_id,
        "regionName": region_name,
    }


def get_k8sv2_kubeconfig(
    cluster_name: str | None = None,
    id: str | None = None,
    project_id: float | None = None,
    project_name: str | None = None,
    region_id: float | None = None,
    region_name: str | None = None,
    opts: pulumi.InvokeOptions | None = None,
) -> AwaitableGetK8sv2KubeconfigResult:
    """
    Kubeconfig and credentials of a Gcore Managed Kubernetes cluster (plain invoke).

    `cluster_name` is required by the provider; exactly one of project_id/project_name and of
    region_id/region_name. Parameter order and `= None` defaults follow codegen (schema order).
    """
    __args__ = _invoke_args(cluster_name, id, project_id, project_name, region_id, region_name)
    opts = pulumi.InvokeOptions.merge(_utilities.get_invoke_opts_defaults(), opts)
    __ret__ = pulumi.runtime.invoke(
        TOKEN, __args__, opts=opts, typ=GetK8sv2KubeconfigResult, package_ref=_utilities.get_package()
    ).value
    return AwaitableGetK8sv2KubeconfigResult(**{py_name: pulumi.get(__ret__, py_name) for py_name, _ in _RESULT_FIELDS})


def get_k8sv2_kubeconfig_output(
    cluster_name: pulumi.Input[str | None] = None,
    id: pulumi.Input[str | None] = None,
    project_id: pulumi.Input[float | None] = None,
    project_name: pulumi.Input[str | None] = None,
    region_id: pulumi.Input[float | None] = None,
    region_name: pulumi.Input[str | None] = None,
    opts: pulumi.InvokeOptions | pulumi.InvokeOutputOptions | None = None,
) -> pulumi.Output[GetK8sv2KubeconfigResult]:
    """
    Output form of `get_k8sv2_kubeconfig`: accepts Outputs (e.g. `cluster.name`) and waits for them.

    Its fields are not secret; wrap `kubeconfig` in `pulumi.Output.secret` before exporting or passing it on.
    """
    __args__ = _invoke_args(cluster_name, id, project_id, project_name, region_id, region_name)
    opts = pulumi.InvokeOutputOptions.merge(_utilities.get_invoke_opts_defaults(), opts)
    __ret__ = pulumi.runtime.invoke_output(
        TOKEN, __args__, opts=opts, typ=GetK8sv2KubeconfigResult, package_ref=_utilities.get_package()
    )
    return __ret__.apply(_copy)
