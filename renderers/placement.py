"""Where GPU pods go: the pool's node labels (selected) and taints (tolerated), as pod-spec fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PoolPlacement:
    """Where GPU pods go: the pool's node labels (selected) and taints (tolerated)."""

    labels: Mapping[str, str]
    taints: Mapping[str, str]


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
