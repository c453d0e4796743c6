# Test double of the file that `pulumi install` generates in sdks/gcore/pulumi_gcore/ for terraform-provider
# g-core/gcore 0.34.3. Names, Python/engine property names and types mirror the generated SDK.

"""`gcore.Provider` (`pulumi:providers:gcore`): explicit provider configuration of the v0 Gcore provider."""

from __future__ import annotations

from typing import Any, overload

import pulumi

from . import _utilities

__all__ = ["ProviderArgs", "Provider"]

# (python name, engine name, is a string) of every provider input, in schema (alphabetical) order.
_PROPS: tuple[tuple[str, str, bool], ...] = (
    ("api_endpoint", "apiEndpoint", True),
    ("gcore_api", "gcoreApi", True),
    ("gcore_cdn_api", "gcoreCdnApi", True),
    ("gcore_client_id", "gcoreClientId", True),
    ("gcore_cloud_api", "gcoreCloudApi", True),
    ("gcore_dns_api", "gcoreDnsApi", True),
    ("gcore_fastedge_api", "gcoreFastedgeApi", True),
    ("gcore_platform", "gcorePlatform", True),
    ("gcore_platform_api", "gcorePlatformApi", True),
    ("gcore_storage_api", "gcoreStorageApi", True),
    ("gcore_waap_api", "gcoreWaapApi", True),
    ("ignore_creds_auth_error", "ignoreCredsAuthError", False),
    ("password", "password", True),
    ("permanent_api_token", "permanentApiToken", True),
    ("user_name", "userName", True),
)


@pulumi.input_type
class ProviderArgs:
    def __init__(
        __self__,
        *,
        api_endpoint: pulumi.Input[str | None] = None,
        gcore_api: pulumi.Input[str | None] = None,
        gcore_cdn_api: pulumi.Input[str | None] = None,
        gcore_client_id: pulumi.Input[str | None] = None,
        gcore_cloud_api: pulumi.Input[str | None] = None,
        gcore_dns_api: pulumi.Input[str | None] = None,
        gcore_fastedge_api: pulumi.Input[str | None] = None,
        gcore_platform: pulumi.Input[str | None] = None,
        gcore_platform_api: pulumi.Input[str | None] = None,
        gcore_storage_api: pulumi.Input[str | None] = None,
        gcore_waap_api: pulumi.Input[str | None] = None,
        ignore_creds_auth_error: pulumi.Input[bool | None] = None,
        password: pulumi.Input[str | None] = None,
        permanent_api_token: pulumi.Input[str | None] = None,
        user_name: pulumi.Input[str | None] = None,
    ) -> None:
        """The set of arguments for constructing a Provider resource."""
        values = locals()
        for py_name, _, _ in _PROPS:
            if values[py_name] is not None:
                pulumi.set(__self__, py_name, values[py_name])

    @property
    @pulumi.getter(name="apiEndpoint")
    def api_endpoint(self) -> pulumi.Input[str | None]:
        """A single API endpoint for all products (env GCORE_API_ENDPOINT, default https://api.gcore.com)."""
        return pulumi.get(self, "api_endpoint")

    @api_endpoint.setter
    def api_endpoint(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "api_endpoint", value)

    @property
    @pulumi.getter(name="gcoreApi")
    def gcore_api(self) -> pulumi.Input[str | None]:
        """Deprecated: Cloud API endpoint."""
        return pulumi.get(self, "gcore_api")

    @gcore_api.setter
    def gcore_api(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_api", value)

    @property
    @pulumi.getter(name="gcoreCdnApi")
    def gcore_cdn_api(self) -> pulumi.Input[str | None]:
        """CDN API endpoint override (env GCORE_CDN_API)."""
        return pulumi.get(self, "gcore_cdn_api")

    @gcore_cdn_api.setter
    def gcore_cdn_api(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_cdn_api", value)

    @property
    @pulumi.getter(name="gcoreClientId")
    def gcore_client_id(self) -> pulumi.Input[str | None]:
        """Client id (env GCORE_CLIENT_ID)."""
        return pulumi.get(self, "gcore_client_id")

    @gcore_client_id.setter
    def gcore_client_id(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_client_id", value)

    @property
    @pulumi.getter(name="gcoreCloudApi")
    def gcore_cloud_api(self) -> pulumi.Input[str | None]:
        """Cloud API endpoint override (env GCORE_CLOUD_API)."""
        return pulumi.get(self, "gcore_cloud_api")

    @gcore_cloud_api.setter
    def gcore_cloud_api(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_cloud_api", value)

    @property
    @pulumi.getter(name="gcoreDnsApi")
    def gcore_dns_api(self) -> pulumi.Input[str | None]:
        """DNS API endpoint override (env GCORE_DNS_API)."""
        return pulumi.get(self, "gcore_dns_api")

    @gcore_dns_api.setter
    def gcore_dns_api(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_dns_api", value)

    @property
    @pulumi.getter(name="gcoreFastedgeApi")
    def gcore_fastedge_api(self) -> pulumi.Input[str | None]:
        """FastEdge API endpoint override (env GCORE_FASTEDGE_API)."""
        return pulumi.get(self, "gcore_fastedge_api")

    @gcore_fastedge_api.setter
    def gcore_fastedge_api(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_fastedge_api", value)

    @property
    @pulumi.getter(name="gcorePlatform")
    def gcore_platform(self) -> pulumi.Input[str | None]:
        """Deprecated: platform URL."""
        return pulumi.get(self, "gcore_platform")

    @gcore_platform.setter
    def gcore_platform(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_platform", value)

    @property
    @pulumi.getter(name="gcorePlatformApi")
    def gcore_platform_api(self) -> pulumi.Input[str | None]:
        """Platform API endpoint override (env GCORE_PLATFORM_API)."""
        return pulumi.get(self, "gcore_platform_api")

    @gcore_platform_api.setter
    def gcore_platform_api(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_platform_api", value)

    @property
    @pulumi.getter(name="gcoreStorageApi")
    def gcore_storage_api(self) -> pulumi.Input[str | None]:
        """Storage API endpoint override (env GCORE_STORAGE_API)."""
        return pulumi.get(self, "gcore_storage_api")

    @gcore_storage_api.setter
    def gcore_storage_api(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_storage_api", value)

    @property
    @pulumi.getter(name="gcoreWaapApi")
    def gcore_waap_api(self) -> pulumi.Input[str | None]:
        """WAAP API endpoint override (env GCORE_WAAP_API)."""
        return pulumi.get(self, "gcore_waap_api")

    @gcore_waap_api.setter
    def gcore_waap_api(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "gcore_waap_api", value)

    @property
    @pulumi.getter(name="ignoreCredsAuthError")
    def ignore_creds_auth_error(self) -> pulumi.Input[bool | None]:
        """Deprecated: ignore credentials authentication errors."""
        return pulumi.get(self, "ignore_creds_auth_error")

    @ignore_creds_auth_error.setter
    def ignore_creds_auth_error(self, value: pulumi.Input[bool | None]) -> None:
        pulumi.set(self, "ignore_creds_auth_error", value)

    @property
    @pulumi.getter
    def password(self) -> pulumi.Input[str | None]:
        """Deprecated: password (env GCORE_PASSWORD)."""
        return pulumi.get(self, "password")

    @password.setter
    def password(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "password", value)

    @property
    @pulumi.getter(name="permanentApiToken")
    def permanent_api_token(self) -> pulumi.Input[str | None]:
        """Permanent API token (env GCORE_PERMANENT_TOKEN). Secret."""
        return pulumi.get(self, "permanent_api_token")

    @permanent_api_token.setter
    def permanent_api_token(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "permanent_api_token", value)

    @property
    @pulumi.getter(name="userName")
    def user_name(self) -> pulumi.Input[str | None]:
        """Deprecated: user name (env GCORE_USERNAME)."""
        return pulumi.get(self, "user_name")

    @user_name.setter
    def user_name(self, value: pulumi.Input[str | None]) -> None:
        pulumi.set(self, "user_name", value)


@pulumi.type_token("pulumi:providers:gcore")
class Provider(pulumi.ProviderResource):
    """The provider type for the gcore package (Terraform provider G-Core/gcore v0.34.3)."""

    @overload
    def __init__(
        __self__,
        resource_name: str,
        opts: pulumi.ResourceOptions | None = None,
        *,
        api_endpoint: pulumi.Input[str | None] = None,
        gcore_api: pulumi.Input[str | None] = None,
        gcore_cdn_api: pulumi.Input[str | None] = None,
        gcore_client_id: pulumi.Input[str | None] = None,
        gcore_cloud_api: pulumi.Input[str | None] = None,
        gcore_dns_api: pulumi.Input[str | None] = None,
        gcore_fastedge_api: pulumi.Input[str | None] = None,
        gcore_platform: pulumi.Input[str | None] = None,
        gcore_platform_api: pulumi.Input[str | None] = None,
        gcore_storage_api: pulumi.Input[str | None] = None,
        gcore_waap_api: pulumi.Input[str | None] = None,
        ignore_creds_auth_error: pulumi.Input[bool | None] = None,
        password: pulumi.Input[str | None] = None,
        permanent_api_token: pulumi.Input[str | None] = None,
        user_name: pulumi.Input[str | None] = None,
        __props__: ProviderArgs | None = None,
    ) -> None: ...

    @overload
    def __init__(
        __self__, resource_name: str, args: ProviderArgs | None = None, opts: pulumi.ResourceOptions | None = None
    ) -> None: ...

    def __init__(
        __self__,
        resource_name: str,
        args: ProviderArgs | pulumi.ResourceOptions | None = None,
        opts: pulumi.ResourceOptions | None = None,
        *,
        api_endpoint: pulumi.Input[str | None] = None,
        gcore_api: pulumi.Input[str | None] = None,
        gcore_cdn_api: pulumi.Input[str | None] = None,
        gcore_client_id: pulumi.Input[str | None] = None,
        gcore_cloud_api: pulumi.Input[str | None] = None,
        gcore_dns_api: pulumi.Input[str | None] = None,
        gcore_fastedge_api: pulumi.Input[str | None] = None,
        gcore_platform: pulumi.Input[str | None] = None,
        gcore_platform_api: pulumi.Input[str | None] = None,
        gcore_storage_api: pulumi.Input[str | None] = None,
        gcore_waap_api: pulumi.Input[str | None] = None,
        ignore_creds_auth_error: pulumi.Input[bool | None] = None,
        password: pulumi.Input[str | None] = None,
        permanent_api_token: pulumi.Input[str | None] = None,
        user_name: pulumi.Input[str | None] = None,
        __props__: ProviderArgs | None = None,
    ) -> None:
        """Both call shapes of the generated SDK: `Provider(name, opts, *, <config>)` / `Provider(name, args, opts)`."""
        if isinstance(args, pulumi.ResourceOptions):
            if opts is not None:
                raise TypeError("Provider() got multiple values for argument 'opts'")
            args, opts = None, args
        values = locals()
        props: dict[str, Any] = {py_name: values[py_name] for py_name, _, _ in _PROPS}
        if args is not None:
            if not isinstance(args, ProviderArgs):
                raise TypeError("Expected args to be a ProviderArgs instance")
            given = sorted(k for k, v in props.items() if v is not None)
            if given:
                raise TypeError(f"Provider() takes either args or configuration keywords, not both: {given}")
            props = {k: args.__dict__.get(k) for k in props}
        __self__._internal_init(resource_name, opts, __props__, props)

    def _internal_init(
        __self__,
        resource_name: str,
        opts: pulumi.ResourceOptions | None,
        __props__: ProviderArgs | None,
        props: dict[str, Any],
    ) -> None:
        opts = pulumi.ResourceOptions.merge(_utilities.get_resource_opts_defaults(), opts)
        if not isinstance(opts, pulumi.ResourceOptions):
            raise TypeError("Expected resource options to be a ResourceOptions instance")
        if opts.id is None:
            if __props__ is not None:
                raise TypeError("__props__ is only valid with a valid opts.id to get an existing resource")
            __props__ = ProviderArgs.__new__(ProviderArgs)
            for py_name, _, is_string in _PROPS:
                value = props[py_name]
                # Codegen: a provider's non-string inputs are sent JSON-encoded; secret inputs are wrapped.
                if not is_string and value is not None:
                    value = pulumi.Output.from_input(value).apply(pulumi.runtime.to_json)
                if py_name == "permanent_api_token" and value is not None:
                    value = pulumi.Output.secret(value)
                __props__.__dict__[py_name] = value
        secret_opts = pulumi.ResourceOptions(additional_secret_outputs=["permanentApiToken"])
        opts = pulumi.ResourceOptions.merge(opts, secret_opts)
        super().__init__("gcore", resource_name, __props__, opts, package_ref=_utilities.get_package())

    # Output properties: the bridge exposes the string-typed configuration values as provider outputs.
    @property
    @pulumi.getter(name="apiEndpoint")
    def api_endpoint(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "api_endpoint")

    @property
    @pulumi.getter(name="gcoreApi")
    def gcore_api(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_api")

    @property
    @pulumi.getter(name="gcoreCdnApi")
    def gcore_cdn_api(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_cdn_api")

    @property
    @pulumi.getter(name="gcoreClientId")
    def gcore_client_id(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_client_id")

    @property
    @pulumi.getter(name="gcoreCloudApi")
    def gcore_cloud_api(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_cloud_api")

    @property
    @pulumi.getter(name="gcoreDnsApi")
    def gcore_dns_api(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_dns_api")

    @property
    @pulumi.getter(name="gcoreFastedgeApi")
    def gcore_fastedge_api(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_fastedge_api")

    @property
    @pulumi.getter(name="gcorePlatform")
    def gcore_platform(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_platform")

    @property
    @pulumi.getter(name="gcorePlatformApi")
    def gcore_platform_api(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_platform_api")

    @property
    @pulumi.getter(name="gcoreStorageApi")
    def gcore_storage_api(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_storage_api")

    @property
    @pulumi.getter(name="gcoreWaapApi")
    def gcore_waap_api(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "gcore_waap_api")

    @property
    @pulumi.getter
    def password(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "password")

    @property
    @pulumi.getter(name="permanentApiToken")
    def permanent_api_token(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "permanent_api_token")

    @property
    @pulumi.getter(name="userName")
    def user_name(self) -> pulumi.Output[str | None]:
        return pulumi.get(self, "user_name")
