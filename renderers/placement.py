"""Where GPU pods go: their pool's node labels (selected) and taints (tolerated), as pod-spec fields; and, on a spot
pool, how soon pods on a node that is gone are replaced."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stackconfig import GpuPoolConfig

#: On a spot pool, seconds a pod stays bound to a node that stopped answering before it is evicted (and its
#: replacement created, Pending, which makes the Cluster Autoscaler order a node). Kubernetes' DefaultTolerationSeconds
#: admission gives every pod 300 s for `not-ready` and `unreachable` unless it states its own (Kubernetes docs,
#: "Taints and Tolerations", taint-based evictions). A reclaimed spot node does not come back, so five minutes of
#: waiting for it would only delay the replacement; 30 s is the notice GKE gives a spot VM, which interruptible
#: workloads are written for.
SPOT_EVICTION_SECONDS = 30
#: The node conditions the node lifecycle controller taints a lost node with (NoExecute).
NODE_LOST_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


@dataclass(frozen=True)
class PoolPlacement:
    """`gpus_per_node` 0: unknown, as for a consumer stack."""

    labels: Mapping[str, str]
    taints: Mapping[str, str]
    spot: bool = False
    gpus_per_node: int = 0

    @classmethod
    def of(cls, pool: GpuPoolConfig) -> PoolPlacement:
        return cls(labels=dict(pool.labels), taints=dict(pool.taints), spot=pool.spot, gpus_per_node=pool.gpus)

    def tolerations(self) -> list[dict[str, Any]]:
        """The pool's taints tolerated; on a spot pool, a lost node's pods evicted after SPOT_EVICTION_SECONDS."""
        out = tolerations_for(self.taints)
        if self.spot:
            out += [{"key": key, "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": SPOT_EVICTION_SECONDS} for key in NODE_LOST_TAINTS]
        return out


def tolerations_for(taints: Mapping[str, str]) -> list[dict[str, Any]]:
    """Tolerations matching Gcore pool taints written as `{key: "value:Effect"}`."""
    out = []
    for key, spec in taints.items():
        value, _, effect = spec.rpartition(":")
        if value:
            out.append({"key": key, "operator": "Equal", "value": value, "effect": effect})
        else:
            out.append({"key": key, "operator": "Exists", "effect": effect})
    return out
