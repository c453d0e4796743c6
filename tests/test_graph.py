"""The dev and prod stacks as the engine would receive them: parents, providers, edges, options, secrets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from gpu_platform.workload import TYPE as GPU_WORKLOAD
from offline.engine import RecordedResource, Recording, Secret
from renderers import promql
from stacknames import GPU_READY_TAINT_KEY, GPU_READY_TAINT_SPEC
from tests.conftest import CLUSTER_RESOURCE, PROVIDER_RESOURCE, cluster_name
from tests.prometheus_harness import stack_config

COMPONENT_PREFIX = "gpu-platform:"
RELEASES = ("gpu-operator-release", "keda-release", "monitoring-release")


def components(rec: Recording) -> list[RecordedResource]:
    return [r for r in rec.resources if r.type.startswith(COMPONENT_PREFIX)]


def workloads(rec: Recording) -> list[str]:
    return [r.name for r in rec.of_type(GPU_WORKLOAD)]


def test_names_are_unique(rec: Recording) -> None:
    counts = Counter((r.type, r.name) for r in rec.resources)
    assert [k for k, n in counts.items() if n > 1] == []


def test_every_resource_lives_in_a_component_named_after_it(rec: Recording) -> None:
    by_urn = {r.urn: r for r in rec.resources}
    for res in rec.resources:
        if res.type.startswith(COMPONENT_PREFIX):
            # (under mocks the Stack resource is created once per process, so its URN names the first stack)
            assert "::pulumi:pulumi:Stack::gpu-autoscaling-" in res.parent, res.name
            continue
        parent = by_urn.get(res.parent)
        assert parent is not None and parent.type.startswith(COMPONENT_PREFIX), f"{res.name} has no component parent"
        assert res.name.startswith(f"{parent.name}-"), f"{res.name} is not named after {parent.name}"


def test_every_component_registers_its_outputs(rec: Recording) -> None:
    assert {c.urn for c in components(rec)} <= rec.registered_outputs


def test_component_types(rec: Recording) -> None:
    types = {c.type for c in components(rec)} - {"gpu-platform:scaling:Headroom"}  # prod only: test_headroom.py
    assert types == {
        "gpu-platform:index:GpuCluster",
        "gpu-platform:addons:GpuOperator",
        "gpu-platform:addons:Keda",
        "gpu-platform:addons:Monitoring",
        "gpu-platform:workloads:WorkloadNamespaces",
        GPU_WORKLOAD,  # the component package's (gpu_platform/)
        "gpu-platform:workloads:WorkloadPriority",
    }


def test_every_kubernetes_resource_goes_through_the_cluster_provider(rec: Recording) -> None:
    provider = PROVIDER_RESOURCE
    k8s_resources = [r for r in rec.resources if r.type.startswith("kubernetes:")]
    assert len(k8s_resources) >= 10
    for res in k8s_resources:
        assert res.provider_name == provider, f"{res.name} uses {res.provider or 'the default provider'}"


def test_provider_reads_the_secret_kubeconfig_of_the_cluster(rec: Recording) -> None:
    name = cluster_name(rec)
    provider, cluster = rec.get(PROVIDER_RESOURCE), rec.get(CLUSTER_RESOURCE)
    assert provider.type == "pulumi:providers:kubernetes"
    assert isinstance(provider.inputs["kubeconfig"], Secret)
    assert cluster.urn in provider.property_dependencies["kubeconfig"]
    assert provider.depends_on(cluster)
    invoke = next(i for i in rec.invokes if i.token == "gcore:index/getK8sv2Kubeconfig:getK8sv2Kubeconfig")
    assert invoke.args["clusterName"] == name


def test_cluster_options_and_pools(rec: Recording) -> None:
    cluster = rec.get(CLUSTER_RESOURCE, "gcore:index/k8sv2:K8sv2")
    assert cluster.options["protect"] is (rec.stack == "prod")
    assert cluster.options["deleteBeforeReplace"] is True
    # The bridge ignores customTimeouts for this provider: the resource's own `timeouts` input carries them.
    assert cluster.options["customTimeouts"] == {"create": "", "update": "", "delete": ""}
    assert cluster.inputs["timeouts"] == {"create": "70m", "update": "105m"}
    assert cluster.options["packageRef"], "gcore resources must carry the parameterized package reference"
    assert cluster.inputs["name"] == cluster_name(rec)
    assert cluster.inputs["version"].startswith("v1.")
    gpu_pool, system_pool = cluster.inputs["pools"]
    assert gpu_pool["flavorId"].startswith("bm3-ai-")
    assert gpu_pool["autoHealingEnabled"] is False
    assert gpu_pool["maxNodeCount"] > gpu_pool["minNodeCount"] >= 1
    # The pool's own taint, and the start-up taint the GPU-ready gate removes (renderers/gpu_ready_gate.py).
    assert gpu_pool["taints"] == {"nvidia.com/gpu": "present:NoSchedule", GPU_READY_TAINT_KEY: GPU_READY_TAINT_SPEC}
    assert "servergroupPolicy" not in gpu_pool and "bootVolumeSize" not in gpu_pool
    assert system_pool["servergroupPolicy"] and system_pool["bootVolumeSize"] >= 10
    provision = int(cluster.inputs["autoscalerConfig"]["max-node-provision-time"].removesuffix("m"))
    assert provision >= 25, "bare-metal GPU nodes take 20-25 min; the 15 min default gives up on them"


def test_the_three_releases_are_independent(rec: Recording) -> None:
    """No edge between GPU Operator, KEDA and kube-prometheus-stack: Pulumi installs them in parallel."""
    releases = {name: rec.get(name, "kubernetes:helm.sh/v3:Release") for name in RELEASES}
    for name, release in releases.items():
        waits_for = rec.effective_dependencies(release)
        own = {r.urn for r in rec.resources if r.parent == release.parent}
        for other_name, other in releases.items():
            if other_name == name:
                continue
            foreign = {r.urn for r in rec.resources if r.parent == other.parent} | {other.parent}
            assert not waits_for & foreign, f"{name} waits for {other_name}"
        cluster_side = {r.urn for r in rec.resources if r.type.startswith(("gcore:", "pulumi:providers:"))}
        assert waits_for <= own | cluster_side, f"{name} depends on something outside its component"
        assert release.inputs["version"], f"{name} must pin a chart version"


def test_scaled_objects_depend_on_keda_and_what_their_query_reads(rec: Recording) -> None:
    keda, monitoring, gpu = (rec.get(n) for n in RELEASES[1:] + RELEASES[:1])
    assert workloads(rec)
    for name in workloads(rec):
        so = rec.get(f"{name}-scaledobject", "kubernetes:keda.sh/v1alpha1:ScaledObject")
        deployment = rec.get(f"{name}-deployment", "kubernetes:apps/v1:Deployment")
        # `pulumi destroy` then deletes the ScaledObject while KEDA still runs to clear its finalizer.
        assert so.depends_on(keda)
        assert so.depends_on(monitoring)
        assert so.depends_on(gpu)
        assert so.depends_on(deployment)
        assert deployment.depends_on(gpu), "pods need the device plugin to get nvidia.com/gpu"
        assert not deployment.depends_on(keda) and not deployment.depends_on(monitoring)


def test_deployments_leave_replicas_to_keda_and_request_gpus(rec: Recording) -> None:
    cluster = rec.get(CLUSTER_RESOURCE)
    pool = cluster.inputs["pools"][0]
    for name in workloads(rec):
        spec = rec.get(f"{name}-deployment").inputs["spec"]
        assert "replicas" not in spec
        pod = spec["template"]["spec"]
        (container,) = pod["containers"]
        gpus = container["resources"]["limits"]["nvidia.com/gpu"]
        assert int(gpus) >= 1 and container["resources"]["requests"]["nvidia.com/gpu"] == gpus
        assert pod["nodeSelector"] == pool["labels"]
        tolerated = {(t["key"], t.get("value", ""), t["effect"]) for t in pod["tolerations"]}
        for key, spec_ in pool["taints"].items():
            value, _, effect = spec_.rpartition(":")
            # Every taint of the pool but the start-up taint: that one holds the workload back until the GPUs are
            # allocatable, so a Pending pod makes the autoscaler wait for the node instead of ordering another.
            assert ((key, value, effect) in tolerated) == (key != GPU_READY_TAINT_KEY), key
        assert not any(not t.get("key") for t in pod["tolerations"]), "a key-less toleration tolerates the gate"
        assert not container["image"].endswith(":latest")


def test_scaled_object_trigger_reads_the_real_prometheus_and_only_this_workload(rec: Recording) -> None:
    release = rec.get("monitoring-release")
    values = release.inputs["values"]
    url = (
        f"http://{values['fullnameOverride']}-prometheus.{release.inputs['namespace']}.svc.cluster.local:"
        f"{values['prometheus']['service']['port']}"
    )
    assert rec.outputs["prometheusUrl"] == url
    for name in workloads(rec):
        deployment = rec.get(f"{name}-deployment").inputs
        namespace = deployment["metadata"]["namespace"]
        so = rec.get(f"{name}-scaledobject").inputs
        assert so["apiVersion"] == "keda.sh/v1alpha1" and so["kind"] == "ScaledObject"
        assert so["metadata"]["namespace"] == namespace
        spec = so["spec"]
        assert spec["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
        trigger = spec["triggers"][0]
        meta = trigger["metadata"]
        assert trigger["type"] == "prometheus" and trigger["metricType"] == "AverageValue"
        assert meta["serverAddress"] == url
        assert f'namespace="{namespace}"' in meta["query"]
        assert f'pod=~"{promql.pod_name_regex(name)}"' in meta["query"]
        assert "exported_pod" not in meta["query"]
        assert "metricName" not in meta
        assert meta["ignoreNullValues"] == "false"
        assert spec["fallback"]["failureThreshold"] >= 1
        assert spec["minReplicaCount"] <= spec["fallback"]["replicas"] <= spec["maxReplicaCount"]
        gpus = int(deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"])
        (w,) = [w for w in stack_config(rec.stack).workloads if w.name == name]
        # targetUtilization, or 100 beside a serving profile (its GPU guardrail)
        assert float(meta["threshold"]) == pytest.approx(w.gpu_target_utilization * gpus)
        assert spec["advanced"]["horizontalPodAutoscalerConfig"]["name"] == f"keda-hpa-{name}"


def test_secrets_stay_secret(rec: Recording) -> None:
    admin = rec.get("monitoring-grafana-admin", "kubernetes:core/v1:Secret")
    assert isinstance(admin.inputs["stringData"], Secret)
    drawn = rec.get("monitoring-grafana-password", "pulumi:index:Stash").inputs["input"]
    assert isinstance(drawn, Secret) and admin.inputs["stringData"].value["admin-password"] == drawn.value
    assert {"kubeconfig", "grafanaAdminPassword"} <= rec.secret_outputs
    assert {"data", "stringData"} & set(admin.options["additionalSecretOutputs"])
    values = rec.get("monitoring-release").inputs["values"]
    assert values["grafana"]["admin"]["existingSecret"] == admin.inputs["metadata"]["name"]
    assert "adminPassword" not in values["grafana"]
    assert rec.get("monitoring-release").depends_on(admin)


def test_nothing_is_exposed_outside_the_cluster(rec: Recording) -> None:
    values = rec.get("monitoring-release").inputs["values"]
    for part in ("prometheus", "alertmanager", "grafana"):
        assert values[part]["ingress"]["enabled"] is False
    assert values["prometheus"]["service"]["type"] == "ClusterIP"
    assert values["alertmanager"]["service"]["type"] == "ClusterIP"
    cluster = rec.get(CLUSTER_RESOURCE)
    assert all(pool["isPublicIpv4"] is False for pool in cluster.inputs["pools"])


def test_outputs_contract(rec: Recording) -> None:
    out = rec.outputs
    assert set(out) == {
        "clusterName", "clusterId", "kubeconfig", "kubernetesVersion", "gpuPool", "gpuPools", "namespaces",
        "prometheusUrl", "grafanaAdminPassword", "chartVersions", "workloads", "headroom", "priorityClasses",
        "teams", "teamKubeconfigs",
    }
    assert out["clusterName"] == cluster_name(rec)
    pool = out["gpuPool"]
    assert pool["maxGpus"] == pool["maxNodes"] * pool["gpusPerNode"] == pool["maxNodes"] * 8
    # `gpuPool` is the first of `gpuPools` (what consumers written for one pool read), with the same fields.
    first = next(iter(out["gpuPools"].values()))
    assert {k: first[k] for k in pool} == pool
    for name, p in out["gpuPools"].items():
        assert p["name"] == name
        price = p["pricePerGpuHour"]
        assert p["hourlyCost"] == {"min": p["minGpus"] * price, "max": p["maxGpus"] * price}
        assert set(p["workloads"]) == {w for w, spec in out["workloads"].items() if spec["pool"] == name}
    assert {w["pool"] for w in out["workloads"].values()} <= set(out["gpuPools"])
    assert out["namespaces"]["monitoring"] == "monitoring"
    for name, w in out["workloads"].items():
        assert w["hpa"] == f"keda-hpa-{name}"
        # every trigger of the ScaledObject the program registered, in its order, as KEDA gets it
        rendered = rec.get(f"{name}-scaledobject").inputs["spec"]["triggers"]
        assert [t["name"] for t in w["triggers"]] == [t["name"] for t in rendered]
        for told, t in zip(w["triggers"], rendered, strict=True):
            assert told["type"] == t["type"] and told.get("metricType") == t.get("metricType")
            shown = {k: v for k, v in told.items() if k not in ("name", "type", "metricType")}
            assert shown == {k: t["metadata"].get(k) for k in shown}, name


def test_a_workloads_output_is_read_from_its_objects(monkeypatch: pytest.MonkeyPatch,
                                                      record: Callable[..., Recording]) -> None:
    """Not computed again from the config: objects rendered otherwise than the config says show in the output."""
    from renderers import workload_specs

    def scaled_object_spec(w: Any, url: str) -> dict[str, Any]:
        spec = rendered(w, url)
        spec["advanced"]["horizontalPodAutoscalerConfig"]["name"] = "hpa-as-rendered"
        return {**spec, "maxReplicaCount": 99, "triggers": spec["triggers"][:1]}

    rendered = workload_specs.scaled_object_spec
    monkeypatch.setattr(workload_specs, "scaled_object_spec", scaled_object_spec)
    w = record("dev", workloads=[{"name": "llm", "namespace": "serving", "image": "registry.example.com/vllm:0.14.0",
                                  "maxReplicas": 4, "gpusPerPod": 2, "ports": [{"name": "http", "port": 8000}],
                                  "schedules": [{"start": "0 8 * * *", "end": "0 20 * * *", "minReplicas": 2}]}]
               ).outputs["workloads"]["llm"]
    assert (w["hpa"], w["maxReplicas"], [t["name"] for t in w["triggers"]]) == ("hpa-as-rendered", 99,
                                                                                ["gpu-utilization"])
    assert (w["gpusPerPod"], w["service"]) == (2, "http://llm.serving.svc.cluster.local:8000")


def test_a_pools_headroom_output_names_the_placeholder_deployment_it_has(monkeypatch: pytest.MonkeyPatch,
                                                                       record: Callable[..., Recording]) -> None:
    import components.headroom

    monkeypatch.setattr(components.headroom, "placeholder_name", lambda pool, first: f"held-{pool}")
    rec = record("prod")
    held = {d.inputs["metadata"]["name"] for d in rec.of_type("kubernetes:apps/v1:Deployment")
            if d.inputs["metadata"]["namespace"] == "gpu-headroom"}
    told = {p["headroom"]["deployment"] for p in rec.outputs["gpuPools"].values() if p["headroom"]}
    assert told == held == {f"held-{pool}" for pool, p in rec.outputs["gpuPools"].items() if p["headroom"]}
    assert rec.outputs["headroom"]["deployment"] in held


def test_prod_runs_two_gpu_sizes_and_says_what_scales_each(recordings: dict[str, Recording]) -> None:
    prod = recordings["prod"]
    scaled = {name: {t["name"]: t.get("threshold") for t in w["triggers"]}
              for name, w in prod.outputs["workloads"].items()}
    # inference scales on its serving profile (a cron window of 8 replicas by day), beside the GPU guardrail at
    # 100 % of 1 GPU; embeddings on its 2 GPUs at 75 % each
    assert scaled == {
        "inference": {"gpu-utilization": "100", "latency-objective": "1", "queue-depth": "1", "kv-cache": "1",
                      "schedule-0": None},
        "embeddings": {"gpu-utilization": "150"},
    }


def test_prometheus_operator_objects_wait_for_the_chart_crds(rec: Recording) -> None:
    release = rec.get("monitoring-release")
    crs = [r for r in rec.resources if r.type.startswith("kubernetes:monitoring.coreos.com/")]
    kinds = {r.type.rsplit(":", 1)[1] for r in crs}
    # PodMonitor: a workload's own metrics endpoint (prod's vLLM server).
    assert kinds == {"PrometheusRule", "ServiceMonitor"} | ({"PodMonitor"} if rec.stack == "prod" else set())
    for res in crs:
        assert res.depends_on(release), f"{res.name} would race the CRDs it needs"


def test_prometheus_keeps_its_data_where_asked(recordings: dict[str, Recording]) -> None:
    dev = recordings["dev"].get("monitoring-release").inputs["values"]["prometheus"]["prometheusSpec"]
    prod = recordings["prod"].get("monitoring-release").inputs["values"]["prometheus"]["prometheusSpec"]
    assert "storageSpec" not in dev
    claim = prod["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert claim["resources"]["requests"]["storage"] == "200Gi"
    assert claim["accessModes"] == ["ReadWriteOnce"]
    assert "storageClassName" not in claim, "unset storageClass means the cluster's default class"
