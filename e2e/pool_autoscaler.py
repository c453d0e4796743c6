"""Gcore's managed Cluster Autoscaler over the dev stack's GPU pool, for the autoscaling and serving chains: the real
cluster-autoscaler 1.35.2 (its kwok provider, e2e/cluster_autoscaler.py) given what `pulumi up` sent Gcore, and
around it what a bare-metal node does on its way in, which no autoscaler decides.

What cluster-autoscaler is given (read from the Gcore API emulator's cluster, again after every `pulumi up`):
- one node group, the GPU pool: its min/max, and a template node with the flavor's GPUs as `nvidia.com/gpu`, the
  pool's labels and taints (the GPU-ready gate's start-up taint among them, as Gcore registers the nodes);
- the stack's `autoscaler_config` as its flags, and the defaults of the ones the stack leaves unset; every duration
  flag that decides when something happens divided by the suite's time factor (`run_flags`).

What a node does once cluster-autoscaler ordered it (`Provisioner`, drawn per node as the what-if draws it):
- the kwok provider creates the Node at once; on Gcore the instance registers only when it has booted. So the node
  stays NotReady until its drawn boot time (kwok's node-initialize stage waits for the time in the node's
  `timescale.BOOT_DELAY` annotation), and cluster-autoscaler is told to count a registered node as still starting
  for `max-node-provision-time` plus its default 15 minutes (`--max-node-startup-time`): the boot a registration
  after boot would have hidden from it, then the 15 minutes it gives a registered node;
- its GPUs become allocatable the drawn GPU Operator time after the boot (the device plugin, played), and the
  gate's start-up taint goes then (the gate DaemonSet, played: its own commands run in e2e/test_gpu_gate.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from e2e.cluster_autoscaler import CREATED_BY, PLUGIN_TAINT, ClusterAutoscaler, Memory, NodeGroup
from e2e.harness import Kube
from e2e.kubeapi import ApiError, KubeApi
from e2e.objects import condition
from e2e.timescale import BOOT_DELAY
from realengine.cluster import GPU_NODE_CPU, GPU_NODE_MEMORY, taint_list
from realengine.gcore_api import read_cluster
from realengine.stack_view import PoolView
from stackconfig.flavors import gpus_of
from stackconfig.units import go_duration_seconds
from stacknames import GPU_RESOURCE, STARTUP_TAINT_PREFIX

#: cluster-autoscaler 1.35.2's defaults (config/flags/flags.go) of the duration flags that decide when it acts, for
#: the ones the stack does not send; each is divided by the factor. Left alone: its liveness limits
#: (`max-inactivity`, `max-failing-time`) and compute budgets (`scale-down-simulation-timeout`, ...), which would
#: only make it restart or give up sooner.
DURATION_DEFAULTS: Mapping[str, str] = {
    "scan-interval": "10s", "max-node-provision-time": "15m", "scale-down-unneeded-time": "10m",
    "scale-down-unready-time": "20m", "scale-down-delay-after-add": "10m", "scale-down-delay-after-delete": "0s",
    "scale-down-delay-after-failure": "3m", "new-pod-scale-up-delay": "0s", "unremovable-node-recheck-timeout": "5m",
    "initial-node-group-backoff-duration": "5m", "max-node-group-backoff-duration": "30m",
    "node-group-backoff-reset-timeout": "3h", "max-pod-eviction-time": "2m", "node-deletion-delay-timeout": "2m",
    "node-delete-delay-after-taint": "5s",
}
#: Its other defaults this module reads (`flag`).
OTHER_DEFAULTS: Mapping[str, str] = {"max-graceful-termination-sec": "600", "expendable-pods-priority-cutoff": "-10"}
#: cluster-autoscaler's `--max-node-startup-time` default: how long a registered node may take to become ready.
NODE_STARTUP = "15m"
#: kwok's node-initialize stage waits until this for a node nobody has drawn a boot time for yet.
NOT_YET = "2100-01-01T00:00:00Z"


def from_gcore_api(api_dir: Path, cluster: str, pool: str = "gpu") -> tuple[PoolView, dict[str, str]]:
    """The pool and the `autoscaler_config` of the cluster the Gcore API emulator holds (realengine/gcore_api)."""
    doc = read_cluster(api_dir, cluster)
    p = next(x for x in doc["pools"] if x["name"] == pool)
    gpus = gpus_of(p["flavor_id"])
    if not gpus:
        raise ValueError(f"flavor {p['flavor_id']} has no GPUs in stackconfig/flavors.py")
    return (PoolView(p["name"], p["flavor_id"], int(p["min_node_count"]), int(p["max_node_count"]), gpus,
                     dict(p.get("labels") or {}), dict(p.get("taints") or {})),
            dict(doc.get("autoscaler_config") or {}))


def node_group(pool: PoolView, nodes: int) -> NodeGroup:
    """The pool as a node group of `nodes` nodes, its template what Gcore would register."""
    capacity = {"cpu": GPU_NODE_CPU, "memory": GPU_NODE_MEMORY, "pods": "110", GPU_RESOURCE: str(pool.gpus)}
    return NodeGroup(pool.name, pool.min_nodes, pool.max_nodes, pool.node_labels(), taint_list(pool.taints),
                     capacity, desired=nodes, annotations={BOOT_DELAY: NOT_YET})


def divided(text: str, factor: float) -> str:
    """A Go duration divided by `factor`, in milliseconds (a Go duration too)."""
    seconds = go_duration_seconds(text)
    if seconds is None:
        raise ValueError(f"not a Go duration: {text!r}")
    return f"{round(seconds * 1000 / factor)}ms"


def run_flags(stack: Mapping[str, str], factor: float) -> dict[str, str]:
    """cluster-autoscaler's flags for the run: the stack's `autoscaler_config` over the defaults, durations divided,
    `max-graceful-termination-sec` too (whole seconds, at least 1), and `--max-node-startup-time` as the module
    docstring says."""
    flags = {**DURATION_DEFAULTS, **OTHER_DEFAULTS, **stack}
    out = {k: divided(v, factor) if k in DURATION_DEFAULTS else v for k, v in flags.items()}
    out["max-graceful-termination-sec"] = str(max(1, round(int(flags["max-graceful-termination-sec"]) / factor)))
    startup = (go_duration_seconds(flags["max-node-provision-time"]) or 0) + (go_duration_seconds(NODE_STARTUP) or 0)
    out["max-node-startup-time"] = f"{round(startup * 1000 / factor)}ms"
    return out


def rfc3339(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Order:
    """A node cluster-autoscaler ordered, with its drawn boot and GPU times (this run's seconds)."""

    name: str
    ordered: float
    boot: float
    gpus_after: float
    ready: float | None = None
    gpus: float | None = None


@dataclass
class Provisioner:
    """What happens to each node cluster-autoscaler creates in the pool (module docstring), polled every 0.1 s."""

    api: KubeApi
    pool: PoolView
    factor: float
    #: Draws (boot seconds, GPU seconds) of one node, in production seconds (divided by `factor` here).
    draw: Callable[[], tuple[float, float]]
    events: list[dict[str, Any]] = field(default_factory=list)
    orders: dict[str, Order] = field(default_factory=dict)
    orders_made: list[Order] = field(default_factory=list)
    _known: set[str] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def log(self, event: str, **details: Any) -> None:
        self.events.append({"t": time.time(), "event": event, **details})

    def start(self, existing: list[str]) -> None:
        """Start; `existing`: the pool's nodes already there, provisioned."""
        self._known |= set(existing)
        self._thread = threading.Thread(target=self._run, name="node provisioning", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            try:
                self.step(time.time())
            except (ApiError, OSError) as exc:  # a busy API server: the next round tries again
                self.log("provisioning-error", error=str(exc)[:300])

    def step(self, now: float) -> None:
        nodes = {n["metadata"]["name"]: n for n in self.api.items("/api/v1/nodes")
                 if (n["metadata"].get("annotations") or {}).get(CREATED_BY) == self.pool.name}
        for name, node in nodes.items():
            if name not in self._known:
                self._arrive(now, name, node)
                continue
            order = self.orders.get(name)
            if order is None or order.gpus is not None:
                continue
            ready = condition(node, "Ready")
            if order.ready is None and ready is not None and ready["status"] == "True":
                order.ready = now
                self.log("node-ready", node=name)
            if order.ready is not None and now >= order.ordered + order.boot + order.gpus_after:
                self.api.patch(f"/api/v1/nodes/{name}/status",
                               {"status": {"allocatable": {GPU_RESOURCE: str(self.pool.gpus)}}})
                order.gpus = now
                self.log("node-gpus", node=name)
                taints = [t for t in node["spec"].get("taints") or [] if not t["key"].startswith(STARTUP_TAINT_PREFIX)]
                if len(taints) < len(node["spec"].get("taints") or []):
                    self.api.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints}})
                    self.log("node-gate-open", node=name)
        for name in set(self.orders) - set(nodes):
            del self.orders[name]
            self.log("node-gone", node=name)

    def _arrive(self, now: float, name: str, node: Mapping[str, Any]) -> None:
        """A node cluster-autoscaler just created: no GPUs allocatable yet, Ready at its drawn boot time."""
        boot, gpus = self.draw()
        order = Order(name, now, boot / self.factor, gpus / self.factor)
        self.api.patch(f"/api/v1/nodes/{name}/status", {"status": {"allocatable": {GPU_RESOURCE: "0"}}})
        taints = [t for t in node["spec"].get("taints") or [] if t["key"] != PLUGIN_TAINT["key"]]
        self.api.patch(f"/api/v1/nodes/{name}", {"metadata": {"annotations": {BOOT_DELAY: rfc3339(now + order.boot)}},
                                                 "spec": {"taints": taints}})
        self._known.add(name)
        self.orders[name] = order
        self.orders_made.append(order)
        self.log("node-ordered", node=name, boot=order.boot, gpus_after=order.gpus_after)


@dataclass
class PoolAutoscaler:
    """cluster-autoscaler over the pool, and the provisioning of the nodes it orders."""

    kube: Kube
    api: KubeApi
    factor: float
    draw: Callable[[], tuple[float, float]]
    api_dir: Path
    cluster: str
    log: Path
    pool: PoolView = field(init=False)
    flags: dict[str, str] = field(init=False)
    ca: ClusterAutoscaler | None = field(default=None, init=False)
    provisioner: Provisioner = field(init=False)
    #: Logs of the cluster-autoscaler runs before the current one (one per change of the pool or its flags).
    _earlier: list[ClusterAutoscaler] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.pool, self.flags = from_gcore_api(self.api_dir, self.cluster)
        self.provisioner = Provisioner(self.api, self.pool, self.factor, self.draw)

    def flag(self, name: str) -> str:
        """A flag as the stack set it (not divided), or cluster-autoscaler's default."""
        return str(self.flags.get(name, {**DURATION_DEFAULTS, **OTHER_DEFAULTS}[name]))

    def _pool_nodes(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.api.items("/api/v1/nodes")
                if n["metadata"].get("labels", {}).get("gcore.com/pool") == self.pool.name]

    def start(self) -> PoolAutoscaler:
        existing = self._pool_nodes()
        for name in existing:  # made the provider's: its annotation (its lister), a `kwok:` ID (kwok_provider.go)
            self.api.patch(f"/api/v1/nodes/{name}", {"metadata": {"annotations": {CREATED_BY: self.pool.name}},
                                                     "spec": {"providerID": f"kwok:{name}"}})
        self.provisioner.start(existing)
        self._start_ca(len(existing))
        return self

    def _start_ca(self, nodes: int) -> None:
        log = self.log.with_name(f"{self.log.stem}-{len(self._earlier)}{self.log.suffix}")
        self.ca = ClusterAutoscaler(self.kube, [node_group(self.pool, nodes)], run_flags(self.flags, self.factor),
                                   log)
        self.ca.__enter__()

    def stop(self) -> None:
        if self.ca is not None:
            self.ca.kill()
        self.provisioner.stop()

    def follow(self) -> bool:
        """After a `pulumi up`: when the pool or the flags Gcore holds changed, restart cluster-autoscaler with them
        (as Gcore's managed one is redeployed with a new configuration). Returns whether it restarted."""
        pool, flags = from_gcore_api(self.api_dir, self.cluster, self.pool.name)
        if pool == self.pool and flags == self.flags:
            return False
        assert self.ca is not None
        self.ca.kill()
        self._earlier.append(self.ca)
        self.pool, self.flags = pool, flags
        self.provisioner.pool = pool
        self._start_ca(len(self._pool_nodes()))
        return True

    def running(self) -> bool:
        return self.ca is not None and self.ca.running()

    @property
    def orders_made(self) -> list[Order]:
        return self.provisioner.orders_made

    def memory(self, at: float) -> Memory:
        assert self.ca is not None
        return self.ca.memory(at)

    @property
    def events(self) -> list[dict[str, Any]]:
        """cluster-autoscaler's decisions (every run's) and the nodes' provisioning, in time order."""
        decisions = [{**d, "event": f"ca-{d['event']}"} for ca in [*self._earlier, *([self.ca] if self.ca else [])]
                     for d in ca.decisions()]
        return sorted([*decisions, *self.provisioner.events], key=lambda e: float(e["t"]))
