# Test double of the file that `pulumi install` generates in sdks/gcore/pulumi_gcore/ for terraform-provider
# g-core/gcore 0.34.3. Names, Python/engine property names and types mirror the generated SDK.

"""Output types of `gcore.K8sv2` (what `K8sv2.pools` etc. resolve to)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi

__all__ = [
    "K8sv2Authentication",
    "K8sv2AuthenticationOidc",
    "K8sv2Cni",
    "K8sv2CniCilium",
    "K8sv2Csi",
    "K8sv2CsiNfs",
    "K8sv2DdosProfile",
    "K8sv2DdosProfileField",
    "K8sv2Pool",
    "K8sv2SecurityGroupRule",
    "K8sv2Timeouts",
]


@pulumi.output_type
class K8sv2Authentication(dict):
    def __init__(__self__, *, oidc: K8sv2AuthenticationOidc | None = None) -> None:
        if oidc is not None:
            pulumi.set(__self__, "oidc", oidc)

    @property
    @pulumi.getter
    def oidc(self) -> K8sv2AuthenticationOidc | None:
        """OpenID Connect authentication settings."""
        return pulumi.get(self, "oidc")


@pulumi.output_type
class K8sv2AuthenticationOidc(dict):
    def __init__(
        __self__,
        *,
        client_id: str | None = None,
        groups_claim: str | None = None,
        groups_prefix: str | None = None,
        issuer_url: str | None = None,
        required_claims: Mapping[str, str] | None = None,
        signing_algs: Sequence[str] | None = None,
        username_claim: str | None = None,
        username_prefix: str | None = None,
    ) -> None:
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
    def client_id(self) -> str | None:
        """Client ID."""
        return pulumi.get(self, "client_id")

    @property
    @pulumi.getter(name="groupsClaim")
    def groups_claim(self) -> str | None:
        """JWT claim to use as the user's group."""
        return pulumi.get(self, "groups_claim")

    @property
    @pulumi.getter(name="groupsPrefix")
    def groups_prefix(self) -> str | None:
        """Prefix prepended to group claims."""
        return pulumi.get(self, "groups_prefix")

    @property
    @pulumi.getter(name="issuerUrl")
    def issuer_url(self) -> str | None:
        """Issuer URL."""
        return pulumi.get(self, "issuer_url")

    @property
    @pulumi.getter(name="requiredClaims")
    def required_claims(self) -> Mapping[str, str] | None:
        """Key-value pairs that describe required claims in the token."""
        return pulumi.get(self, "required_claims")

    @property
    @pulumi.getter(name="signingAlgs")
    def signing_algs(self) -> Sequence[str] | None:
        """Accepted signing algorithms (a set in Terraform)."""
        return pulumi.get(self, "signing_algs")

    @property
    @pulumi.getter(name="usernameClaim")
    def username_claim(self) -> str | None:
        """JWT claim to use as the user name."""
        return pulumi.get(self, "username_claim")

    @property
    @pulumi.getter(name="usernamePrefix")
    def username_prefix(self) -> str | None:
        """Prefix prepended to username claims."""
        return pulumi.get(self, "username_prefix")


@pulumi.output_type
class K8sv2Cni(dict):
    def __init__(__self__, *, cilium: K8sv2CniCilium | None = None, provider: str | None = None) -> None:
        if cilium is not None:
            pulumi.set(__self__, "cilium", cilium)
        if provider is not None:
            pulumi.set(__self__, "provider", provider)

    @property
    @pulumi.getter
    def cilium(self) -> K8sv2CniCilium | None:
        """Cilium settings (only with provider "cilium")."""
        return pulumi.get(self, "cilium")

    @property
    @pulumi.getter
    def provider(self) -> str | None:
        """CNI provider: "calico" (Terraform default) or "cilium"."""
        return pulumi.get(self, "provider")


@pulumi.output_type
class K8sv2CniCilium(dict):
    def __init__(
        __self__,
        *,
        encryption: bool | None = None,
        hubble_relay: bool | None = None,
        hubble_ui: bool | None = None,
        lb_acceleration: bool | None = None,
        lb_mode: str | None = None,
        mask_size: float | None = None,
        mask_size_v6: float | None = None,
        routing_mode: str | None = None,
        tunnel: str | None = None,
    ) -> None:
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
    def encryption(self) -> bool | None:
        """Enable transparent encryption (default false)."""
        return pulumi.get(self, "encryption")

    @property
    @pulumi.getter(name="hubbleRelay")
    def hubble_relay(self) -> bool | None:
        """Enable Hubble Relay (default false)."""
        return pulumi.get(self, "hubble_relay")

    @property
    @pulumi.getter(name="hubbleUi")
    def hubble_ui(self) -> bool | None:
        """Enable Hubble UI (default false)."""
        return pulumi.get(self, "hubble_ui")

    @property
    @pulumi.getter(name="lbAcceleration")
    def lb_acceleration(self) -> bool | None:
        """Enable LoadBalancer acceleration (default false)."""
        return pulumi.get(self, "lb_acceleration")

    @property
    @pulumi.getter(name="lbMode")
    def lb_mode(self) -> str | None:
        """LoadBalancer mode: "snat", "dsr" or "hybrid"."""
        return pulumi.get(self, "lb_mode")

    @property
    @pulumi.getter(name="maskSize")
    def mask_size(self) -> float | None:
        """IPv4 pod CIDR mask size per node (ForceNew, default 24)."""
        return pulumi.get(self, "mask_size")

    @property
    @pulumi.getter(name="maskSizeV6")
    def mask_size_v6(self) -> float | None:
        """IPv6 pod CIDR mask size per node (ForceNew, default 120)."""
        return pulumi.get(self, "mask_size_v6")

    @property
    @pulumi.getter(name="routingMode")
    def routing_mode(self) -> str | None:
        """Routing mode (default "tunnel")."""
        return pulumi.get(self, "routing_mode")

    @property
    @pulumi.getter
    def tunnel(self) -> str | None:
        """Tunnel protocol (default "geneve")."""
        return pulumi.get(self, "tunnel")


@pulumi.output_type
class K8sv2Csi(dict):
    def __init__(__self__, *, nfs: K8sv2CsiNfs | None = None) -> None:
        if nfs is not None:
            pulumi.set(__self__, "nfs", nfs)

    @property
    @pulumi.getter
    def nfs(self) -> K8sv2CsiNfs | None:
        """NFS CSI driver settings."""
        return pulumi.get(self, "nfs")


@pulumi.output_type
class K8sv2CsiNfs(dict):
    def __init__(__self__, *, vast_enabled: bool | None = None) -> None:
        if vast_enabled is not None:
            pulumi.set(__self__, "vast_enabled", vast_enabled)

    @property
    @pulumi.getter(name="vastEnabled")
    def vast_enabled(self) -> bool | None:
        """Enable the VAST NFS client (ForceNew)."""
        return pulumi.get(self, "vast_enabled")


@pulumi.output_type
class K8sv2DdosProfile(dict):
    def __init__(
        __self__,
        *,
        enabled: bool,
        fields: Sequence[K8sv2DdosProfileField] | None = None,
        profile_template: float | None = None,
        profile_template_name: str | None = None,
    ) -> None:
        pulumi.set(__self__, "enabled", enabled)
        if fields is not None:
            pulumi.set(__self__, "fields", fields)
        if profile_template is not None:
            pulumi.set(__self__, "profile_template", profile_template)
        if profile_template_name is not None:
            pulumi.set(__self__, "profile_template_name", profile_template_name)

    @property
    @pulumi.getter
    def enabled(self) -> bool:
        """Whether the DDoS profile is enabled."""
        return pulumi.get(self, "enabled")

    @property
    @pulumi.getter
    def fields(self) -> Sequence[K8sv2DdosProfileField] | None:
        """Profile fields."""
        return pulumi.get(self, "fields")

    @property
    @pulumi.getter(name="profileTemplate")
    def profile_template(self) -> float | None:
        """DDoS profile template id."""
        return pulumi.get(self, "profile_template")

    @property
    @pulumi.getter(name="profileTemplateName")
    def profile_template_name(self) -> str | None:
        """DDoS profile template name."""
        return pulumi.get(self, "profile_template_name")


@pulumi.output_type
class K8sv2DdosProfileField(dict):
    def __init__(__self__, *, base_field: float, field_value: str | None = None, value: str | None = None) -> None:
        pulumi.set(__self__, "base_field", base_field)
        if field_value is not None:
            pulumi.set(__self__, "field_value", field_value)
        if value is not None:
            pulumi.set(__self__, "value", value)

    @property
    @pulumi.getter(name="baseField")
    def base_field(self) -> float:
        """Base field id."""
        return pulumi.get(self, "base_field")

    @property
    @pulumi.getter(name="fieldValue")
    def field_value(self) -> str | None:
        """Field value as a JSON string."""
        return pulumi.get(self, "field_value")

    @property
    @pulumi.getter
    def value(self) -> str | None:
        """Field value."""
        return pulumi.get(self, "value")


@pulumi.output_type
class K8sv2Pool(dict):
    def __init__(
        __self__,
        *,
        auto_healing_enabled: bool,
        created_at: str,
        crio_config: Mapping[str, str],
        flavor_id: str,
        is_public_ipv4: bool,
        kubelet_config: Mapping[str, str],
        labels: Mapping[str, str],
        max_node_count: float,
        min_node_count: float,
        name: str,
        node_count: float,
        servergroup_id: str,
        servergroup_name: str,
        status: str,
        taints: Mapping[str, str],
        boot_volume_size: float | None = None,
        boot_volume_type: str | None = None,
        servergroup_policy: str | None = None,
    ) -> None:
        pulumi.set(__self__, "auto_healing_enabled", auto_healing_enabled)
        pulumi.set(__self__, "created_at", created_at)
        pulumi.set(__self__, "crio_config", crio_config)
        pulumi.set(__self__, "flavor_id", flavor_id)
        pulumi.set(__self__, "is_public_ipv4", is_public_ipv4)
        pulumi.set(__self__, "kubelet_config", kubelet_config)
        pulumi.set(__self__, "labels", labels)
        pulumi.set(__self__, "max_node_count", max_node_count)
        pulumi.set(__self__, "min_node_count", min_node_count)
        pulumi.set(__self__, "name", name)
        pulumi.set(__self__, "node_count", node_count)
        pulumi.set(__self__, "servergroup_id", servergroup_id)
        pulumi.set(__self__, "servergroup_name", servergroup_name)
        pulumi.set(__self__, "status", status)
        pulumi.set(__self__, "taints", taints)
        if boot_volume_size is not None:
            pulumi.set(__self__, "boot_volume_size", boot_volume_size)
        if boot_volume_type is not None:
            pulumi.set(__self__, "boot_volume_type", boot_volume_type)
        if servergroup_policy is not None:
            pulumi.set(__self__, "servergroup_policy", servergroup_policy)

    @property
    @pulumi.getter(name="autoHealingEnabled")
    def auto_healing_enabled(self) -> bool:
        """Enable node auto-healing. Updated in place."""
        return pulumi.get(self, "auto_healing_enabled")

    @property
    @pulumi.getter(name="createdAt")
    def created_at(self) -> str:
        """Read-only: creation time."""
        return pulumi.get(self, "created_at")

    @property
    @pulumi.getter(name="crioConfig")
    def crio_config(self) -> Mapping[str, str]:
        """CRI-O configuration. A change recreates the pool."""
        return pulumi.get(self, "crio_config")

    @property
    @pulumi.getter(name="flavorId")
    def flavor_id(self) -> str:
        """Flavor id of the pool's nodes. A change recreates the pool."""
        return pulumi.get(self, "flavor_id")

    @property
    @pulumi.getter(name="isPublicIpv4")
    def is_public_ipv4(self) -> bool:
        """Give nodes public IPv4 addresses. A change recreates the pool."""
        return pulumi.get(self, "is_public_ipv4")

    @property
    @pulumi.getter(name="kubeletConfig")
    def kubelet_config(self) -> Mapping[str, str]:
        """Kubelet configuration. A change recreates the pool."""
        return pulumi.get(self, "kubelet_config")

    @property
    @pulumi.getter
    def labels(self) -> Mapping[str, str]:
        """Node labels. Updated in place."""
        return pulumi.get(self, "labels")

    @property
    @pulumi.getter(name="maxNodeCount")
    def max_node_count(self) -> float:
        """Maximum node count. Updated in place."""
        return pulumi.get(self, "max_node_count")

    @property
    @pulumi.getter(name="minNodeCount")
    def min_node_count(self) -> float:
        """Minimum node count (>= 1). Updated in place."""
        return pulumi.get(self, "min_node_count")

    @property
    @pulumi.getter
    def name(self) -> str:
        """Pool name; the pool's identity key."""
        return pulumi.get(self, "name")

    @property
    @pulumi.getter(name="nodeCount")
    def node_count(self) -> float:
        """Read-only: current node count."""
        return pulumi.get(self, "node_count")

    @property
    @pulumi.getter(name="servergroupId")
    def servergroup_id(self) -> str:
        """Read-only: server group id."""
        return pulumi.get(self, "servergroup_id")

    @property
    @pulumi.getter(name="servergroupName")
    def servergroup_name(self) -> str:
        """Read-only: server group name."""
        return pulumi.get(self, "servergroup_name")

    @property
    @pulumi.getter
    def status(self) -> str:
        """Read-only: pool status."""
        return pulumi.get(self, "status")

    @property
    @pulumi.getter
    def taints(self) -> Mapping[str, str]:
        """Node taints as {key: "value:Effect"}. Updated in place."""
        return pulumi.get(self, "taints")

    @property
    @pulumi.getter(name="bootVolumeSize")
    def boot_volume_size(self) -> float | None:
        """Boot volume size (VM pools only). A change recreates the pool."""
        return pulumi.get(self, "boot_volume_size")

    @property
    @pulumi.getter(name="bootVolumeType")
    def boot_volume_type(self) -> str | None:
        """Boot volume type: standard, ssd_hiiops, cold or ultra (VM pools only). A change recreates the pool."""
        return pulumi.get(self, "boot_volume_type")

    @property
    @pulumi.getter(name="servergroupPolicy")
    def servergroup_policy(self) -> str | None:
        """anti-affinity, soft-anti-affinity or affinity. Required for VM flavors, forbidden for bare metal."""
        return pulumi.get(self, "servergroup_policy")


@pulumi.output_type
class K8sv2SecurityGroupRule(dict):
    def __init__(
        __self__,
        *,
        direction: str,
        ethertype: str,
        protocol: str,
        description: str | None = None,
        port_range_max: float | None = None,
        port_range_min: float | None = None,
        remote_group_id: str | None = None,
        remote_ip_prefix: str | None = None,
        created_at: str | None = None,
        id: str | None = None,
        updated_at: str | None = None,
    ) -> None:
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
    def direction(self) -> str:
        """ingress or egress."""
        return pulumi.get(self, "direction")

    @property
    @pulumi.getter
    def ethertype(self) -> str:
        """IPv4 or IPv6."""
        return pulumi.get(self, "ethertype")

    @property
    @pulumi.getter
    def protocol(self) -> str:
        """Protocol."""
        return pulumi.get(self, "protocol")

    @property
    @pulumi.getter
    def description(self) -> str | None:
        """Rule description."""
        return pulumi.get(self, "description")

    @property
    @pulumi.getter(name="portRangeMax")
    def port_range_max(self) -> float | None:
        """Upper port bound."""
        return pulumi.get(self, "port_range_max")

    @property
    @pulumi.getter(name="portRangeMin")
    def port_range_min(self) -> float | None:
        """Lower port bound."""
        return pulumi.get(self, "port_range_min")

    @property
    @pulumi.getter(name="remoteGroupId")
    def remote_group_id(self) -> str | None:
        """Remote security group id."""
        return pulumi.get(self, "remote_group_id")

    @property
    @pulumi.getter(name="remoteIpPrefix")
    def remote_ip_prefix(self) -> str | None:
        """Remote CIDR."""
        return pulumi.get(self, "remote_ip_prefix")

    @property
    @pulumi.getter(name="createdAt")
    def created_at(self) -> str | None:
        """Read-only: creation time."""
        return pulumi.get(self, "created_at")

    @property
    @pulumi.getter
    def id(self) -> str | None:
        """Read-only: rule id."""
        return pulumi.get(self, "id")

    @property
    @pulumi.getter(name="updatedAt")
    def updated_at(self) -> str | None:
        """Read-only: last update time."""
        return pulumi.get(self, "updated_at")


@pulumi.output_type
class K8sv2Timeouts(dict):
    def __init__(__self__, *, create: str | None = None, update: str | None = None) -> None:
        if create is not None:
            pulumi.set(__self__, "create", create)
        if update is not None:
            pulumi.set(__self__, "update", update)

    @property
    @pulumi.getter
    def create(self) -> str | None:
        """Create timeout (Go duration)."""
        return pulumi.get(self, "create")

    @property
    @pulumi.getter
    def update(self) -> str | None:
        """Update timeout (Go duration)."""
        return pulumi.get(self, "update")
