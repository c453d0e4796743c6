"""The whole policy pack over the graphs the program really builds, with each stack's policy config.

tests/test_policies.py proves each rule on hand-made resources; this proves the pack and the program agree:
`pulumi preview --policy-pack policy --policy-pack-config policy/config/<stack>.json` must pass on dev and
prod as they are (a false positive would block every pull request), and each policy must still fire when the
recorded graph is broken the way a careless change would break it. Resources reach the policies the way the
analyzer builds them (pulumi_policy/policy.py `Analyze`, `AnalyzeStack`): props deserialized with secrets as
plain values, numbers as floats, options from the registration (protect, timeouts in seconds), parents and
dependencies as resource objects.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy

from offline.engine import ROOT, RecordedResource, Recording
from policy import gpu_policies as gp
from tests.test_policies import CLUSTER, DEPLOYMENT, RELEASE, SCALED_OBJECT, _collect, engine
from tests.test_schemas import unwrap

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|m|s)")
_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0}


def policy_config(stack: str) -> dict[str, dict[str, Any]]:
    """Per-policy properties from policy/config/<stack>.json, as the CLI hands them to the pack."""
    raw = json.loads((ROOT / "policy" / "config" / f"{stack}.json").read_text())
    return {name: values for name, values in raw.items() if isinstance(values, dict)}


def seconds(duration: str) -> float:
    """A Pulumi custom timeout (`90m`, `1h30m`) in seconds, as the analyzer receives it; '' is 0."""
    return sum(float(n) * _SECONDS[unit] for n, unit in _DURATION.findall(duration))


def props(res: RecordedResource) -> Any:
    """Secrets as their values: `Analyze` deserializes props without keeping the secret marker."""
    return unknown_checking_proxy(engine(unwrap(copy.deepcopy(dict(res.inputs)))))


def options(res: RecordedResource) -> PolicyResourceOptions:
    opts, timeouts = res.options, res.options["customTimeouts"]
    return PolicyResourceOptions(
        protect=opts["protect"],
        ignore_changes=list(opts["ignoreChanges"]),
        delete_before_replace=opts["deleteBeforeReplace"],
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(*(seconds(timeouts[k]) for k in ("create", "update", "delete"))),
        additional_secret_outputs=list(opts["additionalSecretOutputs"]),
        parent=res.parent or None,
    )


def provider(rec: Recording, res: RecordedResource) -> PolicyProviderResource | None:
    if not res.provider:
        return None  # the package's default provider
    prov = rec.by_urn(res.provider.rsplit("::", 1)[0])
    return PolicyProviderResource(prov.type, props(prov), prov.urn, prov.name)


def stack_resources(rec: Recording) -> list[PolicyResource]:
    """Every resource with its parent and dependencies linked, as `AnalyzeStack` links them."""
    built = {
        r.urn: PolicyResource(r.type, props(r), r.urn, r.name, options(r), provider(rec, r), None, [], {})
        for r in rec.resources
    }
    for r in rec.resources:
        policy_resource = built[r.urn]
        policy_resource.parent = built.get(r.parent)
        policy_resource.dependencies = [built[d] for d in r.dependencies if d in built]
        policy_resource.property_dependencies = {
            key: [built[d] for d in urns if d in built] for key, urns in r.property_dependencies.items()
        }
    return list(built.values())


def run_pack(rec: Recording, stack: str) -> dict[str, list[str]]:
    """Messages per policy name from every policy of the pack over `rec`, with `stack`'s policy config."""
    config = policy_config(stack)
    reported: dict[str, list[str]] = {}
    for policy in gp.POLICIES:
        messages: list[str] = []
        if isinstance(policy, ResourceValidationPolicy):
            for res in rec.resources:
                args = ResourceValidationArgs(
                    res.type, props(res), res.urn, res.name, options(res), provider(rec, res), config.get(policy.name)
                )
                messages += [message for message, _ in _collect(policy, args)]
        else:
            args = StackValidationArgs(stack_resources(rec), config.get(policy.name))
            messages += [message for message, _ in _collect(policy, args)]
        if messages:
            reported[policy.name] = messages
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
    timeouts = options(recordings["prod"].get("gpu-prod-cluster")).custom_timeouts
    assert (timeouts.create_seconds, timeouts.update_seconds, timeouts.delete_seconds) == (5400, 5400, 3600)
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
        ("prod", "gpu-prod-cluster", _gpu_autohealing, {"gpu-pool-autohealing-off"}, "GPU pool `gpu`"),
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
    assert "Cluster `gpu-prod-cluster` is not protected" in reported["production-cluster-protected"][0]


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
    dev_budget = policy_config("dev")["gpu-pool-hourly-budget"]["maxHourlyBudget"]

    assert set(run_pack(unprotected, "prod")) == {"production-cluster-protected"}
    # Under dev's config only dev's smaller budget (prod's 4 nodes × 32.00 = 128.00) is exceeded.
    assert set(run_pack(unprotected, "dev")) == {"gpu-pool-hourly-budget"}
    assert dev_budget < 128.0
