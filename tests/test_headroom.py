"""GPU headroom and schedules as rendered (issue 8): prod (headroom with a business-hours window, a scheduled
workload) and dev with headroom set through the `record` fixture.

The burst test reads only the rendered objects (the Gcore cluster's pool and autoscaler flags, the
PriorityClasses, Deployments and ScaledObjects) and plays the what-if's own scheduler and Cluster Autoscaler
(capacity/) on them: a pool at minNodes, full of work except for the placeholders, takes a burst of up to
`headroom` GPUs by preemption, without a new node, and the placeholders it evicts are not expendable, so they
make the autoscaler add one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from capacity.autoscaler import Autoscaler
from capacity.scheduler import schedule
from capacity.settings import Behavior, SimSettings
from capacity.state import ClusterState, Node, Pod
from offline.engine import RecordedResource, Recording
from renderers import dashboards, promql
from renderers import recording_rules as recorded
from renderers import rule_groups as alerts
from stackconfig import flavors
from stackconfig.versions import PAUSE_IMAGE
from stacknames import (
    GPU_READY_TAINT_KEY,
    GPU_READY_TAINT_SPEC,
    HEADROOM_NAMESPACE,
    HEADROOM_PRIORITY_CLASS,
    PLACEHOLDER_NAME,
    STARTUP_TAINT_PREFIX,
    WORKLOAD_PRIORITY_CLASS,
)
from tests.chart_cache import crd as chart_crd
from tests.conftest import CLUSTER_RESOURCE

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


def classes(rec: Recording) -> dict[str, Mapping[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in rec.of_type(PRIORITY_CLASS)}


def gpu_pool(rec: Recording) -> dict[str, Any]:
    return rec.get(CLUSTER_RESOURCE).inputs["pools"][0]


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
    return rec.get(CLUSTER_RESOURCE).inputs["autoscalerConfig"]


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
    # Every taint of the pool but the GPU-ready gate's start-up taint: a placeholder must not hold a node's GPUs
    # before they are validated (the gate lets it on with the workloads).
    gate = (GPU_READY_TAINT_KEY, *GPU_READY_TAINT_SPEC.rsplit(":", 1))
    assert {(k, *v.rsplit(":", 1)) for k, v in pool["taints"].items()} - {gate} <= tolerated
    assert gate in {(k, *v.rsplit(":", 1)) for k, v in pool["taints"].items()} and gate not in tolerated
    assert not any(t["key"].startswith(STARTUP_TAINT_PREFIX) or not t.get("key") for t in spec["tolerations"])
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
        gpu = w["triggers"][0]  # the GPU trigger, always first
        assert gpu["name"] == "gpu-utilization" and f'namespace="{w["namespace"]}"' in gpu["query"]


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


def _fits_node_template(spec: dict[str, Any], pool: dict[str, Any], gpus_per_node: int, pod_gpus: int) -> bool:
    """What the autoscaler simulates on the node group's template: taints tolerated (but start-up taints, which the
    template drops: cluster-autoscaler utils/taints/taints.go `SanitizeTaints`), labels selected, GPUs."""
    tolerated = {(t["key"], t.get("value", ""), t["effect"]) for t in spec.get("tolerations", [])}
    taints_ok = all((k, *v.rsplit(":", 1)) in tolerated for k, v in pool["taints"].items()
                    if not k.startswith(STARTUP_TAINT_PREFIX))
    labels_ok = all(pool["labels"].get(k) == v for k, v in spec.get("nodeSelector", {}).items())
    return taints_ok and labels_ok and pod_gpus <= gpus_per_node


def gpus_per_node(rec: Recording) -> int:
    """From Gcore's flavor table (stackconfig/flavors.py), as the program derives it: never from the flavor id."""
    per_node = flavors.gpus_of(gpu_pool(rec)["flavorId"])
    assert per_node, gpu_pool(rec)["flavorId"]
    return per_node


@dataclass
class Burst:
    asked: int
    served: int
    evicted: list[Pod]
    nodes: int
    state: ClusterState


def simulate_burst(rec: Recording, bursting: str) -> Burst:
    """A burst of workload `bursting` by up to the headroom's GPUs on a pool at minNodes, played by the what-if's
    own scheduler (capacity/scheduler.py: most free node first, preemption of lower priorities) on what the
    rendered objects say: the pool's nodes, the PriorityClasses, each Deployment's GPUs and held replicas.

    State before the burst: the workloads' held replicas and the placeholders, then as many extra pods of the
    smallest workload as still fit, so that no GPU is free except the placeholders' (the worst case: the burst
    must come out of the headroom). Nothing adds a node.
    """
    pool = gpu_pool(rec)
    prio = {name: pc["value"] for name, pc in classes(rec).items()}
    workloads = {r.name: r for r in rec.of_type(DEPLOYMENT) if r.name != "headroom-deployment"}
    ph = placeholder(rec)
    flags = gpu_pool_flags(rec)
    settings = SimSettings(
        gpus_per_node=gpus_per_node(rec), min_nodes=pool["minNodeCount"], max_nodes=pool["maxNodeCount"],
        gpus_per_pod=gpus(workloads[bursting]), min_replicas=0, max_replicas=10_000, threshold=1.0,
        scale_up=Behavior(0, ()), scale_down=Behavior(0, ()),
        expendable_cutoff=int(flags.get("expendable-pods-priority-cutoff", CA_DEFAULT_CUTOFF)),
    )
    state = ClusterState(settings)
    state.nodes = [Node(0.0, 0.0, 0.0, None, settings.gpus_per_node) for _ in range(settings.min_nodes)]

    def pod_of(dep: RecordedResource, kind: str) -> Pod:
        return Pod(kind, gpus(dep), prio[pod_spec(dep)["priorityClassName"]])

    def kind(name: str) -> str:
        return "workload" if name == bursting else "other"

    for name, w in workloads.items():
        (state.workload if name == bursting else state.others).extend(
            pod_of(w, kind(name)) for _ in range(held_replicas(rec, w)))
    state.placeholders = [pod_of(ph, "placeholder") for _ in range(held_replicas(rec, ph))]
    schedule(state, 0.0)
    unplaced = [p for p in state.pods() if p.node is None]
    assert not unplaced, f"{unplaced} do not fit at minNodes: the headroom would hide a higher minNodes"
    smallest_name, smallest = min(workloads.items(), key=lambda item: gpus(item[1]))
    filler = state.workload if smallest_name == bursting else state.others
    while any(node.free() >= gpus(smallest) for node in state.nodes):  # fills free GPUs, preempts nothing
        filler.append(pod_of(smallest, kind(smallest_name)))
        schedule(state, 0.0)
    assert all(p.node is not None for p in state.pods())
    headroom_gpus = held_replicas(rec, ph) * gpus(ph)
    before = list(state.placeholders)
    asked = served = 0
    while asked + gpus(workloads[bursting]) <= headroom_gpus:
        pod = pod_of(workloads[bursting], "workload")
        state.workload.append(pod)
        asked += pod.gpus
        schedule(state, 0.0)
        served += pod.gpus if pod.node is not None else 0
    evicted = [p for p in before if p.node is None]
    return Burst(asked, served, evicted, len(state.nodes), state)


def test_a_burst_of_headroom_gpus_is_placed_without_a_new_node(hrec: Recording) -> None:
    headroom = held_replicas(hrec, placeholder(hrec)) * gpus(placeholder(hrec))
    assert headroom == hrec.outputs["headroom"]["gpus"]
    for name in (r.name for r in hrec.of_type(DEPLOYMENT) if r.name != "headroom-deployment"):
        burst = simulate_burst(hrec, name)
        assert burst.asked == headroom // gpus(hrec.get(name)) * gpus(hrec.get(name)) > 0
        assert burst.served == burst.asked, (
            f"{name}: only {burst.served} of {burst.asked} burst GPUs found room on {burst.nodes} node(s)")
        assert burst.evicted and {p.kind for p in burst.evicted} == {"placeholder"}, "the burst takes the headroom"


def test_a_pending_placeholder_is_not_expendable_and_makes_the_autoscaler_add_a_node(hrec: Recording) -> None:
    first = next(r.name for r in hrec.of_type(DEPLOYMENT) if r.name != "headroom-deployment")
    burst = simulate_burst(hrec, first)
    assert burst.evicted
    pool = gpu_pool(hrec)
    spec = pod_spec(placeholder(hrec))
    for pod in burst.evicted:
        assert _fits_node_template(spec, pool, gpus_per_node(hrec), pod.gpus), "the autoscaler would find no node group"
    # The what-if's Cluster Autoscaler, with the rendered cutoff: pods *below* it never trigger a scale-up.
    Autoscaler(burst.state).run(0.0)
    assert burst.state.nodes_ordered >= 1 and len(burst.state.nodes) <= pool["maxNodeCount"]


@pytest.mark.charts
def test_headroom_objects_are_schema_checked(dev_headroom: Recording) -> None:
    """The dev stack with headroom through the same strict validators as the stack files' graphs."""
    import jsonschema
    import kubernetes_validate

    from delivery.render import unwrap
    from delivery.schema_check import strict_schema
    from tests.test_schemas import builtin_manifests, k8s_version

    version = k8s_version(dev_headroom)
    kinds = set()
    for obj in builtin_manifests(dev_headroom):
        kubernetes_validate.validate(obj, version, strict=True)
        kinds.add(obj["kind"])
    assert {"PriorityClass", "Deployment"} <= kinds
    scheduled = record_dev_scheduled()
    crd = chart_crd(scheduled, "keda", "scaledobjects.keda.sh")
    (v1alpha1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    for so in scheduled.of_type(SCALED_OBJECT):
        jsonschema.validate(unwrap(dict(so.inputs)), strict_schema(v1alpha1["schema"]["openAPIV3Schema"]))
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
    burst = simulate_burst(rec, "inference-deployment")
    assert burst.asked == burst.served == 8 and len(burst.evicted) == 8


def test_dashboard_shows_headroom_held_and_preempted_only_with_headroom() -> None:
    from tests.prometheus_harness import stack_config

    def titles_and_exprs(stack: str) -> dict[str, list[str]]:
        board = dashboards.dashboards(stack_config(stack))["gpu-autoscaling.json"]
        return {p["title"]: [t["expr"] for t in p.get("targets", [])] for p in board["panels"]}

    prod = titles_and_exprs("prod")
    held = prod["Headroom GPUs: held, preempted, target"]
    assert held[:2] == [f'{m}{{pool="gpu"}}' for m in (recorded.HEADROOM_GPUS_HELD, recorded.HEADROOM_GPUS_PENDING)]
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
