"""`pulumi up`, a second `up`, changes, a consumer stack and `pulumi destroy`, for real (issues 14 and 15).

The dev stack, unchanged, on the real engine: the real Gcore provider creates "the cluster" in the Gcore API emulator
(realengine/gcore_api.py), whose kubeconfig is the local control plane's, pulumi-kubernetes installs the pinned
charts from the chart cache (`charts.mirror`), and a real kube-apiserver (Pod Security admission on) decides what
is admitted. kwok plays the nodes: pods are scheduled and marked Ready, never run. The tests run in file order;
each phase's wall time is printed.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.consumers import CONSUMERS, package_consumer
from e2e.harness import CHART_CACHE, Kube, Timer, platform, repackaged_chart, wait_for
from e2e.keda import LocalKeda
from e2e.teams import check_team_access
from realengine import gcore_api
from realengine.stack import LocalStack
from realengine.toolchain import ROOT, Toolchain
from stackconfig import versions
from stacknames import (
    GPU_OPERATOR_NAMESPACE,
    KEDA_NAMESPACE,
    MONITORING_NAMESPACE,
    NODE_EXPORTER_NAMESPACE,
)

#: How a secret value is stored in a state file (pulumi sdk/go/common/resource/sig/sig.go `Secret`).
SECRET_SIG = "4dabf18193072939515e22adb298388d"

STACK = "dev"
WORKLOAD_NAMESPACE = "gpu-workloads"
#: The model team of the dev platform here: the package consumers below deploy into its namespace with its
#: kubeconfig, and the API server must enforce its rights and its quota.
TEAM, TEAM_GPUS = "search", 2
TEAMS = [{"name": TEAM, "gpus": TEAM_GPUS}]
#: The Pod Security level each namespace must carry (stacknames.py; renderers/workload_specs.py for workloads).
LEVELS = {GPU_OPERATOR_NAMESPACE: "privileged", NODE_EXPORTER_NAMESPACE: "privileged", KEDA_NAMESPACE: "baseline",
          MONITORING_NAMESPACE: "baseline", WORKLOAD_NAMESPACE: "baseline", TEAM: "baseline"}
#: A second KEDA version for the chart-pin change: the pinned archive repackaged under 2.20.1 (same line, so the
#: compatibility matrix accepts it; only the version differs).
OTHER_KEDA = "2.20.1"
#: Stack-file changes applied by an `up` so far: later tests keep them, so each preview shows only its own change.
APPLIED: dict[str, Any] = {}


@pytest.fixture(scope="module")
def mirror(workdir: Path) -> Path:
    out = workdir / "charts"
    out.mkdir()
    for chart in (versions.GPU_OPERATOR, versions.KEDA, versions.KUBE_PROMETHEUS_STACK):
        (out / chart.archive(chart.default_version)).write_bytes((CHART_CACHE / chart.archive(
            chart.default_version)).read_bytes())
    repackaged_chart(out / versions.KEDA.archive(versions.KEDA.default_version), OTHER_KEDA,
                     out / versions.KEDA.archive(OTHER_KEDA))
    return out


@pytest.fixture(scope="module")
def dev(tc: Toolchain, kube: Kube, workdir: Path, mirror: Path, timer: Timer) -> Iterator[LocalStack]:
    """The dev stack after its first `up`, with KEDA's operator and adapter running (e2e/keda.py) as its pods
    would on a real cluster: ScaledObjects get their HPA and finalizer, the metrics APIService is available."""
    with platform(STACK, tc, kube, workdir / "dev", mirror=mirror, overrides={"gpu-autoscaling:teams": TEAMS}) as ls:
        with timer.phase("up"):
            result = ls.up()
        assert result.summary.result == "succeeded"
        keda = LocalKeda(kube, workdir / "keda")
        with timer.phase("KEDA started"):
            keda.start()
        try:
            yield ls
        finally:
            keda.stop()


def kinds_changed(ls: LocalStack) -> dict[str, str]:
    """`type::name` -> operation of the last preview's steps that change something."""
    return {e["urn"].split("::", 2)[-1].rsplit("$", 1)[-1]: e["op"] for e in ls.events
            if e["op"] not in ("same", "read")}


# --- the first `up` -------------------------------------------------------------------------------------------------


def test_every_namespace_carries_its_pod_security_level(dev: LocalStack, kube: Kube) -> None:
    labels = {ns["metadata"]["name"]: ns["metadata"].get("labels", {}) for ns in kube.get("namespaces")["items"]}
    for name, level in LEVELS.items():
        assert labels[name]["pod-security.kubernetes.io/enforce"] == level, name


def privileged_pod(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "host-reader", "namespace": namespace},
            "spec": {"hostNetwork": True, "hostPID": True,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}


def test_the_real_admission_refuses_what_a_namespace_level_forbids(dev: LocalStack, kube: Kube) -> None:
    refused = kube.create(privileged_pod(WORKLOAD_NAMESPACE), "--dry-run=server", check=False)
    assert refused.returncode != 0 and 'violates PodSecurity "baseline' in refused.stderr
    # node-exporter reads the host: its namespace admits what `baseline` refuses.
    assert kube.create(privileged_pod(NODE_EXPORTER_NAMESPACE), "--dry-run=server").returncode == 0


def test_node_exporter_runs_on_every_node_in_its_own_namespace(dev: LocalStack, kube: Kube) -> None:
    nodes = {n["metadata"]["name"] for n in kube.get("nodes")["items"]}

    def running() -> set[str]:
        pods = kube.get("pods", "-n", NODE_EXPORTER_NAMESPACE)["items"]
        return {p["spec"].get("nodeName") for p in pods if p["status"].get("phase") == "Running"}

    assert wait_for("node-exporter on every node", lambda: running() == nodes, timeout=60)


def test_keda_turns_the_scaled_object_into_its_hpa(dev: LocalStack, kube: Kube) -> None:
    hpa = wait_for("KEDA's HPA", lambda: kube.run("get", "hpa", "keda-hpa-inference", "-n", WORKLOAD_NAMESPACE,
                                                   "-o", "json", check=False).stdout, timeout=60)
    spec = json.loads(hpa)["spec"]
    assert (spec["minReplicas"], spec["maxReplicas"]) == (1, 16)
    assert spec["scaleTargetRef"]["name"] == "inference"
    so = kube.get("scaledobject", "inference", "-n", WORKLOAD_NAMESPACE)
    assert "finalizer.keda.sh" in so["metadata"].get("finalizers", [])


def test_custom_resources_exist_as_the_program_wrote_them(dev: LocalStack, kube: Kube) -> None:
    so = kube.get("scaledobject", "inference", "-n", WORKLOAD_NAMESPACE)
    assert so["spec"]["scaleTargetRef"]["name"] == "inference"
    assert so["spec"]["maxReplicaCount"] == 16
    (trigger,) = [t for t in so["spec"]["triggers"] if t["name"] == "gpu-utilization"]
    assert trigger["metadata"]["serverAddress"] == "http://kps-prometheus.monitoring.svc.cluster.local:9090"
    rules = kube.get("prometheusrule", "gpu-platform", "-n", MONITORING_NAMESPACE)
    assert {g["name"] for g in rules["spec"]["groups"]} >= {"gpu-platform.rules"}
    assert kube.get("servicemonitor", "keda-operator", "-n", MONITORING_NAMESPACE)["spec"]["endpoints"]
    # The CRDs came with the releases and are established.
    for crd in ("scaledobjects.keda.sh", "prometheusrules.monitoring.coreos.com", "clusterpolicies.nvidia.com"):
        conditions = {c["type"]: c["status"] for c in kube.get("crd", crd)["status"]["conditions"]}
        assert conditions["Established"] == "True", crd


def test_a_team_reaches_its_own_namespace_only_and_within_its_gpu_quota(
        dev: LocalStack, kube: Kube, workdir: Path) -> None:
    """The `search` team's kubeconfig (the `teamKubeconfigs` output) against the real API server (e2e/teams.py)."""
    outputs = dev.stack.outputs()
    assert outputs["teamKubeconfigs"].secret and outputs["teams"].value[TEAM] == {"namespace": TEAM, "gpus": TEAM_GPUS}
    path = workdir / f"{TEAM}.kubeconfig"
    path.write_text(outputs["teamKubeconfigs"].value[TEAM])
    check_team_access(dataclasses.replace(kube, kubeconfig=path), TEAM, TEAM_GPUS, WORKLOAD_NAMESPACE)


def test_a_second_run_changes_nothing(dev: LocalStack, timer: Timer) -> None:
    """No field the server or a chart rewrites keeps a diff open: the preview must report no changes at all."""
    with timer.phase("second preview"):
        dev.preview(expect_no_changes=True)
    with timer.phase("second up"):
        result = dev.up()
    assert result.summary.resource_changes == {"same": result.summary.resource_changes["same"]}


# --- changes a reviewer must be able to read ------------------------------------------------------------------------


def test_a_max_replicas_change_updates_the_scaled_object_only(dev: LocalStack, kube: Kube, timer: Timer) -> None:
    APPLIED["gpu-autoscaling:workloads.0.maxReplicas"] = 12
    dev.write_stack_file(APPLIED)
    dev.preview()
    # The autoscaling dashboard draws maxReplicas too: its ConfigMap changes, and pulumi-kubernetes replaces a
    # ConfigMap whose data changes (ConfigMaps are immutable to it unless the beta `enableConfigMapMutable` is on).
    assert kinds_changed(dev) == {"kubernetes:keda.sh/v1alpha1:ScaledObject::inference-scaledobject": "update",
                                  "kubernetes:core/v1:ConfigMap::monitoring-dashboard-gpu-autoscaling":
                                  "create-replacement"}
    with timer.phase("up (maxReplicas)"):
        dev.up()
    assert kube.get("scaledobject", "inference", "-n", WORKLOAD_NAMESPACE)["spec"]["maxReplicaCount"] == 12


def test_a_chart_pin_change_updates_its_release_only(dev: LocalStack, kube: Kube, timer: Timer) -> None:
    APPLIED["gpu-autoscaling:charts.keda"] = OTHER_KEDA
    dev.write_stack_file(APPLIED)
    dev.preview()
    assert kinds_changed(dev) == {"kubernetes:helm.sh/v3:Release::keda-release": "update"}
    with timer.phase("up (keda pin)"):
        dev.up()
    releases = kube.get("secrets", "-n", KEDA_NAMESPACE, "-l", "owner=helm,name=keda")["items"]
    assert max(int(r["metadata"]["labels"]["version"]) for r in releases) == 2  # a second revision, not a new install


def preview_json(dev: LocalStack, workdir: Path, name: str) -> Path:
    out = workdir / f"{name}.json"
    out.write_text(dev.stack.preview(json=True, color="never").stdout)
    return out


def guard(preview: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "delivery.guard", "preview", str(preview), "--stack", STACK],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def cluster_step(preview: Path) -> dict[str, Any]:
    (step,) = [st for st in json.loads(preview.read_text())["steps"] if st["urn"].endswith("K8sv2::gpu-cluster")]
    return step


def gpu_pool_change(step: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Fields of the GPU pool that differ between the step's old and new inputs (pools matched by name)."""
    old = {p["name"]: p for p in step["oldState"]["inputs"]["pools"]}["gpu"]
    new = {p["name"]: p for p in step["newState"]["inputs"]["pools"]}["gpu"]
    return {k: (old.get(k), new.get(k)) for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)}


def test_a_min_nodes_change_is_an_in_place_update_of_the_pool(dev: LocalStack, workdir: Path) -> None:
    """The Any Terraform Provider reports the changed top-level property (`pools`), without a detailed diff; the
    engine's JSON holds both inputs, which is what the preview guard compares."""
    dev.write_stack_file({**APPLIED, "gpu-autoscaling:gpuPool.minNodes": 2, "gpu-autoscaling:gpuPool.maxNodes": 3})
    dev.preview(diff=True)
    (event,) = [e for e in dev.events if e["type"] == "gcore:index/k8sv2:K8sv2"]
    assert (event["op"], event["diffs"]) == ("update", ["pools"])
    step = cluster_step(preview_json(dev, workdir, "min-nodes"))
    assert step["op"] == "update"
    assert gpu_pool_change(step) == {"maxNodeCount": (2, 3), "minNodeCount": (1, 2)}
    assert guard(workdir / "min-nodes.json").returncode == 0


def api_calls(workdir: Path, since: int) -> list[str]:
    """`METHOD path` of the Gcore API emulator's requests from the `since`-th on, name look-ups left out."""
    return [f"{r['method']} {r['path']}" for r in gcore_api.requests_log(workdir / "dev" / "gcore-api")[since:]
            if not r["path"].endswith(("/projects", "/regions"))]


def test_a_max_nodes_change_is_a_pool_patch_without_a_task(dev: LocalStack, workdir: Path, timer: Timer) -> None:
    """The real provider updates a pool's bounds with one PATCH, whose answer is the pool (pools.Update in
    gcorelabscloud-go v0.29.5): no task is made or polled, and `up` does not wait for new nodes."""
    gcore_api.set_behaviour(workdir / "dev" / "gcore-api", gcore_api.Behaviour(running_seconds=3600))
    since = len(gcore_api.requests_log(workdir / "dev" / "gcore-api"))
    APPLIED["gpu-autoscaling:gpuPool.maxNodes"] = 3
    dev.write_stack_file(APPLIED)
    with timer.phase("up (maxNodes)"):
        dev.up()
    cluster = "/cloud/v2/k8s/clusters/1/76/gpu-dev"
    calls = api_calls(workdir, since)
    assert f"PATCH {cluster}/pools/gpu" in calls
    assert not [c for c in calls if "/tasks/" in c or c.startswith(("POST", "DELETE"))], calls
    pool = next(p for p in gcore_api.read_cluster(workdir / "dev" / "gcore-api", "gpu-dev")["pools"]
                if p["name"] == "gpu")
    assert (pool["min_node_count"], pool["max_node_count"]) == (1, 3)
    gcore_api.set_behaviour(workdir / "dev" / "gcore-api", gcore_api.Behaviour())
    dev.preview(expect_no_changes=True)


def test_a_flavor_change_is_an_update_the_guard_blocks(dev: LocalStack, workdir: Path, timer: Timer) -> None:
    """The engine shows a new GPU flavor as an *update* of the cluster (pool fields are not ForceNew); the preview
    guard is what calls it a recreation, and the real provider's update is one: it deletes the pool and creates it
    again, waiting for each task (resourceK8sV2Update in G-Core/terraform-provider-gcore v0.34.3)."""
    flavor = "bm3-ai-1xlarge-a100-80-8"
    dev.write_stack_file({**APPLIED, "gpu-autoscaling:gpuPool.flavor": flavor})
    dev.preview(diff=True)
    (event,) = [e for e in dev.events if e["type"] == "gcore:index/k8sv2:K8sv2"]
    assert (event["op"], event["diffs"]) == ("update", ["pools"])
    step = cluster_step(preview_json(dev, workdir, "flavor"))
    assert gpu_pool_change(step) == {"flavorId": ("bm3-ai-1xlarge-h100-80-8", flavor)}
    blocked = guard(workdir / "flavor.json")
    assert blocked.returncode == 1 and "flavorId" in blocked.stdout + blocked.stderr
    gcore_api.set_behaviour(workdir / "dev" / "gcore-api", gcore_api.Behaviour(new_seconds=1, running_seconds=2))
    since = len(gcore_api.requests_log(workdir / "dev" / "gcore-api"))
    APPLIED["gpu-autoscaling:gpuPool.flavor"] = flavor
    dev.write_stack_file(APPLIED)
    with timer.phase("up (flavor: the pool recreated)"):
        dev.up()
    gcore_api.set_behaviour(workdir / "dev" / "gcore-api", gcore_api.Behaviour())
    pools = "/cloud/v2/k8s/clusters/1/76/gpu-dev/pools"
    calls = [c for c in api_calls(workdir, since) if not c.startswith("GET /cloud/v1/tasks/")]
    assert [c for c in calls if not c.startswith("GET")] == [
        "POST /cloud/v2/k8s/clusters/1/76/pools/check_limits", f"DELETE {pools}/gpu", f"POST {pools}"], calls
    polls = [c for c in api_calls(workdir, since) if c.startswith("GET /cloud/v1/tasks/")]
    assert len(polls) >= 2 * 2  # each task polled (once a second) until it FINISHED three seconds later
    pool = next(p for p in gcore_api.read_cluster(workdir / "dev" / "gcore-api", "gpu-dev")["pools"]
                if p["name"] == "gpu")
    assert pool["flavor_id"] == flavor


# --- a workload team's program, through the component package ----------------------------------------------------

@pytest.mark.parametrize("language", CONSUMERS)
def test_a_program_adds_the_package_and_deploys_a_workload_as_the_platform_does(
        dev: LocalStack, kube: Kube, tc: Toolchain, workdir: Path, timer: Timer, language: str) -> None:
    """The platform's own dev workload under another name, from a workload team's program in `language`: the
    Deployment, ScaledObject and PodDisruptionBudget the package's GpuWorkload creates are the platform's, name for
    name."""
    name = CONSUMERS[language][1]
    platform_so = kube.get("scaledobject", "inference", "-n", WORKLOAD_NAMESPACE)
    own = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]["gpu-autoscaling:workloads"][0]
    workload = {**{k: own[k] for k in ("image", "command", "args", "minReplicas", "targetUtilization")},
                "name": name, "priorityClassName": "gpu-workload",
                "maxReplicas": platform_so["spec"]["maxReplicaCount"]}
    with timer.phase(f"package add, {language} (SDK generated and installed)"):
        stack = package_consumer(tc, dev, workdir / f"package-consumer-{language}", dev.name, workload, language,
                                 TEAM)
    with timer.phase(f"package consumer up, {language}"):
        stack.up()
    outputs = stack.outputs()
    assert outputs["deployment"].value == name and outputs["namespace"].value == TEAM
    # The team's kubeconfig, secret there, stays secret where the team's stack reads it (a real StackReference);
    # deploying with it, the team's program needed no right its namespace's deployer lacks.
    assert dev.stack.outputs()["teamKubeconfigs"].secret
    (provider,) = [r for r in stack.export_stack().deployment["resources"] if r["urn"].endswith("::platform-cluster")]
    assert SECRET_SIG in provider["inputs"]["kubeconfig"], provider["inputs"]["kubeconfig"]
    for kind in ("deployment", "scaledobject", "poddisruptionbudget"):
        theirs = kube.get(kind, "inference", "-n", WORKLOAD_NAMESPACE)["spec"]
        ours = kube.get(kind, name, "-n", TEAM)["spec"]
        if kind == "deployment":  # the HPA's, not the program's
            theirs.pop("replicas", None)
            ours.pop("replicas", None)
        expected = json.dumps(theirs).replace("inference", name).replace(WORKLOAD_NAMESPACE, TEAM)
        assert ours == json.loads(expected), kind
    with timer.phase(f"package consumer destroy, {language}"):
        stack.destroy()
    assert not kube.run("get", "deployment", name, "-n", TEAM, "-o", "name", check=False).stdout.strip()


@pytest.mark.parametrize("language", CONSUMERS)
@pytest.mark.parametrize("bad, argument, said", [
    ({"minReplicas": 3, "maxReplicas": 2}, "minReplicas", "is greater than maxReplicas (2)"),
    ({"targetUtilization": 0.6}, "targetUtilization", "write 60 for 60 %"),
    # The platform's own workload's name in its namespace (from the `workloads` output): server-side apply would
    # adopt the platform's objects.
    ({"name": "inference"}, "name", "is a workload of the platform in namespace"),
])
def test_the_package_refuses_a_bad_argument_naming_it_and_creates_nothing(
        dev: LocalStack, kube: Kube, tc: Toolchain, workdir: Path, bad: dict[str, Any], argument: str,
        said: str, language: str) -> None:
    from pulumi import automation as auto

    workload = {"name": "refused", "namespace": WORKLOAD_NAMESPACE, "image": "registry.example.com/x:1.0",
                "maxReplicas": 4, **bad}
    stack = package_consumer(tc, dev, workdir / f"package-consumer-{language}", f"bad-{argument.lower()}",
                             workload, language, TEAM)

    def managers() -> list[str]:  # who has applied the platform's own Deployment
        return sorted(m["manager"] for m in kube.get("deployment", "inference", "-n", WORKLOAD_NAMESPACE,
                                                     "--show-managed-fields")["metadata"]["managedFields"])

    before = managers()
    with pytest.raises(auto.CommandError) as err:
        stack.up()
    text = str(err.value)
    assert "invalid GpuWorkload arguments" in text and f"{argument}: " in text and said in text, text[-3000:]
    assert managers() == before
    assert not kube.run("get", "deployment,scaledobject,pdb", "-n", WORKLOAD_NAMESPACE, "-l",
                        "app.kubernetes.io/name=refused", "-o", "name", check=False).stdout.strip()
    types = {r.get("type") for r in stack.export_stack().deployment.get("resources", [])}
    assert not {t for t in types if t and t.startswith("kubernetes:") and "Provider" not in t}, types
    stack.workspace.remove_stack(stack.name, force=True)


# --- destroy --------------------------------------------------------------------------------------------------------


def test_destroy_deletes_the_cluster_and_leaves_nothing_in_the_state(dev: LocalStack, kube: Kube, workdir: Path,
                                                                    timer: Timer) -> None:
    """Every in-cluster resource is `deletedWith` the cluster: destroy deletes the Gcore cluster (the API emulator
    then stops the local control plane that stands for it, as Gcore deletes everything in a cluster) and nothing one by
    one. That the objects themselves delete cleanly is shown where they are deleted one by one: the consumer's
    destroy above and the existing-cluster tests (e2e/test_existing_cluster.py)."""
    with timer.phase("destroy"):
        changes = dev.destroy().summary.resource_changes
    assert timer.phases["destroy"] < 120
    assert changes.get("delete", 0) > 0
    assert not list((workdir / "dev" / "gcore-api" / "clusters").iterdir())  # the cluster is gone from the API
    assert not kube.kubeconfig.exists()  # and the local control plane with it
    deployment = json.loads(json.dumps(dev.stack.export_stack().deployment))
    assert [r["type"] for r in deployment.get("resources", [])] == []
