"""The generated Gcore SDK (sdks/gcore: the Any Terraform Provider's schema of g-core/gcore 0.34.3, through Pulumi's
Python codegen; `python -m realengine.gcore_sdk`) under the mocks the suite uses.

What the rest of the suite relies on: type tokens, camelCase engine names, the parameterized-package reference,
TypeErrors for wrong or missing arguments, and the kubeconfig invoke. Each test fails if one of them breaks.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pulumi
import pulumi.runtime.settings
import pytest
from google.protobuf import json_format
from pulumi.runtime.mocks import MockMonitor

SDK = Path(__file__).resolve().parents[1] / "sdks" / "gcore"
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n"
INVOKE_TOKEN = "gcore:index/getK8sv2Kubeconfig:getK8sv2Kubeconfig"
# MockMonitor's answer to RegisterPackage (pulumi/runtime/mocks.py).
MOCK_PACKAGE_REF = "mock-uuid"
# How a secret input reaches the monitor (Pulumi's secret signature).
SECRET_SIG = "4dabf18193072939515e22adb298388d"


def _import_sdk() -> ModuleType:
    """The generated SDK as `pulumi install` (or scripts/test.sh) installed it from sdks/gcore."""
    import pulumi_gcore

    plugin = json.loads((Path(pulumi_gcore.__file__).parent / "pulumi-plugin.json").read_text())
    committed = json.loads((SDK / "pulumi_gcore" / "pulumi-plugin.json").read_text())
    assert plugin == committed, f"the installed pulumi_gcore ({pulumi_gcore.__file__}) is not sdks/gcore's"
    return pulumi_gcore


gcore = _import_sdk()


class GcoreMocks(pulumi.runtime.Mocks):
    """Echo inputs and add what the provider computes: id = cluster name, status, pool node counts."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        state = dict(args.inputs)
        if args.typ == "gcore:index/k8sv2:K8sv2":
            state["status"] = "Provisioned"
            state["pools"] = [
                {**pool, "nodeCount": pool.get("minNodeCount"), "status": "Running"} for pool in state["pools"]
            ]
            return state.get("name", args.name), state
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:  # type: ignore[override]  # Pulumi takes a dict too
        if args.token == INVOKE_TOKEN:
            return {
                **args.args,
                "kubeconfig": KUBECONFIG,
                "host": "https://k8s.example:6443",
                "id": args.args["clusterName"],
            }
        return {}


class RecordingMonitor(MockMonitor):
    """MockMonitor that keeps the raw RegisterResource / RegisterPackage / Invoke requests."""

    def __init__(self) -> None:
        super().__init__(GcoreMocks())
        self.registrations: list[Any] = []
        self.package_requests: list[Any] = []
        self.invoke_requests: list[Any] = []

    def RegisterResource(self, request: Any) -> Any:
        self.registrations.append(request)
        return super().RegisterResource(request)

    def RegisterPackage(self, request: Any) -> Any:
        self.package_requests.append(request)
        return super().RegisterPackage(request)

    def Invoke(self, request: Any) -> Any:
        self.invoke_requests.append(request)
        return super().Invoke(request)

    def one(self, typ: str) -> Any:
        hits = [r for r in self.registrations if r.type == typ]
        assert len(hits) == 1, f"{typ}: {len(hits)} registrations"
        return hits[0]


def inputs_of(request: Any) -> dict[str, Any]:
    return json_format.MessageToDict(request.object)


@pytest.fixture
def monitor() -> RecordingMonitor:
    mon = RecordingMonitor()
    pulumi.runtime.set_mocks(mon.mocks, project="gpu", stack="test", preview=False, monitor=mon)
    # The runtime caches package refs in a context variable that set_mocks does not reset; start empty so this
    # test sees its own RegisterPackage.
    pulumi.runtime.settings.SETTINGS.package_refs = {}
    return mon


def gpu_pool(**overrides: Any) -> Any:
    fields: dict[str, Any] = {
        "name": "gpu-1",
        "flavor_id": "bm3-ai-ndp-1xlarge-h100-80-8",
        "min_node_count": 1,
        "max_node_count": 2,
        "is_public_ipv4": False,
        "auto_healing_enabled": False,
    }
    return gcore.K8sv2PoolArgs(**{**fields, **overrides})


def test_k8sv2_registers_under_its_token_with_camelcase_inputs_and_package_ref(monitor: RecordingMonitor) -> None:
    seen: dict[str, Any] = {}

    @pulumi.runtime.test
    async def build() -> None:
        cluster = gcore.K8sv2(
            "cluster",
            name="gpu-dev",
            keypair="ops",
            version="v1.33.10",
            project_id=1,
            region_id=76,
            fixed_network="net-uuid",
            autoscaler_config={"max-node-provision-time": "30m"},
            cni=gcore.K8sv2CniArgs(provider="cilium", cilium=gcore.K8sv2CniCiliumArgs(mask_size_v6=120)),
            pools=[gpu_pool(taints={"nvidia.com/gpu": "present:NoSchedule"})],
        )
        seen.update(id=await cluster.id.future(), status=await cluster.status.future())
        seen["pools"] = await cluster.pools.future()

    build()

    request = monitor.one("gcore:index/k8sv2:K8sv2")
    assert request.custom
    assert request.packageRef == MOCK_PACKAGE_REF
    props = inputs_of(request)
    assert {"autoscalerConfig", "fixedNetwork", "projectId", "regionId", "keypair", "version", "pools"} <= set(props)
    assert not [key for key in props if "_" in key], props
    assert props["autoscalerConfig"] == {"max-node-provision-time": "30m"}
    assert props["cni"] == {"provider": "cilium", "cilium": {"maskSizeV6": 120.0}}
    pool = props["pools"][0]
    assert pool["flavorId"] == "bm3-ai-ndp-1xlarge-h100-80-8"
    assert (pool["minNodeCount"], pool["maxNodeCount"]) == (1.0, 2.0)
    assert (pool["isPublicIpv4"], pool["autoHealingEnabled"]) == (False, False)
    assert pool["taints"] == {"nvidia.com/gpu": "present:NoSchedule"}
    # Outputs flow back with Python names: the Pulumi id is the cluster name, pools become output types.
    assert (seen["id"], seen["status"]) == ("gpu-dev", "Provisioned")
    out_pool = seen["pools"][0]
    assert isinstance(out_pool, gcore.outputs.K8sv2Pool)
    assert (out_pool.flavor_id, out_pool.node_count, out_pool.status) == (
        "bm3-ai-ndp-1xlarge-h100-80-8",
        1.0,
        "Running",
    )


def test_register_package_carries_the_terraform_provider_parameterization(monitor: RecordingMonitor) -> None:
    @pulumi.runtime.test
    def build() -> None:
        gcore.K8sv2("a", name="a", keypair="k", version="v1.33.10", pools=[gpu_pool()])
        gcore.K8sv2("b", name="b", keypair="k", version="v1.33.10", pools=[gpu_pool()])

    build()

    assert len(monitor.package_requests) == 1, "one RegisterPackage per deployment, then the cached ref"
    package = monitor.package_requests[0]
    plugin = json.loads((SDK / "pulumi_gcore" / "pulumi-plugin.json").read_text())
    assert (package.name, package.version) == ("terraform-provider", plugin["version"])
    assert (package.parameterization.name, package.parameterization.version) == ("gcore", "0.34.3")
    assert json.loads(package.parameterization.value) == {
        "remote": {"url": "registry.opentofu.org/g-core/gcore", "version": "0.34.3"}
    }
    assert plugin["name"] == package.name
    assert base64.b64decode(plugin["parameterization"]["value"]) == package.parameterization.value
    assert [r.packageRef for r in monitor.registrations if r.type.startswith("gcore:")] == [MOCK_PACKAGE_REF] * 2


def test_args_class_and_typed_dict_shapes_register_the_same_engine_names(monitor: RecordingMonitor) -> None:
    @pulumi.runtime.test
    def build() -> None:
        args = gcore.K8sv2Args(keypair="k", version="v1.33.10", pools=[gpu_pool()], name="via-args")
        gcore.K8sv2("via-args", args, pulumi.ResourceOptions(protect=True))
        pool_dict: Any = {"name": "gpu-1", "flavor_id": "bm3-ai-ndp-1xlarge-h100-80-8", "min_node_count": 1}
        gcore.K8sv2("via-dict", name="via-dict", keypair="k", version="v1.33.10", pools=[pool_dict])

    build()

    by_name = {r.name: r for r in monitor.registrations if r.type == "gcore:index/k8sv2:K8sv2"}
    assert by_name["via-args"].protect
    assert inputs_of(by_name["via-args"])["pools"][0]["flavorId"] == "bm3-ai-ndp-1xlarge-h100-80-8"
    assert inputs_of(by_name["via-dict"])["pools"][0] == {
        "name": "gpu-1",
        "flavorId": "bm3-ai-ndp-1xlarge-h100-80-8",
        "minNodeCount": 1.0,
    }


def test_wrong_or_missing_arguments_raise_type_error_like_generated_code(monitor: RecordingMonitor) -> None:
    with pytest.raises(TypeError, match="flavor"):
        gcore.K8sv2PoolArgs(name="gpu-1", flavor="bm3-ai-ndp-1xlarge-h100-80-8", min_node_count=1)
    with pytest.raises(TypeError, match="min_node_count"):
        gcore.K8sv2PoolArgs(name="gpu-1", flavor_id="bm3-ai-ndp-1xlarge-h100-80-8")
    with pytest.raises(TypeError, match="region"):
        gcore.K8sv2("c", name="c", keypair="k", version="v1.33.10", pools=[gpu_pool()], region="Luxembourg-2")
    with pytest.raises(TypeError, match="Missing required property 'keypair'"):
        gcore.K8sv2("c", name="c", version="v1.33.10", pools=[gpu_pool()])
    with pytest.raises(TypeError, match="Missing required property 'pools'"):
        gcore.K8sv2("c", name="c", keypair="k", version="v1.33.10")
    with pytest.raises(TypeError, match="token"):
        gcore.Provider("gcore", token="x")
    assert monitor.registrations == [r for r in monitor.registrations if r.type == "pulumi:pulumi:Stack"]


def test_get_k8sv2_kubeconfig_output_invokes_with_camelcase_args_and_package_ref(monitor: RecordingMonitor) -> None:
    @pulumi.runtime.test
    async def build() -> None:
        cluster = gcore.K8sv2("cluster", name="gpu-dev", keypair="k", version="v1.33.10", pools=[gpu_pool()])
        config = gcore.get_k8sv2_kubeconfig_output(cluster_name=cluster.name, project_id=1, region_id=76)
        assert await config.kubeconfig.future() == KUBECONFIG
        assert await config.host.future() == "https://k8s.example:6443"
        # The provider marks none of these fields Sensitive: callers must wrap them in Output.secret themselves.
        assert not await config.is_secret()

    build()

    invoke = next(r for r in monitor.invoke_requests if r.tok == INVOKE_TOKEN)
    args = json_format.MessageToDict(invoke.args)
    assert (args["clusterName"], args["projectId"], args["regionId"]) == ("gpu-dev", 1.0, 76.0)
    assert invoke.packageRef == MOCK_PACKAGE_REF


def test_plain_get_k8sv2_kubeconfig_returns_an_awaitable_result(monitor: RecordingMonitor) -> None:
    @pulumi.runtime.test
    def build() -> None:
        result = gcore.get_k8sv2_kubeconfig(cluster_name="gpu-dev", project_name="Default", region_name="Luxembourg-2")
        assert isinstance(result, gcore.AwaitableGetK8sv2KubeconfigResult)
        assert (result.kubeconfig, result.id, result.region_name) == (KUBECONFIG, "gpu-dev", "Luxembourg-2")

    build()
    assert [r.tok for r in monitor.invoke_requests] == [INVOKE_TOKEN]


def test_provider_token_secret_api_token_and_json_encoded_bool(monitor: RecordingMonitor) -> None:
    @pulumi.runtime.test
    def build() -> None:
        provider = gcore.Provider(
            "gcore", permanent_api_token="s3cr3t", api_endpoint="https://api.gcore.com", ignore_creds_auth_error=True
        )
        gcore.K8sv2(
            "cluster",
            name="c",
            keypair="k",
            version="v1.33.10",
            pools=[gpu_pool()],
            opts=pulumi.ResourceOptions(provider=provider),
        )

    build()

    provider = monitor.one("pulumi:providers:gcore")
    assert provider.packageRef == MOCK_PACKAGE_REF
    assert list(provider.additionalSecretOutputs) == ["permanentApiToken"]
    props = inputs_of(provider)
    assert props["permanentApiToken"][SECRET_SIG] and props["permanentApiToken"]["value"] == "s3cr3t"
    assert props["apiEndpoint"] == "https://api.gcore.com"
    assert props["ignoreCredsAuthError"] == "true"
    cluster = monitor.one("gcore:index/k8sv2:K8sv2")
    assert cluster.provider.split("::")[-2] == "gcore"
