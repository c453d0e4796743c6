"""Timeouts that do what they say (docs/timeouts-and-recovery.md).

- The Gcore provider is served through the Pulumi Terraform bridge's Plugin Framework path, which ignores the
  engine's `customTimeouts` (pulumi/pulumi-terraform-bridge issue #827): no Gcore resource may carry them; the
  resource's own `timeouts` input (create and update only) carries the values instead.
- pulumi-kubernetes honours `customTimeouts`: the Deployments keep theirs, longer than the pool's provisioning.
- The Cluster Autoscaler never gives up on a GPU node sooner than the pool needs to provision one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from offline.engine import Recording
from renderers.gcore_cluster import GCORE_TASK_MINUTES, autoscaler_config, gcore_timeouts
from renderers.workload_specs import rollout_timeout_minutes
from stackconfig import ConfigError, load_stack_config, versions
from stackconfig.units import go_duration_seconds
from tests.conftest import cluster_name
from tests.test_gcore_schema import FIXTURES

CLUSTER = {"name": "gpu-dev", "projectName": "Default", "regionName": "Luxembourg-2", "keypair": "team"}
NO_CUSTOM_TIMEOUTS = {"create": "", "update": "", "delete": ""}


def minutes(value: str) -> float:
    seconds = go_duration_seconds(value)
    assert seconds is not None, value
    return seconds / 60


# --- the provider's schema ------------------------------------------------------------------------------------------


def test_the_cluster_sets_exactly_the_timeouts_the_provider_declares(rec: Recording) -> None:
    """The provider's documented schema (tests/fixtures/gcore, v0.34.3) declares create and update timeouts and no
    delete: a `delete` would be refused by the real SDK, a missing one leaves the deadline at the SDK's default."""
    snapshot = json.loads((FIXTURES / f"schema-v{versions.GCORE_PROVIDER_VERSION}.json").read_text())
    declared = set(snapshot["resources"]["gcore_k8sv2"]["fields"]["timeouts"]["block"]["fields"])
    cluster = rec.get(f"{cluster_name(rec)}-cluster", "gcore:index/k8sv2:K8sv2")
    assert set(cluster.inputs["timeouts"]) == declared == {"create", "update"}


# --- the program ---------------------------------------------------------------------------------------------------


def test_no_gcore_resource_carries_custom_timeouts(rec: Recording) -> None:
    gcore_resources = [r for r in rec.resources if r.type.startswith("gcore:")]
    assert gcore_resources
    for res in gcore_resources:
        assert res.options["customTimeouts"] == NO_CUSTOM_TIMEOUTS, res.name


def test_cluster_timeouts_cover_the_provider_task_cap_and_the_pool(rec: Recording) -> None:
    cluster = rec.get(f"{cluster_name(rec)}-cluster", "gcore:index/k8sv2:K8sv2")
    assert cluster.inputs["timeouts"] == {"create": "70m", "update": "105m"}
    assert set(cluster.inputs["timeouts"]) == {"create", "update"}


@pytest.mark.parametrize(
    ("provision", "expected"),
    [(5, {"create": "70m", "update": "75m"}), (35, {"create": "70m", "update": "105m"}),
     (60, {"create": "70m", "update": "130m"}), (120, {"create": "70m", "update": "130m"})],
)
def test_cluster_timeouts_follow_the_pool_up_to_the_task_cap(provision: int, expected: dict[str, str]) -> None:
    cfg = load_stack_config({"cluster": CLUSTER, "gpuPool": {"provisionMinutes": provision}})
    timeouts = gcore_timeouts(cfg.gpu_pool)
    assert timeouts == expected
    # Never shorter than one Gcore task: the provider's own 60-minute wait is what gives up, not the deadline.
    assert all(minutes(v) > GCORE_TASK_MINUTES for v in timeouts.values())


def test_a_slower_pool_reaches_the_recorded_cluster_and_deployments(record: Callable[..., Recording]) -> None:
    rec = record("dev", gpuPool={"flavor": "bm3-ai-1xlarge-h100-80-8", "maxNodes": 2, "provisionMinutes": 50})
    cluster = rec.get("gpu-dev-cluster", "gcore:index/k8sv2:K8sv2")
    assert cluster.inputs["timeouts"] == {"create": "70m", "update": "120m"}
    (deployment,) = rec.of_type("kubernetes:apps/v1:Deployment")
    assert deployment.options["customTimeouts"] == {"create": "60m", "update": "60m", "delete": ""}


def test_deployments_keep_custom_timeouts_longer_than_the_pool_provisioning(rec: Recording) -> None:
    """pulumi-kubernetes honours customTimeouts; its 10-minute default would fail while a GPU node boots."""
    deployments = [d for d in rec.of_type("kubernetes:apps/v1:Deployment") if d.name.removesuffix("-deployment")
                   in rec.outputs["workloads"]]
    assert len(deployments) == len(rec.outputs["workloads"])
    for deployment in deployments:
        assert deployment.options["customTimeouts"] == {"create": "45m", "update": "45m", "delete": ""}
    # The headroom placeholders are not awaited at all (pulumi.com/skipAwait): nothing waits for their node.
    for placeholder in rec.of_type("kubernetes:apps/v1:Deployment"):
        if placeholder not in deployments:
            assert placeholder.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    assert rollout_timeout_minutes(35) == 45
    assert rollout_timeout_minutes(60) == 70


# --- the Cluster Autoscaler waits for a node at least as long as the pool needs ------------------------------------


@pytest.mark.parametrize("provision", [5, 20, 35, 60, 120])
def test_derived_max_node_provision_time_is_never_below_the_pool(provision: int) -> None:
    cfg = load_stack_config({"cluster": CLUSTER, "gpuPool": {"provisionMinutes": provision}})
    flags = autoscaler_config(cfg.gpu_pool, cfg.workloads, cfg.cluster.autoscaler)
    assert minutes(flags["max-node-provision-time"]) >= provision


@pytest.mark.parametrize("value", ["35m", "1h", "2100s", "40m30s"])
def test_an_explicit_provision_time_at_least_the_pool_is_accepted(value: str) -> None:
    cfg = load_stack_config({"cluster": {**CLUSTER, "autoscaler": {"max-node-provision-time": value}}})
    assert autoscaler_config(cfg.gpu_pool, cfg.workloads, cfg.cluster.autoscaler)["max-node-provision-time"] == value


@pytest.mark.parametrize(
    ("value", "message", "fix"),
    [("15m", "shorter than gpuPool.provisionMinutes (35)", "35m"), ("2099s", "shorter than", "35m"),
     ("35 minutes", "not a duration", "20m")],
)
def test_an_explicit_provision_time_below_the_pool_is_refused(value: str, message: str, fix: str) -> None:
    raw: dict[str, Any] = {"cluster": {**CLUSTER, "autoscaler": {"max-node-provision-time": value}}}
    with pytest.raises(ConfigError) as err:
        load_stack_config(raw)
    (problem,) = err.value.problems
    assert problem.key == "cluster.autoscaler.max-node-provision-time"
    assert problem.value == value and message in problem.message and fix in problem.fix
