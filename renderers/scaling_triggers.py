"""A workload's scaling triggers as the stack says them: the `workloads` output (docs/outputs.md), the
wanted-replicas recording rules (renderers/recording_rules.py) and the consumer example read this one list, taken
from the ScaledObject that renderers/workload_specs.py renders, never re-derived from the config.
"""

from __future__ import annotations

from typing import Any

from renderers.workload_specs import scaled_object_spec
from stackconfig import WorkloadConfig


def scaling_triggers(w: WorkloadConfig) -> list[dict[str, Any]]:
    """The ScaledObject's triggers as `scaled_object_spec` renders them, in its order, without the Prometheus
    address: what the `workloads` stack output states (docs/outputs.md) and the wanted-replicas rules read.

    A `prometheus` trigger: `name`, `type`, `metricType`, `query`, `threshold` and `activationThreshold` (null when
    KEDA's default 0 applies), strings as in the ScaledObject. A `cron` window: `name`, `type`, `timezone`, `start`,
    `end`, `desiredReplicas`.
    """
    out: list[dict[str, Any]] = []
    for t in scaled_object_spec(w, prometheus_url="")["triggers"]:
        meta = t["metadata"]
        if t["type"] == "cron":
            out.append({"name": t["name"], "type": "cron",
                        **{k: meta[k] for k in ("timezone", "start", "end", "desiredReplicas")}})
        else:
            out.append({"name": t["name"], "type": t["type"], "metricType": t["metricType"], "query": meta["query"],
                        "threshold": meta["threshold"], "activationThreshold": meta.get("activationThreshold")})
    return out
