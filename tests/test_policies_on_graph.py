"""The whole policy pack over the graphs the program really builds, with each stack's policy config.

tests/test_policies.py proves each rule on hand-made resources; this proves the pack and the program agree:
`pulumi preview --policy-pack policy --policy-pack-config policy/config/<stack>.json` must pass on dev and
prod as they are (a false positive would block every pull request), and each policy must still fire when the
recorded graph is broken the way a careless change would break it. The recording goes through the offline plan
(`offline.plan.build_plan`) and `delivery.policy_check`, which presents it the way the analyzer does (numbers as
floats, options from the registration with timeouts in seconds, parents and dependencies as resource objects,
the CLI's config reconciliation): the same path a fork's pull request takes, so secrets appear as `[secret]`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from delivery.policy_check import PlanGraph, read_config, run_policies, seconds
from offline.engine import ROOT, Recording
from offline.plan import build_plan
from tests.test_policies import CLUSTER, DEPLOYMENT, RELEASE, SCALED_OBJECT


def run_pack(rec: Recording, stack: str) -> dict[str, list[str]]:
    """Messages per policy name from every policy of the pack over `rec`, with `stack`'s policy config."""
    reported: dict[str, list[str]] = {}
    for violation in run_policies(build_plan(rec), read_config(ROOT / "policy" / "config" / f"{stack}.json")):
        reported.setdefault(violation.policy, []).append(violation.message)
    return reported


def edited(rec: Recording, name: str, edit: Callable[[dict[str, Any]], None]) -> Recording:
    """A copy of `rec` whose resource `name` has its inputs changed by `edit` (the recording is shared)."""
    inputs = copy.deepcopy(dict(rec.get(name).inputs))
    edit(inputs)
    return dataclasses.replace(
        rec, resources=[dataclasses.replace(r, inputs=inputs) if r.name == name else r for r in rec.resources]
    )


# ---------------------------------------------------------------------------------------------------------------
# The stacks as they are


def test_every_policy_passes_on_the_stack_as_configured(rec: Recording) -> None:
    # Not vacuous: the graph has what each policy looks at (and the tests below make each one fire on it).
    assert {r.type for r in rec.resources} >= {CLUSTER, DEPLOYMENT, SCALED_OBJECT, RELEASE}
    assert run_pack(rec, rec.stack) == {}


def test_custom_timeouts_reach_the_policies_in_seconds(recordings: dict[str, Recording]) -> None:
    # The Deployments carry the custom timeouts that pulumi-kubernetes honours (the Gcore cluster has none).
    resources = PlanGraph(build_plan(recordings["prod"])).policy_resources()
    workloads = recordings["prod"].outputs["workloads"]
    deployments = [r for r in resources if r.resource_type == DEPLOYMENT and r.props["metadata"]["name"] in workloads]
    assert len(deployments) == len(workloads) == 2
    expected = {"inference": (78 * 60, 336 * 60, 0), "embeddings": (46 * 60, 112 * 60, 0)}  # tests/test_timeouts.py
    for deployment in deployments:
        timeouts = deployment.opts.custom_timeouts
        assert (timeouts.create_seconds, timeouts.update_seconds, timeouts.delete_seconds) == expected[
            deployment.props["metadata"]["name"]]
    (cluster,) = [r for r in resources if r.resource_type == CLUSTER]
    timeouts = cluster.opts.custom_timeouts
    assert (timeouts.create_seconds, timeouts.update_seconds, timeouts.delete_seconds) == (0, 0, 0)
    assert seconds("1h30m") == 5400 and seconds("") == 0


# ---------------------------------------------------------------------------------------------------------------
# Broken graphs: each policy reports on the real resources


def _latest_image(inputs: dict[str, Any]) -> None:
    inputs["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example.com/gpu-app:latest"


def _no_fallback(inputs: dict[str, Any]) -> None:
    del inputs["spec"]["fallback"]


def _missing_data_is_zero(inputs: dict[str, Any]) -> None:
    inputs["spec"]["triggers"][0]["metadata"]["ignoreNullValues"] = "true"


def _chart_range(inputs: dict[str, Any]) -> None:
    inputs["version"] = "~2.20.2"


def _gpu_autohealing(inputs: dict[str, Any]) -> None:
    (pool,) = [p for p in inputs["pools"] if p["name"] == "gpu"]
    pool["autoHealingEnabled"] = True


def _no_gpu_limit(inputs: dict[str, Any]) -> None:
    inputs["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "8"}}


@pytest.mark.parametrize(
    ("stack", "resource", "edit", "expected", "fragment"),
    [
        ("prod", "inference-deployment", _latest_image, {"container-image-pinned"}, "uses the `latest` tag"),
        ("dev", "inference-scaledobject", _no_fallback, {"scaledobject-safe-fallback"}, "has no `spec.fallback`"),
        ("prod", "embeddings-scaledobject", _missing_data_is_zero, {"scaledobject-safe-fallback"}, "keda#3065"),
        ("dev", "keda-release", _chart_range, {"helm-release-pins-chart-version"}, "pins `version: ~2.20.2`"),
        ("prod", "gpu-cluster", _gpu_autohealing, {"gpu-pool-autohealing-off"}, "GPU pool `gpu`"),
        (
            "prod",
            "embeddings-deployment",
            _no_gpu_limit,
            {"gpu-pool-workload-sets-gpu-limit", "gpu-scaled-workload-has-gpu-limit"},
            "batch/embeddings runs on the GPU pool",
        ),
    ],
    ids=["image-latest", "no-fallback", "null-as-zero", "chart-range", "gpu-autohealing", "no-gpu-limit"],
)
def test_a_broken_resource_is_reported_by_its_policy_only(
    recordings: dict[str, Recording],
    stack: str,
    resource: str,
    edit: Callable[[dict[str, Any]], None],
    expected: set[str],
    fragment: str,
) -> None:
    reported = run_pack(edited(recordings[stack], resource, edit), stack)

    assert set(reported) == expected
    assert any(fragment in message for messages in reported.values() for message in messages), reported


def test_production_without_protect_is_reported(record: Callable[..., Recording]) -> None:
    reported = run_pack(record("prod", protect=False), "prod")

    assert set(reported) == {"production-cluster-protected"}
    assert "Cluster `gpu-cluster` is not protected" in reported["production-cluster-protected"][0]


def test_a_pool_that_can_outgrow_the_budget_is_reported(record: Callable[..., Recording]) -> None:
    pool = {"flavor": "bm3-ai-1xlarge-h100-80-8", "minNodes": 2, "maxNodes": 6}  # prod: up to 4 nodes today
    reported = run_pack(record("prod", gpuPool=pool), "prod")

    assert set(reported) == {"gpu-pool-hourly-budget"}
    assert "can cost up to 192.00/hour" in reported["gpu-pool-hourly-budget"][0]
    assert "over the stack's budget of 160.00/hour" in reported["gpu-pool-hourly-budget"][0]


def test_the_same_graph_passes_where_the_stack_config_allows_it(recordings: dict[str, Recording]) -> None:
    """dev's policy config does not require protect: prod's graph, unprotected, passes there and not in prod."""
    prod = recordings["prod"]
    unprotected = dataclasses.replace(
        prod,
        resources=[
            dataclasses.replace(r, options={**r.options, "protect": False}) if r.type == CLUSTER else r
            for r in prod.resources
        ],
    )
    dev_budget = read_config(ROOT / "policy" / "config" / "dev.json")["gpu-pool-hourly-budget"].properties

    assert set(run_pack(unprotected, "prod")) == {"production-cluster-protected"}
    # Under dev's config only dev's smaller budget (prod's 4 nodes × 32.00 = 128.00) is exceeded, by the pool and
    # by prod's headroom on top of its floor (2 × 32.00 + 8 GPUs × 4.00 = 96.00).
    assert set(run_pack(unprotected, "dev")) == {"gpu-pool-hourly-budget", "gpu-headroom-hourly-budget"}
    assert dev_budget is not None and dev_budget["maxHourlyBudget"] < 128.0
