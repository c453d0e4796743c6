"""What the local control plane and the end-to-end tests need to know of a stack, read through the config model
the program itself uses (so a node mirrors exactly the pool the stack would create)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackconfig import StackConfig

from dataclasses import dataclass

from realengine.toolchain import ROOT


@dataclass(frozen=True)
class PoolView:
    name: str
    flavor: str
    min_nodes: int
    max_nodes: int
    gpus: int
    labels: dict[str, str]
    taints: dict[str, str]

    def node_labels(self) -> dict[str, str]:
        """The labels of the pool's nodes: the flavor and pool name Gcore sets, and the pool's own."""
        return {"node.kubernetes.io/instance-type": self.flavor, "gcore.com/pool": self.name, **self.labels}


def config(stack: str) -> StackConfig:
    from stackconfig import check_stack

    return check_stack(ROOT, stack)


def pools(stack: str, cfg: StackConfig | None = None) -> list[PoolView]:
    """Every pool of the stack (`cfg`: the stack's config as a test changed it), GPU pools first, in their order."""
    cfg = cfg if cfg is not None else config(stack)
    out = [PoolView(p.name, p.flavor, p.min_nodes, p.max_nodes, p.gpus, dict(p.labels), dict(p.taints))
           for p in cfg.pools]
    s = cfg.system_pool
    if s.enabled:
        out.append(PoolView(s.name, s.flavor, s.min_nodes, s.max_nodes, 0, {}, {}))
    return out
