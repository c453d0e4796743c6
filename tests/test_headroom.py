"""GPU headroom and schedules as rendered (issue 8): prod (headroom with a business-hours window, a scheduled
workload) and dev with headroom set through the `record` fixture.

The burst test reads only the rendered objects (the Gcore cluster's pool and autoscaler flags, the
PriorityClasses, Deployments and ScaledObjects) and plays scheduler and autoscaler on them: a pool at
minNodes, full of work except for the placeholders, takes a burst of up to `headroom` GPUs by preemption,
without a new node, and the placeholders it evicts are not expendable, so they make the autoscaler add one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from offline.engine import RecordedResource, Recording
from renderers import dashboards, promql
from renderers import recording_rules as recorded
from renderers import rule_groups as alerts
from stackconfig.versions import PAUSE_IMAGE
from stacknames import HEADROOM_NAMESPACE, HEADROOM_PRIORITY_CLASS, PLACEHOLDER_NAME, WORKLOAD_PRIORITY_CLASS
from tests.chart_cache import crd as chart_crd
from tests.conftest import cluster_name

PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
GPU = "nvidia.com/gpu"
#: cluster-autoscaler's default `--expendable-pods-priority-cutoff` (FAQ.md), when the flag is not rendered.
CA_DEFAULT_CUTOFF = -10
DEV_HEADROOM = {"flavor": "bm3-ai-1xlarge-h100-80-8", "minNodes": 1, "maxNodes": 2, "headroom": {"gpus": 3}}


@pytest.fixture(scope="module")
def dev_headroom() -> Recording:
    from offline.engine import record_stack

    return record_stack("dev", {"gpuPool": DEV_HEADROOM})


@pytest.fixture(params=["dev", "prod"])
def hrec(request: pytest.FixtureRequest, dev_headroom: Recording, recordings: dict[str, Recording]) -> Recording:
    return dev_headroom if request.param == "dev" else recordings["prod"]


# --- reading the rendered objects ----------------------------------------------------------------------


def pod_spec(dep: RecordedResource) -> dict[str, Any]:
    return dep.inputs["spec"]["template"]["spec"]


def gpus(dep: RecordedResource) -> int:
    (container,) = pod_spec(dep)["containers"]
    return int(container["resources"]["limits"][GPU])


def classes(rec: Recording) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in rec.of_type(PRIORITY_CLASS)}


def gpu_pool(rec: Recording) -> dict[str, Any]:
    return rec.get(f"{cluster_name(rec)}-cluster").inputs["pools"][0]


def placeholder(rec: Recording) -> RecordedResource:
    return rec.get("headroom-deployment", DEPLOYMENT)


def scaled_object_for(rec: Recording, dep: RecordedResource) -> dict[str, Any] | None:
    meta = dep.inputs["metadata"]
    for so in rec.of_type(SCALED_OBJECT):
        if (so.inputs["metadata"]["namespace"], so.inputs["spec"]["scaleTargetRef"]["name"]) == (
            meta["namespace"], meta["name"]
        ):
            return so.inputs["spec"]
    return None


def held_replicas(rec: Recording, dep: RecordedResource) -> int:
    """Replicas a Deployment holds at least: its own `replicas`, else its ScaledObject's minReplicaCount."""
    if "replicas" in dep.inputs["spec"]:
        return int(dep.inputs["spec"]["replicas"])
    so = scaled_object_for(rec, dep)
    assert so is not None, f"{dep.name} has neither replicas nor a ScaledObject"
    return int(so["minReplicaCount"])


# --- what is rendered ------------------------------------------------------------------------------------


def test_priority_classes_rank_placeholders_between_the_cutoff_and_the_workloads(hrec: Recording) -> None:
    pcs = classes(hrec)
    workload, headroom = pcs[WORKLOAD_PRIORITY_CLASS], pcs[HEADROOM_PRIORITY_CLASS]
    cutoff = int(gpu_pool_flags(hrec).get("expendable-pods-priority-cutoff", CA_DEFAULT_CUTOFF))
    assert cutoff <= headroom["value"] < workload["value"]
    # 0 = what pods without a class get: platform workloads outrank the placeholders and nobody else.
    assert workload["value"] == 0
    assert workload["preemptionPolicy"] == "PreemptLowerPriority"
    assert headroom["preemptionPolicy"] == "Never", "a placeholder must never evict anything"
    assert workload["globalDefault"] is False and headroom["globalDefault"] is False


def gpu_pool_flags(rec: Recording) -> dict[str, str]:
    return rec.get(f"{cluster_name(rec)}-cluster").inputs["autoscalerConfig"]


def test_cutoff_is_rendered_only_with_headroom(recordings: dict[str, Recording], dev_headroom: Recording) -> None:
    assert gpu_pool_flags(dev_headroom)["expendable-pods-priority-cutoff"] == "-10"
    assert "expendable-pods-priority-cutoff" not in gpu_pool_flags(recordings["dev"])


def test_placeholder_deployment(hrec: Recording) -> None:
    dep, pool = placeholder(hrec), gpu_pool(hrec)
    assert dep.inputs["metadata"] == {
        "name": PLACEHOLDER_NAME, "namespace": HEADROOM_NAMESPACE, "labels": dep.inputs["metadata"]["labels"],
        "annotations": {"pulumi.com/skipAwait": "true"},
    }
    spec = pod_spec(dep)
    (container,) = spec["containers"]
    res = container["resources"]
    assert res["requests"][GPU] == res["limits"][GPU] == str(hrec.outputs["headroom"]["podGpus"])
    assert container["image"] == PAUSE_IMAGE and re.search(r"@sha256:[0-9a-f]{64}$", PAUSE_IMAGE)
    assert spec["nodeSelector"] == pool["labels"]
    tolerated = {(t["key"], t.get("value", ""), t["effect"]) for t in spec["tolerations"]}
    assert {(k, *v.rsplit(":", 1)) for k, v in pool["taints"].items()} <= tolerated
    assert spec["priorityClassName"] == HEADROOM_PRIORITY_CLASS
    assert spec["terminationGracePeriodSeconds"] == 0
    assert dep.inputs["spec"]["strategy"] == {"type": "Recreate"}, "a surge placeholder would order a node"


def test_placeholders_are_pod_security_restricted(hrec: Recording) -> None:
    """The `restricted` profile's checks that apply to a pod without volumes, ports or host access
    (kubernetes.io/docs/concepts/security/pod-security-standards), and the namespace enforcing it."""
    ns = hrec.get("headroom-ns", "kubernetes:core/v1:Namespace").inputs["metadata"]
    assert ns["name"] == HEADROOM_NAMESPACE
    assert ns["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    spec = pod_spec(placeholder(hrec))
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not {"hostNetwork", "hostPID", "hostIPC", "volumes"} & set(spec)
    for c in spec["containers"]:
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
        assert "add" not in sc["capabilities"] and not sc.get("privileged")


def test_fixed_headroom_sets_replicas_and_has_no_scaled_object(dev_headroom: Recording) -> None:
    dep = placeholder(dev_headroom)
    assert dep.inputs["spec"]["replicas"] == 3
    assert scaled_object_for(dev_headroom, dep) is None
    assert dev_headroom.outputs["headroom"]["placeholders"] == 3


def test_scheduled_headroom_is_scaled_by_its_own_cron_scaled_object(recordings: dict[str, Recording]) -> None:
    prod = recordings["prod"]
    dep = placeholder(prod)
    assert "replicas" not in dep.inputs["spec"], "KEDA's HPA owns the scale when windows are set"
    so = scaled_object_for(prod, dep)
    assert so is not None
    assert (so["minReplicaCount"], so["maxReplicaCount"]) == (2, 4)
    assert so["triggers"] == [{
        "type": "cron", "name": "schedule-0",
        "metadata": {"timezone": "Europe/Luxembourg", "start": "0 8 * * 1-5", "end": "0 20 * * 1-5",
                     "desiredReplicas": "4"},
    }]
    assert so["fallback"]["replicas"] == so["maxReplicaCount"], "a broken scaler holds the busiest window"
    so_res = prod.get("headroom-scaledobject", SCALED_OBJECT)
    assert so_res.depends_on(prod.get("keda-release")) and so_res.depends_on(dep)


def test_workload_cron_triggers_sit_beside_the_utilisation_trigger(recordings: dict[str, Recording]) -> None:
    spec = recordings["prod"].get("inference-scaledobject").inputs["spec"]
    types = [t["type"] for t in spec["triggers"]]
    assert types[0] == "prometheus" and types.count("cron") == 1 and types[-1] == "cron"
    assert spec["triggers"][-1]["metadata"] == {
        "timezone": "Europe/Luxembourg", "start": "0 8 * * 1-5", "end": "0 20 * * 1-5", "desiredReplicas": "8",
    }
    assert int(spec["triggers"][-1]["metadata"]["desiredReplicas"]) <= spec["maxReplicaCount"]
    assert [t["type"] for t in recordings["prod"].get("embeddings-scaledobject").inputs["spec"]["triggers"]] == [
        "prometheus"]


def test_graph_edges(hrec: Recording) -> None:
    dep = placeholder(hrec)
    gpu_operator = hrec.get("gpu-operator-release")
    assert dep.depends_on(gpu_operator), "placeholders need the device plugin's nvidia.com/gpu"
    assert dep.depends_on(hrec.get("headroom-priority", PRIORITY_CLASS)), "admission resolves priorityClassName"
    assert dep.depends_on(hrec.get("headroom-ns", "kubernetes:core/v1:Namespace"))
    assert not dep.depends_on(hrec.get("keda-release")) and not dep.depends_on(hrec.get("monitoring-release"))
    workload_class = hrec.get("workload-priority-class", PRIORITY_CLASS)
    for w in hrec.outputs["workloads"]:
        wdep = hrec.get(f"{w}-deployment", DEPLOYMENT)
        assert pod_spec(wdep)["priorityClassName"] == WORKLOAD_PRIORITY_CLASS
        assert wdep.depends_on(workload_class)


def test_placeholders_never_count_in_a_workloads_query(hrec: Recording) -> None:
    pod = f"{PLACEHOLDER_NAME}-5d8f7c9b6d-abcde"
    for name, w in hrec.outputs["workloads"].items():
        assert w["namespace"] != HEADROOM_NAMESPACE
        assert not re.fullmatch(promql.pod_name_regex(name), pod)
        assert f'namespace="{w["namespace"]}"' in w["query"]


def test_outputs_price_the_headroom(recordings: dict[str, Recording], dev_headroom: Recording) -> None:
    prod = recordings["prod"].outputs["headroom"]
    assert (prod["gpus"], prod["podGpus"], prod["maxGpus"], prod["pricePerGpuHour"]) == (4, 2, 8, 4.0)
    assert (prod["hourlyCost"], prod["maxHourlyCost"]) == (16.0, 32.0)
    assert dev_headroom.outputs["headroom"]["hourlyCost"] == 3 * 4.0
    assert recordings["dev"].outputs["headroom"] is None
    assert recordings["dev"].outputs["priorityClasses"] == {"workload": WORKLOAD_PRIORITY_CLASS}


def test_price_is_configurable(record: Callable[..., Recording]) -> None:
    rec = record("dev", gpuPool={**DEV_HEADROOM, "pricePerGpuHour": 6.88})
    assert rec.outputs["headroom"]["hourlyCost"] == pytest.approx(3 * 6.88)


# --- the burst, from the rendered objects alone -----------------------------------------------------------


@dataclass
class Pod:
    owner: str
    gpus: int
    priority: int


def _fits_node_template(spec: dict[str, Any], pool: dict[str, Any], gpus_per_node: int, pod_gpus: int) -> bool:
    """What the autoscaler simulates on the node group's template: taints tolerated, labels selected, GPUs."""
    tolerated = {(t["key"], t.get("value", ""), t["effect"]) for t in spec.get("tolerations", [])}
    taints_ok = all((k, *v.rsplit(":", 1)) in tolerated for k, v in pool["taints"].items())
    labels_ok = all(pool["labels"].get(k) == v for k, v in spec.get("nodeSelector", {}).items())
    return taints_ok and labels_ok and pod_gpus <= gpus_per_node


def simulate_burst(rec: Recording, bursting: str) -> tuple[int, int, list[Pod], int]:
    """(burst GPUs asked, burst GPUs placed, evicted pods, nodes) when workload `bursting` bursts by up to the
    headroom's GPUs on a pool at minNodes.

    State before the burst: the workloads' held replicas and the placeholders, and then as many extra
    workload pods as still fit, so that no GPU is free except the placeholders' (the worst case: the
    burst must come out of the headroom). Placement is first-fit decreasing; a burst pod takes free GPUs,
    else preempts lower-priority pods on one node (the scheduler's preemption); nothing adds a node.
    """
    pool = gpu_pool(rec)
    per_node = int(re.search(r"-(\d+)$", pool["flavorId"]).group(1))
    nodes = pool["minNodeCount"]
    prio = {name: pc["value"] for name, pc in classes(rec).items()}
    workloads = {r.name: r for r in rec.of_type(DEPLOYMENT) if r.name != "headroom-deployment"}
    ph = placeholder(rec)

    def pod_of(dep: RecordedResource, owner: str) -> Pod:
        return Pod(owner, gpus(dep), prio[pod_spec(dep)["priorityClassName"]])

    pods = [pod_of(w, name) for name, w in workloads.items() for _ in range(held_replicas(rec, w))]
    pods += [pod_of(ph, "placeholder") for _ in range(held_replicas(rec, ph))]
    free = [per_node] * nodes
    placed: list[list[Pod]] = [[] for _ in range(nodes)]

    def place(pod: Pod) -> bool:
        for i in range(nodes):
            if pod.gpus <= free[i]:
                placed[i].append(pod)
                free[i] -= pod.gpus
                return True
        return False

    for pod in sorted(pods, key=lambda p: -p.gpus):
        assert place(pod), f"{pod.owner} does not fit at minNodes: the headroom would hide a higher minNodes"
    smallest = min(workloads.items(), key=lambda item: gpus(item[1]))
    while place(pod_of(smallest[1], smallest[0])):
        pass
    burst_dep = workloads[bursting]
    headroom_gpus = held_replicas(rec, ph) * gpus(ph)
    evicted: list[Pod] = []
    asked = served = 0
    while asked + gpus(burst_dep) <= headroom_gpus:
        burst = pod_of(burst_dep, bursting)
        asked += burst.gpus
        if place(burst):
            served += burst.gpus
            continue
        for i in range(nodes):
            victims = sorted((p for p in placed[i] if p.priority < burst.priority), key=lambda p: -p.gpus)
            if free[i] + sum(p.gpus for p in victims) < burst.gpus:
                continue
            while free[i] < burst.gpus:
                victim = victims.pop()
                placed[i].remove(victim)
                free[i] += victim.gpus
                evicted.append(victim)
            assert place(burst)
            served += burst.gpus
            break
    return asked, served, evicted, nodes


def test_a_burst_of_headroom_gpus_is_placed_without_a_new_node(hrec: Recording) -> None:
    headroom = held_replicas(hrec, placeholder(hrec)) * gpus(placeholder(hrec))
    assert headroom == hrec.outputs["headroom"]["gpus"]
    for name in (r.name for r in hrec.of_type(DEPLOYMENT) if r.name != "headroom-deployment"):
        asked, served, evicted, nodes = simulate_burst(hrec, name)
        assert asked == headroom // gpus(hrec.get(name)) * gpus(hrec.get(name)) > 0
        assert served == asked, f"{name}: only {served} of {asked} burst GPUs found room on {nodes} node(s)"
        assert evicted and {p.owner for p in evicted} == {"placeholder"}, "the burst comes out of the headroom"


def test_a_pending_placeholder_is_not_expendable_and_fits_a_new_node(hrec: Recording) -> None:
    first = next(r.name for r in hrec.of_type(DEPLOYMENT) if r.name != "headroom-deployment")
    _, _, evicted, _ = simulate_burst(hrec, first)
    assert evicted
    cutoff = int(gpu_pool_flags(hrec).get("expendable-pods-priority-cutoff", CA_DEFAULT_CUTOFF))
    pool = gpu_pool(hrec)
    per_node = int(re.search(r"-(\d+)$", pool["flavorId"]).group(1))
    spec = pod_spec(placeholder(hrec))
    for pod in evicted:
        # cluster-autoscaler FAQ: pods with priority *below* the cutoff never trigger a scale-up.
        assert not pod.priority < cutoff
        assert _fits_node_template(spec, pool, per_node, pod.gpus), "the autoscaler would find no node group"
    assert pool["maxNodeCount"] > pool["minNodeCount"], "room to add the node the placeholders ask for"


def test_headroom_objects_are_schema_checked(dev_headroom: Recording) -> None:
    """The dev stack with headroom through the same strict validators as the stack files' graphs."""
    import jsonschema
    import kubernetes_validate

    from tests.test_schemas import BUILTIN, _strict, k8s_version, manifest, unwrap

    version = k8s_version(dev_headroom)
    kinds = set()
    for res in dev_headroom.resources:
        if res.type in BUILTIN:
            kubernetes_validate.validate(manifest(res), version, strict=True)
            kinds.add(res.type)
    assert {PRIORITY_CLASS, DEPLOYMENT} <= kinds
    scheduled = record_dev_scheduled()
    crd = chart_crd(scheduled, "keda", "scaledobjects.keda.sh")
    (v1alpha1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    for so in scheduled.of_type(SCALED_OBJECT):
        jsonschema.validate(unwrap(dict(so.inputs)), _strict(v1alpha1["schema"]["openAPIV3Schema"]))
    assert {so.name for so in scheduled.of_type(SCALED_OBJECT)} == {"inference-scaledobject", "headroom-scaledobject"}


def record_dev_scheduled() -> Recording:
    from offline.engine import record_stack

    window = {"start": "30 7 * * MON-FRI", "end": "0 19 * * MON-FRI", "timezone": "Europe/Berlin", "minReplicas": 3}
    workloads = [{"name": "inference", "image": "registry.example.com/gpu-app:1.4.2", "minReplicas": 0,
                  "maxReplicas": 8, "wakeTrigger": {"query": "sum(queue_length)", "threshold": 10},
                  "schedules": [window]}]
    return record_stack("dev", {"gpuPool": {**DEV_HEADROOM, "headroom": {"gpus": 0, "schedules": [window]}},
                                "workloads": workloads})


def test_a_workload_woken_from_zero_lands_on_the_headroom(record: Callable[..., Recording]) -> None:
    """Scale-to-zero keeps its rule (a wake trigger) and its first pods take the placeholders' GPUs."""
    workloads = [{"name": "inference", "image": "registry.example.com/gpu-app:1.4.2", "minReplicas": 0,
                  "maxReplicas": 8, "wakeTrigger": {"query": "sum(queue_length)", "threshold": 10}}]
    rec = record("dev", gpuPool={**DEV_HEADROOM, "headroom": {"gpus": 8}}, workloads=workloads)
    so = rec.get("inference-scaledobject").inputs["spec"]
    assert so["minReplicaCount"] == 0 and [t["name"] for t in so["triggers"]] == ["gpu-utilization", "demand"]
    asked, served, evicted, _ = simulate_burst(rec, "inference-deployment")
    assert asked == served == 8 and len(evicted) == 8


def test_dashboard_shows_headroom_held_and_preempted_only_with_headroom() -> None:
    from tests.prometheus_harness import stack_config

    def titles_and_exprs(stack: str) -> dict[str, list[str]]:
        board = dashboards.dashboards(stack_config(stack))["gpu-autoscaling.json"]
        return {p["title"]: [t["expr"] for t in p.get("targets", [])] for p in board["panels"]}

    prod = titles_and_exprs("prod")
    held = prod["Headroom GPUs: held, preempted, target"]
    assert held[:2] == [recorded.HEADROOM_GPUS_HELD, recorded.HEADROOM_GPUS_PENDING]
    assert not any(t.startswith(("GPU headroom", "Headroom")) for t in titles_and_exprs("dev"))


def test_pending_alert_ignores_placeholders_and_a_headroom_alert_exists_only_with_headroom() -> None:
    from tests.prometheus_harness import stack_config

    def rules(stack: str) -> dict[str, str]:
        groups = alerts.rule_groups(stack_config(stack))
        return {r["alert"]: r["expr"] for g in groups for r in g["rules"] if "alert" in r}

    prod, dev = rules("prod"), rules("dev")
    assert f'namespace!="{HEADROOM_NAMESPACE}"' in prod["GpuPodPendingTooLong"]
    assert "GpuHeadroomNotRestored" in prod and "GpuHeadroomNotRestored" not in dev
    (rule,) = [r for g in alerts.rule_groups(stack_config("prod")) for r in g["rules"]
               if r.get("alert") == "GpuHeadroomNotRestored"]
    # Low severity, yet one that reaches a receiver: kube-prometheus-stack's InfoInhibitor mutes lone `info` alerts.
    assert rule["labels"]["severity"] == "warning"
