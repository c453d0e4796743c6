"""Every documented decision, asserted with its exact value on the recorded graph, so reverting it fails here.

Each test names the decision and where it is documented (README "Decisions where the guide and the issues were
silent", "Differences from the guide", or the comment at the code). The Deployment's create/update timeout is in
tests/test_timeouts.py, the Cluster Autoscaler flags in tests/test_autoscaler.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from capacity.hpa import Hpa
from capacity.settings import Behavior, SimSettings
from capacity.state import ClusterState
from offline.engine import Recording, Secret
from stackconfig import ConfigError, load_stack_config
from stacknames import GPU_READY_TAINT_KEY
from tests.conftest import PROVIDER_RESOURCE

CLUSTER = {"name": "gpu-dev", "projectName": "Default", "regionName": "Luxembourg-2", "keypair": "team"}

#: Pod Security `enforce` level per namespace: only the GPU Operator's host-path and device pods run privileged.
POD_SECURITY = {
    # node-exporter reads the host (hostNetwork, hostPID, hostPath): alone in its own `privileged` namespace, so
    # that `monitoring` stays `baseline` (docs/charts-and-pod-security.md).
    "dev": {"gpu-operator": "privileged", "keda": "baseline", "monitoring": "baseline", "node-exporter": "privileged",
            "gpu-workloads": "baseline"},
    # inference keeps its model cache on the node's NVMe (hostPath: only `privileged` admits it); the headroom
    # placeholders run a pause container that meets `restricted`.
    "prod": {"gpu-operator": "privileged", "keda": "baseline", "monitoring": "baseline", "inference": "privileged",
             "batch": "baseline", "gpu-headroom": "restricted", "node-exporter": "privileged"},
}
#: Workload name -> (minReplicas, scaleDownStabilizationSeconds) as the stack files set them.
WORKLOADS = {
    "dev": {"inference": (1, 300)},
    "prod": {"inference": (4, 600), "embeddings": (1, 300)},
}


def spec_of(rec: Recording, name: str, kind: str) -> dict[str, Any]:
    return rec.get(f"{name}-{kind}").inputs["spec"]


def test_rollouts_replace_a_quarter_of_the_gpu_pods_at_a_time(rec: Recording) -> None:
    """docs/design.md: `maxSurge: 0` (a surge pod needs a free GPU a full pool does not have), `maxUnavailable: 25%`
    (three quarters keep serving, and a rollout of 16 slow pods takes 7 rounds, not 16); drains stay one by one."""
    for name in WORKLOADS[rec.stack]:
        assert spec_of(rec, name, "deployment")["strategy"] == {
            "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "25%"},
        }
        assert spec_of(rec, name, "pdb") == {
            "maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
        }


def test_namespaces_enforce_their_pod_security_level(rec: Recording) -> None:
    """README: `gpu-operator` is `privileged` (host paths, device access); every other namespace `baseline`."""
    levels = {
        ns.inputs["metadata"]["name"]: ns.inputs["metadata"]["labels"].get("pod-security.kubernetes.io/enforce")
        for ns in rec.of_type("kubernetes:core/v1:Namespace")
    }
    assert levels == POD_SECURITY[rec.stack]


def test_dcgm_exporter_refreshes_every_5s_behind_one_service_monitor(rec: Recording) -> None:
    """docs/design.md: the exporter refreshes every 5 s instead of 30 s; one 5 s ServiceMonitor with honorLabels."""
    dcgm = rec.get("gpu-operator-release").inputs["values"]["dcgmExporter"]
    assert dcgm["enabled"] is True
    assert dcgm["env"] == [{"name": "DCGM_EXPORTER_INTERVAL", "value": "5000"}]
    assert dcgm["serviceMonitor"] == {
        "enabled": True, "honorLabels": True, "interval": "5s", "scrapeTimeout": "4s", "additionalLabels": {},
        "relabelings": [
            {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"},
        ],
    }


def test_the_query_counts_each_gpu_once_clamped_over_half_a_minute(rec: Recording) -> None:
    """README: `max by (UUID)`, `clamp(…, 0, 100)`, a 25 s window (five 5 s scrapes)."""
    for name, workload in rec.outputs["workloads"].items():
        ns = workload["namespace"]
        expected = (
            f'sum(max by (UUID) (clamp(avg_over_time(DCGM_FI_DEV_GPU_UTIL{{namespace="{ns}",'
            f'pod=~"{name}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}"}}[25s]), 0, 100)))'
        )
        assert spec_of(rec, name, "scaledobject")["triggers"][0]["metadata"]["query"] == expected


def replicas_under(behavior: dict[str, Any], loads: list[tuple[float, float]], start: int, syncs: int,
                   threshold: float = 60.0) -> list[int]:
    """Replicas after each of the HPA's 15 s syncs, the load (the query's sum) changing at the given times, with the
    rendered `behavior`, played by the what-if's HPA (capacity/hpa.py: stabilisation windows, rate policies)."""
    settings = SimSettings(
        gpus_per_node=8, min_nodes=1, max_nodes=100, gpus_per_pod=1, min_replicas=1, max_replicas=100,
        threshold=threshold, scale_up=Behavior.parse(behavior["scaleUp"]),
        scale_down=Behavior.parse(behavior["scaleDown"]),
    )
    state = ClusterState(settings)
    state.scale_to(start)
    hpa = Hpa(state, cron_min=lambda t: 0)
    out = []
    for step in range(syncs):
        t = float(step * settings.hpa_sync)
        state.window.reset({"load": next(total for since, total in reversed(loads) if since <= t)}, [t])
        hpa.sync(t)
        out.append(len(state.workload))
    return out


def test_hpa_scales_up_like_the_default_and_down_one_pod_per_minute(rec: Recording) -> None:
    """README: up by the larger of +100 % and +4 pods per 15 s; down one pod per minute, and only after
    `scaleDownStabilizationSeconds` of lower recommendations (GPU pods start slowly)."""
    for name, (_, stabilization) in WORKLOADS[rec.stack].items():
        hpa = spec_of(rec, name, "scaledobject")["advanced"]["horizontalPodAutoscalerConfig"]
        assert hpa["name"] == f"keda-hpa-{name}"
        # Ten times the target from 2 replicas: 2 -> 6 (+4 beats +100 %) -> 12 (+100 %) -> 20 (wanted).
        assert replicas_under(hpa["behavior"], [(0, 60.0 * 20)], start=2, syncs=4) == [6, 12, 20, 20]
        # The load falls to one replica's worth after the first sync: 20 are held until the high recommendation
        # leaves the stabilisation window (at t = stabilization), then one pod goes per minute.
        window = stabilization // 15
        down = replicas_under(hpa["behavior"], [(0, 60.0 * 20), (15, 60.0)], start=20, syncs=window + 10)
        held, after = down[:window], down[window:]
        assert set(held) == {20}, f"{name}: scaled in within its {stabilization} s window"
        assert after == [19, 19, 19, 19, 18, 18, 18, 18, 17, 17], f"{name}: {after}"


def test_fallback_holds_and_never_shrinks(rec: Recording) -> None:
    """README: `fallback.replicas = max(minReplicas, 1)` with `currentReplicasIfHigher`, missing data is an error."""
    for name, (min_replicas, _) in WORKLOADS[rec.stack].items():
        spec = spec_of(rec, name, "scaledobject")
        assert spec["fallback"] == {
            "failureThreshold": 3, "replicas": max(min_replicas, 1), "behavior": "currentReplicasIfHigher",
        }
        assert spec["triggers"][0]["metadata"]["ignoreNullValues"] == "false"
        assert spec["triggers"][0]["metadata"]["unsafeSsl"] == "false"
        assert "cooldownPeriod" not in spec, "only with minReplicas: 0"


def test_gpu_pods_get_a_minute_to_finish_their_requests(rec: Recording) -> None:
    """`terminationGracePeriodSeconds` (default 60 s): in-flight GPU requests finish before SIGKILL. Prod's
    `inference` has a serving profile and sets 160 s: its preStop drains for 10 s + `longestRequest` (120 s)."""
    for name in WORKLOADS[rec.stack]:
        grace = 160 if (rec.stack, name) == ("prod", "inference") else 60
        assert spec_of(rec, name, "deployment")["template"]["spec"]["terminationGracePeriodSeconds"] == grace


def test_every_release_is_pinned_rolls_back_on_failure_and_waits(rec: Recording) -> None:
    """`cleanup_on_fail`: a failed install leaves nothing half-made behind for the next `up` to trip over."""
    releases = {r.name: r.inputs for r in rec.of_type("kubernetes:helm.sh/v3:Release")}
    assert {name: (r["cleanupOnFail"], r["timeout"]) for name, r in releases.items()} == {
        "gpu-operator-release": (True, 900), "keda-release": (True, 600), "monitoring-release": (True, 900),
    }
    assert {r["name"]: r["version"] for r in releases.values()} == {
        "gpu-operator": "v26.7.0", "keda": "2.20.2", "kube-prometheus-stack": "88.5.3",
    }


def test_grafana_reads_dashboards_from_its_own_namespace_only(rec: Recording) -> None:
    """The sidecar watches `monitoring` only: a ConfigMap labelled in a tenant namespace cannot add a dashboard."""
    sidecar = rec.get("monitoring-release").inputs["values"]["grafana"]["sidecar"]["dashboards"]
    assert sidecar == {
        "enabled": True, "label": "grafana_dashboard", "labelValue": "1", "searchNamespace": "monitoring",
    }


def test_grafana_admin_password_is_generated_and_secret(rec: Recording) -> None:
    """README: a generated password in a Secret instead of the chart's old `prom-operator` default."""
    password = rec.get("monitoring-grafana-password", "pulumi:index:Stash")
    drawn = password.inputs["input"]
    assert isinstance(drawn, Secret) and len(drawn.value) == 32
    # Without ignoreChanges every run's new draw would show as an update of the stash (and be stored as its input).
    assert password.options["ignoreChanges"] == ["input"]
    admin = rec.get("monitoring-grafana-admin").inputs["stringData"]
    assert isinstance(admin, Secret) and admin.value["admin-password"] == drawn.value


def test_the_kubernetes_provider_applies_server_side(rec: Recording) -> None:
    """Server-side apply: field ownership, so KEDA's HPA and Helm's own fields are not overwritten."""
    provider = rec.get(PROVIDER_RESOURCE, "pulumi:providers:kubernetes")
    assert provider.inputs["enableServerSideApply"] == "true"


# --- config rules ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("min_nodes", "max_nodes"), [(2, 1), (3, 2)])
def test_system_pool_max_below_min_is_refused(min_nodes: int, max_nodes: int) -> None:
    with pytest.raises(ConfigError) as err:
        load_stack_config({"cluster": CLUSTER, "systemPool": {"minNodes": min_nodes, "maxNodes": max_nodes}})
    (problem,) = err.value.problems
    assert (problem.key, problem.value) == ("systemPool.maxNodes", max_nodes)
    assert problem.message == f"is below systemPool.minNodes ({min_nodes})"
    assert problem.fix == f"set systemPool.maxNodes to at least {min_nodes}"


def test_system_pool_max_equal_to_min_is_accepted() -> None:
    cfg = load_stack_config({"cluster": CLUSTER, "systemPool": {"minNodes": 2, "maxNodes": 2}})
    assert (cfg.system_pool.min_nodes, cfg.system_pool.max_nodes) == (2, 2)


@pytest.mark.parametrize("value", ["-gpu", "gpu-", "h100 80", "x" * 64, "gpu/h100"])
def test_bad_label_values_are_refused(value: str) -> None:
    labels = {"platform.gcore-gpu/pool": value}
    with pytest.raises(ConfigError) as err:
        load_stack_config({"cluster": CLUSTER, "gpuPool": {"labels": labels}})
    (problem,) = err.value.problems
    assert problem.key == "gpuPool.labels" and problem.value == labels
    assert f"label value {value!r} (key 'platform.gcore-gpu/pool'), which is not a valid Kubernetes label value" in (
        problem.message
    )
    assert problem.fix == "use ≤ 63 chars of [A-Za-z0-9-_.], starting and ending alphanumeric"


@pytest.mark.parametrize("value", ["", "h100", "H100_80.gb-8", "x" * 63])
def test_valid_label_values_are_accepted(value: str) -> None:
    cfg = load_stack_config({"cluster": CLUSTER, "gpuPool": {"labels": {"platform.gcore-gpu/pool": value}}})
    assert cfg.pools[0].labels == {"platform.gcore-gpu/pool": value}


def test_keda_exposes_operator_metrics_and_leaves_scraping_to_our_service_monitor(rec: Recording) -> None:
    """KEDA's chart creates no ServiceMonitor (it would need kube-prometheus-stack's CRD first and lose the
    parallel install); the Monitoring component scrapes the operator's metrics itself."""
    assert rec.get("keda-release").inputs["values"] == {
        "prometheus": {
            "operator": {"enabled": True, "serviceMonitor": {"enabled": False}},
            "metricServer": {"enabled": True, "serviceMonitor": {"enabled": False}},
        },
        "crds": {"additionalAnnotations": {"helm.sh/resource-policy": "keep"}},
    }
    monitor = rec.get("monitoring-keda-operator-monitor", "kubernetes:monitoring.coreos.com/v1:ServiceMonitor")
    assert monitor.inputs["spec"]["namespaceSelector"] == {"matchNames": ["keda"]}


def test_gpu_operator_operands_tolerate_the_gpu_pool(rec: Recording) -> None:
    """The chart's toleration lists are replaced, not extended: ours keep its defaults and add the pool's taints,
    or no operand (device plugin, dcgm-exporter, NFD worker) runs on a tainted GPU node."""
    values = rec.get("gpu-operator-release").inputs["values"]
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    pool = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    control_plane = {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "",
                     "effect": "NoSchedule"}
    assert values["driver"] == {"enabled": False}, "Gcore's GPU images ship the driver"
    # The GPU-ready gate's start-up taint too: the operands are what makes the GPUs allocatable, so they must run
    # while it holds everything else back.
    gate = {"key": GPU_READY_TAINT_KEY, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    assert values["daemonsets"] == {"tolerations": [gpu, pool, gate]}
    assert values["node-feature-discovery"] == {"worker": {"tolerations": [control_plane, gpu, pool, gate]}}


def test_prometheus_retention_per_stack(recordings: dict[str, Recording]) -> None:
    """Default 15 days (dev); production keeps 30 days on its 200Gi volume."""
    retention = {
        stack: rec.get("monitoring-release").inputs["values"]["prometheus"]["prometheusSpec"]["retention"]
        for stack, rec in recordings.items()
    }
    assert retention == {"dev": "15d", "prod": "30d"}
