"""Cluster Autoscaler itself: kubernetes/autoscaler cluster-autoscaler 1.35.2 (the toolchain's `-tags kwok` build)
with its kwok cloud provider, run as a local process against the local control plane.

How the kwok provider is driven (cloudprovider/kwok in that release):
- its config is the ConfigMap `kwok-provider-config`, key `config` (kwok_config.go); with `readNodesFrom:
  configmap` the node templates come from a second ConfigMap under the key `templates`, hard-coded
  (kwok_helpers.go `LoadNodeTemplatesFromConfigMap`): a v1 List of Nodes, one per node group;
- a template's `cluster-autoscaler.kwok.nodegroup/min-count` and `max-count` annotations bound its group; a scale-up
  (`IncreaseSize`, kwok_nodegroups.go) creates copies of the template as Nodes at once: labels, taints, capacity and
  allocatable as written;
- `nodes.gpuConfig.gpuLabelKey` is the provider's `GPULabel()`: a node carrying it with no GPU allocatable is one
  whose GPUs are still coming (processors/customresources/gpu_processor.go `FilterOutNodesWithUnreadyResources`);
- outside a cluster it needs `KWOK_PROVIDER_MODE=local`, `KUBECONFIG` and `POD_NAMESPACE` (kwok_provider.go).

Node boot is kwok's: a template's BOOT_SECONDS annotation delays its nodes' Ready condition (`boot_delay_stages`);
until then they carry the `node.kubernetes.io/not-ready` taint a registering node has (kube-controller-manager removes
it once Ready; CA drops it from templates, utils/taints/taints.go `NodeConditionTaints`).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from e2e.harness import Kube
from e2e.kubeapi import KubeApi
from realengine.cluster import KWOK_NODE_ANNOTATION
from stacknames import GPU_RESOURCE

NAMESPACE = "kube-system"
#: The node group a node belongs to (the provider's `nodegroups.fromNodeAnnotationKey`).
GROUP_ANNOTATION = "gpu-autoscaling.e2e/node-group"
#: The provider's own annotation on the nodes it creates (kwok_constants.go NGNameAnnotation).
CREATED_BY = "cluster-autoscaler.kwok.nodegroup/name"
#: Seconds from a node's creation to its Ready condition (a duration kwok's node-initialize stage waits).
BOOT_SECONDS = "gpu-autoscaling.e2e/boot-seconds"
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
#: Keeps pods off a new node until DevicePlugin has taken its GPUs out of `allocatable` (the nodes are copies of a
#: template with all of them): a start-up taint to cluster-autoscaler (`--startup-taint`), so it changes nothing of
#: its decisions while the node is not Ready anyway.
PLUGIN_TAINT = {"key": "gpu-autoscaling.e2e/device-plugin", "value": "pending", "effect": "NoSchedule"}
#: A klog line: `I1204 03:45:12.123456   12345 file.go:123] message` (k8s.io/klog/v2 header).
KLOG = re.compile(r"[IWEF](?P<md>\d{4}) (?P<hms>\d\d:\d\d:\d\d\.\d+)\s+\d+ (?P<src>[^ \]]+)\] (?P<msg>.*)$")
#: Its decisions as it logs them; its events repeat the words inside an `Event(...)` line, which these do not match.
SCALE_UP_MSG = re.compile(r"Scale-up: setting group (?P<group>\S+) size to (?P<size>\d+)")
SCALE_DOWN_MSG = re.compile(r'Scale-down: removing (?:empty node "(?P<empty>[^"]+)"|node (?P<node>[^ ,]+),)')
_GO_TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \+0000 UTC"
STATUS = re.compile(rf"Scale down status: lastScaleUpTime=(?P<up>{_GO_TIME}).*? "
                    rf"lastScaleDownDeleteTime=(?P<delete>{_GO_TIME})")
UNNEEDED = re.compile(rf"(?P<node>\S+) is unneeded since (?P<since>{_GO_TIME})")


def boot_delay_stages(stages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """kwok's stages with node-initialize waiting BOOT_SECONDS (kwok v0.8.0 `delay.durationFrom`, a duration)."""
    for stage in stages:
        if stage["metadata"]["name"] == "node-initialize":
            stage["spec"]["delay"] = {"durationMilliseconds": 0, "durationFrom": {
                "jq": {"expression": f'.metadata.annotations["{BOOT_SECONDS}"] // ""'}}}
    return stages


@dataclass(frozen=True)
class NodeGroup:
    """One node group: the template its nodes are copies of."""

    name: str
    min_size: int
    max_size: int
    labels: Mapping[str, str]
    taints: list[dict[str, str]]
    capacity: Mapping[str, str]
    boot_seconds: float = 0.0
    #: Nodes of the group when cluster-autoscaler starts (the provider's `desired-count`, its first target size;
    #: None: `min_size`): the nodes already there, which must carry `CREATED_BY` and a `kwok:` provider ID.
    desired: int | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)

    def template(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {
                "name": self.name,
                "annotations": {KWOK_NODE_ANNOTATION: "fake", GROUP_ANNOTATION: self.name,
                                "cluster-autoscaler.kwok.nodegroup/min-count": str(self.min_size),
                                "cluster-autoscaler.kwok.nodegroup/max-count": str(self.max_size),
                                "cluster-autoscaler.kwok.nodegroup/desired-count": str(
                                    self.min_size if self.desired is None else self.desired),
                                BOOT_SECONDS: f"{self.boot_seconds:g}s", **self.annotations},
                "labels": {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok",
                           **self.labels},
            },
            "spec": {"taints": [*self.taints, NOT_READY, PLUGIN_TAINT]},
            "status": {"capacity": dict(self.capacity), "allocatable": dict(self.capacity)},
        }


@dataclass
class ClusterAutoscaler:
    """The real cluster-autoscaler over `groups`, with `flags` (`scan-interval`: `1s`, ...) and, when `gpu_label`
    is given, that label as the provider's GPU label (the templates must carry it)."""

    kube: Kube
    groups: list[NodeGroup]
    flags: Mapping[str, str]
    log: Path
    gpu_label: tuple[str, str] | None = None
    #: The year of its log's klog headers, which leave it out.
    year: int = field(default_factory=lambda: datetime.now(UTC).year)
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def __enter__(self) -> ClusterAutoscaler:
        config: dict[str, Any] = {"apiVersion": "v1alpha1", "readNodesFrom": "configmap",
                                  "nodegroups": {"fromNodeAnnotationKey": GROUP_ANNOTATION},
                                  "nodes": {"skipTaint": True},
                                  "configmap": {"name": "kwok-provider-templates"}}
        if self.gpu_label is not None:
            config["nodes"]["gpuConfig"] = {"gpuLabelKey": self.gpu_label[0],
                                            "availableGPUTypes": {self.gpu_label[1]: {}}}
        templates = {"apiVersion": "v1", "kind": "List", "items": [g.template() for g in self.groups]}
        for name, key, doc in (("kwok-provider-config", "config", config),
                               ("kwok-provider-templates", "templates", templates)):
            self.kube.run("delete", "configmap", name, "-n", NAMESPACE, "--ignore-not-found")
            self.kube.apply({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": name, "namespace": NAMESPACE},
                             "data": {key: yaml.safe_dump(doc, sort_keys=False)}})
        # TZ: the times it logs (`Scale down status: lastScaleUpTime=...`) are read back as UTC (`memory`).
        env = {**os.environ, **self.kube.env(), "KWOK_PROVIDER_MODE": "local", "POD_NAMESPACE": NAMESPACE,
               "TZ": "UTC"}
        args = [str(self.kube.tc.bin / "cluster-autoscaler"), "--cloud-provider=kwok",
                f"--kubeconfig={self.kube.kubeconfig}", f"--namespace={NAMESPACE}", "--leader-elect=false",
                f"--startup-taint={PLUGIN_TAINT['key']}", "--v=4", *(f"--{k}={v}" for k, v in self.flags.items())]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            self._proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        for name in ("kwok-provider-config", "kwok-provider-templates"):
            self.kube.run("delete", "configmap", name, "-n", NAMESPACE, "--ignore-not-found", check=False)

    def kill(self) -> None:
        """Stop it without its provider's clean-up, which on SIGTERM deletes every node of its groups
        (cloudprovider/kwok/kwok_provider.go `Cleanup`): as Gcore redeploying its autoscaler leaves the nodes be."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=20)
            self._proc = None
        self.__exit__(None, None, None)

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def nodes(self, group: str) -> list[dict[str, Any]]:
        """The nodes cluster-autoscaler created for `group`, oldest first."""
        items = KubeApi(self.kube.kubeconfig).get("/api/v1/nodes")["items"]
        mine = [n for n in items if (n["metadata"].get("annotations") or {}).get(CREATED_BY) == group]
        return sorted(mine, key=lambda n: (n["metadata"]["creationTimestamp"], n["metadata"]["name"]))

    def lines(self) -> list[tuple[float, str]]:
        """Its log as (klog time as a Unix time, the message), in order; lines without a klog header are left out."""
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            match = KLOG.match(line)
            if match:
                stamp = datetime.strptime(f"{self.year}{match['md']} {match['hms']}", "%Y%m%d %H:%M:%S.%f")
                out.append((stamp.replace(tzinfo=UTC).timestamp(), match["msg"]))
        return out

    def decisions(self) -> list[dict[str, Any]]:
        """Its own scale-up and scale-down decisions, as it logs them (core/scaleup/orchestrator/executor.go,
        core/scaledown/actuation/actuator.go): {"t", "event": "scale-up", "group", "size"} and {"t", "event":
        "scale-down", "node", "empty"}."""
        out: list[dict[str, Any]] = []
        for t, msg in self.lines():
            if (up := SCALE_UP_MSG.match(msg)) is not None:
                out.append({"t": t, "event": "scale-up", "group": up["group"], "size": int(up["size"])})
            elif (down := SCALE_DOWN_MSG.match(msg)) is not None:
                out.append({"t": t, "event": "scale-down", "node": down["empty"] or down["node"],
                            "empty": down["empty"] is not None})
        return out

    def memory(self, at: float) -> Memory:
        """What it remembered at `at`, as its last main loop that planned a scale-down before `at` logged it (at
        `--v=4`): `Scale down status: lastScaleUpTime=... lastScaleDownDeleteTime=...` (core/static_autoscaler.go)
        and the `<node> is unneeded since <time>` lines of that loop (core/scaledown/unneeded/nodes.go `Update`)."""
        memory = Memory(float("-inf"), float("-inf"), {})
        loop: dict[str, float] = {}
        for t, msg in self.lines():
            if t > at:
                break
            if msg == "Starting main loop":
                loop = {}
            elif (unneeded := UNNEEDED.match(msg)) is not None:
                loop[unneeded["node"]] = go_time(unneeded["since"])
            elif (status := STATUS.match(msg)) is not None:
                memory = Memory(go_time(status["up"]), go_time(status["delete"]), dict(loop))
        return memory


@dataclass(frozen=True)
class Memory:
    """cluster-autoscaler's timers that decide its next scale-down (Unix times)."""

    last_scale_up: float
    last_delete: float
    unneeded_since: Mapping[str, float]


def go_time(text: str) -> float:
    """A Go `time.Time` as `%s` prints it in UTC (`2026-12-04 03:45:12.123456789 +0000 UTC`), as a Unix time."""
    day, clock = text.split()[:2]
    whole, _, fraction = clock.partition(".")
    stamp = datetime.strptime(f"{day} {whole}", "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()
    return stamp + (float(f"0.{fraction}") if fraction else 0.0)


class DevicePlugin:
    """What NVIDIA's device plugin does on a new GPU node, played on the nodes of `group`: its GPUs are not
    allocatable until `after` seconds after the node was created (the GPU Operator installing the driver)."""

    def __init__(self, api: KubeApi, ca: ClusterAutoscaler, group: str, gpus: int, after: float) -> None:
        self.api, self.ca, self.group, self.gpus, self.after = api, ca, group, gpus, after
        self.seen: dict[str, float] = {}
        self.advertised: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> DevicePlugin:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _set(self, node: str, gpus: int) -> None:
        self.api.patch(f"/api/v1/nodes/{node}/status", {"status": {"allocatable": {GPU_RESOURCE: str(gpus)}}})

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            now = time.time()
            for node in self.ca.nodes(self.group):
                name = node["metadata"]["name"]
                if name not in self.seen:
                    self.seen[name] = now
                    self._set(name, 0)
                    taints = [t for t in node["spec"].get("taints") or [] if t["key"] != PLUGIN_TAINT["key"]]
                    self.api.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints}})
                elif name not in self.advertised and now - self.seen[name] >= self.after:
                    self.advertised[name] = now
                    self._set(name, self.gpus)
