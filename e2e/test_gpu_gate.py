"""The GPU-ready gate on the real kube-apiserver, kubectl and kube-scheduler (issue 21, "No duplicate nodes").

1. The gate's own commands, exactly as the program renders them into the DaemonSet (renderers/gpu_ready_gate.py,
   whose output tests/test_gpu_ready_gate.py pins in the recorded plan; `$(NODE_NAME)` substituted as the kubelet
   does), run by the real kubectl (the toolchain's, v1.35) as the
   gate's ServiceAccount with the ClusterRole the program creates: on a node whose GPUs are not allocatable the first
   waits; once they are, the taint goes (the pool's own taints stay); run again on the open node, every step exits 0
   at once, so a re-created gate pod neither crash-loops nor sits in Init.
2. What the gate is for, with the real kube-scheduler and e2e/standin_autoscaler.py, which is NOT Cluster
   Autoscaler (it models the one rule at stake here from CA's source: a Ready node with a start-up taint is still
   coming, one without is ready with the GPUs it advertises): a Pending 8-GPU pod, one node ordered, Ready at once
   and its GPUs allocatable a few seconds later. Gated (the gate's commands run on each new node, as the DaemonSet
   would), one node is ordered; ungated, the Ready node with 0 GPUs looks full and a duplicate is ordered.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.harness import Kube, Timer, wait_for
from e2e.kubeapi import KubeApi
from e2e.standin_autoscaler import Pool, StandInAutoscaler, unschedulable
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
        path = cluster.up(name, STACK, nodes=system)
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


#: Seconds from the order until the ordered node's GPUs are allocatable (it is Ready at once): long enough for
#: several scans of the stand-in in between.
GPUS_AFTER = 8.0


def run_scale_up(kube: Kube, pool: GpuPoolConfig, gated: bool, rendered: dict[str, Any], tmp: Path) -> tuple[
        StandInAutoscaler, dict[str, Any]]:
    """One Pending 8-GPU pod, the stand-in scanning every second: until the pod is bound."""
    api = KubeApi(kube.kubeconfig)
    tag = "gated" if gated else "ungated"
    stand_in_pool = Pool(f"g{tag[:2]}", pool.flavor, 0, 4, pool.gpus, dict(pool.labels),
                         cluster.taint_list(pool.node_taints if gated else dict(pool.taints)))
    placement = PoolPlacement.of(pool)  # what a workload of the pool tolerates and selects
    ns = f"gate-{tag}"
    kube.run("create", "namespace", ns)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "inference", "namespace": ns},
           "spec": {"nodeSelector": {**placement.labels, "gcore.com/pool": stand_in_pool.name},
                    "tolerations": placement.tolerations(),
                    "containers": [{"name": "main", "image": "registry.example.com/gpu-app:1.0.0",
                                    "resources": {"requests": {GPU_RESOURCE: str(pool.gpus)},
                                                  "limits": {GPU_RESOURCE: str(pool.gpus)}}}]}}
    kube.create(pod)
    path = f"/api/v1/namespaces/{ns}/pods/inference"
    wait_for("the pod Pending as unschedulable", lambda: unschedulable(api.get(path)))
    ca = StandInAutoscaler(api, stand_in_pool, {"scan-interval": "1s"}, 1.0, lambda: (0.0, GPUS_AFTER),
                           plays_gate=False)
    # Gated, the pool's gate runs on each new node; ungated there is no gate.
    runner = GateRunner(kube, service_account_kubeconfig(kube, rendered, tmp / f"{tag}.kubeconfig"), rendered,
                        pool.name, stand_in_pool.name)
    with runner if gated else contextlib.nullcontext():
        ca.start()
        try:
            bound = wait_for("the pod bound", lambda: api.get(path)["spec"].get("nodeName"), timeout=90)
        finally:
            ca.stop()
        time.sleep(1)
    return ca, {"bound": bound, "gate": dict(runner.results)}


def test_gated_one_node_is_ordered_ungated_a_duplicate(kube: Kube, pool: GpuPoolConfig, rendered: dict[str, Any],
                                                        tmp_path: Path) -> None:
    gated, g = run_scale_up(kube, pool, True, rendered, tmp_path)
    ungated, u = run_scale_up(kube, pool, False, rendered, tmp_path)
    print(json.dumps({"gated": [o.name for o in gated.orders_made], "ungated": [o.name for o in ungated.orders_made],
                      "gatedGate": g["gate"], "ungatedGate": u["gate"]}))
    # Gated: the Ready node without GPUs is coming behind its start-up taint; the gate opens it, the pod lands.
    assert [o.name for o in gated.orders_made] == [g["bound"]]
    assert g["gate"] == {g["bound"]: [0, 0, 0]}
    # Ungated: the same node looks ready and full while its GPUs install, and every scan in that window orders
    # another one for nothing (how many: scans per window, up to the pool's max; NVIDIA/gpu-operator#708 saw ~4).
    first, *duplicates = ungated.orders_made
    assert duplicates and u["bound"] == first.name
    assert first.ready is not None and first.gpus is not None
    assert all(first.ready <= d.ordered <= first.gpus for d in duplicates), "ordered while the first was Ready, 0 GPUs"
