"""What the chain shows, as it happens: watches of pods, nodes and the workload's HPA on the live API server, kept
as the current objects and as a series of `Observation`s (one per change, wall-clock times).

The same `Observation` is what the what-if's prediction yields (e2e/prediction.py), so one function
(e2e/timeline.py) reads the events of a scenario out of either: the real run and the model are compared on equal
terms. The exporter (e2e/gpu_load.py) reads the GPU nodes and pods from here too, so it reports for exactly the pods
the real scheduler placed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from e2e.kubeapi import KubeApi
from e2e.objects import TO_BE_DELETED, condition, pod_gpus, unschedulable
from stacknames import GPU_RESOURCE, NAME_LABEL


@dataclass(frozen=True)
class Observation:
    """One moment of the chain. `metric` is the HPA's input: the total of the GPU trigger (its average value times
    the replicas it divided by), None before the HPA has one."""

    t: float
    desired: int
    pending: int  # workload pods the scheduler found no node for (PodScheduled False, Unschedulable)
    starting: int  # bound, not yet Ready
    ready: int
    placeholders: int
    placeholders_pending: int  # the same for the headroom placeholders
    nodes: int  # the GPU pool's nodes, coming ones included, until deleted
    nodes_ready: int  # with allocatable GPUs and not being drained
    metric: float | None

    def same_state(self, other: Observation) -> bool:
        a, b = asdict(self), asdict(other)
        a.pop("t"), b.pop("t")
        return a == b


def is_ready(pod: Mapping[str, Any]) -> bool:
    cond = condition(pod, "Ready")
    return cond is not None and cond["status"] == "True"


def usable_gpus(node: Mapping[str, Any]) -> int:
    """GPUs the scheduler may place on: a Ready node, not being drained, with allocatable GPUs."""
    cond = condition(node, "Ready")
    if cond is None or cond["status"] != "True" or node["metadata"].get("deletionTimestamp"):
        return 0
    if any(t["key"] == TO_BE_DELETED for t in node["spec"].get("taints") or []):
        return 0
    return int(node["status"].get("allocatable", {}).get(GPU_RESOURCE, "0"))


@dataclass(frozen=True)
class Subject:
    """What to watch: the workload, its HPA, the placeholders, the GPU pool."""

    namespace: str
    workload: str
    hpa: str
    placeholder_namespace: str
    placeholder: str
    pool: str


class Recorder:
    def __init__(self, api: KubeApi, subject: Subject) -> None:
        self.api, self.s = api, subject
        self.pods: dict[str, dict[str, Any]] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.hpa: dict[str, Any] | None = None
        self.series: list[Observation] = []
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._listeners: list[Callable[[Observation], None]] = []

    # --- watches --------------------------------------------------------------------------------------------

    def start(self) -> Recorder:
        s = self.s
        self.api.watch("/api/v1/pods", self._list_into(self.pods, self._pod_key), self._event_into(self.pods,
                       self._pod_key), self._stop)
        self.api.watch("/api/v1/nodes", self._list_into(self.nodes, self._node_key),
                       self._event_into(self.nodes, self._node_key), self._stop)
        hpas = f"/apis/autoscaling/v2/namespaces/{s.namespace}/horizontalpodautoscalers"
        self.api.watch(hpas, self._hpa_list, self._hpa_event, self._stop, fieldSelector=f"metadata.name={s.hpa}")
        return self

    def stop(self) -> None:
        self._stop.set()

    @staticmethod
    def _pod_key(obj: Mapping[str, Any]) -> str:
        return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"

    @staticmethod
    def _node_key(obj: Mapping[str, Any]) -> str:
        return str(obj["metadata"]["name"])

    def _list_into(self, store: dict[str, dict[str, Any]],
                   key: Callable[[Mapping[str, Any]], str]) -> Callable[[list[dict[str, Any]]], None]:
        def on_list(items: list[dict[str, Any]]) -> None:
            with self._cond:
                store.clear()
                store.update({key(i): i for i in items})
            self._observe()
        return on_list

    def _event_into(self, store: dict[str, dict[str, Any]],
                    key: Callable[[Mapping[str, Any]], str]) -> Callable[[str, dict[str, Any]], None]:
        def on_event(kind: str, obj: dict[str, Any]) -> None:
            with self._cond:
                if kind == "DELETED":
                    store.pop(key(obj), None)
                else:
                    store[key(obj)] = obj
            self._observe()
        return on_event

    def _hpa_list(self, items: list[dict[str, Any]]) -> None:
        with self._cond:
            self.hpa = items[0] if items else None
        self._observe()

    def _hpa_event(self, kind: str, obj: dict[str, Any]) -> None:
        with self._cond:
            self.hpa = None if kind == "DELETED" else obj
        self._observe()

    # --- the current state ----------------------------------------------------------------------------------

    def of(self, namespace: str, name: str) -> list[dict[str, Any]]:
        """Live (not terminating) pods of one workload."""
        return [p for p in self.pods.values() if p["metadata"]["namespace"] == namespace
                and p["metadata"].get("labels", {}).get(NAME_LABEL) == name
                and not p["metadata"].get("deletionTimestamp")
                and p["status"].get("phase") in ("Pending", "Running")]

    def pool_nodes(self) -> list[dict[str, Any]]:
        return [n for n in self.nodes.values() if n["metadata"].get("labels", {}).get("gcore.com/pool") == self.s.pool]

    def gpu_pods(self) -> list[dict[str, Any]]:
        """Every live pod bound to a node that holds GPUs (the exporter maps GPUs to them)."""
        with self._cond:
            return [p for p in self.pods.values() if p["spec"].get("nodeName") and pod_gpus(p) > 0
                    and p["status"].get("phase") in ("Pending", "Running")]

    def gpu_nodes(self) -> dict[str, int]:
        """Node -> GPUs the scheduler may use, for the pool's nodes that have them."""
        return {name: gpus for name, gpus in self.exporter_nodes().items() if gpus > 0}

    def exporter_nodes(self) -> dict[str, int]:
        """Every node of the pool, from when it registers, -> the GPUs the scheduler may use there (0 until
        then): where the GPU Operator's dcgm-exporter DaemonSet runs a pod."""
        with self._cond:
            return {n["metadata"]["name"]: usable_gpus(n) for n in self.pool_nodes()}

    def hpa_at_rest(self) -> bool:
        """The HPA recommends what it has: no scale held back by a stabilisation window or a policy's rate
        (kubernetes pkg/controller/podautoscaler/horizontal.go: AbleToScale ReadyForNewScale, not ScalingLimited
        by ScaleUpLimit/ScaleDownLimit)."""
        conditions = {c["type"]: c for c in (self.hpa or {}).get("status", {}).get("conditions") or []}
        able = conditions.get("AbleToScale", {})
        limited = conditions.get("ScalingLimited", {})
        return (able.get("reason") == "ReadyForNewScale"
                and not (limited.get("status") == "True" and limited.get("reason") in ("ScaleUpLimit",
                                                                                        "ScaleDownLimit")))

    def hpa_metric(self) -> float | None:
        status = (self.hpa or {}).get("status", {})
        for m in status.get("currentMetrics") or []:
            current = (m.get("external") or {}).get("current") or {}
            if "averageValue" in current:
                return parse_quantity(current["averageValue"]) * int(status.get("currentReplicas", 0))
        return None

    def snapshot(self, t: float | None = None) -> Observation:
        s = self.s
        with self._cond:
            wl = self.of(s.namespace, s.workload)
            ph = self.of(s.placeholder_namespace, s.placeholder)
            nodes = [n for n in self.pool_nodes() if not n["metadata"].get("deletionTimestamp")]
            desired = int((self.hpa or {}).get("status", {}).get("desiredReplicas", 0))
            return Observation(
                t=time.time() if t is None else t, desired=desired,
                pending=sum(1 for p in wl if unschedulable(p)),
                starting=sum(1 for p in wl if p["spec"].get("nodeName") and not is_ready(p)),
                ready=sum(1 for p in wl if is_ready(p)),
                placeholders=len(ph), placeholders_pending=sum(1 for p in ph if unschedulable(p)),
                nodes=len(nodes), nodes_ready=sum(1 for n in nodes if usable_gpus(n) > 0),
                metric=self.hpa_metric())

    def _observe(self) -> None:
        obs = self.snapshot()
        with self._cond:
            if self.series and self.series[-1].same_state(obs):
                return
            self.series.append(obs)
            self._cond.notify_all()
        for listener in self._listeners:
            listener(obs)

    def since(self, t: float) -> list[Observation]:
        """The series from `t` on, starting with the state at `t`."""
        with self._cond:
            before = [o for o in self.series if o.t <= t]
            after = [o for o in self.series if o.t > t]
        return ([replace(before[-1], t=t)] if before else []) + after

    def wait(self, what: str, check: Callable[[Observation], bool], timeout: float) -> Observation:
        """The first observation (the current one included) for which `check` holds, within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            seen = len(self.series)
            if self.series and check(self.series[-1]):
                return self.series[-1]
            while True:
                for obs in self.series[seen:]:
                    if check(obs):
                        return obs
                seen = len(self.series)
                left = deadline - time.monotonic()
                if left <= 0:
                    last = self.series[-1] if self.series else None
                    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last})")
                self._cond.wait(min(left, 1.0))


def parse_quantity(text: str) -> float:
    """A Kubernetes quantity as the HPA writes metric values: plain, milli (`67750m`), or k/M/G."""
    units = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9}
    if text and text[-1] in units:
        return float(text[:-1]) * units[text[-1]]
    return float(text)
