"""The hourly budget: what the GPU pools may cost at their maximum, priced with the stack's own facts (the price
per GPU-hour of each pool and GPUs per node by flavor), generated into the policy config from the stack."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from stacknames import CLUSTER_TYPE

from .props import _money, _num, gpu_pools

#: How the budget policies' stack facts get into their config (delivery/policy_config.py writes them).
REGENERATE = "python -m delivery.policy_config <stack> --write"


@dataclass(frozen=True)
class Pricing:
    """What a budget policy prices with: each GPU pool's `pricePerGpuHour` (by pool name; `per_gpu_hour`, the first
    pool's, for a pool the config does not name) and GPUs per node by flavor (the flavor table, stackconfig/
    flavors.py, plus an unlisted flavor's `gpusPerNode`), all generated into the policy config from the stack, so
    the policy keeps no price and reads no GPU count off a flavor's name."""

    per_gpu_hour: float
    gpus_per_node: Mapping[str, Any]
    by_pool: Mapping[str, Any] = field(default_factory=dict)

    def price(self, pool: Mapping[str, Any]) -> float:
        own = self.by_pool.get(str(pool.get("name")))
        return float(own) if isinstance(own, int | float) and not isinstance(own, bool) and own > 0 \
            else self.per_gpu_hour

    def gpus(self, pool: Mapping[str, Any]) -> int | None:
        count = self.gpus_per_node.get(str(pool.get("flavorId")))
        return int(count) if isinstance(count, int | float) and not isinstance(count, bool) and count > 0 else None


def _pricing(config: Mapping[str, Any], report_violation: ReportViolation) -> tuple[Pricing, float] | None:
    """(pricing, budget) when the config sets a budget; None without one (the check is off). A budget without the
    stack's facts, or with the old `pricePerNodeHour`, is reported rather than silently not checked."""
    budget = config.get("maxHourlyBudget")
    if budget is None:
        return None
    price, table = config.get("pricePerGpuHour"), config.get("gpusPerNode")
    if "pricePerNodeHour" in config or not isinstance(price, int | float) or not isinstance(table, Mapping):
        report_violation(
            f"The policy config sets `maxHourlyBudget: {_num(budget)}` but not the stack's `pricePerGpuHour` and "
            f"`gpusPerNode`{' (it still has the retired `pricePerNodeHour`)' if 'pricePerNodeHour' in config else ''}"
            f", so the budget cannot be checked. Generate them from the stack: `{REGENERATE}`."
        )
        return None
    by_pool = config.get("pricePerGpuHourByPool")
    return Pricing(float(price), table, by_pool if isinstance(by_pool, Mapping) else {}), float(budget)


def _unpriced(pool: Mapping[str, Any], report_violation: ReportViolation, urn: str | None = None) -> None:
    report_violation(
        f"GPU pool `{pool.get('name')}` has flavor `{pool.get('flavorId')}`, which the policy config's `gpusPerNode` "
        f"does not list, so its cost is unknown. Regenerate the config from the stack: `{REGENERATE}`.",
        urn,
    )


def _gpu_pool_budget(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    pools = gpu_pools(args.props) if args.resource_type == CLUSTER_TYPE else []
    if not pools:
        return
    priced = _pricing(args.get_config(), report_violation)
    if priced is None:
        return  # optional: without a budget there is nothing to compare
    pricing, budget = priced
    parts, total = [], 0.0
    for pool in pools:
        gpus = pricing.gpus(pool)
        if gpus is None:
            _unpriced(pool, report_violation)
            continue
        nodes = pool.get("maxNodeCount") or pool.get("minNodeCount") or 0
        cost = float(nodes) * gpus * pricing.price(pool)
        total += cost
        parts.append(f"pool `{pool.get('name')}` up to {_num(nodes)} nodes × {gpus} GPUs × "
                     f"{_money(pricing.price(pool))}/GPU-hour = {_money(cost)}/hour")
    if total > budget:
        report_violation(
            f"The GPU pools of `{args.name}` can cost up to {_money(total)}/hour ({'; '.join(parts)}), over the "
            f"stack's budget of {_money(budget)}/hour (`maxHourlyBudget`). Lower the pool's maxNodes, or raise "
            "the budget in policy/config/<stack>.json after agreeing the spend."
        )


def _budget_properties(budget: str) -> dict[str, Any]:
    """The config both budget policies take: the most the stack may cost per hour (a decision, set by hand) and
    the stack's own price and GPUs per node (facts, generated from the stack: delivery/policy_config.py)."""
    positive = {"type": "number", "exclusiveMinimum": 0}
    return {
        "maxHourlyBudget": {**positive, "description": budget},
        "pricePerGpuHour": {**positive, "description": "The first GPU pool's pricePerGpuHour (generated)."},
        "pricePerGpuHourByPool": {
            "type": "object",
            "additionalProperties": positive,
            "description": "Each GPU pool's pricePerGpuHour by pool name (generated).",
        },
        "gpusPerNode": {
            "type": "object",
            "additionalProperties": {"type": "integer", "minimum": 1},
            "description": "GPUs per node by flavor id: stackconfig/flavors.py and the stack's gpuPool.gpusPerNode "
            "(generated).",
        },
    }


gpu_pool_budget = ResourceValidationPolicy(
    name="gpu-pool-hourly-budget",
    description="The GPU pools' maximum hourly cost (maxNodeCount × GPUs per node × pricePerGpuHour) stays within "
    "maxHourlyBudget, when the stack's policy config sets one.",
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties=_budget_properties("Most the GPU pools may cost per hour at their maximum size.")
    ),
    validate=_gpu_pool_budget,
)
