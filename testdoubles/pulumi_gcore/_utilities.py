# Test double of the `_utilities.py` that `pulumi install` generates for the parameterized `gcore` package
# (terraform-provider bridge, g-core/gcore 0.34.3). It keeps the parts the double's resources and functions
# call: resource/invoke option defaults, resource-module registration and `get_package()`.

import asyncio
import base64
import importlib
import json
import typing
from typing import Any

import pulumi
import pulumi.runtime
import pulumi.runtime.settings
from pulumi.runtime.proto import resource_pb2
from semver import VersionInfo as SemverVersion

#: The Pulumi package name (`pulumi_gcore`, tokens `gcore:index/...`, provider `pulumi:providers:gcore`).
PACKAGE_NAME = "gcore"
#: Version of the parameterized package = the Terraform provider version (a generated local SDK of the
#: terraform-provider bridge is a "support pack" SDK, so codegen writes the version literally).
PACKAGE_VERSION = "0.34.3"
#: The base provider plugin that serves the package and its version (the `version:` of the `packages:` entry
#: in Pulumi.yaml, i.e. the bridge version, not the Terraform provider version).
BASE_PROVIDER_NAME = "terraform-provider"
BASE_PROVIDER_VERSION = "1.4.0"
#: The parameter the bridge embeds in generated SDKs: base64 of its JSON `parameterize.Value`
#: (pulumi-terraform-bridge `dynamic/parameterize/value.go`).
PARAMETER_VALUE = json.dumps(
    {"remote": {"url": "registry.opentofu.org/g-core/gcore", "version": PACKAGE_VERSION}},
    separators=(",", ":"),
).encode()
PARAMETER_BASE64 = base64.b64encode(PARAMETER_VALUE).decode()

_version = SemverVersion.parse(PACKAGE_VERSION)
_version_str = str(_version)


def get_plugin_download_url() -> str | None:
    return None


def get_version() -> str:
    return PACKAGE_VERSION


def get_resource_opts_defaults() -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(
        version=get_version(),
        plugin_download_url=get_plugin_download_url(),
    )


def get_invoke_opts_defaults() -> pulumi.InvokeOptions:
    return pulumi.InvokeOptions(
        version=get_version(),
        plugin_download_url=get_plugin_download_url(),
    )


class Package(pulumi.runtime.ResourcePackage):
    """Lets the runtime rehydrate a `pulumi:providers:gcore` reference into a `Provider` (as generated)."""

    def __init__(self, pkg_info: dict[str, str]) -> None:
        super().__init__()
        self.pkg_info = pkg_info

    def version(self) -> SemverVersion:
        return _version

    def construct_provider(self, name: str, typ: str, urn: str) -> pulumi.ProviderResource:
        if typ != self.pkg_info["token"]:
            raise Exception(f"unknown provider type {typ}")
        provider_cls = getattr(importlib.import_module(self.pkg_info["fqn"]), self.pkg_info["class"])
        return provider_cls(name, pulumi.ResourceOptions(urn=urn))


class Module(pulumi.runtime.ResourceModule):
    """Lets the runtime rehydrate a `gcore:index/k8sv2:K8sv2` reference into a `K8sv2` (as generated)."""

    def __init__(self, mod_info: dict[str, Any]) -> None:
        super().__init__()
        self.mod_info = mod_info

    def version(self) -> SemverVersion:
        return _version

    def construct(self, name: str, typ: str, urn: str) -> pulumi.Resource:
        class_name = self.mod_info["classes"].get(typ, None)
        if class_name is None:
            raise Exception(f"unknown resource type {typ}")
        resource_cls = getattr(importlib.import_module(self.mod_info["fqn"]), class_name)
        return resource_cls(name, pulumi.ResourceOptions(urn=urn))


def register(resource_modules: str, resource_packages: str) -> None:
    for pkg_info in json.loads(resource_packages):
        pulumi.runtime.register_resource_package(pkg_info["pkg"], Package(pkg_info))
    for mod_info in json.loads(resource_modules):
        pulumi.runtime.register_resource_module(mod_info["pkg"], mod_info["mod"], Module(mod_info))


# --- Parameterized package reference -------------------------------------------------------------------------
# Every resource and invoke of a parameterized SDK passes `package_ref=_utilities.get_package()`. The first call
# sends `RegisterPackage(name="terraform-provider", version=<bridge>, parameterization={name: "gcore",
# version: "0.34.3", value: <parameter>})` to the resource monitor; the returned ref is put on every
# RegisterResource/Invoke request (`packageRef`). Under `pulumi.runtime.set_mocks` the MockMonitor answers
# RegisterPackage with the ref "mock-uuid".
#
# pulumi >= 3.2xx (3.272.0 here) provides `pulumi.runtime.settings.register_package`, which sends that request
# and caches the ref per deployment (settings.SETTINGS.package_refs). Older SDKs only have
# `_sync_monitor_supports_parameterization`, used by pulumi's older python codegen template, reproduced below.

_package_lock = asyncio.Lock()
_package_ref: Any = ...


async def get_package() -> str:
    register_package = getattr(pulumi.runtime.settings, "register_package", None)
    if register_package is not None:
        return typing.cast(
            str,
            await register_package(
                BASE_PROVIDER_NAME,
                BASE_PROVIDER_VERSION,
                get_plugin_download_url() or "",
                PACKAGE_NAME,
                get_version(),
                PARAMETER_BASE64,
            ),
        )
    return await _get_package_legacy()


async def _get_package_legacy() -> str:
    global _package_ref
    if _package_ref is ... and pulumi.runtime.settings._sync_monitor_supports_parameterization():  # type: ignore
        async with _package_lock:
            if _package_ref is ...:
                monitor = pulumi.runtime.settings.get_monitor()
                assert monitor is not None
                parameterization = resource_pb2.Parameterization(
                    name=PACKAGE_NAME,
                    version=get_version(),
                    value=base64.b64decode(PARAMETER_BASE64),
                )
                response = monitor.RegisterPackage(
                    resource_pb2.RegisterPackageRequest(
                        name=BASE_PROVIDER_NAME,
                        version=BASE_PROVIDER_VERSION,
                        download_url=get_plugin_download_url(),
                        parameterization=parameterization,
                    )
                )
                _package_ref = response.ref
    if _package_ref is None or _package_ref is ...:
        raise Exception("The Pulumi CLI does not support parameterization. Please update the Pulumi CLI.")
    return typing.cast(str, _package_ref)
