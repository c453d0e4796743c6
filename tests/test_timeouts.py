"""Timeouts that do what they say (docs/timeouts-and-recovery.md).

- The Gcore provider is served by the Any Terraform Provider, which bridges it over the Terraform plugin protocol
  (the bridge's Plugin Framework path) and ignores the engine's `customTimeouts` (pulumi/pulumi-terraform-bridge
  issue #827): no Gcore resource may carry them; the resource's own `timeouts` input (create and update only, as
  the generated SDK has it) carries the values instead.
- pulumi-kubernetes honours `customTimeouts`: the Deployments keep theirs, longer than the pool's provisioning.
- The Cluster Autoscaler never gives up on a GPU node sooner than the pool needs to provision one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi.runtime.settings
import pytest

from offline.engine import Recording
from renderers.gcore_cluster import GCORE_TASK_MINUTES, autoscaler_config, gcore_timeouts
from renderers.workload_specs import rollout_timeout_minutes
from stackconfig import ConfigError, load_stack_config
from stackconfig.units import go_duration_seconds
from tests.conftest import CLUSTER_RESOURCE
from tests.test_gcore_sdk import RecordingMonitor, gcore, gpu_pool, inputs_of

CLUSTER = {"name": "gpu-dev", "projectName": "Default", "regionName": "Luxembourg-2", "keypair": "team"}
NO_CUSTOM_TIMEOUTS = {"create": "", "update": "", "delete": ""}


def minutes(value: str) -> float:
    seconds = go_duration_seconds(value)
    assert seconds is not None, value
    return seconds / 60


# --- the generated SDK's `timeouts` argument --------------------------------------------------------------------


@pytest.fixture
def monitor() -> RecordingMonitor:
    """The recording mock monitor of tests/test_gcore_sdk.py."""
    mon = RecordingMonitor()
    pulumi.runtime.set_mocks(mon.mocks, project="gpu", stack="test", preview=False, monitor=mon)
    pulumi.runtime.settings.SETTINGS.package_refs = {}
    return mon


def test_k8sv2_takes_create_and_update_timeouts(monitor: RecordingMonitor) -> None:
    @pulumi.runtime.test
    def build() -> None:
        gcore.K8sv2("args", name="a", keypair="k", version="v1.35.3", pools=[gpu_pool()],
                    timeouts=gcore.K8sv2TimeoutsArgs(create="70m", update="105m"))
        gcore.K8sv2("dict", name="d", keypair="k", version="v1.35.3", pools=[gpu_pool()],
                    timeouts={"create": "70m"})
        gcore.K8sv2("via-args", gcore.K8sv2Args(keypair="k", version="v1.35.3", pools=[gpu_pool()],
                                                 timeouts=gcore.K8sv2TimeoutsArgs(update="90m")))

    build()

    by_name = {r.name: inputs_of(r) for r in monitor.registrations if r.type == "gcore:index/k8sv2:K8sv2"}
    assert by_name["args"]["timeouts"] == {"create": "70m", "update": "105m"}
    assert by_name["dict"]["timeouts"] == {"create": "70m"}
    assert by_name["via-args"]["timeouts"] == {"update": "90m"}


def test_k8sv2_refuses_a_delete_timeout(monitor: RecordingMonitor) -> None:
    """The schema has create and update only; the generated Args class refuses anything else (the program builds
    its timeouts through that class, components/cluster.py, so a delete timeout cannot reach the provider)."""
    with pytest.raises(TypeError, match="delete"):
        gcore.K8sv2TimeoutsArgs(create="70m", delete="60m")
    assert [r for r in monitor.registrations if r.type == "gcore:index/k8sv2:K8sv2"] == []


# --- the program ---------------------------------------------------------------------------------------------------


def test_no_gcore_resource_carries_custom_timeouts(rec: Recording) -> None:
    gcore_resources = [r for r in rec.resources if r.type.startswith("gcore:")]
    assert gcore_resources
    for res in gcore_resources:
        assert res.options["customTimeouts"] == NO_CUSTOM_TIMEOUTS, res.name


def test_cluster_timeouts_cover_the_provider_task_cap_and_the_pool(rec: Recording) -> None:
    cluster = rec.get(CLUSTER_RESOURCE, "gcore:index/k8sv2:K8sv2")
    assert cluster.inputs["timeouts"] == {"create": "70m", "update": "105m"}
    assert set(cluster.inputs["timeouts"]) == {"create", "update"}


@pytest.mark.parametrize(
    ("provision", "expected"),
    [(25, {"create": "70m", "update": "95m"}), (35, {"create": "70m", "update": "105m"}),
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
    cluster = rec.get("gpu-cluster", "gcore:index/k8sv2:K8sv2")
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


@pytest.mark.parametrize("provision", [25, 30, 35, 60, 120])
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
