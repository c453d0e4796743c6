"""Secrets the program keeps secret itself, whatever the marking of what it was given (issue 29, item 9).

Each secret here passes through a `pulumi.Output.secret` (or `require_secret`) of ours. Every other test hands
these values in already marked secret, so removing one of those wrappings passed the suite; here each is given in
plain text (another stack's plain export, a component's plain input, a config value without the marking) and must
still reach the engine and the outputs as a secret. Kubernetes Secrets' `stringData` is also marked by
pulumi-kubernetes itself (sdk/python pulumi_kubernetes/core/v1/Secret.py wraps `data`/`stringData` in
`Output.secret`), so the workload and Alertmanager tests hold even without our wrapping: they guard against the value
moving anywhere else. The Gcore kubeconfig (plain from the provider) and the drawn Grafana password are guarded by
tests/test_graph.py.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from components.monitoring import Monitoring, MonitoringArgs
from gpu_platform import ExistingCluster, GpuWorkload, PlatformWiring
from offline.components import record_components
from offline.engine import MOCK_KUBECONFIG, ReferencedStack, Secret, record_stack
from program.config import secret_config
from program.workloads import workload_args
from stackconfig import load_stack_config, secret_config_keys, versions
from tests.test_config import BASE
from tests.test_existing_cluster import DEV_EXISTING, EXISTING
from tests.test_serving import SERVING

PLAIN = "plain-TEST-value-4be1"


def test_a_kubeconfig_another_stack_exports_in_plain_text_ends_secret() -> None:
    ref = "acme/gpu-cluster/prod"
    overrides = {**DEV_EXISTING, "cluster": {**EXISTING["cluster"], "existing": {"stackReference": ref}}}
    rec = record_stack("dev", overrides, stack_references={ref: ReferencedStack({"kubeconfig": MOCK_KUBECONFIG})})
    provider = rec.get("gpu-provider", "pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == Secret(MOCK_KUBECONFIG)
    assert "kubeconfig" in rec.secret_outputs


def test_an_existing_clusters_plain_kubeconfig_ends_secret() -> None:
    def build() -> Any:
        cluster = ExistingCluster("gpu", {"kubeconfig": MOCK_KUBECONFIG, "cluster_name": "c",
                                          "kubernetes_version": "v1.34.6"})
        return {"kubeconfig": cluster.kubeconfig}

    rec, out = record_components(build)
    assert out["kubeconfig"] == Secret(MOCK_KUBECONFIG)
    assert rec.get("gpu-provider").inputs["kubeconfig"] == Secret(MOCK_KUBECONFIG)


def test_a_workloads_plain_secret_env_and_registry_password_end_secret() -> None:
    cfg = load_stack_config({**BASE, "workloads": [SERVING]})
    (w,) = cfg.workloads

    def build() -> None:
        GpuWorkload(w.name, workload_args(w, cfg.pools[0], dict.fromkeys(secret_config_keys(cfg), PLAIN),
                                          "http://prometheus:9090", "gpu-workload"),
                    wiring=PlatformWiring(namespace=w.namespace))  # its hostPath cache: the platform's namespace

    rec, _ = record_components(build)
    env = rec.get(f"{w.name}-env-secret").inputs["stringData"]
    registry = rec.get(f"{w.name}-registry-secret").inputs["stringData"]
    assert isinstance(env, Secret) and env.value == {"HF_TOKEN": PLAIN}
    assert isinstance(registry, Secret) and PLAIN in registry.value[".dockerconfigjson"]


def test_a_plain_alertmanager_configuration_ends_secret() -> None:
    """It holds the receivers' webhook URLs and routing keys."""

    def build() -> Any:
        monitoring = Monitoring("monitoring", MonitoringArgs(
            version=versions.KUBE_PROMETHEUS_STACK.default_version, alertmanager_config=f"url: {PLAIN}"))
        return {"grafanaAdminPassword": monitoring.grafana_password}

    rec, out = record_components(build)
    config = rec.get("monitoring-alertmanager-config").inputs["stringData"]
    assert isinstance(config, Secret) and PLAIN in str(config.value)
    assert isinstance(out["grafanaAdminPassword"], Secret)
    admin = rec.get("monitoring-grafana-admin").inputs["stringData"]
    assert isinstance(admin, Secret) and admin.value["admin-password"] == out["grafanaAdminPassword"].value


class _EchoMocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return args.name, dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        return {}, None


@pytest.mark.parametrize("marked", [True, False])
def test_secret_config_is_secret_whether_or_not_the_engine_marked_it(marked: bool) -> None:
    """`stack_config` refuses an unmarked `secrets:` key before this runs; the read itself still marks it."""
    pulumi.runtime.set_mocks(_EchoMocks())
    pulumi.runtime.set_all_config({"secrets:hfToken": PLAIN}, ["secrets:hfToken"] if marked else [])
    seen: list[tuple[Any, bool]] = []

    @pulumi.runtime.test
    async def run() -> None:
        value = secret_config(["hfToken"])["hfToken"]
        seen.append((await value.future(), await value.is_secret()))

    run()
    assert seen == [(PLAIN, True)]

