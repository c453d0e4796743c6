"""Two GPU pools on the real engine and the real kube-scheduler (issue 19).

dev with its pool moved into `gpuPools` (under its name, `gpu`), a spot pool beside it and an interruptible `batch`
workload on it: the Gcore stand-in creates both pools, the local control plane gets each pool's nodes with the labels
and taints the program gave Gcore (realengine/cluster.py `stack_nodes`), and kube-scheduler, not a test's model of it,
decides where each pod goes. kwok marks the bound pods Running.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.harness import Kube, Timer, platform, wait_for
from realengine import cluster
from realengine.stack import LocalStack
from realengine.toolchain import ROOT, Toolchain
from stackconfig import StackConfig, load_stack_config

STACK = "dev"
SPOT_FLAVOR = "bm3-ai-ndp2-spot-1xlarge-h100-80-8"
POOL_LABEL = "platform.gcore-gpu/pool"
BATCH = {"name": "batch", "namespace": "batch", "image": "registry.example.com/batch:1.0.0", "pool": "spot",
         "interruptible": True, "gpusPerPod": 2, "minReplicas": 1, "maxReplicas": 4}


def dev_file() -> dict[str, Any]:
    raw = yaml.safe_load((ROOT / f"Pulumi.{STACK}.yaml").read_text())["config"]
    return {k.removeprefix("gpu-autoscaling:"): v for k, v in raw.items() if k.startswith("gpu-autoscaling:")}


POOLS = [{"name": "gpu", **dev_file()["gpuPool"]},
         {"name": "spot", "flavor": SPOT_FLAVOR, "minNodes": 1, "maxNodes": 2, "pricePerGpuHour": 1.6}]
#: Stack-file changes (realengine/stack.py `set_path`: None removes a key, one past the end adds a list item).
OVERRIDES: dict[str, Any] = {
    "gpu-autoscaling:gpuPool": None,
    "gpu-autoscaling:gpuPools": POOLS,
    "gpu-autoscaling:workloads.0.pool": "gpu",
    "gpu-autoscaling:workloads.1": BATCH,
}


def two_pool_config() -> StackConfig:
    raw = dev_file()
    raw.pop("gpuPool")
    workloads = [{**raw["workloads"][0], "pool": "gpu"}, BATCH]
    return load_stack_config({**raw, "gpuPools": POOLS, "workloads": workloads})


@pytest.fixture(scope="module")
def kube(tc: Toolchain, timer: Timer) -> Iterator[Kube]:
    """A local cluster whose nodes are both pools' (minNodes each) and the system pool's, as the stack sends them."""
    name = f"e2e-{uuid.uuid4().hex[:6]}"
    with timer.phase("cluster up (test_pools)"):
        path = cluster.up(name, STACK, nodes=cluster.stack_nodes(STACK, two_pool_config()))
    try:
        yield Kube(tc, path, name)
    finally:
        cluster.down(name)


@pytest.fixture(scope="module")
def two(tc: Toolchain, kube: Kube, workdir: Path, timer: Timer) -> Iterator[LocalStack]:
    with platform(STACK, tc, kube, workdir / "pools", overrides=OVERRIDES) as ls:
        with timer.phase("up (two pools)"):
            result = ls.up(on_output=sys.stdout.write)
        assert result.summary.result == "succeeded"
        yield ls


def node_pools(kube: Kube) -> dict[str, str]:
    """Node name -> the GPU pool whose label it carries (system nodes left out)."""
    return {n["metadata"]["name"]: n["metadata"]["labels"][POOL_LABEL] for n in kube.get("nodes")["items"]
            if POOL_LABEL in n["metadata"]["labels"]}


def test_both_pools_reach_gcore_with_their_own_bounds(two: LocalStack) -> None:
    sent = {p["name"]: p for p in two.stack.outputs()["gpuPools"].value.values()}
    assert {name: (p["minNodes"], p["maxNodes"], p["spot"]) for name, p in sent.items()} == {
        "gpu": (1, 2, False), "spot": (1, 2, True)}


def test_the_scheduler_puts_each_workloads_pods_on_its_own_pool(two: LocalStack, kube: Kube) -> None:
    pools = node_pools(kube)
    assert sorted(set(pools.values())) == ["gpu", "spot"]

    def placed(namespace: str, name: str) -> set[str]:
        pods = kube.get("pods", "-n", namespace, "-l", f"app.kubernetes.io/name={name}")["items"]
        running = [p for p in pods if p["status"].get("phase") == "Running"]
        return {pools.get(p["spec"]["nodeName"], "system") for p in running} if running else set()

    assert wait_for("inference Running", lambda: placed("gpu-workloads", "inference"), timeout=120) == {"gpu"}
    assert wait_for("batch Running", lambda: placed("batch", "batch"), timeout=120) == {"spot"}


def test_the_scheduler_keeps_an_on_demand_pod_off_spot_even_if_it_selects_spot(two: LocalStack, kube: Kube) -> None:
    """inference's pod spec, pointed at the spot pool's labels: its tolerations lack the spot taint, so
    kube-scheduler leaves it Pending on the one node it selects (the taint, not only the label, keeps on-demand work
    off spot capacity); the same pod tolerating the spot taint is bound to that node."""
    spec = kube.get("deployment", "inference", "-n", "gpu-workloads")["spec"]["template"]["spec"]
    spot_toleration = {"key": "platform.gcore-gpu/spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    pods = {"on-demand-on-spot": {**spec, "nodeSelector": {POOL_LABEL: "spot"}},
            "tolerating-spot": {**spec, "nodeSelector": {POOL_LABEL: "spot"},
                                "tolerations": [*spec.get("tolerations", []), spot_toleration]}}
    for name, pod_spec in pods.items():
        kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "gpu-workloads"},
                     "spec": pod_spec})
    try:
        def refused() -> str:
            events = kube.get("events", "-n", "gpu-workloads", "--field-selector",
                              "involvedObject.name=on-demand-on-spot,reason=FailedScheduling")["items"]
            return " ".join(e.get("message", "") for e in events)

        message = wait_for("FailedScheduling of the on-demand pod", refused, timeout=60)
        spot_nodes = [n for n, pool in node_pools(kube).items() if pool == "spot"]
        assert f"{len(spot_nodes)} node(s) had untolerated taint(s)" in message, message
        assert kube.get("pod", "on-demand-on-spot", "-n", "gpu-workloads")["status"]["phase"] == "Pending"
        bound = wait_for("the tolerating pod bound", lambda: kube.get("pod", "tolerating-spot", "-n",
                                                                      "gpu-workloads")["spec"].get("nodeName"))
        assert bound in spot_nodes
    finally:
        for name in pods:
            kube.run("delete", "pod", name, "-n", "gpu-workloads", "--wait=false", check=False)


def test_a_second_run_changes_nothing(two: LocalStack) -> None:
    two.preview(expect_no_changes=True)
