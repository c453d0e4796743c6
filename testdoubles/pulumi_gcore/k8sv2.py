# Test double of the file that `pulumi install` generates in sdks/gcore/pulumi_gcore/ for terraform-provider
# g-core/gcore 0.34.3. Names, Python/engine property names and types mirror the generated SDK.

"""`gcore.K8sv2` (Terraform `gcore_k8sv2`): a Gcore Managed Kubernetes cluster with its node pools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, overload

import pulumi

from . import _utilities, outputs
from ._inputs import (
    K8sv2AuthenticationArgs,
    K8sv2AuthenticationArgsDict,
    K8sv2CniArgs,
    K8sv2CniArgsDict,
    K8sv2CsiArgs,
    K8sv2CsiArgsDict,
    K8sv2DdosProfileArgs,
    K8sv2DdosProfileArgsDict,
    K8sv2PoolArgs,
    K8sv2PoolArgsDict,
    K8sv2SecurityGroupRuleArgs,
    K8sv2SecurityGroupRuleArgsDict,
    K8sv2TimeoutsArgs,
    K8sv2TimeoutsArgsDict,
)

__all__ = ["K8sv2Args", "K8sv2"]

#: The only keys of the resource's Terraform `timeouts` block: the resource declares
#: `Timeouts: &schema.ResourceTimeout{Create: ..., Update: ...}` and no Delete (G-Core/terraform-provider-gcore
#: v0.34.3, gcore/resource_gcore_k8sv2.go; docs/resources/k8sv2.md "Nested Schema for `timeouts`").
_TIMEOUT_KEYS = frozenset({"create", "update"})


def _timeouts(value: Any) -> Any:
    """Refuse a `delete` (or any other) key in a dict-shaped `timeouts`, as the provider's schema would.

    `K8sv2TimeoutsArgs(delete=...)` is already a TypeError (no such keyword); a plain dict reaches the
    provider, whose Check rejects the unknown attribute: the double fails at once instead.
    """
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - _TIMEOUT_KEYS)
        if unknown:
            raise TypeError(f"K8sv2 timeouts accept only 'create' and 'update', not {unknown}: the provider "
                            "declares no delete timeout")
    return value



@pulumi.input_type
class K8sv2Args:
    def __init__(
        __self__,
        *,
        keypair: pulumi.Input[str],
        pools: pulumi.Input[Sequence[pulumi.Input[K8sv2PoolArgs | K8sv2PoolArgsDict]]],
        version: pulumi.Input[str],
        authentication: pulumi.Input[K8sv2AuthenticationArgs | K8sv2AuthenticationArgsDict | None] = None,
        autoscaler_config: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
        cni: pulumi.Input[K8sv2CniArgs | K8sv2CniArgsDict | None] = None,
        csi: pulumi.Input[K8sv2CsiArgs | K8sv2CsiArgsDict | None] = None,
        ddos_profile: pulumi.Input[K8sv2DdosProfileArgs | K8sv2DdosProfileArgsDict | None] = None,
        fixed_network: pulumi.Input[str | None] = None,
        fixed_subnet: pulumi.Input[str | None] = None,
        is_ipv6: pulumi.Input[bool | None] = None,
        k8sv2_id: pulumi.Input[str | None] = None,
        name: pulumi.Input[str | None] = None,
        pods_ip_pool: pulumi.Input[str | None] = None,
        pods_ipv6_pool: pulumi.Input[str | None] = None,
        project_id: pulumi.Input[float | None] = None,
        project_name: pulumi.Input[str | None] = None,
        region_id: pulumi.Input[float | None] = None,
        region_name: pulumi.Input[str | None] = None,
        security_group_rules: pulumi.Input[
            Sequence[pulumi.Input[K8sv2SecurityGroupRuleArgs | K8sv2SecurityGroupRuleArgsDict]] | None
        ] = None,
        services_ip_pool: pulumi.Input[str | None] = None,
        services_ipv6_pool: pulumi.Input[str | None] = None,
        timeouts: pulumi.Input[K8sv2TimeoutsArgs | K8sv2TimeoutsArgsDict | None] = None,
    ) -> None:
        """The set of arguments for constructing a K8sv2 resource."""
        pulumi.set(__self__, "keypair", keypair)
        pulumi.set(__self__, "pools", pools)
        pulumi.set(__self__, "version", version)
        if authentication is not None:
            pulumi.set(__self__, "authentication", authentication)
        if autoscaler_config is not None:
            pulumi.set(__self__, "autoscaler_config", autoscaler_config)
        if cni is not None:
            pulumi.set(__self__, "cni", cni)
        if csi is not None:
            pulumi.set(__self__, "csi", csi)
        if ddos_profile is not None:
            pulumi.set(__self__, "ddos_profile", ddos_profile)
        if fixed_network is not None:
            pulumi.set(__self__, "fixed_network", fixed_network)
        if fixed_subnet is not None:
            pulumi.set(__self__, "fixed_subnet", fixed_subnet)
        if is_ipv6 is not None:
            pulumi.set(__self__, "is_ipv6", is_ipv6)
        if k8sv2_id is not None:
            pulumi.set(__self__, "k8sv2_id", k8sv2_id)
        if name is not None:
            pulumi.set(__self__, "name", name)
        if pods_ip_pool is not None:
            pulumi.set(__self__, "pods_ip_pool", pods_ip_pool)
        if pods_ipv6_pool is not None:
            pulumi.set(__self__, "pods_ipv6_pool", pods_ipv6_pool)
        if project_id is not None:
            pulumi.set(__self__, "project_id", project_id)
        if project_name is not None:
            pulumi.set(__self__, "project_name", project_name)
        if region_id is not None:
            pulumi.set(__self__, "region_id", region_id)
        if region_name is not None:
            pulumi.set(__self__, "region_name", region_name)
        if security_group_rules is not None:
            pulumi.set(__self__, "security_group_rules", security_group_rules)
        if services_ip_pool is not None:
            pulumi.set(__self__, "services_ip_pool", services_ip_pool)
        if services_ipv6_pool is not None:
            pulumi.set(__self__, "services_ipv6_pool", services_ipv6_pool)
        if timeouts is not None:
            pulumi.set(__self__, "timeouts", timeouts)

    @property
    @pulumi.getter
    def keypair(self) -> pulumi.Input[str]:
        """Name of the SSH keypair (ForceNew)."""
        return pulumi.get(self, "keypair")

    @keypair.setter
    def keypair(self, value: pulumi.Input[str]) -> None:
        pulumi.set(self, "keypair", value)

    @property
    @pulumi.getter
    def pools(self) -> pulumi.Input[Sequence[pulumi.Input[K8sv2PoolArgs]]]:
        """Node pools (at least one)."""
        return pulumi.get(self, "pools")

    @pools.setter
    def pools(self, value: pulumi.Input[Sequence[pulumi.Input[K8sv2PoolArgs]]]) -> None:
        pulumi.set(self, "pools", value)

    @property
    @pulumi.getter
    def version(self) -> pulumi.Input[str]:
        """Kubernetes version with the v prefix, e.g. "v1.33.10". Upgraded in place."""
        return pulumi.get(self, "version")

    @version.setter
    def version(self, value: pulumi.Input[str]) -> None:
        pulumi.set(self, "version", value)

    @property
    @pulumi.getter
    def authentication(self) -> pulumi.Input[K8sv2AuthenticationArgs | None]:
        """Cluster authentication (OIDC) settings."""
        return pulumi.get(self, "authentication")

    @authentication.setter
    def authentication(self, value: pulumi.Input[K8sv2AuthenticationArgs | None]) -> None:
        pulumi.set(self, "authentication", value)

    @property
    @pulumi.getter(name="autoscalerConfig")
    def autoscaler_config(self) -> pulumi.Input[Mapping[str, pulumi.Input[str]] | None]:
        """Cluster-autoscaler options (flat string map)."""
        return pulumi.get(self, "autoscaler_config")

    @autoscaler_config.setter
    def autoscaler_config(self, value: pulumi.Input[Mapping[str, pulumi.Input[str]] | None]) -> None:
        pulumi.set(self, "autoscaler_config", value)

    @property
    @pulumi.getter
    def cni(self) -> pulumi.Input[K8sv2CniArgs | None]:
        """CNI settings (ForceNew block)."""
        return pulumi.get(self, "cni")

    @cni.setter
    def cni(self, value: pulumi.Input[K8sv2CniArgs | None]) -> None:
        pulumi.set(self, "cni", value)

    @property
    @pulumi.getter
    def csi(self) -> pulumi.Input[K8sv2CsiArgs | None]:
        """CSI settings."""
        return pulumi.get(self, "csi")

    @csi.setter
    def csi(self, value: pulumi.Input[K8sv2CsiArgs | None]) -> None:
        pulumi.set(self, "csi", value)

    @property
    @pulumi.getter(name="ddosProfile")
    def ddos_profile(self) -> pulumi.Input[K8sv2DdosProfileArgs | None]:
        """DDoS profile."""
        return pulumi.get(self, "ddos_profile")

    @ddos_profile.setter
    def ddos_profile(self, value: pulumi.Input[K8sv2DdosProfileArgs | None]) -> None:
        pulumi.set(self, "ddos_profile", value)

    @property
    @pulumi.getter(name="fixedNetwork")
    def fixed_network(self) -> pulumi.Input[str | None]:
        """Network UUID (ForceNew)."""
        return pulumi.get(self, "fixed_network")

    @fixed_network.setter
    def fixed_network(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "fixed_network", value)

    @property
    @pulumi.getter(name="fixedSubnet")
    def fixed_subnet(self) -> pulumi.Input[str | None]:
        """Subnet UUID; the subnet needs a router (ForceNew)."""
        return pulumi.get(self, "fixed_subnet")

    @fixed_subnet.setter
    def fixed_subnet(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "fixed_subnet", value)

    @property
    @pulumi.getter(name="isIpv6")
    def is_ipv6(self) -> pulumi.Input[bool | None]:
        """Enable IPv6 (ForceNew)."""
        return pulumi.get(self, "is_ipv6")

    @is_ipv6.setter
    def is_ipv6(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "is_ipv6", value)

    @property
    @pulumi.getter(name="k8sv2Id")
    def k8sv2_id(self) -> pulumi.Input[str | None]:
        """The Terraform `id` (renamed by the bridge). Do not set it."""
        return pulumi.get(self, "k8sv2_id")

    @k8sv2_id.setter
    def k8sv2_id(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "k8sv2_id", value)

    @property
    @pulumi.getter
    def name(self) -> pulumi.Input[str | None]:
        """Cluster name, ^[a-z][a-z0-9-]{0,18}[a-z0-9]$ (ForceNew). Always set it."""
        return pulumi.get(self, "name")

    @name.setter
    def name(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "name", value)

    @property
    @pulumi.getter(name="podsIpPool")
    def pods_ip_pool(self) -> pulumi.Input[str | None]:
        """Pods IPv4 CIDR (ForceNew)."""
        return pulumi.get(self, "pods_ip_pool")

    @pods_ip_pool.setter
    def pods_ip_pool(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "pods_ip_pool", value)

    @property
    @pulumi.getter(name="podsIpv6Pool")
    def pods_ipv6_pool(self) -> pulumi.Input[str | None]:
        """Pods IPv6 CIDR (ForceNew)."""
        return pulumi.get(self, "pods_ipv6_pool")

    @pods_ipv6_pool.setter
    def pods_ipv6_pool(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "pods_ipv6_pool", value)

    @property
    @pulumi.getter(name="projectId")
    def project_id(self) -> pulumi.Input[float | None]:
        """Project id; exactly one of project_id / project_name."""
        return pulumi.get(self, "project_id")

    @project_id.setter
    def project_id(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "project_id", value)

    @property
    @pulumi.getter(name="projectName")
    def project_name(self) -> pulumi.Input[str | None]:
        """Project name; exactly one of project_id / project_name."""
        return pulumi.get(self, "project_name")

    @project_name.setter
    def project_name(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "project_name", value)

    @property
    @pulumi.getter(name="regionId")
    def region_id(self) -> pulumi.Input[float | None]:
        """Region id; exactly one of region_id / region_name."""
        return pulumi.get(self, "region_id")

    @region_id.setter
    def region_id(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "region_id", value)

    @property
    @pulumi.getter(name="regionName")
    def region_name(self) -> pulumi.Input[str | None]:
        """Region name; exactly one of region_id / region_name."""
        return pulumi.get(self, "region_name")

    @region_name.setter
    def region_name(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "region_name", value)

    @property
    @pulumi.getter(name="securityGroupRules")
    def security_group_rules(self) -> pulumi.Input[Sequence[pulumi.Input[K8sv2SecurityGroupRuleArgs]] | None]:
        """Security group rules (a set)."""
        return pulumi.get(self, "security_group_rules")

    @security_group_rules.setter
    def security_group_rules(
        self, value: pulumi.Input[Sequence[pulumi.Input[K8sv2SecurityGroupRuleArgs]] | None]
    ) -> None:
        pulumi.set(self, "security_group_rules", value)

    @property
    @pulumi.getter(name="servicesIpPool")
    def services_ip_pool(self) -> pulumi.Input[str | None]:
        """Services IPv4 CIDR (ForceNew)."""
        return pulumi.get(self, "services_ip_pool")

    @services_ip_pool.setter
    def services_ip_pool(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "services_ip_pool", value)

    @property
    @pulumi.getter(name="servicesIpv6Pool")
    def services_ipv6_pool(self) -> pulumi.Input[str | None]:
        """Services IPv6 CIDR (ForceNew)."""
        return pulumi.get(self, "services_ipv6_pool")

    @services_ipv6_pool.setter
    def services_ipv6_pool(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "services_ipv6_pool", value)

    @property
    @pulumi.getter
    def timeouts(self) -> pulumi.Input[K8sv2TimeoutsArgs | None]:
        """Terraform `timeouts` (create, update; provider defaults 3600 s each). No `delete`."""
        return pulumi.get(self, "timeouts")

    @timeouts.setter
    def timeouts(self, value: pulumi.Input[K8sv2TimeoutsArgs | None]) -> None:
        pulumi.set(self, "timeouts", value)


@pulumi.type_token("gcore:index/k8sv2:K8sv2")
class K8sv2(pulumi.CustomResource):
    """Represent k8s cluster with one default pool (Terraform `gcore_k8sv2`, provider v0.34.3)."""

    @overload
    def __init__(
        __self__,
        resource_name: str,
        opts: pulumi.ResourceOptions | None = None,
        *,
        authentication: pulumi.Input[K8sv2AuthenticationArgs | K8sv2AuthenticationArgsDict | None] = None,
        autoscaler_config: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
        cni: pulumi.Input[K8sv2CniArgs | K8sv2CniArgsDict | None] = None,
        csi: pulumi.Input[K8sv2CsiArgs | K8sv2CsiArgsDict | None] = None,
        ddos_profile: pulumi.Input[K8sv2DdosProfileArgs | K8sv2DdosProfileArgsDict | None] = None,
        fixed_network: pulumi.Input[str | None] = None,
        fixed_subnet: pulumi.Input[str | None] = None,
        is_ipv6: pulumi.Input[bool | None] = None,
        k8sv2_id: pulumi.Input[str | None] = None,
        keypair: pulumi.Input[str | None] = None,
        name: pulumi.Input[str | None] = None,
        pods_ip_pool: pulumi.Input[str | None] = None,
        pods_ipv6_pool: pulumi.Input[str | None] = None,
        pools: pulumi.Input[Sequence[pulumi.Input[K8sv2PoolArgs | K8sv2PoolArgsDict]] | None] = None,
        project_id: pulumi.Input[float | None] = None,
        project_name: pulumi.Input[str | None] = None,
        region_id: pulumi.Input[float | None] = None,
        region_name: pulumi.Input[str | None] = None,
        security_group_rules: pulumi.Input[
            Sequence[pulumi.Input[K8sv2SecurityGroupRuleArgs | K8sv2SecurityGroupRuleArgsDict]] | None
        ] = None,
        services_ip_pool: pulumi.Input[str | None] = None,
        services_ipv6_pool: pulumi.Input[str | None] = None,
        timeouts: pulumi.Input[K8sv2TimeoutsArgs | K8sv2TimeoutsArgsDict | None] = None,
        version: pulumi.Input[str | None] = None,
        __props__: K8sv2Args | None = None,
    ) -> None: ...

    @overload
    def __init__(__self__, resource_name: str, args: K8sv2Args, opts: pulumi.ResourceOptions | None = None) -> None: ...

    def __init__(
        __self__,
        resource_name: str,
        args: K8sv2Args | pulumi.ResourceOptions | None = None,
        opts: pulumi.ResourceOptions | None = None,
        *,
        authentication: pulumi.Input[K8sv2AuthenticationArgs | K8sv2AuthenticationArgsDict | None] = None,
        autoscaler_config: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
        cni: pulumi.Input[K8sv2CniArgs | K8sv2CniArgsDict | None] = None,
        csi: pulumi.Input[K8sv2CsiArgs | K8sv2CsiArgsDict | None] = None,
        ddos_profile: pulumi.Input[K8sv2DdosProfileArgs | K8sv2DdosProfileArgsDict | None] = None,
        fixed_network: pulumi.Input[str | None] = None,
        fixed_subnet: pulumi.Input[str | None] = None,
        is_ipv6: pulumi.Input[bool | None] = None,
        k8sv2_id: pulumi.Input[str | None] = None,
        keypair: pulumi.Input[str | None] = None,
        name: pulumi.Input[str | None] = None,
        pods_ip_pool: pulumi.Input[str | None] = None,
        pods_ipv6_pool: pulumi.Input[str | None] = None,
        pools: pulumi.Input[Sequence[pulumi.Input[K8sv2PoolArgs | K8sv2PoolArgsDict]] | None] = None,
        project_id: pulumi.Input[float | None] = None,
        project_name: pulumi.Input[str | None] = None,
        region_id: pulumi.Input[float | None] = None,
        region_name: pulumi.Input[str | None] = None,
        security_group_rules: pulumi.Input[
            Sequence[pulumi.Input[K8sv2SecurityGroupRuleArgs | K8sv2SecurityGroupRuleArgsDict]] | None
        ] = None,
        services_ip_pool: pulumi.Input[str | None] = None,
        services_ipv6_pool: pulumi.Input[str | None] = None,
        timeouts: pulumi.Input[K8sv2TimeoutsArgs | K8sv2TimeoutsArgsDict | None] = None,
        version: pulumi.Input[str | None] = None,
        __props__: K8sv2Args | None = None,
    ) -> None:
        """
        Generated code takes `(resource_name, *args, **kwargs)` and forwards to `_internal_init`, whose
        explicit parameters make a misspelled keyword a TypeError. This double spells both call shapes
        out instead: `K8sv2(name, opts=None, *, <props>)` and `K8sv2(name, args: K8sv2Args, opts=None)`.
        """
        if isinstance(args, pulumi.ResourceOptions):
            if opts is not None:
                raise TypeError("K8sv2() got multiple values for argument 'opts'")
            args, opts = None, args
        props: dict[str, Any] = {
            "authentication": authentication,
            "autoscaler_config": autoscaler_config,
            "cni": cni,
            "csi": csi,
            "ddos_profile": ddos_profile,
            "fixed_network": fixed_network,
            "fixed_subnet": fixed_subnet,
            "is_ipv6": is_ipv6,
            "k8sv2_id": k8sv2_id,
            "keypair": keypair,
            "name": name,
            "pods_ip_pool": pods_ip_pool,
            "pods_ipv6_pool": pods_ipv6_pool,
            "pools": pools,
            "project_id": project_id,
            "project_name": project_name,
            "region_id": region_id,
            "region_name": region_name,
            "security_group_rules": security_group_rules,
            "services_ip_pool": services_ip_pool,
            "services_ipv6_pool": services_ipv6_pool,
            "timeouts": timeouts,
            "version": version,
        }
        if args is not None:
            if not isinstance(args, K8sv2Args):
                raise TypeError("Expected args to be a K8sv2Args instance")
            given = sorted(k for k, v in props.items() if v is not None)
            if given:
                raise TypeError(f"K8sv2() takes either args or property keywords, not both: {given}")
            props = {k: args.__dict__.get(k) for k in props}
        __self__._internal_init(resource_name, opts, __props__=__props__, **props)

    def _internal_init(
        __self__,
        resource_name: str,
        opts: pulumi.ResourceOptions | None = None,
        authentication: pulumi.Input[K8sv2AuthenticationArgs | K8sv2AuthenticationArgsDict | None] = None,
        autoscaler_config: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
        cni: pulumi.Input[K8sv2CniArgs | K8sv2CniArgsDict | None] = None,
        csi: pulumi.Input[K8sv2CsiArgs | K8sv2CsiArgsDict | None] = None,
        ddos_profile: pulumi.Input[K8sv2DdosProfileArgs | K8sv2DdosProfileArgsDict | None] = None,
        fixed_network: pulumi.Input[str | None] = None,
        fixed_subnet: pulumi.Input[str | None] = None,
        is_ipv6: pulumi.Input[bool | None] = None,
        k8sv2_id: pulumi.Input[str | None] = None,
        keypair: pulumi.Input[str | None] = None,
        name: pulumi.Input[str | None] = None,
        pods_ip_pool: pulumi.Input[str | None] = None,
        pods_ipv6_pool: pulumi.Input[str | None] = None,
        pools: pulumi.Input[Sequence[pulumi.Input[K8sv2PoolArgs | K8sv2PoolArgsDict]] | None] = None,
        project_id: pulumi.Input[float | None] = None,
        project_name: pulumi.Input[str | None] = None,
        region_id: pulumi.Input[float | None] = None,
        region_name: pulumi.Input[str | None] = None,
        security_group_rules: pulumi.Input[
            Sequence[pulumi.Input[K8sv2SecurityGroupRuleArgs | K8sv2SecurityGroupRuleArgsDict]] | None
        ] = None,
        services_ip_pool: pulumi.Input[str | None] = None,
        services_ipv6_pool: pulumi.Input[str | None] = None,
        timeouts: pulumi.Input[K8sv2TimeoutsArgs | K8sv2TimeoutsArgsDict | None] = None,
        version: pulumi.Input[str | None] = None,
        __props__: K8sv2Args | None = None,
    ) -> None:
        opts = pulumi.ResourceOptions.merge(_utilities.get_resource_opts_defaults(), opts)
        if not isinstance(opts, pulumi.ResourceOptions):
            raise TypeError("Expected resource options to be a ResourceOptions instance")
        if opts.id is None:
            if __props__ is not None:
                raise TypeError("__props__ is only valid with a valid opts.id to get an existing resource")
            __props__ = K8sv2Args.__new__(K8sv2Args)

            __props__.__dict__["authentication"] = authentication
            __props__.__dict__["autoscaler_config"] = autoscaler_config
            __props__.__dict__["cni"] = cni
            __props__.__dict__["csi"] = csi
            __props__.__dict__["ddos_profile"] = ddos_profile
            __props__.__dict__["fixed_network"] = fixed_network
            __props__.__dict__["fixed_subnet"] = fixed_subnet
            __props__.__dict__["is_ipv6"] = is_ipv6
            __props__.__dict__["k8sv2_id"] = k8sv2_id
            if keypair is None and not opts.urn:
                raise TypeError("Missing required property 'keypair'")
            __props__.__dict__["keypair"] = keypair
            __props__.__dict__["name"] = name
            __props__.__dict__["pods_ip_pool"] = pods_ip_pool
            __props__.__dict__["pods_ipv6_pool"] = pods_ipv6_pool
            if pools is None and not opts.urn:
                raise TypeError("Missing required property 'pools'")
            __props__.__dict__["pools"] = pools
            __props__.__dict__["project_id"] = project_id
            __props__.__dict__["project_name"] = project_name
            __props__.__dict__["region_id"] = region_id
            __props__.__dict__["region_name"] = region_name
            __props__.__dict__["security_group_rules"] = security_group_rules
            __props__.__dict__["services_ip_pool"] = services_ip_pool
            __props__.__dict__["services_ipv6_pool"] = services_ipv6_pool
            __props__.__dict__["timeouts"] = _timeouts(timeouts)
            if version is None and not opts.urn:
                raise TypeError("Missing required property 'version'")
            __props__.__dict__["version"] = version
            __props__.__dict__["created_at"] = None
            __props__.__dict__["creator_task_id"] = None
            __props__.__dict__["is_public"] = None
            __props__.__dict__["security_group_id"] = None
            __props__.__dict__["status"] = None
            __props__.__dict__["task_id"] = None
        super().__init__(
            "gcore:index/k8sv2:K8sv2", resource_name, __props__, opts, package_ref=_utilities.get_package()
        )

    @property
    @pulumi.getter
    def authentication(self) -> pulumi.Output[outputs.K8sv2Authentication | None]:
        """Cluster authentication (OIDC) settings."""
        return pulumi.get(self, "authentication")

    @property
    @pulumi.getter(name="autoscalerConfig")
    def autoscaler_config(self) -> pulumi.Output[Mapping[str, str]]:
        """Cluster-autoscaler options (flat string map)."""
        return pulumi.get(self, "autoscaler_config")

    @property
    @pulumi.getter
    def cni(self) -> pulumi.Output[outputs.K8sv2Cni]:
        """CNI settings (ForceNew block)."""
        return pulumi.get(self, "cni")

    @property
    @pulumi.getter(name="createdAt")
    def created_at(self) -> pulumi.Output[str]:
        """Read-only: creation time."""
        return pulumi.get(self, "created_at")

    @property
    @pulumi.getter(name="creatorTaskId")
    def creator_task_id(self) -> pulumi.Output[str]:
        """Read-only: id of the task that created the cluster."""
        return pulumi.get(self, "creator_task_id")

    @property
    @pulumi.getter
    def csi(self) -> pulumi.Output[outputs.K8sv2Csi | None]:
        """CSI settings."""
        return pulumi.get(self, "csi")

    @property
    @pulumi.getter(name="ddosProfile")
    def ddos_profile(self) -> pulumi.Output[outputs.K8sv2DdosProfile | None]:
        """DDoS profile."""
        return pulumi.get(self, "ddos_profile")

    @property
    @pulumi.getter(name="fixedNetwork")
    def fixed_network(self) -> pulumi.Output[str | None]:
        """Network UUID (ForceNew)."""
        return pulumi.get(self, "fixed_network")

    @property
    @pulumi.getter(name="fixedSubnet")
    def fixed_subnet(self) -> pulumi.Output[str | None]:
        """Subnet UUID; the subnet needs a router (ForceNew)."""
        return pulumi.get(self, "fixed_subnet")

    @property
    @pulumi.getter(name="isIpv6")
    def is_ipv6(self) -> pulumi.Output[bool | None]:
        """Enable IPv6 (ForceNew)."""
        return pulumi.get(self, "is_ipv6")

    @property
    @pulumi.getter(name="isPublic")
    def is_public(self) -> pulumi.Output[bool]:
        """Read-only: whether the cluster is public."""
        return pulumi.get(self, "is_public")

    @property
    @pulumi.getter(name="k8sv2Id")
    def k8sv2_id(self) -> pulumi.Output[str]:
        """The Terraform `id` (renamed by the bridge). Do not set it."""
        return pulumi.get(self, "k8sv2_id")

    @property
    @pulumi.getter
    def keypair(self) -> pulumi.Output[str]:
        """Name of the SSH keypair (ForceNew)."""
        return pulumi.get(self, "keypair")

    @property
    @pulumi.getter
    def name(self) -> pulumi.Output[str]:
        """Cluster name, ^[a-z][a-z0-9-]{0,18}[a-z0-9]$ (ForceNew). Always set it."""
        return pulumi.get(self, "name")

    @property
    @pulumi.getter(name="podsIpPool")
    def pods_ip_pool(self) -> pulumi.Output[str]:
        """Pods IPv4 CIDR (ForceNew)."""
        return pulumi.get(self, "pods_ip_pool")

    @property
    @pulumi.getter(name="podsIpv6Pool")
    def pods_ipv6_pool(self) -> pulumi.Output[str]:
        """Pods IPv6 CIDR (ForceNew)."""
        return pulumi.get(self, "pods_ipv6_pool")

    @property
    @pulumi.getter
    def pools(self) -> pulumi.Output[Sequence[outputs.K8sv2Pool]]:
        """Node pools (at least one)."""
        return pulumi.get(self, "pools")

    @property
    @pulumi.getter(name="projectId")
    def project_id(self) -> pulumi.Output[float]:
        """Project id; exactly one of project_id / project_name."""
        return pulumi.get(self, "project_id")

    @property
    @pulumi.getter(name="projectName")
    def project_name(self) -> pulumi.Output[str | None]:
        """Project name; exactly one of project_id / project_name."""
        return pulumi.get(self, "project_name")

    @property
    @pulumi.getter(name="regionId")
    def region_id(self) -> pulumi.Output[float]:
        """Region id; exactly one of region_id / region_name."""
        return pulumi.get(self, "region_id")

    @property
    @pulumi.getter(name="regionName")
    def region_name(self) -> pulumi.Output[str | None]:
        """Region name; exactly one of region_id / region_name."""
        return pulumi.get(self, "region_name")

    @property
    @pulumi.getter(name="securityGroupId")
    def security_group_id(self) -> pulumi.Output[str]:
        """Read-only: id of the cluster's security group."""
        return pulumi.get(self, "security_group_id")

    @property
    @pulumi.getter(name="securityGroupRules")
    def security_group_rules(self) -> pulumi.Output[Sequence[outputs.K8sv2SecurityGroupRule] | None]:
        """Security group rules (a set)."""
        return pulumi.get(self, "security_group_rules")

    @property
    @pulumi.getter(name="servicesIpPool")
    def services_ip_pool(self) -> pulumi.Output[str]:
        """Services IPv4 CIDR (ForceNew)."""
        return pulumi.get(self, "services_ip_pool")

    @property
    @pulumi.getter(name="servicesIpv6Pool")
    def services_ipv6_pool(self) -> pulumi.Output[str]:
        """Services IPv6 CIDR (ForceNew)."""
        return pulumi.get(self, "services_ipv6_pool")

    @property
    @pulumi.getter
    def status(self) -> pulumi.Output[str]:
        """Read-only: cluster status."""
        return pulumi.get(self, "status")

    @property
    @pulumi.getter(name="taskId")
    def task_id(self) -> pulumi.Output[str]:
        """Read-only: id of the last task."""
        return pulumi.get(self, "task_id")

    @property
    @pulumi.getter
    def timeouts(self) -> pulumi.Output[outputs.K8sv2Timeouts | None]:
        """Terraform `timeouts` (create, update)."""
        return pulumi.get(self, "timeouts")

    @property
    @pulumi.getter
    def version(self) -> pulumi.Output[str]:
        """Kubernetes version with the v prefix, e.g. "v1.33.10". Upgraded in place."""
        return pulumi.get(self, "version")
