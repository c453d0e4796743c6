"""The prod stack on the real engine and API server: what dev does not have (issue 15).

Headroom placeholders admitted in their `restricted` namespace, at the headroom priority class (a burst that
preempts them is not run here: the autoscaling suite's dev has no headroom); the vLLM
workload's Service, PodMonitor and hostPath model cache (a `privileged` namespace); the Alertmanager configuration
Secret built from the receivers' secrets; a second preview with no changes.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.harness import Kube, Timer, platform, wait_for
from e2e.keda import LocalKeda
from realengine.stack import LocalStack
from realengine.toolchain import Toolchain
from stacknames import HEADROOM_NAMESPACE, MONITORING_NAMESPACE

CLUSTER_STACK = "prod"


@pytest.fixture(scope="module")
def prod(tc: Toolchain, kube: Kube, workdir: Path, timer: Timer) -> Iterator[LocalStack]:
    with platform("prod", tc, kube, workdir / "prod", existing_cluster=True) as ls:
        with timer.phase("up (prod)"):
            assert ls.up().summary.result == "succeeded"
        keda = LocalKeda(kube, workdir / "prod-keda")
        keda.start()
        try:
            yield ls
        finally:
            keda.stop()


def test_the_namespaces_carry_the_levels_their_pods_need(prod: LocalStack, kube: Kube) -> None:
    levels = {ns["metadata"]["name"]: ns["metadata"]["labels"].get("pod-security.kubernetes.io/enforce")
              for ns in kube.get("namespaces")["items"]}
    assert levels[HEADROOM_NAMESPACE] == "restricted"
    assert levels["inference"] == "privileged"  # its hostPath model cache


def test_the_placeholders_are_admitted_under_restricted_and_hold_the_headroom(prod: LocalStack, kube: Kube) -> None:
    def running() -> list[Any]:
        pods = kube.get("pods", "-n", HEADROOM_NAMESPACE)["items"]
        return [p for p in pods if p["status"].get("phase") == "Running"]

    def held() -> int:
        return sum(int(p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]) for p in running())

    # gpuPool.headroom.gpus (4); more inside its business-hours window, when KEDA's cron trigger scales them up.
    wait_for("the headroom placeholders to hold 4 GPUs", lambda: held() >= 4, timeout=90)
    assert {p["spec"]["priorityClassName"] for p in running()} == {"gpu-headroom"}


def test_the_serving_workload_gets_its_service_and_pod_monitor(prod: LocalStack, kube: Kube) -> None:
    svc = kube.get("service", "inference", "-n", "inference")
    assert [p["port"] for p in svc["spec"]["ports"]] == [8000]
    monitor = kube.get("podmonitor", "inference", "-n", "inference")
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "http"


def test_alertmanager_gets_the_configuration_built_from_the_receivers_secrets(prod: LocalStack, kube: Kube) -> None:
    secret = kube.get("secret", "alertmanager-gpu-platform", "-n", MONITORING_NAMESPACE)
    config = yaml.safe_load(base64.b64decode(secret["data"]["alertmanager.yaml"]))
    receivers = {r["name"] for r in config["receivers"]}
    assert {"critical", "warning", "heartbeat"} <= receivers
    assert "placeholder-slackWebhookUrl" in str(config)  # the secret's value, delivered to the cluster only


def test_a_second_run_changes_nothing(prod: LocalStack, timer: Timer) -> None:
    with timer.phase("second preview (prod)"):
        prod.preview(expect_no_changes=True)


def test_destroy(prod: LocalStack, kube: Kube, timer: Timer) -> None:
    with timer.phase("destroy (prod)"):
        prod.destroy()
    assert {n["metadata"]["name"] for n in kube.get("namespaces")["items"]} == {
        "default", "kube-node-lease", "kube-public", "kube-system"}
