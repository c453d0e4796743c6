"""The GPU-ready gate (renderers/gpu_ready_gate.py): a start-up taint on the GPU pools' nodes that only the GPU stack
tolerates, a kubectl DaemonSet that removes it once the GPUs are allocatable, `gpuReadyGate` to turn it off, and the
what-if replaying the autoscaler the gate makes (e2e/test_gpu_gate.py runs the commands on a real kube-apiserver)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from capacity import config as stackfile
from capacity.cli import main as what_if
from capacity.sim import simulate
from offline.engine import ROOT, Recording, record_stack
from renderers.gpu_ready_gate import Gate, binding_spec, cluster_role_rules, daemonset_spec
from stackconfig import ConfigError, WhatIfConfig, load_stack_config, versions
from stacknames import (
    GPU_OPERATOR_NAMESPACE,
    GPU_READY_GATE_NAME,
    GPU_READY_TAINT_KEY,
    GPU_READY_TAINT_SPEC,
    STARTUP_TAINT_PREFIX,
)
from tests.chart_cache import rendered_stack
from tests.conftest import CLUSTER_RESOURCE
from tests.test_capacity import GPU_READY, NODE_READY, base, steps
from tests.test_pools import tolerates

DAEMONSET = "kubernetes:apps/v1:DaemonSet"


def stack_file(stack: str) -> dict[str, Any]:
    raw = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {k.removeprefix("gpu-autoscaling:"): v for k, v in raw.items() if k.startswith("gpu-autoscaling:")}


def with_pool(stack: str, **changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(stack_file(stack))
    raw["gpuPool"] = {**raw["gpuPool"], **changes}
    return raw


def gate(rec: Recording, pool: str = "gpu") -> Any:
    return rec.get(f"gpu-operator-gate-{pool}", DAEMONSET)


def gcore_pool(rec: Recording) -> dict[str, Any]:
    pool: dict[str, Any] = rec.get(CLUSTER_RESOURCE).inputs["pools"][0]
    return pool


# --- the taint and who tolerates it ----------------------------------------------------------------------------


def test_the_taint_is_a_cluster_autoscaler_start_up_taint_in_gcores_form() -> None:
    """The prefix is what makes CA count the node as not ready yet (utils/taints/taints.go StartupTaintPrefix)."""
    assert GPU_READY_TAINT_KEY.startswith("startup-taint.cluster-autoscaler.kubernetes.io/")
    assert STARTUP_TAINT_PREFIX == "startup-taint.cluster-autoscaler.kubernetes.io/"
    assert GPU_READY_TAINT_SPEC.rsplit(":", 1)[1] == "NoSchedule", "NoSchedule: a running pod is never evicted"


@pytest.mark.charts
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_daemonset_that_must_run_on_a_gated_node_tolerates_the_start_up_taint(
        stack: str, recordings: dict[str, Recording]) -> None:
    """The GPU Operator's operands (device plugin, validator, dcgm-exporter, ...: they are what makes the GPUs
    allocatable), its NFD worker, node-exporter and the gate itself, as rendered from the pinned charts."""
    rec = recordings[stack]
    taints = {**gcore_pool(rec)["taints"]}
    assert taints[GPU_READY_TAINT_KEY] == GPU_READY_TAINT_SPEC
    seen = []
    daemonsets = [(origin, obj) for origin, obj in rendered_stack(rec).objects() if obj.get("kind") == "DaemonSet"]
    daemonsets += [("program", {"metadata": {"name": d.inputs["metadata"]["name"]}, "spec": d.inputs["spec"]})
                   for d in rec.of_type(DAEMONSET)]
    for origin, obj in daemonsets:
        tolerations = obj["spec"]["template"]["spec"].get("tolerations") or []
        for key, spec in taints.items():
            value, _, effect = spec.rpartition(":")
            assert tolerates(tolerations, key, value, effect), (origin, obj["metadata"]["name"], key)
        seen.append(obj["metadata"]["name"])
    # The operator gives every operand (device plugin, validator, toolkit, ...) the same `daemonsets.tolerations`
    # (NVIDIA/gpu-operator controllers/object_controls.go, the common DaemonSet transform); dcgm-exporter is the one
    # operand delivery/render.py builds.
    for name in ("nvidia-dcgm-exporter", "node-feature-discovery-worker", "prometheus-node-exporter",
                 "gpu-ready-gate-gpu"):
        assert any(name in s for s in seen), (name, seen)


# --- the DaemonSet and its rights ------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_gate_runs_kubectl_on_the_pools_nodes_only_and_idles_ready(stack: str,
                                                                       recordings: dict[str, Recording]) -> None:
    rec = recordings[stack]
    ds = gate(rec).inputs
    assert ds["metadata"]["namespace"] == GPU_OPERATOR_NAMESPACE
    assert ds["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}, "a gate waiting for GPUs holds no up"
    pod = ds["spec"]["template"]["spec"]
    pool = gcore_pool(rec)
    assert pod["nodeSelector"] == pool["labels"]
    assert pod["serviceAccountName"] == GPU_READY_GATE_NAME
    version = rec.get(CLUSTER_RESOURCE).inputs["version"]
    image = f"registry.k8s.io/kubectl:{version}"
    assert [c["image"] for c in pod["initContainers"]] == [image] * 3
    assert versions.kubectl_image(int(version.split(".")[1])) == image
    node = "$(NODE_NAME)"
    gpus = 8
    assert [[*c["command"], *c["args"]] for c in pod["initContainers"]] == [
        ["kubectl", "wait", f"node/{node}", f"--for=jsonpath={{.status.allocatable.nvidia\\.com/gpu}}={gpus}",
         "--timeout=-1s"],
        ["kubectl", "taint", "node", node, f"{GPU_READY_TAINT_KEY}=true:NoSchedule", "--overwrite"],
        ["kubectl", "taint", "node", node, f"{GPU_READY_TAINT_KEY}:NoSchedule-"],
    ]
    assert all(c["env"] == [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
               for c in pod["initContainers"])
    # What e2e/test_gpu_gate.py runs against the real kube-apiserver is this very spec, from the same renderer.
    cfg = load_stack_config(stack_file(stack))
    assert ds["spec"] == daemonset_spec(Gate.of(cfg.pools[0]), versions.kubectl_image(cfg.cluster.minor))
    (main,) = pod["containers"]
    assert main["image"] == versions.PAUSE_IMAGE and "command" not in main, "idles Ready: no alert fires on it"
    # Pod Security `restricted` would admit it (the namespace is privileged for the operands, the gate needs none).
    assert pod["securityContext"]["runAsNonRoot"] is True
    for c in [*pod["initContainers"], main]:
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}


def test_the_gate_waits_for_the_pools_own_gpu_count() -> None:
    raw = with_pool("dev", flavor="bm3-ai-1xlarge-a100-80-4", gpusPerNode=4, acceptUnlistedFlavor=True, maxNodes=4)
    rec = record_stack("dev", {"gpuPool": raw["gpuPool"]})
    wait = gate(rec).inputs["spec"]["template"]["spec"]["initContainers"][0]["args"]
    assert "--for=jsonpath={.status.allocatable.nvidia\\.com/gpu}=4" in wait


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_gate_may_read_and_patch_nodes_and_nothing_else(stack: str, recordings: dict[str, Recording]) -> None:
    rec = recordings[stack]
    role = rec.get("gpu-operator-gate-role", "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole").inputs
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch"]}]
    binding = rec.get("gpu-operator-gate-binding",
                      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding").inputs
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": GPU_READY_GATE_NAME,
                                    "namespace": GPU_OPERATOR_NAMESPACE}]
    spec = binding_spec(GPU_OPERATOR_NAMESPACE)
    assert (binding["roleRef"], binding["subjects"], role["rules"]) == (spec["role_ref"], spec["subjects"],
                                                                       cluster_role_rules())
    assert len(rec.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")) == 1, "one role for every gate"


def test_a_kubectl_image_is_pinned_for_every_kubernetes_gcore_offers() -> None:
    assert sorted(versions.KUBECTL_IMAGES) == sorted(int(v.split(".")[1]) for v in versions.GCORE_K8S_VERSIONS)
    for minor, image in versions.KUBECTL_IMAGES.items():
        assert image.startswith(f"registry.k8s.io/kubectl:v1.{minor}."), image


# --- the switch, and the rules -----------------------------------------------------------------------------------


def test_off_the_pool_registers_without_the_taint_and_no_gate_is_made() -> None:
    rec = record_stack("dev", {"gpuPool": with_pool("dev", gpuReadyGate=False)["gpuPool"]})
    assert GPU_READY_TAINT_KEY not in gcore_pool(rec)["taints"]
    assert rec.of_type(DAEMONSET) == [] and rec.of_type("kubernetes:core/v1:ServiceAccount") == []
    values = rec.get("gpu-operator-release").inputs["values"]
    assert all(t["key"] != GPU_READY_TAINT_KEY for t in values["daemonsets"]["tolerations"])


def test_the_gate_is_on_by_default() -> None:
    assert load_stack_config(stack_file("dev")).pools[0].gpu_ready_gate is True


def test_a_start_up_taint_among_the_pools_taints_is_refused() -> None:
    raw = with_pool("dev", taints={"nvidia.com/gpu": "present:NoSchedule", GPU_READY_TAINT_KEY: "true:NoSchedule"})
    with pytest.raises(ConfigError) as err:
        load_stack_config(raw)
    (problem,) = err.value.problems
    assert problem.key == "gpuPool.taints" and problem.value == {GPU_READY_TAINT_KEY: "true:NoSchedule"}
    assert "nothing would remove it" in problem.message and "gpuPool.gpuReadyGate" in problem.fix


def test_the_gate_on_a_kubernetes_without_a_pinned_kubectl_is_refused() -> None:
    raw = {**stack_file("dev"), "cluster": {"name": "gpu-dev", "version": "v1.32.4",
                                            "existing": {"kubeconfigSecret": "kubeconfig"}}}
    with pytest.raises(ConfigError) as err:
        load_stack_config(raw)
    problems = [p for p in err.value.problems if p.key == "gpuPool.gpuReadyGate"]
    assert problems and "Kubernetes 1.32" in problems[0].message and "gpuReadyGate: false" in problems[0].fix


def test_gpu_ready_gate_must_be_a_boolean() -> None:
    with pytest.raises(ConfigError) as err:
        load_stack_config(with_pool("dev", gpuReadyGate="yes"))
    assert [p.key for p in err.value.problems] == ["gpuPool.gpuReadyGate"]


# --- the what-if follows the switch ------------------------------------------------------------------------------


def test_the_what_if_replays_the_autoscaler_the_gate_makes() -> None:
    for gated in (True, False):
        cfg = load_stack_config(with_pool("prod", gpuReadyGate=gated))
        settings = stackfile.settings_from_config(cfg, cfg.workloads[0], cfg.what_if or WhatIfConfig())
        assert settings.gpu_aware_autoscaler is gated


def test_a_stack_without_the_gate_replays_the_duplicate_orders(tmp_path: Path) -> None:
    """`gpuPool.gpuReadyGate=false` alone gives what `--gpu-unaware-autoscaler` gives: the flag is not needed."""
    def run(*extra: str) -> dict[str, Any]:
        out = tmp_path / f"{len(extra)}-{extra[-1] if extra else ''}.json".replace("/", "_")
        assert what_if(["prod", "--days", "3", *extra, "--json", str(out)]) == 0
        result: dict[str, Any] = json.loads(out.read_text())
        return result

    off, flag, on = run("--set", "gpuPool.gpuReadyGate=false"), run("--gpu-unaware-autoscaler"), run()
    assert (off["settings"]["gpuAwareAutoscaler"], on["settings"]["gpuAwareAutoscaler"]) == (False, True)
    assert (off["nodesOrdered"], off["gpuHoursBilled"]) == (flag["nodesOrdered"], flag["gpuHoursBilled"])
    assert off["nodesOrdered"] != on["nodesOrdered"]


def test_a_gated_node_whose_gpus_take_longer_than_15_minutes_is_no_longer_coming() -> None:
    """CA counts a start-up-tainted node as coming for MaxNodeStartupTime (15 min) after it registered
    (clusterstate.go); GPUs 20 minutes after Ready are past it, and the Pending pods order a duplicate even gated."""
    trace = steps((10, 2.0), (120, 6.0))
    quick = simulate(base(max_nodes=6), trace)
    slow = simulate(base(max_nodes=6, gpu_ready_range=(20 * 60, 20 * 60)), trace)
    assert GPU_READY < 15 * 60 and NODE_READY > 0
    assert (quick["nodesOrdered"], slow["nodesOrdered"]) == (1, 2)


def test_without_a_system_pool_a_gated_untainted_pool_is_refused() -> None:
    """Only the GPU nodes would be left, all behind the start-up taint: the GPU Operator's own Deployment could not
    start, so the GPUs would never be allocatable and the gate never open."""
    raw = {**with_pool("dev", taints={}), "systemPool": {"enabled": False}}
    with pytest.raises(ConfigError) as err:
        load_stack_config(raw)
    (problem,) = err.value.problems
    assert problem.key == "gpuPool.gpuReadyGate" and "nowhere to run" in problem.message
    assert "gpuReadyGate: false" in problem.fix
    load_stack_config({**with_pool("dev", taints={}, gpuReadyGate=False), "systemPool": {"enabled": False}})
