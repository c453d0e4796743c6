"""The headroom policies (policy/gpu_policies): placeholders below every workload and not expendable, and the
idle headroom within the stack's budget. Each with a passing case and its violation on the bad value, on
hand-made resources and on the program's recorded graphs with each stack's policy config."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs
from pulumi_policy.proxy import unknown_checking_proxy

from offline.engine import ROOT, Recording
from policy import gpu_policies as gp
from tests.conftest import STACKS
from tests.test_policies import (
    CLUSTER,
    DEPLOYMENT,
    H100_BM,
    _collect,
    cluster,
    engine,
    gpu_deployment,
    options,
    urn,
)
from tests.test_policies_on_graph import edited, run_pack

PC = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
PRIO_POLICY, BUDGET_POLICY = "gpu-headroom-priority-below-workloads", "gpu-headroom-hourly-budget"


def run(policy: Any, resources: list[tuple[str, str, dict[str, Any]]],
        config: dict[str, Any] | None = None) -> list[str]:
    stack = [PolicyResource(t, unknown_checking_proxy(engine(copy.deepcopy(p))), urn(t, n), n, options(), None,
                            None, [], {}) for t, n, p in resources]
    return [message for message, _ in _collect(policy, StackValidationArgs(stack, config))]


def priority_class(name: str, value: int, global_default: bool = False) -> dict[str, Any]:
    return {"metadata": {"name": name}, "value": value, "globalDefault": global_default}


def placeholders(replicas: int = 2, gpus: str = "2", class_name: str = "gpu-headroom") -> dict[str, Any]:
    dep = gpu_deployment(name="pause", image="registry.k8s.io/pause:3.10",
                         resources={"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}})
    dep["metadata"] = {"name": "gpu-headroom", "namespace": "gpu-headroom"}
    dep["spec"]["replicas"] = replicas
    dep["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] = "headroom"
    dep["spec"]["template"]["spec"]["priorityClassName"] = class_name
    return dep


def workload(class_name: str | None = "gpu-workload") -> dict[str, Any]:
    dep = gpu_deployment()
    if class_name:
        dep["spec"]["template"]["spec"]["priorityClassName"] = class_name
    return dep


def graph(headroom_value: int = -10, workload_class: str | None = "gpu-workload",
          cutoff: str | None = None, **kw: Any) -> list[tuple[str, str, dict[str, Any]]]:
    c = cluster()
    if cutoff is not None:
        c["autoscalerConfig"] = {"expendable-pods-priority-cutoff": cutoff}
    return [
        (CLUSTER, "gpu-cluster", c),
        (PC, "workload-priority-class", priority_class("gpu-workload", 0)),
        (PC, "headroom-priority", priority_class("gpu-headroom", headroom_value)),
        (DEPLOYMENT, "inference-deployment", workload(workload_class)),
        (DEPLOYMENT, "headroom-deployment", placeholders(**kw)),
    ]


# --- priority --------------------------------------------------------------------------------------------


def test_placeholders_between_cutoff_and_workloads_pass() -> None:
    assert run(gp.headroom_priority, graph()) == []
    assert run(gp.headroom_priority, graph(cutoff="-20", headroom_value=-15)) == []


def test_placeholder_priority_at_a_workloads_is_reported() -> None:
    (message,) = run(gp.headroom_priority, graph(headroom_value=0))
    assert "have priority 0, not below GPU workload inference/inference (0)" in message


def test_a_workload_without_a_class_has_priority_zero_or_the_global_default() -> None:
    assert run(gp.headroom_priority, graph(workload_class=None)) == []
    with_default = [*graph(workload_class=None), (PC, "low-default", priority_class("low", -20, True))]
    (message,) = run(gp.headroom_priority, with_default)
    assert "not below GPU workload inference/inference (-20)" in message


def test_placeholders_below_the_cutoff_are_reported() -> None:
    (message,) = run(gp.headroom_priority, graph(headroom_value=-11))
    assert "below the cluster autoscaler's expendable-pods-priority-cutoff (-10)" in message
    (message,) = run(gp.headroom_priority, graph(cutoff="-5"))
    assert "cutoff (-5)" in message


# --- budget ----------------------------------------------------------------------------------------------

BUDGET = {"pricePerGpuHour": 4.0, "gpusPerNode": {H100_BM: 8}, "maxHourlyBudget": 160.0}


def test_headroom_within_budget_passes() -> None:
    # floor 2 nodes × 32 = 64, 2 × 2 GPUs × 4.00 = 16: 80 ≤ 160
    assert run(gp.headroom_budget, graph(), BUDGET) == []
    no_budget = {k: v for k, v in BUDGET.items() if k != "maxHourlyBudget"}
    assert run(gp.headroom_budget, graph(replicas=48), no_budget) == [], "no budget, no check"


def test_headroom_over_budget_is_reported_with_the_numbers() -> None:
    (message,) = run(gp.headroom_budget, graph(replicas=13), BUDGET)  # 64 + 26 × 4 = 168
    assert "holds up to 26 idle GPUs × 4.00/GPU-hour = 104.00/hour" in message
    assert "168.00/hour, over the stack's budget of 160.00/hour" in message


# --- on the recorded graphs --------------------------------------------------------------------------------


def test_prod_graph_with_placeholders_at_workload_priority_is_refused(recordings: dict[str, Recording]) -> None:
    def same_as_workloads(inputs: dict[str, Any]) -> None:
        inputs["value"] = 0

    reported = run_pack(edited(recordings["prod"], "headroom-priority", same_as_workloads), "prod")
    assert set(reported) == {PRIO_POLICY}
    assert len(reported[PRIO_POLICY]) == 2, "one violation per workload the placeholders would not yield to"


def test_headroom_that_breaks_the_budget_is_refused(record: Callable[..., Recording]) -> None:
    # Within the pool's own budget (4 nodes × 32.00 = 128.00), but a floor of 3 nodes (96.00) plus 11 placeholders
    # of 2 GPUs in the window (22 × 4.00 = 88.00) is 184.00 idle-ready spend per hour.
    pool = {"flavor": "bm3-ai-1xlarge-h100-80-8", "minNodes": 3, "maxNodes": 4,
            "headroom": {"gpus": 4, "schedules": [{"start": "0 8 * * 1-5", "end": "0 20 * * 1-5",
                                                   "minReplicas": 11}]}}
    reported = run_pack(record("prod", gpuPool=pool), "prod")
    assert set(reported) == {BUDGET_POLICY}
    assert "holds up to 22 idle GPUs × 4.00/GPU-hour = 88.00/hour" in reported[BUDGET_POLICY][0]
    assert "184.00/hour, over the stack's budget of 160.00/hour" in reported[BUDGET_POLICY][0]


def test_the_prices_agree_across_policy_configs_and_stack_files() -> None:
    """One price: the pool budget's, the headroom budget's, and the stack's pricePerGpuHour (generated into both)."""
    from tests.prometheus_harness import stack_config

    for stack in STACKS:
        config = json.loads((ROOT / "policy" / "config" / f"{stack}.json").read_text())
        assert config["gpu-pool-hourly-budget"] == config[BUDGET_POLICY]
        cfg = stack_config(stack)
        assert cfg.pools[0].price_per_gpu_hour == config[BUDGET_POLICY]["pricePerGpuHour"]
        assert config[BUDGET_POLICY]["gpusPerNode"][cfg.pools[0].flavor] == cfg.pools[0].gpus
