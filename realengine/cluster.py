"""A local Kubernetes control plane whose nodes mirror a stack's pools: what `bash scripts/cluster.sh` runs.

    python -m realengine.cluster up [--stack dev] [--name gpu-e2e]   # last line: the admin kubeconfig's path
    python -m realengine.cluster down [--name gpu-e2e]

kwokctl (`--runtime binary`) runs etcd, kube-apiserver, kube-controller-manager, kube-scheduler and the kwok
controller as local processes from the toolchain's binaries, generates their PKI and flags, and binds them to
127.0.0.1. No container runs: kwok plays the kubelet, so pods are scheduled, admitted and marked Ready, but never
executed. The nodes are the stack's: its GPU pool's `minNodes` nodes with the pool's labels, taints and
`nvidia.com/gpu` capacity (the flavor table's GPUs per node), and its system pool's nodes.

State lives in $E2E_CLUSTER_DIR (default: <toolchain cache>/clusters); `down` stops the processes and removes it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from realengine.toolchain import ToolchainMissing, bin_dir, pins

if TYPE_CHECKING:
    from stackconfig import StackConfig

#: What the control plane needs from the toolchain.
CONTROL_PLANE = ("kubernetes", "etcd", "kwok")
DEFAULT_NAME = "gpu-e2e"
#: Capacity of a fake node beside its GPUs. The flavor table knows GPUs only; these are the orders of magnitude of
#: an 8-GPU bare-metal server and of the system pool's VM flavor `g1-standard-<vCPU>-<GiB>` (its name says it).
GPU_NODE_CPU, GPU_NODE_MEMORY = "192", "2048Gi"
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"


def cluster_dir() -> Path:
    return Path(os.environ.get("E2E_CLUSTER_DIR", Path.home() / ".cache" / "gpu-autoscaling-toolchain" / "clusters"))


def kubeconfig_path(name: str = DEFAULT_NAME) -> Path:
    return cluster_dir() / "clusters" / name / "kubeconfig.yaml"


@dataclass(frozen=True)
class NodeSpec:
    name: str
    labels: dict[str, str]
    taints: list[dict[str, str]]
    capacity: dict[str, str]

    def manifest(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "annotations": {KWOK_NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
                "labels": {"kubernetes.io/hostname": self.name, "kubernetes.io/os": "linux",
                           "kubernetes.io/arch": "amd64", "type": "kwok", **self.labels},
            },
            "spec": {"taints": self.taints},
            "status": {"capacity": self.capacity, "allocatable": self.capacity,
                       "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                                    "kubeletVersion": str(pins()["kubernetes"]["version"])}},
        }


def taint_list(taints: dict[str, str]) -> list[dict[str, str]]:
    """The stack's `key: value:Effect` taints (Gcore's pool format) as Node taints."""
    out = []
    for key, spec in taints.items():
        value, _, effect = spec.rpartition(":")
        out.append({"key": key, "value": value, "effect": effect})
    return out


def vm_capacity(flavor: str) -> tuple[str, str]:
    """vCPUs and memory of a Gcore VM flavor from its name (`g1-standard-4-8`: 4 vCPU, 8 GiB)."""
    parts = flavor.split("-")
    try:
        return parts[-2], f"{int(parts[-1])}Gi"
    except (IndexError, ValueError):
        return "4", "8Gi"


def stack_nodes(stack: str, cfg: StackConfig | None = None) -> list[NodeSpec]:
    """The nodes a stack's pools start with: each GPU pool's `minNodes`, the system pool's `minNodes` (`cfg`: the
    stack's config as a test changed it)."""
    from realengine.stack_view import pools

    nodes: list[NodeSpec] = []
    for pool in pools(stack, cfg):
        if pool.gpus:
            capacity = {"cpu": GPU_NODE_CPU, "memory": GPU_NODE_MEMORY, "pods": "110", "nvidia.com/gpu": str(pool.gpus)}
        else:
            cpu, mem = vm_capacity(pool.flavor)
            capacity = {"cpu": cpu, "memory": mem, "pods": "110"}
        for i in range(pool.min_nodes):
            nodes.append(NodeSpec(f"{pool.name}-{i}", pool.node_labels(), taint_list(pool.taints), capacity))
    return nodes


def run(cmd: list[str], env: dict[str, str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, check=True, text=True, capture_output=True, **kw)


def environment(bins: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["PATH"] = f"{bins}{os.pathsep}{env.get('PATH', '')}"
    env["KWOK_WORKDIR"] = str(cluster_dir())
    return env


#: kube-apiserver picks its advertised address from the default route, and a network namespace with only loopback
#: (scripts/lib-netns.sh) has none: it is given 127.0.0.1. The Service range is stated rather than defaulted.
APISERVER_ARGS = ["--advertise-address=127.0.0.1", "--service-cluster-ip-range=10.96.0.0/16"]


#: The common name of kwokctl's client certificate (pki/admin.crt), which kube-apiserver also proxies with.
PROXY_CLIENT_CN = "kwok-admin"


def aggregation_args(name: str) -> list[str]:
    """The front-proxy settings an aggregated API server (KEDA's metrics adapter) authenticates the apiserver's
    proxied requests with, as kubeadm sets them; kwokctl sets the proxy's client certificate only. The CA is the
    cluster's own (kwokctl's pki/ca.crt, which signed that certificate); since it also signs client certificates,
    only the proxy's own name may assert a user (kube-apiserver refuses to start otherwise)."""
    ca = cluster_dir() / "clusters" / name / "pki" / "ca.crt"
    return [f"--requestheader-client-ca-file={ca}", f"--requestheader-allowed-names={PROXY_CLIENT_CN}",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group", "--requestheader-extra-headers-prefix=X-Remote-Extra-"]


def extra_args(flags: list[str]) -> list[dict[str, str]]:
    return [{"key": f.lstrip("-").split("=", 1)[0], "value": f.split("=", 1)[1]} for f in flags]


#: One scheduler and one controller-manager, so no leader election. With it (their default), a renewal of their
#: lease that the API server answers too late for the renew deadline (10 s) makes them exit ("leaderelection
#: lost": kubernetes cmd/kube-scheduler/app/server.go and cmd/kube-controller-manager/app/controllermanager.go,
#: v1.35), and kwokctl's binary runtime does not restart them. A cluster without its scheduler leaves every new pod
#: Pending and the next `pulumi up` waiting out its 46-minute readiness timeout (seen once in the lifecycle suite;
#: `exited_components` and the e2e suites' watchdog now name such a death at once).
SINGLE_INSTANCE_ARGS = ["--leader-elect=false"]


def kwokctl_config(name: str, extra_kcm_args: list[str] | None = None) -> str:
    """Loopback only, the pinned Kubernetes version, no leader election, and any controller-manager flags a test
    needs."""
    patches = [{"name": "kube-apiserver", "extraArgs": extra_args(APISERVER_ARGS + aggregation_args(name))},
               {"name": "kube-scheduler", "extraArgs": extra_args(SINGLE_INSTANCE_ARGS)},
               {"name": "kube-controller-manager",
                "extraArgs": extra_args(SINGLE_INSTANCE_ARGS + (extra_kcm_args or []))}]
    doc: dict[str, Any] = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {"bindAddress": "127.0.0.1", "kubeVersion": str(pins()["kubernetes"]["version"])},
        "componentsPatches": patches,
    }
    return json.dumps(doc)


#: A change to kwok's stages: it gets the Stage documents kwokctl generated and returns the ones kwok should run.
StageEdit = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def edit_stages(name: str, edit: StageEdit, env: dict[str, str]) -> None:
    """Run kwok with changed stages (delays, say): kwokctl's config replaces all of kwok's default stages as soon as
    it names one, so the defaults this kwokctl generated (the cluster's kwok.yaml, which kwok reads at start) are
    edited in place and the cluster restarted (etcd keeps its data; about two seconds)."""
    path = cluster_dir() / "clusters" / name / "kwok.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    stages = [d for d in docs if d.get("kind") == "Stage"]
    others = [d for d in docs if d.get("kind") != "Stage"]
    path.write_text(yaml.safe_dump_all([*others, *edit(stages)], sort_keys=False))
    run(["kwokctl", "stop", "cluster", "--name", name], env)
    run(["kwokctl", "start", "cluster", "--name", name, "--wait", "60s"], env)


def up(name: str = DEFAULT_NAME, stack: str = "dev", extra_kcm_args: list[str] | None = None,
       nodes: list[NodeSpec] | None = None, stages: StageEdit | None = None) -> Path:
    bins = bin_dir(CONTROL_PLANE)
    env = environment(bins)
    base = cluster_dir()
    base.mkdir(parents=True, exist_ok=True)
    cfg = base / f"{name}.kwokctl.yaml"
    cfg.write_text(kwokctl_config(name, extra_kcm_args))
    merged = base / f"{name}.kubeconfig-merge.yaml"  # kwokctl adds a context here; never ~/.kube/config
    kubeconfig = kubeconfig_path(name)
    kenv = dict(env, KUBECONFIG=str(kubeconfig))
    for attempt in (1, 2):
        run(["kwokctl", "create", "cluster", "--name", name, "--runtime", "binary", "--config", str(cfg),
             "--kubeconfig", str(merged),
             "--kube-apiserver-binary", str(bins / "kube-apiserver"),
             "--kube-controller-manager-binary", str(bins / "kube-controller-manager"),
             "--kube-scheduler-binary", str(bins / "kube-scheduler"),
             "--etcd-binary", str(bins / "etcd"), "--kwok-controller-binary", str(bins / "kwok"),
             "--wait", "60s"], env)
        try:
            if stages is not None:
                edit_stages(name, stages, env)
            _await_default_account(kenv)
            break
        except (subprocess.CalledProcessError, RuntimeError):
            # kwokctl picks free ports before it starts the components; one taken in between (CI saw kube-apiserver
            # exit with "bind: address already in use") leaves a cluster without an API server. Once more, on
            # the ports a new create picks.
            log = kubeconfig.parent / "logs" / "kube-apiserver.log"
            if attempt == 2 or not log.exists() or "address already in use" not in log.read_text(errors="replace"):
                raise
            print(f"[e2e] {name}: kube-apiserver found its port taken; creating the cluster again", file=sys.stderr)
            subprocess.run(["kwokctl", "delete", "cluster", "--name", name], env=env, check=False,
                           capture_output=True)
    for node in nodes if nodes is not None else stack_nodes(stack):
        run(["kubectl", "apply", "-f", "-"], kenv, input=json.dumps(node.manifest()))
    run(["kubectl", "wait", "--for=condition=Ready", "node", "--all", "--timeout=60s"], kenv)
    return kubeconfig


def _await_default_account(kenv: dict[str, str]) -> None:
    """The ServiceAccount admission plugin refuses pods until the controller-manager has made `default`'s account."""
    deadline = time.monotonic() + 60
    while run(["kubectl", "get", "serviceaccount", "default", "-n", "default", "--ignore-not-found", "-o", "name"],
              kenv).stdout.strip() == "":
        if time.monotonic() > deadline:
            raise RuntimeError("the controller-manager did not create the default ServiceAccount within 60 s")
        time.sleep(0.5)


def components(name: str) -> list[Path]:
    """The pid files of cluster `name`'s components: kwokctl's binary runtime keeps each one's pid in
    `pids/<component>.pid` (and restarts none)."""
    return sorted((cluster_dir() / "clusters" / name / "pids").glob("*.pid"))


def exited_components(name: str) -> list[str]:
    """The components of cluster `name` whose process is gone (empty once `down` removed the cluster)."""
    gone = []
    for pidfile in components(name):
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            continue  # being written or removed
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            state = "gone"
        if state in ("gone", "Z", "X"):  # no such process, or one that exited and was not reaped yet
            gone.append(pidfile.stem)
    return gone


def down(name: str = DEFAULT_NAME) -> None:
    try:
        bins = bin_dir(CONTROL_PLANE)
    except ToolchainMissing:
        bins = None
    if bins is not None:
        subprocess.run(["kwokctl", "delete", "cluster", "--name", name], env=environment(bins), check=False,
                       capture_output=True, text=True)
    shutil.rmtree(cluster_dir() / "clusters" / name, ignore_errors=True)
    for suffix in (".kwokctl.yaml", ".kubeconfig-merge.yaml"):
        (cluster_dir() / f"{name}{suffix}").unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m realengine.cluster", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["up", "down"])
    ap.add_argument("--name", default=DEFAULT_NAME)
    ap.add_argument("--stack", default="dev", help="the stack whose pools the nodes mirror (up)")
    args = ap.parse_args(argv)
    try:
        if args.action == "up":
            start = time.monotonic()
            path = up(args.name, args.stack)
            print(f"cluster {args.name} up in {time.monotonic() - start:.1f} s", file=sys.stderr)
            print(path)
        else:
            down(args.name)
            print(f"cluster {args.name} removed", file=sys.stderr)
    except ToolchainMissing as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as exc:
        print(f"cluster: {' '.join(exc.cmd[:3])} failed:\n{exc.stderr}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
