"""The GPU-ready gate on the real kube-apiserver, kubectl and kube-scheduler (issue 21, "No duplicate nodes").

1. The gate's own commands, exactly as the program renders them into the DaemonSet (renderers/gpu_ready_gate.py,
   whose output tests/test_gpu_ready_gate.py pins in the recorded plan; `$(NODE_NAME)` substituted as the kubelet
   does), run by the real kubectl (the toolchain's, v1.35) as the
   gate's ServiceAccount with the ClusterRole the program creates: on a node whose GPUs are not allocatable the first
   waits; once they are, the taint goes (the pool's own taints stay); run again on the open node, every step exits 0
   at once, so a re-created gate pod neither crash-loops nor sits in Init.
2. What the gate is for, with the real kube-scheduler and the real cluster-autoscaler 1.35.2 (its kwok provider,
   e2e/cluster_autoscaler.py): a Pending 8-GPU pod, a node ordered, Ready after two seconds and its GPUs
   allocatable six seconds later (the device plugin, played). Gated (the gate's commands run on each new node, as
   the DaemonSet would), one node is ordered; ungated, it depends on whether the nodes carry the cloud provider's GPU
   label: with it one node, without it duplicates.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.cluster_autoscaler import ClusterAutoscaler, DevicePlugin, NodeGroup, boot_delay_stages
from e2e.harness import Kube, Timer, wait_for
from e2e.kubeapi import KubeApi
from e2e.objects import unschedulable
from realengine import cluster
from realengine.stack_view import config
from realengine.toolchain import Toolchain
from renderers.gpu_ready_gate import NODE_NAME_ENV, Gate, binding_spec, cluster_role_rules, daemonset_spec
from renderers.placement import PoolPlacement
from stackconfig import GpuPoolConfig, versions
from stacknames import GPU_OPERATOR_NAMESPACE, GPU_READY_GATE_NAME, GPU_READY_TAINT_KEY, GPU_RESOURCE, PLATFORM_LABELS

STACK = "dev"


@pytest.fixture(scope="module")
def kube(tc: Toolchain, timer: Timer) -> Iterator[Kube]:
    """A local control plane with the stack's system nodes only: every GPU node here is one a test makes."""
    name = f"e2e-{uuid.uuid4().hex[:6]}"
    system = [n for n in cluster.stack_nodes(STACK) if GPU_RESOURCE not in n.capacity]
    with timer.phase("cluster up (test_gpu_gate)"):
        path = cluster.up(name, STACK, nodes=system, stages=boot_delay_stages)
    try:
        yield Kube(tc, path, name)
    finally:
        cluster.down(name)


@pytest.fixture(scope="module")
def pool() -> GpuPoolConfig:
    return config(STACK).pools[0]


@pytest.fixture(scope="module")
def rendered(pool: GpuPoolConfig) -> dict[str, Any]:
    """The gate's objects as dev's `pulumi up` sends them, from the renderer components/gpu_operator.py passes them
    through (tests/test_gpu_ready_gate.py checks the program's recorded inputs against it), by logical name."""
    meta = {"name": GPU_READY_GATE_NAME, "labels": dict(PLATFORM_LABELS)}
    binding = binding_spec(GPU_OPERATOR_NAMESPACE)
    image = versions.kubectl_image(config(STACK).cluster.minor)
    return {
        "gpu-operator-gate-account": {"apiVersion": "v1", "kind": "ServiceAccount",
                                      "metadata": {**meta, "namespace": GPU_OPERATOR_NAMESPACE}},
        "gpu-operator-gate-role": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                   "metadata": meta, "rules": cluster_role_rules()},
        "gpu-operator-gate-binding": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                                      "metadata": meta, "roleRef": binding["role_ref"],
                                      "subjects": binding["subjects"]},
        f"gpu-operator-gate-{pool.name}": {"spec": daemonset_spec(Gate.of(pool), image)},
    }


def gpu_node(name: str, pool: GpuPoolConfig, gated: bool, gpus: int = 0) -> dict[str, Any]:
    """A node of the pool as it registers: its labels, the taints Gcore gives it, no GPUs advertised yet."""
    capacity = {"cpu": cluster.GPU_NODE_CPU, "memory": cluster.GPU_NODE_MEMORY, "pods": "110",
                GPU_RESOURCE: str(pool.gpus)}
    taints = pool.node_taints if gated else dict(pool.taints)
    manifest = cluster.NodeSpec(name, {"gcore.com/pool": pool.name, **pool.labels}, cluster.taint_list(taints),
                                capacity).manifest()
    manifest["status"]["allocatable"] = {**capacity, GPU_RESOURCE: str(gpus)}
    return manifest


def taint_keys(kube: Kube, node: str) -> set[str]:
    return {t["key"] for t in kube.get("node", node)["spec"].get("taints") or []}


def advertise_gpus(api: KubeApi, node: str, gpus: int) -> None:
    """What the device plugin does once the GPU Operator has validated the node."""
    api.patch(f"/api/v1/nodes/{node}/status", {"status": {"allocatable": {GPU_RESOURCE: str(gpus)}}})


def service_account_kubeconfig(kube: Kube, rendered: dict[str, Any], path: Path) -> Path:
    """The program's ServiceAccount, ClusterRole and binding applied as rendered; a kubeconfig with that account's
    token (TokenRequest), so that kubectl runs with the gate's rights and no more."""
    kube.run("create", "namespace", GPU_OPERATOR_NAMESPACE, check=False)
    for name in ("gpu-operator-gate-account", "gpu-operator-gate-role", "gpu-operator-gate-binding"):
        kube.apply(rendered[name])
    token = kube.run("create", "token", GPU_READY_GATE_NAME, "-n", GPU_OPERATOR_NAMESPACE).stdout.strip()
    admin = yaml.safe_load(kube.kubeconfig.read_text())
    context = next(c["context"] for c in admin["contexts"] if c["name"] == admin["current-context"])
    server = next(c for c in admin["clusters"] if c["name"] == context["cluster"])
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "gate",
        "clusters": [{"name": "local", "cluster": server["cluster"]}],
        "users": [{"name": "gate", "user": {"token": token}}],
        "contexts": [{"name": "gate", "context": {"cluster": "local", "user": "gate"}}],
    }))
    return path


def gate_commands(rendered: dict[str, Any], pool: str, node: str) -> list[list[str]]:
    """The DaemonSet's init containers' commands, `$(NODE_NAME)` replaced by the node's name (the kubelet's
    dependent-variable expansion of `command` and `args`)."""
    spec = rendered[f"gpu-operator-gate-{pool}"]["spec"]["template"]["spec"]
    assert [e["name"] for c in spec["initContainers"] for e in c["env"]] == [NODE_NAME_ENV] * 3
    return [[part.replace(f"$({NODE_NAME_ENV})", node) for part in [*c["command"], *c["args"]]]
            for c in spec["initContainers"]]


def kubectl(kube: Kube, kubeconfig: Path, cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    assert cmd[0] == "kubectl"
    env = {**kube.env(), "KUBECONFIG": str(kubeconfig)}
    return subprocess.run([str(kube.tc.bin / "kubectl"), *cmd[1:]], env=env, text=True, capture_output=True,
                          timeout=timeout, check=False)


def test_the_gates_commands_wait_for_the_gpus_open_the_node_and_are_harmless_again(
        kube: Kube, pool: GpuPoolConfig, rendered: dict[str, Any], tmp_path: Path) -> None:
    api = KubeApi(kube.kubeconfig)
    as_gate = service_account_kubeconfig(kube, rendered, tmp_path / "gate.kubeconfig")
    # The gate's rights and no more: it may patch nodes, not delete them, and nothing else.
    for verb, resource, allowed in (("patch", "nodes", "yes"), ("delete", "nodes", "no"), ("patch", "pods", "no"),
                                    ("get", "secrets", "no")):
        assert kubectl(kube, as_gate, ["kubectl", "auth", "can-i", verb, resource]).stdout.strip() == allowed
    node = "gpu-gate-0"
    kube.create(gpu_node(node, pool, gated=True))
    wait, set_taint, remove_taint = gate_commands(rendered, pool.name, node)
    env = {**kube.env(), "KUBECONFIG": str(as_gate)}

    # (a) No GPUs allocatable: the wait waits, the node keeps its start-up taint.
    waiting = subprocess.Popen([str(kube.tc.bin / "kubectl"), *wait[1:]], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(3)
        assert waiting.poll() is None, waiting.communicate()
        assert GPU_READY_TAINT_KEY in taint_keys(kube, node)
        # (b) Fewer GPUs than the flavor has is not enough; all of them end the wait.
        advertise_gpus(api, node, pool.gpus - 1)
        time.sleep(2)
        assert waiting.poll() is None, "the gate opened a node with a GPU missing"
        advertise_gpus(api, node, pool.gpus)
        out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 0, err
    for step in (set_taint, remove_taint):
        proc = kubectl(kube, as_gate, step)
        assert proc.returncode == 0, proc.stderr
    assert taint_keys(kube, node) == set(pool.taints), "the start-up taint is gone, the pool's own taints stay"

    # (c) A gate pod re-created on the open node: each step exits 0 at once, and the node stays open.
    for step in (wait, set_taint, remove_taint):
        began = time.monotonic()
        proc = kubectl(kube, as_gate, step, timeout=20)
        assert proc.returncode == 0, (step, proc.stderr)
        assert time.monotonic() - began < 10, step
    assert taint_keys(kube, node) == set(pool.taints)
    # Why the gate sets the taint before removing it: removal alone fails on an open node (a crash loop).
    alone = kubectl(kube, as_gate, remove_taint)
    assert alone.returncode != 0 and "not found" in alone.stderr, alone
    kube.run("delete", "node", node)


class GateRunner:
    """Runs the rendered gate's commands on every new node with `gcore.com/pool: <nodes>`, in order, as the gate
    DaemonSet's pod would on each node of the pool."""

    def __init__(self, kube: Kube, kubeconfig: Path, rendered: dict[str, Any], pool: str, nodes: str) -> None:
        self.kube, self.kubeconfig, self.rendered, self.pool, self.nodes = kube, kubeconfig, rendered, pool, nodes
        self.seen: set[str] = set()
        self.results: dict[str, list[int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> GateRunner:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            nodes = self.kube.get("nodes", "-l", f"gcore.com/pool={self.nodes}")["items"]
            for n in nodes:
                name = n["metadata"]["name"]
                if name not in self.seen:
                    self.seen.add(name)
                    threading.Thread(target=self._gate, args=(name,), daemon=True).start()

    def _gate(self, node: str) -> None:
        codes = self.results.setdefault(node, [])
        for cmd in gate_commands(self.rendered, self.pool, node):
            codes.append(kubectl(self.kube, self.kubeconfig, cmd, timeout=120).returncode)
            if codes[-1] != 0:
                return


#: Seconds from a node's creation to its Ready condition, and to its GPUs being allocatable: Ready with no GPUs for
#: six seconds, six of cluster-autoscaler's one-second scans.
BOOT, GPUS_AFTER = 2.0, 8.0
#: The GPU label of the variant that gives the provider one (kwok's `gpuConfig`), and its GPU type.
GPU_LABEL = ("gpu-autoscaling.e2e/accelerator", "nvidia-h100-80gb")


@dataclass(frozen=True)
class ScaleUp:
    nodes: list[str]
    bound: str
    gate: dict[str, list[int]]
    #: cluster-autoscaler's scale-up decisions (ClusterAutoscaler.decisions).
    decisions: list[dict[str, Any]]


def run_scale_up(kube: Kube, pool: GpuPoolConfig, rendered: dict[str, Any], tmp: Path, *, gated: bool,
                 gpu_label: bool) -> ScaleUp:
    """One Pending pod asking for a whole node's GPUs, the real cluster-autoscaler scanning every second: until the
    pod is bound, then two more scans."""
    api = KubeApi(kube.kubeconfig)
    group = f"g{'g' if gated else 'u'}{'l' if gpu_label else 'n'}"
    labels = {**pool.labels, "gcore.com/pool": group, **(dict([GPU_LABEL]) if gpu_label else {})}
    taints = cluster.taint_list(pool.node_taints if gated else dict(pool.taints))
    capacity = {"cpu": cluster.GPU_NODE_CPU, "memory": cluster.GPU_NODE_MEMORY, "pods": "110",
                GPU_RESOURCE: str(pool.gpus)}
    ca = ClusterAutoscaler(kube, [NodeGroup(group, 0, 4, labels, taints, capacity, BOOT)],
                           {"scan-interval": "1s", "scale-down-enabled": "false"}, tmp / f"{group}.log",
                           GPU_LABEL if gpu_label else None)
    placement = PoolPlacement.of(pool)  # what a workload of the pool tolerates and selects
    ns = f"gate-{group}"
    kube.run("create", "namespace", ns)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "inference", "namespace": ns},
           "spec": {"nodeSelector": {**placement.labels, "gcore.com/pool": group},
                    "tolerations": placement.tolerations(),
                    "containers": [{"name": "main", "image": "registry.example.com/gpu-app:1.0.0",
                                    "resources": {"requests": {GPU_RESOURCE: str(pool.gpus)},
                                                  "limits": {GPU_RESOURCE: str(pool.gpus)}}}]}}
    kube.create(pod)
    path = f"/api/v1/namespaces/{ns}/pods/inference"
    wait_for("the pod Pending as unschedulable", lambda: unschedulable(api.get(path)))
    # Gated, the pool's gate runs on each new node; ungated there is no gate.
    runner = GateRunner(kube, service_account_kubeconfig(kube, rendered, tmp / f"{group}.kubeconfig"), rendered,
                        pool.name, group)
    with ca, DevicePlugin(api, ca, group, pool.gpus, GPUS_AFTER), runner if gated else contextlib.nullcontext():
        bound = wait_for("the pod bound", lambda: api.get(path)["spec"].get("nodeName"), timeout=120)
        time.sleep(2)
        assert ca.running(), ca.log.read_text()[-3000:]
        nodes = [n["metadata"]["name"] for n in ca.nodes(group)]
    return ScaleUp(nodes, bound, dict(runner.results), [d for d in ca.decisions() if d["event"] == "scale-up"])


def test_the_real_autoscaler_orders_one_node_gated_and_duplicates_ungated_without_a_gpu_label(
        kube: Kube, pool: GpuPoolConfig, rendered: dict[str, Any], tmp_path: Path) -> None:
    """A node Ready before its GPUs, as a GPU Operator node is for minutes. Gated, its start-up taint makes
    cluster-autoscaler count it as coming (utils/taints/taints.go): one node. Ungated, it depends on the provider's
    GPU label: with it, a labelled node with no GPU allocatable is coming too (gpu_processor.go); without it, the
    Ready node looks full and every scan in the window orders another for nothing."""
    runs = {name: run_scale_up(kube, pool, rendered, tmp_path, gated=gated, gpu_label=label)
            for name, gated, label in (("gated", True, False), ("ungated", False, False),
                                       ("ungatedLabelled", False, True))}
    print(json.dumps({k: {"nodes": v.nodes, "bound": v.bound, "gate": v.gate, "decisions": v.decisions}
                      for k, v in runs.items()}, indent=1))
    for run in runs.values():  # every node is one cluster-autoscaler decided on, one at a time
        assert [d["size"] for d in run.decisions] == list(range(1, len(run.nodes) + 1)), run
    gated = runs["gated"]
    assert gated.nodes == [gated.bound] and gated.gate == {gated.bound: [0, 0, 0]}, gated
    labelled = runs["ungatedLabelled"]
    assert labelled.nodes == [labelled.bound], labelled
    ungated = runs["ungated"]
    assert len(ungated.nodes) > 1 and ungated.bound == ungated.nodes[0], ungated
