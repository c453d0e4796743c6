# Test double of the file that `pulumi install` generates in sdks/gcore/pulumi_gcore/ for terraform-provider
# g-core/gcore 0.34.3. Names, Python/engine property names and types mirror the generated SDK.

"""Input types (`...Args` classes and `...ArgsDict` TypedDicts) of `gcore.K8sv2`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NotRequired, TypedDict

import pulumi

__all__ = [
    "K8sv2AuthenticationArgs",
    "K8sv2AuthenticationArgsDict",
    "K8sv2AuthenticationOidcArgs",
    "K8sv2AuthenticationOidcArgsDict",
    "K8sv2CniArgs",
    "K8sv2CniArgsDict",
    "K8sv2CniCiliumArgs",
    "K8sv2CniCiliumArgsDict",
    "K8sv2CsiArgs",
    "K8sv2CsiArgsDict",
    "K8sv2CsiNfsArgs",
    "K8sv2CsiNfsArgsDict",
    "K8sv2DdosProfileArgs",
    "K8sv2DdosProfileArgsDict",
    "K8sv2DdosProfileFieldArgs",
    "K8sv2DdosProfileFieldArgsDict",
    "K8sv2PoolArgs",
    "K8sv2PoolArgsDict",
    "K8sv2SecurityGroupRuleArgs",
    "K8sv2SecurityGroupRuleArgsDict",
    "K8sv2TimeoutsArgs",
    "K8sv2TimeoutsArgsDict",
]


class K8sv2AuthenticationArgsDict(TypedDict):
    """Nested block `K8sv2Authentication` of gcore.K8sv2."""

    oidc: NotRequired[pulumi.Input[K8sv2AuthenticationOidcArgsDict]]
    """OpenID Connect authentication settings."""


@pulumi.input_type
class K8sv2AuthenticationArgs:
    def __init__(
        __self__, *, oidc: pulumi.Input[K8sv2AuthenticationOidcArgs | K8sv2AuthenticationOidcArgsDict | None] = None
    ) -> None:
        """Nested block `K8sv2Authentication` of gcore.K8sv2."""
        if oidc is not None:
            pulumi.set(__self__, "oidc", oidc)

    @property
    @pulumi.getter
    def oidc(self) -> pulumi.Input[K8sv2AuthenticationOidcArgs | None]:
        """OpenID Connect authentication settings."""
        return pulumi.get(self, "oidc")

    @oidc.setter
    def oidc(self, value: pulumi.Input[K8sv2AuthenticationOidcArgs | None]) -> None:
        pulumi.set(self, "oidc", value)


class K8sv2AuthenticationOidcArgsDict(TypedDict):
    """Nested block `K8sv2AuthenticationOidc` of gcore.K8sv2."""

    client_id: NotRequired[pulumi.Input[str]]
    """Client ID."""
    groups_claim: NotRequired[pulumi.Input[str]]
    """JWT claim to use as the user's group."""
    groups_prefix: NotRequired[pulumi.Input[str]]
    """Prefix prepended to group claims."""
    issuer_url: NotRequired[pulumi.Input[str]]
    """Issuer URL."""
    required_claims: NotRequired[pulumi.Input[Mapping[str, pulumi.Input[str]]]]
    """Key-value pairs that describe required claims in the token."""
    signing_algs: NotRequired[pulumi.Input[Sequence[pulumi.Input[str]]]]
    """Accepted signing algorithms (a set in Terraform)."""
    username_claim: NotRequired[pulumi.Input[str]]
    """JWT claim to use as the user name."""
    username_prefix: NotRequired[pulumi.Input[str]]
    """Prefix prepended to username claims."""


@pulumi.input_type
class K8sv2AuthenticationOidcArgs:
    def __init__(
        __self__,
        *,
        client_id: pulumi.Input[str | None] = None,
        groups_claim: pulumi.Input[str | None] = None,
        groups_prefix: pulumi.Input[str | None] = None,
        issuer_url: pulumi.Input[str | None] = None,
        required_claims: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
        signing_algs: pulumi.Input[Sequence[pulumi.Input[str]] | None] = None,
        username_claim: pulumi.Input[str | None] = None,
        username_prefix: pulumi.Input[str | None] = None,
    ) -> None:
        """Nested block `K8sv2AuthenticationOidc` of gcore.K8sv2."""
        if client_id is not None:
            pulumi.set(__self__, "client_id", client_id)
        if groups_claim is not None:
            pulumi.set(__self__, "groups_claim", groups_claim)
        if groups_prefix is not None:
            pulumi.set(__self__, "groups_prefix", groups_prefix)
        if issuer_url is not None:
            pulumi.set(__self__, "issuer_url", issuer_url)
        if required_claims is not None:
            pulumi.set(__self__, "required_claims", required_claims)
        if signing_algs is not None:
            pulumi.set(__self__, "signing_algs", signing_algs)
        if username_claim is not None:
            pulumi.set(__self__, "username_claim", username_claim)
        if username_prefix is not None:
            pulumi.set(__self__, "username_prefix", username_prefix)

    @property
    @pulumi.getter(name="clientId")
    def client_id(self) -> pulumi.Input[str | None]:
        """Client ID."""
        return pulumi.get(self, "client_id")

    @client_id.setter
    def client_id(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "client_id", value)

    @property
    @pulumi.getter(name="groupsClaim")
    def groups_claim(self) -> pulumi.Input[str | None]:
        """JWT claim to use as the user's group."""
        return pulumi.get(self, "groups_claim")

    @groups_claim.setter
    def groups_claim(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "groups_claim", value)

    @property
    @pulumi.getter(name="groupsPrefix")
    def groups_prefix(self) -> pulumi.Input[str | None]:
        """Prefix prepended to group claims."""
        return pulumi.get(self, "groups_prefix")

    @groups_prefix.setter
    def groups_prefix(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "groups_prefix", value)

    @property
    @pulumi.getter(name="issuerUrl")
    def issuer_url(self) -> pulumi.Input[str | None]:
        """Issuer URL."""
        return pulumi.get(self, "issuer_url")

    @issuer_url.setter
    def issuer_url(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "issuer_url", value)

    @property
    @pulumi.getter(name="requiredClaims")
    def required_claims(self) -> pulumi.Input[Mapping[str, pulumi.Input[str]] | None]:
        """Key-value pairs that describe required claims in the token."""
        return pulumi.get(self, "required_claims")

    @required_claims.setter
    def required_claims(self, value: pulumi.Input[Mapping[str, pulumi.Input[str]] | None]) -> None:
        pulumi.set(self, "required_claims", value)

    @property
    @pulumi.getter(name="signingAlgs")
    def signing_algs(self) -> pulumi.Input[Sequence[pulumi.Input[str]] | None]:
        """Accepted signing algorithms (a set in Terraform)."""
        return pulumi.get(self, "signing_algs")

    @signing_algs.setter
    def signing_algs(self, value: pulumi.Input[Sequence[pulumi.Input[str]] | None]) -> None:
        pulumi.set(self, "signing_algs", value)

    @property
    @pulumi.getter(name="usernameClaim")
    def username_claim(self) -> pulumi.Input[str | None]:
        """JWT claim to use as the user name."""
        return pulumi.get(self, "username_claim")

    @username_claim.setter
    def username_claim(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "username_claim", value)

    @property
    @pulumi.getter(name="usernamePrefix")
    def username_prefix(self) -> pulumi.Input[str | None]:
        """Prefix prepended to username claims."""
        return pulumi.get(self, "username_prefix")

    @username_prefix.setter
    def username_prefix(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "username_prefix", value)


class K8sv2CniArgsDict(TypedDict):
    """Nested block `K8sv2Cni` of gcore.K8sv2."""

    cilium: NotRequired[pulumi.Input[K8sv2CniCiliumArgsDict]]
    """Cilium settings (only with provider "cilium")."""
    provider: NotRequired[pulumi.Input[str]]
    """CNI provider: "calico" (Terraform default) or "cilium"."""


@pulumi.input_type
class K8sv2CniArgs:
    def __init__(
        __self__,
        *,
        cilium: pulumi.Input[K8sv2CniCiliumArgs | K8sv2CniCiliumArgsDict | None] = None,
        provider: pulumi.Input[str | None] = None,
    ) -> None:
        """Nested block `K8sv2Cni` of gcore.K8sv2."""
        if cilium is not None:
            pulumi.set(__self__, "cilium", cilium)
        if provider is not None:
            pulumi.set(__self__, "provider", provider)

    @property
    @pulumi.getter
    def cilium(self) -> pulumi.Input[K8sv2CniCiliumArgs | None]:
        """Cilium settings (only with provider "cilium")."""
        return pulumi.get(self, "cilium")

    @cilium.setter
    def cilium(self, value: pulumi.Input[K8sv2CniCiliumArgs | None]) -> None:
        pulumi.set(self, "cilium", value)

    @property
    @pulumi.getter
    def provider(self) -> pulumi.Input[str | None]:
        """CNI provider: "calico" (Terraform default) or "cilium"."""
        return pulumi.get(self, "provider")

    @provider.setter
    def provider(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "provider", value)


class K8sv2CniCiliumArgsDict(TypedDict):
    """Nested block `K8sv2CniCilium` of gcore.K8sv2."""

    encryption: NotRequired[pulumi.Input[bool]]
    """Enable transparent encryption (default false)."""
    hubble_relay: NotRequired[pulumi.Input[bool]]
    """Enable Hubble Relay (default false)."""
    hubble_ui: NotRequired[pulumi.Input[bool]]
    """Enable Hubble UI (default false)."""
    lb_acceleration: NotRequired[pulumi.Input[bool]]
    """Enable LoadBalancer acceleration (default false)."""
    lb_mode: NotRequired[pulumi.Input[str]]
    """LoadBalancer mode: "snat", "dsr" or "hybrid"."""
    mask_size: NotRequired[pulumi.Input[float]]
    """IPv4 pod CIDR mask size per node (ForceNew, default 24)."""
    mask_size_v6: NotRequired[pulumi.Input[float]]
    """IPv6 pod CIDR mask size per node (ForceNew, default 120)."""
    routing_mode: NotRequired[pulumi.Input[str]]
    """Routing mode (default "tunnel")."""
    tunnel: NotRequired[pulumi.Input[str]]
    """Tunnel protocol (default "geneve")."""


@pulumi.input_type
class K8sv2CniCiliumArgs:
    def __init__(
        __self__,
        *,
        encryption: pulumi.Input[bool | None] = None,
        hubble_relay: pulumi.Input[bool | None] = None,
        hubble_ui: pulumi.Input[bool | None] = None,
        lb_acceleration: pulumi.Input[bool | None] = None,
        lb_mode: pulumi.Input[str | None] = None,
        mask_size: pulumi.Input[float | None] = None,
        mask_size_v6: pulumi.Input[float | None] = None,
        routing_mode: pulumi.Input[str | None] = None,
        tunnel: pulumi.Input[str | None] = None,
    ) -> None:
        """Nested block `K8sv2CniCilium` of gcore.K8sv2."""
        if encryption is not None:
            pulumi.set(__self__, "encryption", encryption)
        if hubble_relay is not None:
            pulumi.set(__self__, "hubble_relay", hubble_relay)
        if hubble_ui is not None:
            pulumi.set(__self__, "hubble_ui", hubble_ui)
        if lb_acceleration is not None:
            pulumi.set(__self__, "lb_acceleration", lb_acceleration)
        if lb_mode is not None:
            pulumi.set(__self__, "lb_mode", lb_mode)
        if mask_size is not None:
            pulumi.set(__self__, "mask_size", mask_size)
        if mask_size_v6 is not None:
            pulumi.set(__self__, "mask_size_v6", mask_size_v6)
        if routing_mode is not None:
            pulumi.set(__self__, "routing_mode", routing_mode)
        if tunnel is not None:
            pulumi.set(__self__, "tunnel", tunnel)

    @property
    @pulumi.getter
    def encryption(self) -> pulumi.Input[bool | None]:
        """Enable transparent encryption (default false)."""
        return pulumi.get(self, "encryption")

    @encryption.setter
    def encryption(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "encryption", value)

    @property
    @pulumi.getter(name="hubbleRelay")
    def hubble_relay(self) -> pulumi.Input[bool | None]:
        """Enable Hubble Relay (default false)."""
        return pulumi.get(self, "hubble_relay")

    @hubble_relay.setter
    def hubble_relay(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "hubble_relay", value)

    @property
    @pulumi.getter(name="hubbleUi")
    def hubble_ui(self) -> pulumi.Input[bool | None]:
        """Enable Hubble UI (default false)."""
        return pulumi.get(self, "hubble_ui")

    @hubble_ui.setter
    def hubble_ui(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "hubble_ui", value)

    @property
    @pulumi.getter(name="lbAcceleration")
    def lb_acceleration(self) -> pulumi.Input[bool | None]:
        """Enable LoadBalancer acceleration (default false)."""
        return pulumi.get(self, "lb_acceleration")

    @lb_acceleration.setter
    def lb_acceleration(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "lb_acceleration", value)

    @property
    @pulumi.getter(name="lbMode")
    def lb_mode(self) -> pulumi.Input[str | None]:
        """LoadBalancer mode: "snat", "dsr" or "hybrid"."""
        return pulumi.get(self, "lb_mode")

    @lb_mode.setter
    def lb_mode(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "lb_mode", value)

    @property
    @pulumi.getter(name="maskSize")
    def mask_size(self) -> pulumi.Input[float | None]:
        """IPv4 pod CIDR mask size per node (ForceNew, default 24)."""
        return pulumi.get(self, "mask_size")

    @mask_size.setter
    def mask_size(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "mask_size", value)

    @property
    @pulumi.getter(name="maskSizeV6")
    def mask_size_v6(self) -> pulumi.Input[float | None]:
        """IPv6 pod CIDR mask size per node (ForceNew, default 120)."""
        return pulumi.get(self, "mask_size_v6")

    @mask_size_v6.setter
    def mask_size_v6(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "mask_size_v6", value)

    @property
    @pulumi.getter(name="routingMode")
    def routing_mode(self) -> pulumi.Input[str | None]:
        """Routing mode (default "tunnel")."""
        return pulumi.get(self, "routing_mode")

    @routing_mode.setter
    def routing_mode(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "routing_mode", value)

    @property
    @pulumi.getter
    def tunnel(self) -> pulumi.Input[str | None]:
        """Tunnel protocol (default "geneve")."""
        return pulumi.get(self, "tunnel")

    @tunnel.setter
    def tunnel(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "tunnel", value)


class K8sv2CsiArgsDict(TypedDict):
    """Nested block `K8sv2Csi` of gcore.K8sv2."""

    nfs: NotRequired[pulumi.Input[K8sv2CsiNfsArgsDict]]
    """NFS CSI driver settings."""


@pulumi.input_type
class K8sv2CsiArgs:
    def __init__(__self__, *, nfs: pulumi.Input[K8sv2CsiNfsArgs | K8sv2CsiNfsArgsDict | None] = None) -> None:
        """Nested block `K8sv2Csi` of gcore.K8sv2."""
        if nfs is not None:
            pulumi.set(__self__, "nfs", nfs)

    @property
    @pulumi.getter
    def nfs(self) -> pulumi.Input[K8sv2CsiNfsArgs | None]:
        """NFS CSI driver settings."""
        return pulumi.get(self, "nfs")

    @nfs.setter
    def nfs(self, value: pulumi.Input[K8sv2CsiNfsArgs | None]) -> None:
        pulumi.set(self, "nfs", value)


class K8sv2CsiNfsArgsDict(TypedDict):
    """Nested block `K8sv2CsiNfs` of gcore.K8sv2."""

    vast_enabled: NotRequired[pulumi.Input[bool]]
    """Enable the VAST NFS client (ForceNew)."""


@pulumi.input_type
class K8sv2CsiNfsArgs:
    def __init__(__self__, *, vast_enabled: pulumi.Input[bool | None] = None) -> None:
        """Nested block `K8sv2CsiNfs` of gcore.K8sv2."""
        if vast_enabled is not None:
            pulumi.set(__self__, "vast_enabled", vast_enabled)

    @property
    @pulumi.getter(name="vastEnabled")
    def vast_enabled(self) -> pulumi.Input[bool | None]:
        """Enable the VAST NFS client (ForceNew)."""
        return pulumi.get(self, "vast_enabled")

    @vast_enabled.setter
    def vast_enabled(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "vast_enabled", value)


class K8sv2DdosProfileArgsDict(TypedDict):
    """Nested block `K8sv2DdosProfile` of gcore.K8sv2."""

    enabled: pulumi.Input[bool]
    """Whether the DDoS profile is enabled."""
    fields: NotRequired[pulumi.Input[Sequence[pulumi.Input[K8sv2DdosProfileFieldArgsDict]]]]
    """Profile fields."""
    profile_template: NotRequired[pulumi.Input[float]]
    """DDoS profile template id."""
    profile_template_name: NotRequired[pulumi.Input[str]]
    """DDoS profile template name."""


@pulumi.input_type
class K8sv2DdosProfileArgs:
    def __init__(
        __self__,
        *,
        enabled: pulumi.Input[bool],
        fields: pulumi.Input[
            Sequence[pulumi.Input[K8sv2DdosProfileFieldArgs | K8sv2DdosProfileFieldArgsDict]] | None
        ] = None,
        profile_template: pulumi.Input[float | None] = None,
        profile_template_name: pulumi.Input[str | None] = None,
    ) -> None:
        """Nested block `K8sv2DdosProfile` of gcore.K8sv2."""
        pulumi.set(__self__, "enabled", enabled)
        if fields is not None:
            pulumi.set(__self__, "fields", fields)
        if profile_template is not None:
            pulumi.set(__self__, "profile_template", profile_template)
        if profile_template_name is not None:
            pulumi.set(__self__, "profile_template_name", profile_template_name)

    @property
    @pulumi.getter
    def enabled(self) -> pulumi.Input[bool]:
        """Whether the DDoS profile is enabled."""
        return pulumi.get(self, "enabled")

    @enabled.setter
    def enabled(self, value: pulumi.Input[bool]) -> None:
        pulumi.set(self, "enabled", value)

    @property
    @pulumi.getter
    def fields(self) -> pulumi.Input[Sequence[pulumi.Input[K8sv2DdosProfileFieldArgs]] | None]:
        """Profile fields."""
        return pulumi.get(self, "fields")

    @fields.setter
    def fields(self, value: pulumi.Input[Sequence[pulumi.Input[K8sv2DdosProfileFieldArgs]] | None]) -> None:
        pulumi.set(self, "fields", value)

    @property
    @pulumi.getter(name="profileTemplate")
    def profile_template(self) -> pulumi.Input[float | None]:
        """DDoS profile template id."""
        return pulumi.get(self, "profile_template")

    @profile_template.setter
    def profile_template(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "profile_template", value)

    @property
    @pulumi.getter(name="profileTemplateName")
    def profile_template_name(self) -> pulumi.Input[str | None]:
        """DDoS profile template name."""
        return pulumi.get(self, "profile_template_name")

    @profile_template_name.setter
    def profile_template_name(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "profile_template_name", value)


class K8sv2DdosProfileFieldArgsDict(TypedDict):
    """Nested block `K8sv2DdosProfileField` of gcore.K8sv2."""

    base_field: pulumi.Input[float]
    """Base field id."""
    field_value: NotRequired[pulumi.Input[str]]
    """Field value as a JSON string."""
    value: NotRequired[pulumi.Input[str]]
    """Field value."""


@pulumi.input_type
class K8sv2DdosProfileFieldArgs:
    def __init__(
        __self__,
        *,
        base_field: pulumi.Input[float],
        field_value: pulumi.Input[str | None] = None,
        value: pulumi.Input[str | None] = None,
    ) -> None:
        """Nested block `K8sv2DdosProfileField` of gcore.K8sv2."""
        pulumi.set(__self__, "base_field", base_field)
        if field_value is not None:
            pulumi.set(__self__, "field_value", field_value)
        if value is not None:
            pulumi.set(__self__, "value", value)

    @property
    @pulumi.getter(name="baseField")
    def base_field(self) -> pulumi.Input[float]:
        """Base field id."""
        return pulumi.get(self, "base_field")

    @base_field.setter
    def base_field(self, value: pulumi.Input[float]) -> None:
        pulumi.set(self, "base_field", value)

    @property
    @pulumi.getter(name="fieldValue")
    def field_value(self) -> pulumi.Input[str | None]:
        """Field value as a JSON string."""
        return pulumi.get(self, "field_value")

    @field_value.setter
    def field_value(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "field_value", value)

    @property
    @pulumi.getter
    def value(self) -> pulumi.Input[str | None]:
        """Field value."""
        return pulumi.get(self, "value")

    @value.setter
    def value(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "value", value)


class K8sv2PoolArgsDict(TypedDict):
    """Nested block `K8sv2Pool` of gcore.K8sv2."""

    flavor_id: pulumi.Input[str]
    """Flavor id of the pool's nodes. A change recreates the pool."""
    min_node_count: pulumi.Input[float]
    """Minimum node count (>= 1). Updated in place."""
    name: pulumi.Input[str]
    """Pool name; the pool's identity key."""
    auto_healing_enabled: NotRequired[pulumi.Input[bool]]
    """Enable node auto-healing. Updated in place."""
    boot_volume_size: NotRequired[pulumi.Input[float]]
    """Boot volume size (VM pools only). A change recreates the pool."""
    boot_volume_type: NotRequired[pulumi.Input[str]]
    """Boot volume type: standard, ssd_hiiops, cold or ultra (VM pools only). A change recreates the pool."""
    created_at: NotRequired[pulumi.Input[str]]
    """Read-only: creation time."""
    crio_config: NotRequired[pulumi.Input[Mapping[str, pulumi.Input[str]]]]
    """CRI-O configuration. A change recreates the pool."""
    is_public_ipv4: NotRequired[pulumi.Input[bool]]
    """Give nodes public IPv4 addresses. A change recreates the pool."""
    kubelet_config: NotRequired[pulumi.Input[Mapping[str, pulumi.Input[str]]]]
    """Kubelet configuration. A change recreates the pool."""
    labels: NotRequired[pulumi.Input[Mapping[str, pulumi.Input[str]]]]
    """Node labels. Updated in place."""
    max_node_count: NotRequired[pulumi.Input[float]]
    """Maximum node count. Updated in place."""
    node_count: NotRequired[pulumi.Input[float]]
    """Read-only: current node count."""
    servergroup_id: NotRequired[pulumi.Input[str]]
    """Read-only: server group id."""
    servergroup_name: NotRequired[pulumi.Input[str]]
    """Read-only: server group name."""
    servergroup_policy: NotRequired[pulumi.Input[str]]
    """anti-affinity, soft-anti-affinity or affinity. Required for VM flavors, forbidden for bare metal."""
    status: NotRequired[pulumi.Input[str]]
    """Read-only: pool status."""
    taints: NotRequired[pulumi.Input[Mapping[str, pulumi.Input[str]]]]
    """Node taints as {key: "value:Effect"}. Updated in place."""


@pulumi.input_type
class K8sv2PoolArgs:
    def __init__(
        __self__,
        *,
        flavor_id: pulumi.Input[str],
        min_node_count: pulumi.Input[float],
        name: pulumi.Input[str],
        auto_healing_enabled: pulumi.Input[bool | None] = None,
        boot_volume_size: pulumi.Input[float | None] = None,
        boot_volume_type: pulumi.Input[str | None] = None,
        created_at: pulumi.Input[str | None] = None,
        crio_config: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
        is_public_ipv4: pulumi.Input[bool | None] = None,
        kubelet_config: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
        labels: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
        max_node_count: pulumi.Input[float | None] = None,
        node_count: pulumi.Input[float | None] = None,
        servergroup_id: pulumi.Input[str | None] = None,
        servergroup_name: pulumi.Input[str | None] = None,
        servergroup_policy: pulumi.Input[str | None] = None,
        status: pulumi.Input[str | None] = None,
        taints: pulumi.Input[Mapping[str, pulumi.Input[str]] | None] = None,
    ) -> None:
        """Nested block `K8sv2Pool` of gcore.K8sv2."""
        pulumi.set(__self__, "flavor_id", flavor_id)
        pulumi.set(__self__, "min_node_count", min_node_count)
        pulumi.set(__self__, "name", name)
        if auto_healing_enabled is not None:
            pulumi.set(__self__, "auto_healing_enabled", auto_healing_enabled)
        if boot_volume_size is not None:
            pulumi.set(__self__, "boot_volume_size", boot_volume_size)
        if boot_volume_type is not None:
            pulumi.set(__self__, "boot_volume_type", boot_volume_type)
        if created_at is not None:
            pulumi.set(__self__, "created_at", created_at)
        if crio_config is not None:
            pulumi.set(__self__, "crio_config", crio_config)
        if is_public_ipv4 is not None:
            pulumi.set(__self__, "is_public_ipv4", is_public_ipv4)
        if kubelet_config is not None:
            pulumi.set(__self__, "kubelet_config", kubelet_config)
        if labels is not None:
            pulumi.set(__self__, "labels", labels)
        if max_node_count is not None:
            pulumi.set(__self__, "max_node_count", max_node_count)
        if node_count is not None:
            pulumi.set(__self__, "node_count", node_count)
        if servergroup_id is not None:
            pulumi.set(__self__, "servergroup_id", servergroup_id)
        if servergroup_name is not None:
            pulumi.set(__self__, "servergroup_name", servergroup_name)
        if servergroup_policy is not None:
            pulumi.set(__self__, "servergroup_policy", servergroup_policy)
        if status is not None:
            pulumi.set(__self__, "status", status)
        if taints is not None:
            pulumi.set(__self__, "taints", taints)

    @property
    @pulumi.getter(name="flavorId")
    def flavor_id(self) -> pulumi.Input[str]:
        """Flavor id of the pool's nodes. A change recreates the pool."""
        return pulumi.get(self, "flavor_id")

    @flavor_id.setter
    def flavor_id(self, value: pulumi.Input[str]) -> None:
        pulumi.set(self, "flavor_id", value)

    @property
    @pulumi.getter(name="minNodeCount")
    def min_node_count(self) -> pulumi.Input[float]:
        """Minimum node count (>= 1). Updated in place."""
        return pulumi.get(self, "min_node_count")

    @min_node_count.setter
    def min_node_count(self, value: pulumi.Input[float]) -> None:
        pulumi.set(self, "min_node_count", value)

    @property
    @pulumi.getter
    def name(self) -> pulumi.Input[str]:
        """Pool name; the pool's identity key."""
        return pulumi.get(self, "name")

    @name.setter
    def name(self, value: pulumi.Input[str]) -> None:
        pulumi.set(self, "name", value)

    @property
    @pulumi.getter(name="autoHealingEnabled")
    def auto_healing_enabled(self) -> pulumi.Input[bool | None]:
        """Enable node auto-healing. Updated in place."""
        return pulumi.get(self, "auto_healing_enabled")

    @auto_healing_enabled.setter
    def auto_healing_enabled(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "auto_healing_enabled", value)

    @property
    @pulumi.getter(name="bootVolumeSize")
    def boot_volume_size(self) -> pulumi.Input[float | None]:
        """Boot volume size (VM pools only). A change recreates the pool."""
        return pulumi.get(self, "boot_volume_size")

    @boot_volume_size.setter
    def boot_volume_size(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "boot_volume_size", value)

    @property
    @pulumi.getter(name="bootVolumeType")
    def boot_volume_type(self) -> pulumi.Input[str | None]:
        """Boot volume type: standard, ssd_hiiops, cold or ultra (VM pools only). A change recreates the pool."""
        return pulumi.get(self, "boot_volume_type")

    @boot_volume_type.setter
    def boot_volume_type(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "boot_volume_type", value)

    @property
    @pulumi.getter(name="createdAt")
    def created_at(self) -> pulumi.Input[str | None]:
        """Read-only: creation time."""
        return pulumi.get(self, "created_at")

    @created_at.setter
    def created_at(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "created_at", value)

    @property
    @pulumi.getter(name="crioConfig")
    def crio_config(self) -> pulumi.Input[Mapping[str, pulumi.Input[str]] | None]:
        """CRI-O configuration. A change recreates the pool."""
        return pulumi.get(self, "crio_config")

    @crio_config.setter
    def crio_config(self, value: pulumi.Input[Mapping[str, pulumi.Input[str]] | None]) -> None:
        pulumi.set(self, "crio_config", value)

    @property
    @pulumi.getter(name="isPublicIpv4")
    def is_public_ipv4(self) -> pulumi.Input[bool | None]:
        """Give nodes public IPv4 addresses. A change recreates the pool."""
        return pulumi.get(self, "is_public_ipv4")

    @is_public_ipv4.setter
    def is_public_ipv4(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "is_public_ipv4", value)

    @property
    @pulumi.getter(name="kubeletConfig")
    def kubelet_config(self) -> pulumi.Input[Mapping[str, pulumi.Input[str]] | None]:
        """Kubelet configuration. A change recreates the pool."""
        return pulumi.get(self, "kubelet_config")

    @kubelet_config.setter
    def kubelet_config(self, value: pulumi.Input[Mapping[str, pulumi.Input[str]] | None]) -> None:
        pulumi.set(self, "kubelet_config", value)

    @property
    @pulumi.getter
    def labels(self) -> pulumi.Input[Mapping[str, pulumi.Input[str]] | None]:
        """Node labels. Updated in place."""
        return pulumi.get(self, "labels")

    @labels.setter
    def labels(self, value: pulumi.Input[Mapping[str, pulumi.Input[str]] | None]) -> None:
        pulumi.set(self, "labels", value)

    @property
    @pulumi.getter(name="maxNodeCount")
    def max_node_count(self) -> pulumi.Input[float | None]:
        """Maximum node count. Updated in place."""
        return pulumi.get(self, "max_node_count")

    @max_node_count.setter
    def max_node_count(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "max_node_count", value)

    @property
    @pulumi.getter(name="nodeCount")
    def node_count(self) -> pulumi.Input[float | None]:
        """Read-only: current node count."""
        return pulumi.get(self, "node_count")

    @node_count.setter
    def node_count(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "node_count", value)

    @property
    @pulumi.getter(name="servergroupId")
    def servergroup_id(self) -> pulumi.Input[str | None]:
        """Read-only: server group id."""
        return pulumi.get(self, "servergroup_id")

    @servergroup_id.setter
    def servergroup_id(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "servergroup_id", value)

    @property
    @pulumi.getter(name="servergroupName")
    def servergroup_name(self) -> pulumi.Input[str | None]:
        """Read-only: server group name."""
        return pulumi.get(self, "servergroup_name")

    @servergroup_name.setter
    def servergroup_name(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "servergroup_name", value)

    @property
    @pulumi.getter(name="servergroupPolicy")
    def servergroup_policy(self) -> pulumi.Input[str | None]:
        """anti-affinity, soft-anti-affinity or affinity. Required for VM flavors, forbidden for bare metal."""
        return pulumi.get(self, "servergroup_policy")

    @servergroup_policy.setter
    def servergroup_policy(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "servergroup_policy", value)

    @property
    @pulumi.getter
    def status(self) -> pulumi.Input[str | None]:
        """Read-only: pool status."""
        return pulumi.get(self, "status")

    @status.setter
    def status(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "status", value)

    @property
    @pulumi.getter
    def taints(self) -> pulumi.Input[Mapping[str, pulumi.Input[str]] | None]:
        """Node taints as {key: "value:Effect"}. Updated in place."""
        return pulumi.get(self, "taints")

    @taints.setter
    def taints(self, value: pulumi.Input[Mapping[str, pulumi.Input[str]] | None]) -> None:
        pulumi.set(self, "taints", value)


class K8sv2SecurityGroupRuleArgsDict(TypedDict):
    """Nested block `K8sv2SecurityGroupRule` of gcore.K8sv2."""

    direction: pulumi.Input[str]
    """ingress or egress."""
    ethertype: pulumi.Input[str]
    """IPv4 or IPv6."""
    protocol: pulumi.Input[str]
    """Protocol."""
    description: NotRequired[pulumi.Input[str]]
    """Rule description."""
    port_range_max: NotRequired[pulumi.Input[float]]
    """Upper port bound."""
    port_range_min: NotRequired[pulumi.Input[float]]
    """Lower port bound."""
    remote_group_id: NotRequired[pulumi.Input[str]]
    """Remote security group id."""
    remote_ip_prefix: NotRequired[pulumi.Input[str]]
    """Remote CIDR."""
    created_at: NotRequired[pulumi.Input[str]]
    """Read-only: creation time (the bridge keeps a nested block's computed fields in its input type)."""
    id: NotRequired[pulumi.Input[str]]
    """Read-only: rule id."""
    updated_at: NotRequired[pulumi.Input[str]]
    """Read-only: last update time."""


@pulumi.input_type
class K8sv2SecurityGroupRuleArgs:
    def __init__(
        __self__,
        *,
        direction: pulumi.Input[str],
        ethertype: pulumi.Input[str],
        protocol: pulumi.Input[str],
        description: pulumi.Input[str | None] = None,
        port_range_max: pulumi.Input[float | None] = None,
        port_range_min: pulumi.Input[float | None] = None,
        remote_group_id: pulumi.Input[str | None] = None,
        remote_ip_prefix: pulumi.Input[str | None] = None,
        created_at: pulumi.Input[str | None] = None,
        id: pulumi.Input[str | None] = None,
        updated_at: pulumi.Input[str | None] = None,
    ) -> None:
        """Nested block `K8sv2SecurityGroupRule` of gcore.K8sv2 (created_at, id, updated_at are read-only)."""
        pulumi.set(__self__, "direction", direction)
        pulumi.set(__self__, "ethertype", ethertype)
        pulumi.set(__self__, "protocol", protocol)
        if description is not None:
            pulumi.set(__self__, "description", description)
        if port_range_max is not None:
            pulumi.set(__self__, "port_range_max", port_range_max)
        if port_range_min is not None:
            pulumi.set(__self__, "port_range_min", port_range_min)
        if remote_group_id is not None:
            pulumi.set(__self__, "remote_group_id", remote_group_id)
        if remote_ip_prefix is not None:
            pulumi.set(__self__, "remote_ip_prefix", remote_ip_prefix)
        if created_at is not None:
            pulumi.set(__self__, "created_at", created_at)
        if id is not None:
            pulumi.set(__self__, "id", id)
        if updated_at is not None:
            pulumi.set(__self__, "updated_at", updated_at)

    @property
    @pulumi.getter
    def direction(self) -> pulumi.Input[str]:
        """ingress or egress."""
        return pulumi.get(self, "direction")

    @direction.setter
    def direction(self, value: pulumi.Input[str]) -> None:
        pulumi.set(self, "direction", value)

    @property
    @pulumi.getter
    def ethertype(self) -> pulumi.Input[str]:
        """IPv4 or IPv6."""
        return pulumi.get(self, "ethertype")

    @ethertype.setter
    def ethertype(self, value: pulumi.Input[str]) -> None:
        pulumi.set(self, "ethertype", value)

    @property
    @pulumi.getter
    def protocol(self) -> pulumi.Input[str]:
        """Protocol."""
        return pulumi.get(self, "protocol")

    @protocol.setter
    def protocol(self, value: pulumi.Input[str]) -> None:
        pulumi.set(self, "protocol", value)

    @property
    @pulumi.getter
    def description(self) -> pulumi.Input[str | None]:
        """Rule description."""
        return pulumi.get(self, "description")

    @description.setter
    def description(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "description", value)

    @property
    @pulumi.getter(name="portRangeMax")
    def port_range_max(self) -> pulumi.Input[float | None]:
        """Upper port bound."""
        return pulumi.get(self, "port_range_max")

    @port_range_max.setter
    def port_range_max(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "port_range_max", value)

    @property
    @pulumi.getter(name="portRangeMin")
    def port_range_min(self) -> pulumi.Input[float | None]:
        """Lower port bound."""
        return pulumi.get(self, "port_range_min")

    @port_range_min.setter
    def port_range_min(self, value: pulumi.Input[float | None]) -> None:
        pulumi.set(self, "port_range_min", value)

    @property
    @pulumi.getter(name="remoteGroupId")
    def remote_group_id(self) -> pulumi.Input[str | None]:
        """Remote security group id."""
        return pulumi.get(self, "remote_group_id")

    @remote_group_id.setter
    def remote_group_id(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "remote_group_id", value)

    @property
    @pulumi.getter(name="remoteIpPrefix")
    def remote_ip_prefix(self) -> pulumi.Input[str | None]:
        """Remote CIDR."""
        return pulumi.get(self, "remote_ip_prefix")

    @remote_ip_prefix.setter
    def remote_ip_prefix(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "remote_ip_prefix", value)

    @property
    @pulumi.getter(name="createdAt")
    def created_at(self) -> pulumi.Input[str | None]:
        """Read-only: creation time."""
        return pulumi.get(self, "created_at")

    @created_at.setter
    def created_at(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "created_at", value)

    @property
    @pulumi.getter
    def id(self) -> pulumi.Input[str | None]:
        """Read-only: rule id."""
        return pulumi.get(self, "id")

    @id.setter
    def id(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "id", value)

    @property
    @pulumi.getter(name="updatedAt")
    def updated_at(self) -> pulumi.Input[str | None]:
        """Read-only: last update time."""
        return pulumi.get(self, "updated_at")

    @updated_at.setter
    def updated_at(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "updated_at", value)


class K8sv2TimeoutsArgsDict(TypedDict):
    """Nested block `K8sv2Timeouts` of gcore.K8sv2: Terraform `timeouts`, create and update only (no delete)."""

    create: NotRequired[pulumi.Input[str]]
    """Create timeout, a Go duration such as "70m" (provider default 3600 s)."""
    update: NotRequired[pulumi.Input[str]]
    """Update timeout, a Go duration such as "70m" (provider default 3600 s)."""


@pulumi.input_type
class K8sv2TimeoutsArgs:
    def __init__(__self__, *, create: pulumi.Input[str | None] = None, update: pulumi.Input[str | None] = None) -> None:
        """Nested block `K8sv2Timeouts` of gcore.K8sv2. The resource declares no `delete` timeout."""
        if create is not None:
            pulumi.set(__self__, "create", create)
        if update is not None:
            pulumi.set(__self__, "update", update)

    @property
    @pulumi.getter
    def create(self) -> pulumi.Input[str | None]:
        """Create timeout, a Go duration such as "70m" (provider default 3600 s)."""
        return pulumi.get(self, "create")

    @create.setter
    def create(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "create", value)

    @property
    @pulumi.getter
    def update(self) -> pulumi.Input[str | None]:
        """Update timeout, a Go duration such as "70m" (provider default 3600 s)."""
        return pulumi.get(self, "update")

    @update.setter
    def update(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "update", value)
