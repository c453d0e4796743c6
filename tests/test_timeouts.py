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
from renderers.workload_specs import rollout_rounds
from stackconfig import ConfigError, load_stack_config
from stackconfig.units import go_duration_seconds
from tests.conftest import CLUSTER_RESOURCE, ROOT
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
    its timeouts through that class, gpu_platform/cluster.py, so a delete timeout cannot reach the provider)."""
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
    timeouts = gcore_timeouts(cfg.pools)
    assert timeouts == expected
    # Never shorter than one Gcore task: the provider's own 60-minute wait is what gives up, not the deadline.
    assert all(minutes(v) > GCORE_TASK_MINUTES for v in timeouts.values())


def test_a_slower_pool_reaches_the_recorded_cluster_and_deployments(record: Callable[..., Recording]) -> None:
    rec = record("dev", gpuPool={"flavor": "bm3-ai-1xlarge-h100-80-8", "maxNodes": 2, "provisionMinutes": 50})
    cluster = rec.get("gpu-cluster", "gcore:index/k8sv2:K8sv2")
    assert cluster.inputs["timeouts"] == {"create": "70m", "update": "120m"}
    (deployment,) = rec.of_type("kubernetes:apps/v1:Deployment")
    # dev's inference: 16 replicas, no startup probe, 60 s grace: a round is 1 + 10 min, at most 7 rounds.
    assert deployment.options["customTimeouts"] == {"create": "61m", "update": "127m", "delete": ""}
    assert deployment.inputs["spec"]["progressDeadlineSeconds"] == 61 * 60


def test_deployments_wait_for_the_pool_and_every_round_of_their_rollout(rec: Recording) -> None:
    """pulumi-kubernetes honours customTimeouts; its 10-minute default would fail while a GPU node boots, and a
    timeout that ignores the rounds of a rolling update fails `up` while the rollout goes on (issue 17)."""
    deployments = [d for d in rec.of_type("kubernetes:apps/v1:Deployment") if d.name.removesuffix("-deployment")
                   in rec.outputs["workloads"]]
    assert len(deployments) == len(rec.outputs["workloads"])
    expected = {  # provision 35 + rounds × (grace + 10 min pull + startup budget)
        ("dev", "inference"): (35 + 11, 35 + 7 * 11),
        # 14 vLLM pods, a 160 s grace (the serving profile's drain: 3 min) and a 30-minute budget: 336 minutes
        ("prod", "inference"): (35 + 43, 35 + 7 * 43),
        ("prod", "embeddings"): (35 + 11, 35 + 7 * 11),
    }
    for deployment in deployments:
        create, update = expected[(rec.stack, deployment.name.removesuffix("-deployment"))]
        assert deployment.options["customTimeouts"] == {"create": f"{create}m", "update": f"{update}m", "delete": ""}
        spec = deployment.inputs["spec"]
        assert spec["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": "25%"}
        assert spec["progressDeadlineSeconds"] == create * 60  # one round, a new node included
    # The headroom placeholders are not awaited at all (pulumi.com/skipAwait): nothing waits for their node.
    for placeholder in rec.of_type("kubernetes:apps/v1:Deployment"):
        if placeholder not in deployments:
            assert placeholder.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"


def test_the_rounds_follow_kubernetes_rounding() -> None:
    """A quarter of the replicas, rounded down, at least one: 1-7 replicas go one by one, 8 two by two..."""
    assert [rollout_rounds(n) for n in (1, 2, 3, 4, 7, 8, 11, 16, 64)] == [1, 2, 3, 4, 7, 7, 7, 7, 7]
    # A quarter of the replicas at any count up to maxReplicas; with 1 at a time 16 pods would be 16 rounds.
    assert max(-(-r // max(1, r // 4)) for r in range(1, 17)) == rollout_rounds(16)


def test_the_deploy_job_outlasts_the_longest_wait_of_each_stack(rec: Recording) -> None:
    """CI would kill a `pulumi up` that is still waiting (and leave pending operations): the deploy job's timeout
    covers the first `up` (cluster, releases, first pods) and the longest rollout (releases, then a Deployment)."""
    import yaml

    jobs = yaml.safe_load((ROOT / ".github" / "workflows" / "deploy.yml").read_text())["jobs"]
    job = next(j for j in jobs.values() if j.get("env", {}).get("STACK", "").endswith(f"/{rec.stack}"))
    releases = max(r.inputs["timeout"] for r in rec.of_type("kubernetes:helm.sh/v3:Release")) / 60
    deployments = [d.options["customTimeouts"] for d in rec.of_type("kubernetes:apps/v1:Deployment")]
    create = minutes(rec.get("gpu-cluster").inputs["timeouts"]["create"]) + releases + max(
        minutes(t["create"]) for t in deployments if t["create"])
    rollout = releases + max(minutes(t["update"]) for t in deployments if t["update"])
    assert job["timeout-minutes"] >= max(create, rollout), (rec.stack, create, rollout)
    assert job["timeout-minutes"] <= 360  # GitHub-hosted runners end a job at 6 hours


# --- the Cluster Autoscaler waits for a node at least as long as the pool needs ------------------------------------


@pytest.mark.parametrize("provision", [25, 30, 35, 60, 120])
def test_derived_max_node_provision_time_is_never_below_the_pool(provision: int) -> None:
    cfg = load_stack_config({"cluster": CLUSTER, "gpuPool": {"provisionMinutes": provision}})
    flags = autoscaler_config(cfg.pools, cfg.workloads, cfg.cluster.autoscaler)
    assert minutes(flags["max-node-provision-time"]) >= provision


@pytest.mark.parametrize("value", ["35m", "1h", "2100s", "40m30s"])
def test_an_explicit_provision_time_at_least_the_pool_is_accepted(value: str) -> None:
    cfg = load_stack_config({"cluster": {**CLUSTER, "autoscaler": {"max-node-provision-time": value}}})
    assert autoscaler_config(cfg.pools, cfg.workloads, cfg.cluster.autoscaler)["max-node-provision-time"] == value


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
