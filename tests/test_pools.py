"""Several GPU pools in one cluster (issue 19), on the real program's recorded graph.

The two-pool stack is prod as docs/gpu-pools.md migrates it: its pool moved into `gpuPools` under its own name
(`gpu`, on-demand H100, for `inference`), plus a `spot` pool of spot H100s for `embeddings`, which says it tolerates
interruption. Each check reads the recording (the inputs Pulumi would send), never the config objects.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from capacity import cli as capacity_cli
from delivery import guard, policy_config
from delivery.policy_check import read_config, run_policies
from offline.engine import ROOT, Recording, record_stack
from offline.plan import build_plan, render_yaml
from renderers import chart_values as cv
from renderers import rule_groups as alerts
from stackconfig import ConfigError, StackConfig, load_stack_config
from stacknames import GPU_READY_TAINT_KEY, GPU_READY_TAINT_SPEC
from tests.conftest import CLUSTER_RESOURCE
from tests.prometheus_harness import dump_yaml, promtool
from tests.test_alerts import available, hpa, ksm, pool_node, render

SPOT_FLAVOR = "bm3-ai-ndp2-spot-1xlarge-h100-80-8"
SPOT_TAINT = "platform.gcore-gpu/spot"
POOL_LABEL = "platform.gcore-gpu/pool"


def stack_file(stack: str) -> dict[str, Any]:
    raw = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {k.removeprefix("gpu-autoscaling:"): v for k, v in raw.items() if k.startswith("gpu-autoscaling:")}


def as_pool_list(stack: str) -> dict[str, Any]:
    """The stack's one `gpuPool`, moved into `gpuPools` as docs/gpu-pools.md says (its name: `gpu`, the default)."""
    return {"gpuPool": None, "gpuPools": [{"name": "gpu", **stack_file(stack)["gpuPool"]}]}


def two_pools() -> dict[str, Any]:
    """Prod with an on-demand pool for `inference` and a spot pool for `embeddings` (docs/gpu-pools.md)."""
    cfg = stack_file("prod")
    workloads = copy.deepcopy(cfg["workloads"])
    by_name = {w["name"]: w for w in workloads}
    by_name["inference"]["pool"] = "gpu"
    by_name["embeddings"].update(pool="spot", interruptible=True)
    spot = {"name": "spot", "flavor": SPOT_FLAVOR, "minNodes": 1, "maxNodes": 2, "pricePerGpuHour": 1.6,
            "labels": {POOL_LABEL: "spot", "gpu.nvidia.com/model": "h100"}}
    return {**as_pool_list("prod"), "gpuPools": [*as_pool_list("prod")["gpuPools"], spot], "workloads": workloads}


def with_changes(base: dict[str, Any], **changes: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """`base` deep-copied, each change applied to the copy's project key of that name."""
    out = copy.deepcopy(base)
    for key, change in changes.items():
        change(out[key])
    return out


@pytest.fixture(scope="module")
def two() -> Recording:
    return record_stack("prod", two_pools())


def cluster_pools(rec: Recording) -> dict[str, dict[str, Any]]:
    """The GPU pools sent to Gcore, by name (the system pool left out: it runs a VM flavor)."""
    pools = rec.get(CLUSTER_RESOURCE, "gcore:index/k8sv2:K8sv2").inputs["pools"]
    return {p["name"]: p for p in pools if p["flavorId"].startswith("bm")}


# ---------------------------------------------------------------------------------------------------------------
# The old key keeps working, and moving it into the list changes nothing


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_stacks_one_pool_moved_into_gpu_pools_is_the_same_plan(stack: str, recordings: dict[str, Recording]) -> None:
    """Same logical names (so no resource is replaced by the move), the same pool name and fields sent to Gcore,
    the same outputs: the migration in docs/gpu-pools.md is a no-op for `pulumi up`."""
    moved = render_yaml(build_plan(record_stack(stack, as_pool_list(stack))))
    # Only the alerts' fix texts differ: they name the key the stack file now has (an in-place text change).
    assert "gpuPools[0].maxNodes" in moved
    assert moved.replace("gpuPools[0].", "gpuPool.") == render_yaml(build_plan(recordings[stack]))


# ---------------------------------------------------------------------------------------------------------------
# Each pool sent to Gcore with its own bounds, labels and taints


def test_every_pool_reaches_gcore_with_its_own_bounds_labels_and_taints(two: Recording) -> None:
    pools = cluster_pools(two)
    assert list(pools) == ["gpu", "spot"]
    gpu, spot = pools["gpu"], pools["spot"]
    assert (gpu["flavorId"], gpu["minNodeCount"], gpu["maxNodeCount"]) == ("bm3-ai-1xlarge-h100-80-8", 2, 4)
    assert (spot["flavorId"], spot["minNodeCount"], spot["maxNodeCount"]) == (SPOT_FLAVOR, 1, 2)
    assert gpu["labels"][POOL_LABEL] == "gpu" and spot["labels"][POOL_LABEL] == "spot"
    # The spot flavor gives the pool the spot taint without the stack saying so; the on-demand pool has none.
    # Each pool's nodes also register with the GPU-ready gate's start-up taint (renderers/gpu_ready_gate.py).
    gate = {GPU_READY_TAINT_KEY: GPU_READY_TAINT_SPEC}
    assert spot["taints"] == {"nvidia.com/gpu": "present:NoSchedule", SPOT_TAINT: "true:NoSchedule", **gate}
    assert gpu["taints"] == {"nvidia.com/gpu": "present:NoSchedule", **gate}
    assert not gpu["autoHealingEnabled"] and not spot["autoHealingEnabled"]


# ---------------------------------------------------------------------------------------------------------------
# Each workload's pods can only land on its pool (Kubernetes' nodeSelector and taint rules)


def tolerates(tolerations: list[Mapping[str, Any]], key: str, value: str, effect: str) -> bool:
    """Kubernetes' `Toleration.ToleratesTaint` (k8s.io/api core/v1 toleration.go): an empty effect matches every
    effect, an empty key with `Exists` every key, `Exists` any value, `Equal` (the default) the same value."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != effect:
            continue
        if t.get("key") and t["key"] != key:
            continue
        if t.get("operator", "Equal") == "Exists" or t.get("value", "") == value:
            return True
    return False


def lands_on(pod: Mapping[str, Any], pool: Mapping[str, Any], gate_open: bool = True) -> bool:
    """Whether the scheduler may bind `pod` to a node of `pool`: its nodeSelector is among the pool's labels and
    it tolerates every NoSchedule/NoExecute taint of the pool (NodeAffinity and TaintToleration filters); with
    `gate_open`, once the GPU-ready gate has removed the start-up taint from the node."""
    labels = pool.get("labels") or {}
    if any(labels.get(k) != v for k, v in (pod.get("nodeSelector") or {}).items()):
        return False
    for key, spec in (pool.get("taints") or {}).items():
        if gate_open and key == GPU_READY_TAINT_KEY:
            continue
        value, _, effect = spec.rpartition(":")
        if effect in ("NoSchedule", "NoExecute") and not tolerates(pod.get("tolerations") or [], key, value, effect):
            return False
    return True


def pod_specs(rec: Recording) -> dict[str, dict[str, Any]]:
    return {d.name.removesuffix("-deployment"): d.inputs["spec"]["template"]["spec"]
            for d in rec.of_type("kubernetes:apps/v1:Deployment")}


def test_each_workloads_pods_can_land_only_on_its_pool(two: Recording) -> None:
    pools, pods = cluster_pools(two), pod_specs(two)
    expected = {"inference": {"gpu"}, "embeddings": {"spot"}, "headroom": {"gpu"}}
    assert {name: {p for p, pool in pools.items() if lands_on(pods[name], pool)} for name in expected} == expected
    # Before the gate opens, none of them lands anywhere: the Pending pods wait for the GPUs to be validated.
    assert not any(lands_on(pods[name], pool, gate_open=False) for name in expected for pool in pools.values())
    # Each pool's gate lands on its own pool's nodes while they still carry the start-up taint, and only there.
    gates = {d.name: d.inputs["spec"]["template"]["spec"] for d in two.of_type("kubernetes:apps/v1:DaemonSet")}
    assert {name: {p for p, pool in pools.items() if lands_on(spec, pool, gate_open=False)}
            for name, spec in gates.items()} == {"gpu-operator-gate-gpu": {"gpu"}, "gpu-operator-gate-spot": {"spot"}}


def test_pools_that_state_no_labels_each_get_their_own(two: Recording) -> None:
    """The default label is the pool's name, so two pools that state none still keep their workloads apart."""
    bare = two_pools()
    for pool in bare["gpuPools"]:
        pool.pop("labels", None)
    rec = record_stack("prod", bare)
    pools, pods = cluster_pools(rec), pod_specs(rec)
    assert {name: p["labels"] for name, p in pools.items()} == {name: {POOL_LABEL: name} for name in ("gpu", "spot")}
    assert {name: {p for p, pool in pools.items() if lands_on(pods[name], pool)}
            for name in ("inference", "embeddings")} == {"inference": {"gpu"}, "embeddings": {"spot"}}


def test_a_workload_without_the_interruptible_opt_in_cannot_land_on_spot_even_with_its_labels(two: Recording) -> None:
    """The spot taint, not only the label, keeps on-demand work off spot capacity: inference selecting the spot
    pool's labels still does not tolerate its taint."""
    pools, inference = cluster_pools(two), pod_specs(two)["inference"]
    assert not lands_on({**inference, "nodeSelector": pools["spot"]["labels"]}, pools["spot"])


def test_the_oracle_can_fail() -> None:
    """The scheduler stand-in above refuses what Kubernetes refuses (so the placement test can fail)."""
    pool = {"labels": {POOL_LABEL: "spot"}, "taints": {SPOT_TAINT: "true:NoSchedule"}}
    pod = {"nodeSelector": {POOL_LABEL: "spot"}, "tolerations": []}
    assert not lands_on(pod, pool)
    assert lands_on({**pod, "tolerations": [{"key": SPOT_TAINT, "operator": "Equal", "value": "true"}]}, pool)
    assert not lands_on({**pod, "tolerations": [{"key": SPOT_TAINT, "value": "false"}]}, pool)
    assert lands_on({**pod, "tolerations": [{"operator": "Exists"}]}, pool)
    assert not lands_on({"nodeSelector": {POOL_LABEL: "gpu"}, "tolerations": [{"operator": "Exists"}]}, pool)


def test_spot_pods_suit_being_preempted(two: Recording) -> None:
    """On spot: a lost node's pods are evicted after 30 s instead of Kubernetes' 300 s (renderers/placement.py),
    and the PodDisruptionBudget lets a reclaimed node's worth of pods go at once; on-demand keeps one at a time."""
    pods = pod_specs(two)
    lost = {t["key"]: t.get("tolerationSeconds")
            for t in pods["embeddings"]["tolerations"] if t["effect"] == "NoExecute"}
    assert lost == {"node.kubernetes.io/not-ready": 30, "node.kubernetes.io/unreachable": 30}
    assert not [t for t in pods["inference"]["tolerations"] if t["effect"] == "NoExecute"]
    pdb = {name: two.get(f"{name}-pdb").inputs["spec"] for name in ("inference", "embeddings")}
    assert pdb["inference"]["maxUnavailable"] == 1 and "unhealthyPodEvictionPolicy" not in pdb["inference"]
    assert pdb["embeddings"]["maxUnavailable"] == 8 // 2  # a spot node of 8 GPUs holds 4 pods of 2 GPUs
    assert pdb["embeddings"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"


def test_the_gpu_operator_runs_on_every_pool(two: Recording) -> None:
    """Its operands must reach the spot nodes too, or their GPUs are never allocatable."""
    release = two.get("gpu-operator-release", "kubernetes:helm.sh/v3:Release")
    tolerations = release.inputs["values"]["daemonsets"]["tolerations"]
    for pool in cluster_pools(two).values():
        for key, spec in pool["taints"].items():
            value, _, effect = spec.rpartition(":")
            assert tolerates(tolerations, key, value, effect), (pool["name"], key)


# ---------------------------------------------------------------------------------------------------------------
# Outputs per pool


def test_outputs_describe_each_pool_and_keep_gpu_pool_for_one_pool_consumers(two: Recording) -> None:
    out = two.outputs
    pools = out["gpuPools"]
    assert list(pools) == ["gpu", "spot"]
    assert (pools["gpu"]["spot"], pools["spot"]["spot"]) == (False, True)
    assert pools["gpu"]["workloads"] == ["inference"] and pools["spot"]["workloads"] == ["embeddings"]
    assert pools["spot"]["hourlyCost"] == {"min": 1 * 8 * 1.6, "max": 2 * 8 * 1.6}
    assert pools["gpu"]["hourlyCost"] == {"min": 2 * 8 * 4.0, "max": 4 * 8 * 4.0}
    assert pools["spot"]["taints"][SPOT_TAINT] == "true:NoSchedule"
    assert pools["gpu"]["headroom"]["deployment"] == "gpu-headroom" and pools["spot"]["headroom"] is None
    assert out["gpuPool"]["name"] == "gpu" and out["gpuPool"]["maxNodes"] == 4
    assert {name: w["pool"] for name, w in out["workloads"].items()} == {"inference": "gpu", "embeddings": "spot"}


def test_headroom_placeholders_are_per_pool_and_the_first_keeps_its_names(recordings: dict[str, Recording]) -> None:
    """Headroom on both pools: the first pool's placeholders keep the one-pool names (no replacement when a stack
    moves to gpuPools), the second's carry its pool's name and select its nodes."""
    base = two_pools()
    base["gpuPools"][1]["headroom"] = {"gpus": 2}
    rec = record_stack("prod", base)
    names = {d.name for d in rec.of_type("kubernetes:apps/v1:Deployment")} - {"inference-deployment",
                                                                               "embeddings-deployment"}
    assert names == {"headroom-deployment", "headroom-spot-deployment"}
    assert recordings["prod"].get("headroom-deployment").inputs["metadata"]["name"] == "gpu-headroom"
    spot = rec.get("headroom-spot-deployment").inputs
    assert spot["metadata"]["name"] == "gpu-headroom-spot"
    pools = cluster_pools(rec)
    assert {p for p, pool in pools.items() if lands_on(spot["spec"]["template"]["spec"], pool)} == {"spot"}
    # 2 GPUs of embeddings-sized (2-GPU) placeholders on the spot pool.
    assert spot["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"


# ---------------------------------------------------------------------------------------------------------------
# Bad input: refused with the key, the value and the fix, before any resource is registered


def _set_pool(i: int, **values: Any) -> Callable[[list[dict[str, Any]]], None]:
    return lambda pools: pools[i].update(values)


def _set_workload(name: str, **values: Any) -> Callable[[list[dict[str, Any]]], None]:
    return lambda ws: next(w for w in ws if w["name"] == name).update(values)


def _drop_workload_key(name: str, key: str) -> Callable[[list[dict[str, Any]]], None]:
    return lambda ws: next(w for w in ws if w["name"] == name).pop(key)


BAD: dict[str, tuple[dict[str, Callable[[Any], Any]], str, str, str]] = {
    # case: (changes, key, the value as shown, a phrase of the fix)
    "unknown-pool": ({"workloads": _set_workload("embeddings", pool="spto")}, "workloads[1].pool", "'spto'",
                     "did you mean 'spot'? use one of: gpu, spot"),
    "name-twice": ({"gpuPools": _set_pool(1, name="gpu")}, "gpuPools[1].name", "'gpu'",
                   "give every GPU pool its own name"),
    "too-big": ({"workloads": _set_workload("embeddings", gpusPerPod=16)}, "workloads[1].gpusPerPod", "16",
                "use at most 8 GPUs per pod, or choose a pool with larger nodes"),
    "headroom-misfit": ({"gpuPools": _set_pool(1, headroom={"gpus": 8})}, "gpuPools[1].headroom.gpus", "8",
                        "lower gpuPools[1].headroom.gpus to at most 6, or raise gpuPools[1].minNodes"),
    "no-pool-named": ({"workloads": _drop_workload_key("inference", "pool")}, "workloads[0].pool", "(not set)",
                      "set workloads[0].pool to one of: gpu, spot"),
    "spot-not-interruptible": ({"workloads": _set_workload("embeddings", interruptible=False)}, "workloads[1].pool",
                               "'spot'", "set workloads[1].interruptible: true if it does"),
    "shared-labels": ({"gpuPools": _set_pool(1, labels={POOL_LABEL: "gpu", "gpu.nvidia.com/model": "h100"})},
                      "gpuPools[0].labels", "platform.gcore-gpu/pool", "give every pool a label of its own"),
    "bounds": ({"gpuPools": _set_pool(1, minNodes=2, maxNodes=2)}, "gpuPools[1].maxNodes", "2",
               "set gpuPools[1].maxNodes to at least 3"),
    "spot-contradicted": ({"gpuPools": _set_pool(1, spot=False)}, "gpuPools[1].spot", "False",
                          "remove gpuPools[1].spot (it is derived from the flavor)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_pool_input_is_refused_with_key_value_and_fix_and_registers_nothing(case: str) -> None:
    changes, key, value, fix = BAD[case]
    seen = Recording("prod")
    with pytest.raises(ConfigError) as exc:
        record_stack("prod", with_changes(two_pools(), **changes), into=seen)
    problems = [p for p in exc.value.problems if p.key == key]
    assert problems, f"no problem at {key}: {exc.value}"
    shown = str(problems[0])
    assert value in shown and fix in shown, shown
    assert seen.resources == []


def test_the_old_key_beside_the_new_one_is_refused() -> None:
    with pytest.raises(ConfigError) as exc:
        record_stack("prod", {**two_pools(), "gpuPool": stack_file("prod")["gpuPool"]})
    (problem,) = [p for p in exc.value.problems if p.key == "gpuPool"]
    assert "is set beside gpuPools" in problem.message and "move gpuPool into gpuPools" in problem.fix


# ---------------------------------------------------------------------------------------------------------------
# The preview guard: replacing ANY GPU pool is refused, not only the first


@pytest.mark.parametrize(("change", "why"), [
    ({"flavor": "bm3-ai-ndp2-1xlarge-h100-80-8", "spot": False}, "flavorId"),
    ({"publicIpv4": True}, "isPublicIpv4"),
    ({"name": "spot2"}, "would be deleted"),
])
def test_the_guard_blocks_recreating_the_second_gpu_pool(two: Recording, change: dict[str, Any], why: str) -> None:
    head = two_pools()
    head["gpuPools"][1].update(change)
    if "name" in change:
        next(w for w in head["workloads"] if w["name"] == "embeddings")["pool"] = change["name"]
    findings = guard.check_plans(build_plan(two), build_plan(record_stack("prod", head)))
    blocking = [f for f in findings if f.blocking]
    assert [f.subject for f in blocking] == ["pool `spot`"], findings
    assert why in blocking[0].detail


def test_the_guard_passes_resizing_the_second_pool(two: Recording) -> None:
    head = two_pools()
    head["gpuPools"][1]["maxNodes"] = 3
    findings = guard.check_plans(build_plan(two), build_plan(record_stack("prod", head)))
    assert findings and not [f for f in findings if f.blocking]
    assert [f.subject for f in findings] == ["pool `spot`"]


# ---------------------------------------------------------------------------------------------------------------
# Alerts per pool


def test_each_pool_has_its_own_at_max_and_pending_alerts(two: Recording) -> None:
    """`GpuPoolAtMaxNodes` per pool at that pool's maxNodes over its own workloads; a Pending embeddings pod is the
    spot pool's (its provisioning time and fix), never counted again as the first pool's."""
    rules = [r for g in two.get("monitoring-gpu-rules").inputs["spec"]["groups"] for r in g["rules"]]
    at_max = {r["labels"]["pool"]: r["expr"] for r in rules if r.get("alert") == "GpuPoolAtMaxNodes"}
    assert at_max == {
        pool: f'(workload:replicas_desired:max{{pool="{pool}"}} > workload:replicas_available:max{{pool="{pool}"}}) '
              f'and on () (gpu_pool:nodes:count{{pool="{pool}"}} >= {top})'
        for pool, top in (("gpu", 4), ("spot", 2))
    }
    pending = {r["labels"]["pool"]: r for r in rules if r.get("alert") == "GpuPodPendingTooLong"}
    embeddings = 'namespace_pod:gpu_pod_pending:info{namespace="batch",pod=~"embeddings-[a-z0-9]{1,10}-[a-z0-9]{5}"}'
    assert pending["spot"]["expr"] == embeddings
    assert pending["gpu"]["expr"].endswith(f"unless on (namespace, pod) ({embeddings})")
    assert "gpuPools[1].maxNodes" in pending["spot"]["annotations"]["description"]


# ---------------------------------------------------------------------------------------------------------------
# Which pool grows: the autoscaler's expander


def with_expander(value: str) -> dict[str, Any]:
    cluster = stack_file("prod")["cluster"]
    return {**two_pools(), "cluster": {**cluster, "autoscaler": {**cluster.get("autoscaler", {}), "expander": value}}}


@pytest.mark.parametrize(("value", "why"), [
    ("priority", "cluster-autoscaler-priority-expander"),
    ("least-waste,price", "cloudprovider.Pricing"),
    ("grpc", "--grpc-expander-url"),
    ("cheapest", "is not a Cluster Autoscaler expander"),
])
def test_an_expander_that_cannot_work_on_gcore_is_refused(value: str, why: str) -> None:
    with pytest.raises(ConfigError) as exc:
        record_stack("prod", with_expander(value))
    (problem,) = [p for p in exc.value.problems if p.key == "cluster.autoscaler.expander"]
    assert problem.value == value and why in problem.message
    assert "random, most-pods, least-waste" in problem.fix


def test_a_working_expander_chain_reaches_gcore() -> None:
    rec = record_stack("prod", with_expander("least-waste,random"))
    assert rec.get(CLUSTER_RESOURCE).inputs["autoscalerConfig"]["expander"] == "least-waste,random"


# ---------------------------------------------------------------------------------------------------------------
# The what-if per pool


def what_if(tmp_path: Path, *overrides: str) -> dict[str, Any]:
    out = tmp_path / f"what-if-{len(list(tmp_path.iterdir()))}.json"
    assert capacity_cli.main(["prod", "--days", "1", "--json", str(out), *overrides]) == 0
    return dict(json.loads(out.read_text()))


def test_the_what_if_replays_the_workloads_pool_and_bills_the_others_at_their_floor(tmp_path: Path) -> None:
    """`--workload inference` is replayed on pool `gpu`; embeddings no longer hold GPUs there but on the spot
    pool, billed at its minNodes and its own price (docs/gpu-pools.md quotes the 14-day figures)."""
    o = two_pools()
    split = what_if(tmp_path, "--set", "gpuPool=null", "--set", f"gpuPools={json.dumps(o['gpuPools'])}",
                    "--set", f"workloads={json.dumps(o['workloads'])}")
    one = what_if(tmp_path)
    assert split["pool"] == "gpu" and split["pools"]["gpu"]["simulated"] is True
    spot = split["pools"]["spot"]
    assert (spot["simulated"], spot["spot"], spot["nodes"], spot["workloads"]) == (False, True, 1, ["embeddings"])
    assert spot["cost"] == pytest.approx(1 * 8 * 1.6 * split["hours"])
    assert split["totals"]["cost"] == pytest.approx(split["pools"]["gpu"]["cost"] + spot["cost"])
    # One pool: embeddings' minReplicas (1 × 2 GPUs) sit on the replayed pool; two pools: not any more.
    assert one["gpuHoursOtherWorkloads"] == pytest.approx(2 * one["hours"])
    assert split["gpuHoursOtherWorkloads"] == 0


# ---------------------------------------------------------------------------------------------------------------
# The budget policy sums over pools, each at its own price


def test_the_budget_policies_sum_every_pool_at_its_own_price(two: Recording, tmp_path: Path) -> None:
    """prod's budget is 160.00/hour. At maxNodes the on-demand pool costs 4 × 8 × 4.00 = 128.00 and the spot pool
    2 × 8 × 1.60 = 25.60: 153.60 in all, within it. Priced at the on-demand price (a config that does not know the
    spot pool's), the spot pool would be 64.00 and the sum 192.00, over it."""
    config = json.loads((ROOT / "policy" / "config" / "prod.json").read_text())
    for policy in ("gpu-pool-hourly-budget", "gpu-headroom-hourly-budget"):
        config[policy]["pricePerGpuHourByPool"] = {"gpu": 4.0, "spot": 1.6}
    priced = tmp_path / "priced.json"
    priced.write_text(json.dumps(config))
    assert [v.policy for v in run_policies(build_plan(two), read_config(priced))] == []
    for policy in ("gpu-pool-hourly-budget", "gpu-headroom-hourly-budget"):
        config[policy]["pricePerGpuHourByPool"] = {"gpu": 4.0}
    unpriced = tmp_path / "unpriced.json"
    unpriced.write_text(json.dumps(config))
    reported = {v.policy: v.message for v in run_policies(build_plan(two), read_config(unpriced))}
    assert "can cost up to 192.00/hour" in reported["gpu-pool-hourly-budget"], reported


def test_the_generated_policy_config_prices_each_pool() -> None:
    """delivery.policy_config writes every pool's price by name from the stack."""
    cfg = load_stack_config({k: v for k, v in {**stack_file("prod"), **two_pools()}.items() if v is not None})
    assert policy_config.facts(cfg)["pricePerGpuHourByPool"] == {"gpu": 4.0, "spot": 1.6}


@pytest.mark.subprocess
def test_pool_at_max_fires_for_the_pool_at_its_max_only_on_a_real_prometheus(tmp_path: Path) -> None:
    """promtool: the spot pool at its maxNodes (2) with embeddings short of replicas alerts as pool `spot`; the
    on-demand pool, one node of its four, does not alert though inference is short too: it can still grow."""
    cfg = load_stack_config({k: v for k, v in {**stack_file("prod"), **two_pools()}.items() if v is not None})
    groups = alerts.rule_groups(cfg)
    by_name = {w.name: w for w in cfg.workloads}
    inference, embeddings = by_name["inference"], by_name["embeddings"]
    series = {**pool_node(cfg, "gpu-0"), **spot_node(cfg, "spot-0"), **spot_node(cfg, "spot-1"),
              **hpa(inference, desired="12x30"), **available(inference, "10x30"),
              **hpa(embeddings, desired="3x30"), **available(embeddings, "2x30")}
    (rule,) = [r for g in groups for r in g["rules"]
               if r.get("alert") == "GpuPoolAtMaxNodes" and r["labels"]["pool"] == "spot"]
    labels = {"workload": "embeddings", "namespace": "batch", **rule["labels"]}
    test = {
        "name": "the spot pool at maxNodes",
        "interval": "1m",
        "input_series": [{"series": s, "values": v} for s, v in series.items()],
        "alert_rule_test": [{"eval_time": "20m", "alertname": "GpuPoolAtMaxNodes", "exp_alerts": [{
            "exp_labels": labels,
            "exp_annotations": {k: render(v, labels, None) for k, v in rule["annotations"].items()}}]}],
        "promql_expr_test": [{"expr": "gpu_pool:nodes:count", "eval_time": "5m", "exp_samples": [
            {"labels": '{__name__="gpu_pool:nodes:count",pool="gpu"}', "value": 1},
            {"labels": '{__name__="gpu_pool:nodes:count",pool="spot"}', "value": 2}]}],
    }
    dump_yaml({"groups": groups}, tmp_path / "rules.yaml")
    dump_yaml({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [test]}, tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "gpuPools[1].maxNodes = 2" in labels_description(rule, labels)


def spot_node(cfg: StackConfig, node: str) -> dict[str, str]:
    """A Ready node of the second pool (tests/test_alerts.py's `pool_node` is the first pool's)."""
    labels = {cv.ksm_label_name(k): v for k, v in cv.pool_node_labels(cfg.pools[1]).items()}
    return {ksm("kube_node_labels", node=node, **labels): "1x30",
            ksm("kube_node_status_condition", node=node, condition="Ready", status="true"): "1x30",
            ksm("kube_node_status_allocatable", node=node, resource=cv.KSM_GPU_RESOURCE, unit="integer"): "8x30"}


def labels_description(rule: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    return render(rule["annotations"]["description"], labels, None)
