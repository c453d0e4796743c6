"""A STAND-IN for Gcore's managed Cluster Autoscaler: it is not cluster-autoscaler, and nothing it shows calibrates
the what-if's autoscaler rules against the real one.

Why a stand-in: the real program, k8s.io/autoscaler/cluster-autoscaler (with its kwok cloud provider), cannot be
built here: the Go module proxy these machines reach refuses the module at every version (`go list -m -versions
k8s.io/autoscaler/cluster-autoscaler`: "403 Forbidden, This module version is not available"; so are the tag
cluster-autoscaler-1.36.1, @master and any commit). Karpenter is served but is another autoscaler with other rules,
which Gcore does not run.

What it does is only what this stack asks of Gcore's autoscaler, read from what `pulumi up` sent to Gcore (the
fake API's cluster: the GPU pool's min/max, flavor, labels and taints, and `autoscaler_config`), with every
duration divided by the suite's time factor, and Cluster Autoscaler defaults (kubernetes/autoscaler
cluster-autoscaler/FAQ.md, "What are the parameters to CA?") for flags the stack leaves unset:
- every `scan-interval`, pods the real kube-scheduler marked unschedulable (PodScheduled=False, reason
  Unschedulable), of priority not below `expendable-pods-priority-cutoff`, not waiting for a preemption
  (nominatedNodeName), that a node of the pool would fit (nodeSelector, tolerations, GPUs) and that the free GPUs
  of the nodes already there or coming cannot take, order nodes: first-fit decreasing onto new nodes, up to the
  pool's max (FAQ "How does scale-up work?");
- a node is ordered as a kwok Node that kwok's node-initialize stage marks Ready after the drawn boot time (the
  annotation BOOT_DELAY), registered with the `node.kubernetes.io/not-ready` taint as a kubelet registers; its
  GPUs become allocatable after the drawn GPU Operator time (this class patches `status.allocatable`, standing for
  the device plugin); a node not Ready within `max-node-provision-time` is deleted and the pool backs off
  (FAQ: `--max-node-provision-time`, `initial-node-group-backoff-duration` 5 min);
- which nodes count as ready, as Cluster Autoscaler decides it (kubernetes/autoscaler cluster-autoscaler
  utils/taints/taints.go `FilterOutNodesWithStartupTaints`, clusterstate/clusterstate.go `updateReadinessStats`,
  `GetUpcomingNodes`): a Ready node WITHOUT a start-up taint (`startup-taint.cluster-autoscaler.kubernetes.io/...`)
  is ready with the GPUs it advertises, so one with 0 allocatable GPUs is ready and full and the Pending pods order
  another node (kubernetes/autoscaler#461 without a known GPU label); a Ready node WITH one is not ready: still coming
  with its template's GPUs for `MaxNodeStartupTime` (15 min) after it registered, and neither ready nor coming after
  that. The template drops start-up taints (`SanitizeTaints`), so pods that do not tolerate them still fit it. When
  the GPUs come, the stand-in also removes the start-up taint, standing for the GPU-ready gate (`plays_gate`; a test
  that runs the gate's own commands turns that off);
- a Ready node whose GPU requests are below half its GPUs (`scale-down-gpu-utilization-threshold` 0.5, which Gcore
  does not let a user set) and whose non-DaemonSet pods of priority not below the cutoff fit on the other nodes is
  unneeded; after `scale-down-unneeded-time` of that, and not within `scale-down-delay-after-add/-delete/-failure`,
  it is removed: empty ones together (`max-empty-bulk-delete`), others one at a time, tainted
  `ToBeDeletedByClusterAutoscaler` and drained through the eviction API (PodDisruptionBudgets honoured); never below
  the pool's min (FAQ "How does scale-down work?").
Everything it decides is logged with wall-clock times (`events`) for the timeline.

One file over 400 lines: it is one loop over one view of the cluster (provisioning, readiness, scale-up and
scale-down read and change the same orders and timers); split, every part would take all of that as arguments.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from e2e.kubeapi import ApiError, KubeApi
from e2e.objects import TO_BE_DELETED, condition, pod_gpus, unschedulable
from e2e.timescale import BOOT_DELAY
from realengine.cluster import GPU_NODE_CPU, GPU_NODE_MEMORY, NodeSpec, taint_list
from realengine.gcore_api import read_cluster
from stackconfig.flavors import gpus_of
from stackconfig.packing import first_fit_decreasing
from stackconfig.units import go_duration_seconds
from stacknames import GPU_RESOURCE, STARTUP_TAINT_PREFIX

#: Cluster Autoscaler defaults of the flags this stand-in reads (kubernetes/autoscaler cluster-autoscaler/FAQ.md,
#: "What are the parameters to CA?"), for the ones the stack does not send.
CA_DEFAULTS: Mapping[str, str] = {
    "scan-interval": "10s", "max-node-provision-time": "15m", "scale-down-unneeded-time": "10m",
    "scale-down-delay-after-add": "10m", "scale-down-delay-after-delete": "0s",
    "scale-down-delay-after-failure": "3m", "expendable-pods-priority-cutoff": "-10", "max-empty-bulk-delete": "10",
    "scale-down-enabled": "true",
}
#: Not settable on Gcore (its autoscaler_config keys omit them): the CA defaults.
GPU_UTILIZATION_THRESHOLD = 0.5
NODE_GROUP_BACKOFF = "5m"
NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
#: cluster-autoscaler clusterstate/clusterstate.go `MaxNodeStartupTime`: how long after it registered a node that is
#: not ready (a start-up taint makes it so) still counts as coming.
MAX_NODE_STARTUP = "15m"


def startup_tainted(node: Mapping[str, Any]) -> bool:
    return any(t["key"].startswith(STARTUP_TAINT_PREFIX) for t in node["spec"].get("taints") or [])


@dataclass(frozen=True)
class Pool:
    """The GPU pool as the stack sent it to Gcore."""

    name: str
    flavor: str
    min_nodes: int
    max_nodes: int
    gpus: int
    labels: dict[str, str]
    taints: list[dict[str, str]]

    @classmethod
    def from_gcore_api(cls, api_dir: Path, cluster: str, pool: str = "gpu") -> tuple[Pool, dict[str, str]]:
        """The pool and the `autoscaler_config` of the cluster the Gcore API emulator holds (realengine/gcore_api)."""
        doc = read_cluster(api_dir, cluster)
        p = next(x for x in doc["pools"] if x["name"] == pool)
        gpus = gpus_of(p["flavor_id"])
        if not gpus:
            raise ValueError(f"flavor {p['flavor_id']} has no GPUs in stackconfig/flavors.py")
        return (cls(p["name"], p["flavor_id"], int(p["min_node_count"]), int(p["max_node_count"]), gpus,
                    dict(p.get("labels") or {}), taint_list(dict(p.get("taints") or {}))),
                dict(doc.get("autoscaler_config") or {}))

    def node_labels(self) -> dict[str, str]:
        """As realengine.cluster.stack_nodes labels the pool's first nodes."""
        return {"node.kubernetes.io/instance-type": self.flavor, "gcore.com/pool": self.name, **self.labels}

    def owns(self, node: Mapping[str, Any]) -> bool:
        return bool(node["metadata"].get("labels", {}).get("gcore.com/pool") == self.name)

    def fits(self, pod: Mapping[str, Any]) -> bool:
        """Would a fresh node of the pool take this pod: its nodeSelector, its tolerations of the pool's taints,
        its GPUs (the template-node check of a scale-up)."""
        spec = pod["spec"]
        if any(self.node_labels().get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
            return False
        tolerations = spec.get("tolerations") or []
        for taint in (t for t in self.taints if not t["key"].startswith(STARTUP_TAINT_PREFIX)):  # SanitizeTaints
            if not any(tolerates(t, taint) for t in tolerations):
                return False
        return 0 < pod_gpus(pod) <= self.gpus


def rfc3339(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, str]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint["effect"]:
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint["key"]
    return bool(toleration.get("key") == taint["key"] and toleration.get("value", "") == taint.get("value", ""))






def is_daemon_pod(pod: Mapping[str, Any]) -> bool:
    return any(o.get("kind") == "DaemonSet" for o in pod["metadata"].get("ownerReferences") or [])




@dataclass
class Order:
    name: str
    ordered: float
    boot: float
    gpus_after: float
    ready: float | None = None
    gpus: float | None = None


@dataclass
class StandInAutoscaler:
    """The stand-in's loop over the live cluster (see the module docstring: NOT cluster-autoscaler)."""

    api: KubeApi
    pool: Pool
    flags: Mapping[str, str]
    factor: float
    #: Draws (boot seconds, GPU seconds) of one node, in production seconds (divided by `factor` here).
    draw: Callable[[], tuple[float, float]]
    #: Where the fake Gcore API keeps the cluster: read again at every scan, as Gcore's managed autoscaler follows
    #: an update of the pool (min/max) or of autoscaler_config.
    api_dir: Path | None = None
    cluster: str = ""
    #: Remove the start-up taint when the GPUs come, standing for the GPU-ready gate DaemonSet (whose commands
    #: e2e/test_gpu_gate.py runs itself, with this off).
    plays_gate: bool = True
    events: list[dict[str, Any]] = field(default_factory=list)
    #: Nodes ordered and not yet deleted; `orders_made` keeps every order.
    orders: dict[str, Order] = field(default_factory=dict)
    orders_made: list[Order] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _unneeded: dict[str, float] = field(default_factory=dict)
    _draining: set[str] = field(default_factory=set)
    _next_index: int = 0
    last_scale_up: float = float("-inf")
    last_delete: float = float("-inf")
    last_failure: float = float("-inf")
    backoff_until: float = float("-inf")

    def flag(self, name: str) -> str:
        return str(self.flags.get(name, CA_DEFAULTS[name]))

    def seconds(self, name: str) -> float:
        """A duration flag (or NODE_GROUP_BACKOFF) in this run's seconds: the stack's value ÷ the factor."""
        text = self.flag(name) if name in CA_DEFAULTS else name
        value = go_duration_seconds(text)
        if value is None:
            raise ValueError(f"{name}: not a duration: {text!r}")
        return value / self.factor

    @property
    def cutoff(self) -> int:
        return int(self.flag("expendable-pods-priority-cutoff"))

    def log(self, event: str, **details: Any) -> None:
        with self._lock:
            self.events.append({"t": time.time(), "event": event, **details})

    # --- the loop -------------------------------------------------------------------------------------------

    def start(self) -> StandInAutoscaler:
        self._next_index = 1 + max((int(n["metadata"]["name"].rsplit("-", 1)[-1]) for n in self._pool_nodes()
                                    if n["metadata"]["name"].rsplit("-", 1)[-1].isdigit()), default=-1)
        self._thread = threading.Thread(target=self._run, name="stand-in autoscaler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        period = self.seconds("scan-interval")
        while not self._stop.wait(period):
            try:
                self.scan(time.time())
            except (ApiError, OSError) as exc:  # a busy API server: the next scan tries again
                self.log("scan-error", error=str(exc)[:300])

    def _pool_nodes(self) -> list[dict[str, Any]]:
        return [n for n in self.api.items("/api/v1/nodes") if self.pool.owns(n)]

    def scan(self, now: float) -> None:
        if self.api_dir is not None:
            self.pool, self.flags = Pool.from_gcore_api(self.api_dir, self.cluster, self.pool.name)
        nodes = self._pool_nodes()
        pods = [p for p in self.api.items("/api/v1/pods") if p["status"].get("phase") in ("Pending", "Running")]
        self._provisioning(now, nodes)
        if self._scale_up(now, nodes, pods):
            return  # a loop that scaled up does not scale down (FAQ)
        if self.flag("scale-down-enabled") == "true":
            self._scale_down(now, nodes, pods)

    # --- provisioning: boot (kwok stage), GPUs (device plugin), give-up -------------------------------------

    def _order(self, now: float) -> None:
        boot, gpus = self.draw()
        name = f"{self.pool.name}-{self._next_index}"
        self._next_index += 1
        order = Order(name, now, boot / self.factor, gpus / self.factor)
        capacity = {"cpu": GPU_NODE_CPU, "memory": GPU_NODE_MEMORY, "pods": "110", GPU_RESOURCE: str(self.pool.gpus)}
        manifest = NodeSpec(name, self.pool.node_labels(), [*self.pool.taints, NOT_READY_TAINT], capacity).manifest()
        manifest["metadata"]["annotations"][BOOT_DELAY] = rfc3339(now + order.boot)
        manifest["status"]["allocatable"] = {**capacity, GPU_RESOURCE: "0"}  # no device plugin yet
        self.api.create("/api/v1/nodes", manifest)
        self.orders[name] = order
        self.orders_made.append(order)
        self.log("node-ordered", node=name, boot=order.boot, gpus_after=order.gpus_after)

    def _provisioning(self, now: float, nodes: list[dict[str, Any]]) -> None:
        by_name = {n["metadata"]["name"]: n for n in nodes}
        for name, order in list(self.orders.items()):
            node = by_name.get(name)
            if node is None or order.gpus is not None:
                continue
            ready = condition(node, "Ready")
            if order.ready is None and ready is not None and ready["status"] == "True":
                order.ready = now
                self.log("node-ready", node=name)
            if order.ready is None and now - order.ordered > self.seconds("max-node-provision-time"):
                self.api.delete(f"/api/v1/nodes/{name}")
                del self.orders[name]
                self.last_failure = now
                self.backoff_until = now + self.seconds(NODE_GROUP_BACKOFF)
                self.log("node-given-up", node=name)
            elif order.ready is not None and now >= max(order.ready, order.ordered + order.boot + order.gpus_after):
                self.api.patch(f"/api/v1/nodes/{name}/status",
                               {"status": {"allocatable": {GPU_RESOURCE: str(self.pool.gpus)}}})
                order.gpus = now
                self.log("node-gpus", node=name)
                if self.plays_gate and startup_tainted(node):
                    taints = [t for t in node["spec"].get("taints") or []
                              if not t["key"].startswith(STARTUP_TAINT_PREFIX)]
                    self.api.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints}})
                    self.log("node-gate-open", node=name)

    def _usable(self, node: Mapping[str, Any]) -> bool:
        ready = condition(node, "Ready")
        return bool(ready is not None and ready["status"] == "True"
                    and int(node["status"].get("allocatable", {}).get(GPU_RESOURCE, "0")) > 0
                    and not node["metadata"].get("deletionTimestamp")
                    and not any(t["key"] == TO_BE_DELETED for t in node["spec"].get("taints") or []))

    def _ca_ready(self, node: Mapping[str, Any]) -> bool:
        """Ready as Cluster Autoscaler counts it: the Ready condition, and no start-up taint."""
        ready = condition(node, "Ready")
        return bool(ready is not None and ready["status"] == "True" and not startup_tainted(node)
                    and not node["metadata"].get("deletionTimestamp")
                    and not any(t["key"] == TO_BE_DELETED for t in node["spec"].get("taints") or []))

    def _coming(self, now: float, node: Mapping[str, Any]) -> bool:
        """Still coming: not Ready yet (an instance that has not registered, until max-node-provision-time gives
        it up), or Ready behind a start-up taint for at most MaxNodeStartupTime since it registered."""
        name = node["metadata"]["name"]
        if self._ca_ready(node) or node["metadata"].get("deletionTimestamp") or name in self._draining:
            return False
        ready = condition(node, "Ready")
        if ready is None or ready["status"] != "True":
            return True
        order = self.orders.get(name)
        since = order.ready if order is not None and order.ready is not None else datetime.strptime(
            node["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
        return now - since < self.seconds(MAX_NODE_STARTUP)

    # --- scale-up -------------------------------------------------------------------------------------------

    def _scale_up(self, now: float, nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> bool:
        waiting = [p for p in pods if unschedulable(p) and int(p["spec"].get("priority", 0)) >= self.cutoff
                   and not p["status"].get("nominatedNodeName") and self.pool.fits(p)]
        if not waiting or now < self.backoff_until:
            return False
        used = self._gpus_used(pods)
        # A ready node offers what it advertises (0 GPUs: ready and full); a coming one its template's GPUs.
        free = [max(0, int(n["status"].get("allocatable", {}).get(GPU_RESOURCE, "0")) - used.get(
            n["metadata"]["name"], 0)) for n in nodes if self._ca_ready(n)]
        coming = [self.pool.gpus - used.get(n["metadata"]["name"], 0) for n in nodes if self._coming(now, n)]
        bins = first_fit_decreasing([pod_gpus(p) for p in waiting], free + coming, open_size=self.pool.gpus)
        assert bins is not None
        add = min(len(bins) - len(free) - len(coming), self.pool.max_nodes - len(nodes))
        if add <= 0:
            return False
        self.log("scale-up", nodes=add, pods=[p["metadata"]["name"] for p in waiting])
        for _ in range(add):
            self._order(now)
        self.last_scale_up = now
        return True

    @staticmethod
    def _gpus_used(pods: list[dict[str, Any]]) -> dict[str, int]:
        used: dict[str, int] = {}
        for p in pods:
            node = p["spec"].get("nodeName")
            if node:
                used[node] = used.get(node, 0) + pod_gpus(p)
        return used

    # --- scale-down -----------------------------------------------------------------------------------------

    def _scale_down(self, now: float, nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
        usable = [n for n in nodes if self._usable(n) and n["metadata"]["name"] not in self._draining]
        used = self._gpus_used(pods)
        on: dict[str, list[dict[str, Any]]] = {}
        for p in pods:
            if p["spec"].get("nodeName") and not is_daemon_pod(p):
                on.setdefault(p["spec"]["nodeName"], []).append(p)
        free = {n["metadata"]["name"]: self.pool.gpus - used.get(n["metadata"]["name"], 0) for n in usable}
        removable: list[str] = []
        for node in sorted(usable, key=lambda n: used.get(n["metadata"]["name"], 0)):
            name = node["metadata"]["name"]
            if len(nodes) - len(self._draining) - len(removable) <= self.pool.min_nodes:
                break
            if used.get(name, 0) / self.pool.gpus >= GPU_UTILIZATION_THRESHOLD:
                continue
            trial = {k: v for k, v in free.items() if k != name and k not in removable}
            movable = [p for p in on.get(name, []) if int(p["spec"].get("priority", 0)) >= self.cutoff]
            placed = True
            for p in sorted(movable, key=pod_gpus, reverse=True):
                dest = next((k for k, room in trial.items() if room >= pod_gpus(p)), None)
                if dest is None:
                    placed = False
                    break
                trial[dest] -= pod_gpus(p)
            if placed:
                free = {**free, **trial}
                removable.append(name)
        for name in removable:
            if name not in self._unneeded:
                self._unneeded[name] = now
                self.log("node-unneeded", node=name)
        for name in list(self._unneeded):
            if name not in removable:
                del self._unneeded[name]
        if (now < self.last_scale_up + self.seconds("scale-down-delay-after-add")
                or now < self.last_delete + self.seconds("scale-down-delay-after-delete")
                or now < self.last_failure + self.seconds("scale-down-delay-after-failure")):
            return
        due = [n for n in removable if now - self._unneeded[n] >= self.seconds("scale-down-unneeded-time")]
        if not due:
            return
        empty = [n for n in due if not any(int(p["spec"].get("priority", 0)) >= self.cutoff for p in on.get(n, []))]
        victims = empty[: int(self.flag("max-empty-bulk-delete"))] if empty else due[:1]
        victims = victims[: max(0, len(nodes) - len(self._draining) - self.pool.min_nodes)]
        for name in victims:
            self._draining.add(name)
            self._unneeded.pop(name, None)
            self.log("node-drain", node=name, pods=[p["metadata"]["name"] for p in on.get(name, [])])
            threading.Thread(target=self._drain, args=(name, on.get(name, [])), daemon=True).start()
        self.last_delete = now

    def _drain(self, name: str, pods: list[dict[str, Any]]) -> None:
        """Taint, evict (a PodDisruptionBudget that forbids it is retried), delete the node."""
        try:
            node = self.api.get(f"/api/v1/nodes/{name}")
            taints = [*(node["spec"].get("taints") or []),
                      {"key": TO_BE_DELETED, "value": str(int(time.time())), "effect": "NoSchedule"}]
            self.api.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints}})
            left = list(pods)
            deadline = time.monotonic() + 600
            while left and time.monotonic() < deadline and not self._stop.is_set():
                left = [p for p in left if not self.api.evict(p["metadata"]["namespace"], p["metadata"]["name"])]
                if left:
                    time.sleep(0.2)
            self.api.delete(f"/api/v1/nodes/{name}")
            self.log("node-deleted", node=name)
        except (ApiError, OSError) as exc:
            self.log("drain-error", node=name, error=str(exc)[:300])
        finally:
            self._draining.discard(name)
            self.orders.pop(name, None)
