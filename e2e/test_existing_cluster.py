"""The in-cluster half deployed into a cluster this stack does not create (`cluster.existing`), for real.

The local control plane stands for a cluster made in the Gcore portal: the stack gets its admin kubeconfig as the
secret `secrets:kubeconfig` and the GPU pool stated in full; nothing of Gcore is created.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.harness import Kube, Timer, platform
from e2e.keda import LocalKeda
from realengine import gcore_api
from realengine.stack import LocalStack
from realengine.toolchain import Toolchain


@pytest.fixture(scope="module")
def portal(tc: Toolchain, kube: Kube, workdir: Path, timer: Timer) -> Iterator[tuple[LocalStack, str]]:
    with platform("dev", tc, kube, workdir / "portal", existing_cluster=True) as ls:
        lines: list[str] = []

        def out(line: str) -> None:
            lines.append(line)

        with timer.phase("up (existing cluster)"):
            assert ls.up(on_output=out).summary.result == "succeeded"
        keda = LocalKeda(kube, workdir / "portal-keda")
        keda.start()
        try:
            yield ls, "".join(lines)
        finally:
            keda.stop()


def test_nothing_of_gcore_is_created(portal: tuple[LocalStack, str], workdir: Path) -> None:
    ls, _ = portal
    state = json.loads(json.dumps(ls.stack.export_stack().deployment))
    types = {r["type"] for r in state["resources"]}
    assert not {t for t in types if t.startswith("gcore:")} and "pulumi:providers:gcore" not in types
    assert gcore_api.requests_log(workdir / "portal" / "gcore-api") == []  # the Gcore API saw no request


def test_the_add_ons_and_workloads_are_in_the_existing_cluster(portal: tuple[LocalStack, str], kube: Kube) -> None:
    assert kube.get("deployment", "inference", "-n", "gpu-workloads")["spec"]["template"]["spec"]["tolerations"]
    assert kube.get("scaledobject", "inference", "-n", "gpu-workloads")


def test_the_outputs_describe_the_cluster_and_keep_its_kubeconfig_secret(portal: tuple[LocalStack, str]) -> None:
    ls, _ = portal
    out = ls.stack.outputs()
    assert out["kubeconfig"].secret
    assert out["clusterName"].value == "gpu-dev"
    # The program exports clusterId as null (no Gcore id: the cluster is not this stack's); Pulumi keeps no null
    # outputs, so other stacks see it as absent (docs/outputs.md).
    assert "clusterId" not in out


def test_the_autoscaler_settings_it_assumes_are_reported(portal: tuple[LocalStack, str]) -> None:
    _, output = portal
    assert "does not manage the cluster's Cluster Autoscaler" in output and "max-node-provision-time=" in output


def test_destroy_leaves_the_cluster_as_it_was(portal: tuple[LocalStack, str], kube: Kube, timer: Timer) -> None:
    ls, _ = portal
    with timer.phase("destroy (existing cluster)"):
        ls.destroy()
    assert {n["metadata"]["name"] for n in kube.get("namespaces")["items"]} == {
        "default", "kube-node-lease", "kube-public", "kube-system"}
    assert kube.ours() == []
