"""The metrics path on a real Prometheus: DCGM series -> the program's scrape settings -> KEDA's query.

A loopback exporter serves DCGM series labelled exactly as dcgm-exporter labels them, for GPUs held by
the workloads' pods, by look-alike pods (a sibling Deployment `<name>-canary`, the same name in another
namespace) and by no pod. Prometheus scrapes it with the scrape config prometheus-operator would build
from the ServiceMonitor the GPU Operator renders from the program's own `dcgmExporter.serviceMonitor`
values (tests/prometheus_harness.py). Then the ScaledObject's query, as the program renders it, goes
through the HTTP API, and its value through the HPA arithmetic of the guide's table.

Scrape interval: production uses the values' 15 s (asserted below); the running test overrides it to
1 s so the whole module takes a few seconds. Deliberate breaks run on two more Prometheus instances
(honorLabels off; a second scrape job) and must break the same checks the program passes.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from capacity import hpa
from offline.engine import Recording, record_stack
from renderers import chart_values, dcgm
from renderers import recording_rules as recorded
from renderers import rule_groups as alerts
from tests.prometheus_harness import (
    PROMETHEUS,
    DcgmExporter,
    ExporterNode,
    Gpu,
    PrometheusServer,
    Target,
    dcgm_service_monitor,
    dump_yaml,
    promtool,
    require,
    service_monitor_scrape_configs,
    stack_config,
    values_of,
)

pytestmark = pytest.mark.subprocess


GPU_OPERATOR_NAMESPACE = "gpu-operator"
#: A second workload with 2 GPUs per pod and the guide's 60 % target, rendered by the program itself.
TRAINER = {
    "name": "trainer", "namespace": "gpu-workloads", "image": "registry.example.com/trainer:2.0.1",
    "gpusPerPod": 2, "minReplicas": 1, "maxReplicas": 8, "targetUtilization": 60,
}
#: go-dcgm #75: DCGM_FI_DEV_GPU_UTIL sometimes reads 2^32-1; the query's clamp must cap it at 100.
GARBAGE = 4294967295.0
TEST_SCRAPE = "1s"


@dataclass(frozen=True)
class RenderedWorkload:
    """What the program sends for one workload: its Deployment and its ScaledObject's trigger."""

    deployment: str
    namespace: str
    gpus_per_pod: int
    min_replicas: int
    query: str
    threshold: float
    trigger: Mapping[str, Any]
    spec: Mapping[str, Any]

    @classmethod
    def from_recording(cls, rec: Recording, name: str) -> RenderedWorkload:
        deployment = rec.get(f"{name}-deployment").inputs
        scaled_object = rec.get(f"{name}-scaledobject").inputs
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        (trigger,) = [t for t in scaled_object["spec"]["triggers"] if t["name"] == "gpu-utilization"]
        return cls(
            deployment=deployment["metadata"]["name"],
            namespace=deployment["metadata"]["namespace"],
            gpus_per_pod=int(container["resources"]["limits"]["nvidia.com/gpu"]),
            min_replicas=int(scaled_object["spec"]["minReplicaCount"]),
            query=trigger["metadata"]["query"],
            threshold=float(trigger["metadata"]["threshold"]),
            trigger=trigger,
            spec=scaled_object["spec"],
        )

    def pod(self, i: int) -> str:
        return f"{self.deployment}-7c9d5b8f6d-{i:05d}"


# --- the cluster the exporter describes -------------------------------------------------------------


def held(w: RenderedWorkload, utilisation: Sequence[Sequence[float]], *, namespace: str | None = None,
         deployment: str | None = None) -> list[tuple[str, str, str, float]]:
    """(namespace, pod, container, utilisation) per GPU for pods of `w` (or a look-alike of it)."""
    name = deployment or w.deployment
    ns = namespace or w.namespace
    out = []
    for i, per_pod in enumerate(utilisation):
        assert len(per_pod) == w.gpus_per_pod
        out += [(ns, f"{name}-7c9d5b8f6d-{i:05d}", name, u) for u in per_pod]
    return out


def nodes(layout: Sequence[Sequence[tuple[str, str, str, float]]]) -> list[ExporterNode]:
    out = []
    for n, gpus in enumerate(layout, start=1):
        assert len(gpus) == 8, "every node of the pool has 8 GPUs"
        node = f"gpu-node-{n}"
        out.append(ExporterNode(node, [
            Gpu(i, f"GPU-{n:02d}{i:02d}aa1c-5e8b-4c1d-9f3e-{n:04d}{i:08d}", u, ns, pod, container)
            for i, (ns, pod, container, u) in enumerate(gpus)
        ]))
    return out


IDLE = ("", "", "", 5.0)  # no pod holds it (a host process may still use it)


@dataclass(frozen=True)
class Scenario:
    inference: RenderedWorkload  # dev stack, 1 GPU per pod, target 60
    trainer: RenderedWorkload  # dev stack with a 2-GPU workload, target 60
    embeddings: RenderedWorkload  # prod stack, 2 GPUs per pod, target 75
    exporter: DcgmExporter
    values: Mapping[str, Any]  # the program's dcgmExporter.serviceMonitor values

    @property
    def gpu_count(self) -> int:
        return sum(len(n.gpus) for n in self.exporter.nodes)


@pytest.fixture(scope="module")
def scenario(recordings: dict[str, Recording]) -> Iterator[Scenario]:
    inference = RenderedWorkload.from_recording(recordings["dev"], "inference")
    trainer = RenderedWorkload.from_recording(record_stack("dev", {"workloads": [TRAINER]}), "trainer")
    embeddings = RenderedWorkload.from_recording(recordings["prod"], "embeddings")
    assert (inference.gpus_per_pod, trainer.gpus_per_pod, embeddings.gpus_per_pod) == (1, 2, 2)
    layout = [
        # 8 replicas of 1 GPU at 67.75 % on average: 542 in total (the guide's `67750m/60 (avg)`).
        held(inference, [[60], [65], [70], [75], [62], [68], [72], [70]]),
        # 4 replicas of 2 GPUs, the same 8 GPUs' worth of load: 542 in total.
        held(trainer, [[60, 75], [65, 70], [62, 72], [68, 70]]),
        # 3 replicas of 2 GPUs, all busy, one GPU reading DCGM garbage; 2 GPUs nobody holds.
        held(embeddings, [[100, 100], [100, GARBAGE], [100, 100]]) + [IDLE, IDLE],
        # Look-alikes that a loose query would count: sibling Deployments, the same names elsewhere.
        held(inference, [[95]], deployment=f"{inference.deployment}-canary")
        + held(inference, [[95]], namespace="other-team")
        + held(trainer, [[95, 95]], deployment=f"{trainer.deployment}-canary")
        + held(embeddings, [[95, 95]], namespace=inference.namespace)
        + [IDLE, IDLE],
    ]
    values = recordings["dev"].get("gpu-operator-release").inputs["values"]["dcgmExporter"]["serviceMonitor"]
    assert recordings["prod"].get("gpu-operator-release").inputs["values"]["dcgmExporter"]["serviceMonitor"] == values
    with DcgmExporter(nodes(layout)) as exporter:
        yield Scenario(inference, trainer, embeddings, exporter, values)


def dcgm_scrape_configs(values: Mapping[str, Any], exporter: DcgmExporter) -> list[dict[str, Any]]:
    service_monitor = dcgm_service_monitor(values, GPU_OPERATOR_NAMESPACE)
    return service_monitor_scrape_configs(service_monitor, exporter.targets(GPU_OPERATOR_NAMESPACE))


def for_test(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same scrape configs with the test's short interval (everything else untouched)."""
    return [{**c, "scrape_interval": TEST_SCRAPE, "scrape_timeout": TEST_SCRAPE} for c in configs]


def prometheus_config(scrape_configs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"global": {"scrape_interval": TEST_SCRAPE, "evaluation_interval": TEST_SCRAPE},
            "scrape_configs": scrape_configs}


@dataclass(frozen=True)
class Servers:
    program: PrometheusServer
    honor_labels_off: PrometheusServer
    scraped_twice: PrometheusServer


@pytest.fixture(scope="module")
def servers(scenario: Scenario, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    require(PROMETHEUS, "prometheus")
    program = for_test(dcgm_scrape_configs(scenario.values, scenario.exporter))
    broken_values = {**scenario.values, "honorLabels": False}
    # The guide's extra additionalScrapeConfigs job on the same exporters: its own job name, node label.
    second_job = {
        "job_name": "gpu-metrics", "scrape_interval": TEST_SCRAPE, "scrape_timeout": TEST_SCRAPE,
        "static_configs": copy.deepcopy(program[0]["static_configs"]),
        "relabel_configs": [{"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "kubernetes_node"}],
    }
    base = tmp_path_factory.mktemp("prometheus")
    dev_rules = alerts.rule_groups(stack_config("dev"))
    started = Servers(
        program=PrometheusServer(prometheus_config(program), base / "program", dev_rules),
        honor_labels_off=PrometheusServer(
            prometheus_config(for_test(dcgm_scrape_configs(broken_values, scenario.exporter))), base / "honor"),
        scraped_twice=PrometheusServer(prometheus_config([*program, second_job]), base / "twice"),
    )
    instances = (started.program, started.honor_labels_off, started.scraped_twice)
    try:
        for server in instances:  # all three boot in parallel
            server.start()
        for server, copies in zip(instances, (1, 1, 2), strict=True):
            server.wait_ready()
            server.wait_until(f"count({dcgm.GPU_UTIL_METRIC})",
                              lambda r, n=copies: values_of(r) == [scenario.gpu_count * n])
        yield started
    finally:
        for server in instances:
            server.stop()


# --- the checks (the program must pass them; the deliberate breaks must not) ---------------------------


def keda_reading(result: Sequence[Mapping[str, Any]], ignore_null_values: str) -> float:
    """What KEDA's Prometheus scaler makes of a query result (pkg/scalers/prometheus_scaler.go 262-305).

    More than one element is an error; an empty result is 0 with ignoreNullValues "true" (the default)
    and an error otherwise; an error counts towards the ScaledObject's fallback.
    """
    if len(result) > 1:
        raise LookupError("prometheus query returned multiple elements")
    if not result:
        if ignore_null_values.lower() == "true":
            return 0.0
        raise LookupError("prometheus metrics 'prometheus' target may be lost, the result is empty")
    return float(result[0]["value"][1])


def check_query(server: PrometheusServer, query: str, expected_total: float) -> float:
    """One value, no labels, equal to the sum over exactly the workload's GPUs."""
    result = server.query(query)
    assert len(result) == 1, f"KEDA needs exactly one element, got {len(result)}: {result}"
    assert result[0]["metric"] == {}, result
    value = float(result[0]["value"][1])
    assert value == pytest.approx(expected_total), f"{query} = {value}, expected {expected_total}"
    return value


def check_each_gpu_once(server: PrometheusServer, gpus: int) -> None:
    counts = values_of(server.query(f"count by ({dcgm.GPU_ID_LABEL}) ({dcgm.GPU_UTIL_METRIC})"))
    assert len(counts) == gpus, f"{len(counts)} GPUs in Prometheus, the exporters serve {gpus}"
    assert set(counts) == {1.0}, f"GPUs scraped more than once: counts {sorted(set(counts))}"


# --- the program's path --------------------------------------------------------------------------------


def test_scrape_settings_come_from_the_program(scenario: Scenario) -> None:
    (config,) = dcgm_scrape_configs(scenario.values, scenario.exporter)
    assert config["honor_labels"] is True
    assert (config["scrape_interval"], config["scrape_timeout"]) == (dcgm.SCRAPE_INTERVAL, dcgm.SCRAPE_TIMEOUT)
    assert {"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": dcgm.NODE_LABEL,
            "action": "replace"} in config["relabel_configs"]


def test_full_prometheus_config_passes_promtool(scenario: Scenario, tmp_path: Path) -> None:
    """The production config as the cluster would run it: kube-prometheus-stack's 30 s default, the DCGM and
    KEDA ServiceMonitors with their own intervals, our rules."""
    keda = {"metadata": {"name": chart_values.KEDA_OPERATOR, "namespace": "monitoring"},
            "spec": chart_values.keda_service_monitor("keda")}
    keda_target = Target("127.0.0.1:8080", "keda", chart_values.KEDA_OPERATOR,
                         {"app.kubernetes.io/name": chart_values.KEDA_OPERATOR}, chart_values.KEDA_METRICS_PORT_NAME,
                         "keda-operator-6d5f8b7c9d-abcde", chart_values.KEDA_OPERATOR, "system-node-1")
    dump_yaml({"groups": alerts.rule_groups(stack_config("prod"))}, tmp_path / "rules.yaml")
    config = {
        "global": {"scrape_interval": "30s", "evaluation_interval": "30s"},
        "rule_files": ["rules.yaml"],
        "scrape_configs": [*dcgm_scrape_configs(scenario.values, scenario.exporter),
                           *service_monitor_scrape_configs(keda, [keda_target])],
    }
    result = promtool("check", "config", str(dump_yaml(config, tmp_path / "prometheus.yml")))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout and "rules found" in result.stdout


def test_one_scrape_job_per_exporter(recordings: dict[str, Recording], scenario: Scenario,
                                     servers: Servers) -> None:
    """The program creates one DCGM scrape path, and in Prometheus each GPU series exists once."""
    for rec in recordings.values():
        spec = rec.get("monitoring-release").inputs["values"]["prometheus"]["prometheusSpec"]
        assert not spec.get("additionalScrapeConfigs"), "a raw scrape job would scrape DCGM a second time"
        monitors = [r for r in rec.resources if r.inputs.get("kind") in ("ServiceMonitor", "PodMonitor")]
        for monitor in monitors:
            selector = monitor.inputs["spec"].get("selector", {}).get("matchLabels", {})
            assert selector.get("app") != dcgm.EXPORTER_APP_LABEL, f"{monitor.name} scrapes dcgm-exporter again"
    assert len(dcgm_scrape_configs(scenario.values, scenario.exporter)) == 1
    check_each_gpu_once(servers.program, scenario.gpu_count)
    jobs = servers.program.query(f"count by (job) ({dcgm.GPU_UTIL_METRIC})")
    assert [r["metric"]["job"] for r in jobs] == [alerts.DCGM_JOB], "rules and dashboards select this job"


@pytest.mark.parametrize(("workload", "total"), [("inference", 542), ("trainer", 542), ("embeddings", 600)])
def test_query_counts_only_the_workloads_gpus_once(scenario: Scenario, servers: Servers, workload: str,
                                                   total: float) -> None:
    """Not the canary's GPUs, not the namespace twin's, not idle ones; DCGM garbage capped at 100."""
    check_query(servers.program, getattr(scenario, workload).query, total)


def test_guide_table_one_gpu_per_pod(scenario: Scenario, servers: Servers) -> None:
    w = scenario.inference
    total = keda_reading(servers.program.query(w.query), w.trigger["metadata"]["ignoreNullValues"])
    assert w.threshold == 60
    assert total / 8 == pytest.approx(67.75)  # `kubectl get hpa`: 67750m/60 (avg) at 8 replicas
    assert hpa.hpa_desired_replicas(total, w.threshold, current_replicas=8) == 10
    # 10 replicas, 2 of them Pending without GPUs: the same 8 GPUs report 542; |1 - 0.903| < 0.1 holds.
    assert hpa.hpa_desired_replicas(total, w.threshold, current_replicas=10) == 10


def test_guide_table_two_gpus_per_pod(scenario: Scenario, servers: Servers) -> None:
    """targetUtilization still means per-GPU: the same GPU load asks for the same number of GPUs."""
    w = scenario.trainer
    total = keda_reading(servers.program.query(w.query), w.trigger["metadata"]["ignoreNullValues"])
    assert w.threshold == 60 * w.gpus_per_pod
    desired = hpa.hpa_desired_replicas(total, w.threshold, current_replicas=4)
    assert desired == 5 and desired * w.gpus_per_pod == 10  # the 1-GPU workload's 10 GPUs
    # 5 replicas, one Pending: 8 GPUs still report 542, and the tolerance holds the HPA at 5.
    assert hpa.hpa_desired_replicas(total, w.threshold, current_replicas=5) == 5


def test_prod_two_gpu_workload_scales_to_its_per_gpu_target(scenario: Scenario, servers: Servers) -> None:
    w = scenario.embeddings
    total = keda_reading(servers.program.query(w.query), w.trigger["metadata"]["ignoreNullValues"])
    target = w.threshold / w.gpus_per_pod  # the stack's targetUtilization, per GPU
    desired = hpa.hpa_desired_replicas(total, w.threshold, current_replicas=3)
    assert total / (desired * w.gpus_per_pod) <= target < total / ((desired - 1) * w.gpus_per_pod)


def test_a_target_that_goes_away_is_an_error_not_zero(scenario: Scenario, servers: Servers) -> None:
    """Past the query window with no new samples, the result is empty; KEDA is told to treat that as an
    error and hold at least the current replicas via the fallback, never to read it as zero load."""
    for w in (scenario.inference, scenario.trainer, scenario.embeddings):
        assert servers.program.query(w.query), "data is there now"
        gone = servers.program.query(w.query, at=time.time() + 120)
        assert gone == [], f"an absent target must give an empty result, got {gone}"
        assert w.trigger["metadata"]["ignoreNullValues"] == "false"
        with pytest.raises(LookupError):
            keda_reading(gone, w.trigger["metadata"]["ignoreNullValues"])
        assert keda_reading(gone, "true") == 0.0  # what the KEDA default would have done
        fallback = w.spec["fallback"]
        assert fallback["failureThreshold"] >= 1
        assert fallback["replicas"] >= max(w.min_replicas, 1)
        assert fallback["behavior"] in ("currentReplicas", "currentReplicasIfHigher"), "never scale in on no data"


def test_rules_see_the_scraped_labels(scenario: Scenario, servers: Servers) -> None:
    """The recording rules on real scraped series: per workload, per node (the `node` relabeling), per pod."""
    prom = servers.program
    w = scenario.inference
    labels = {"workload": w.deployment, "namespace": w.namespace, "pool": "gpu"}
    sums = prom.wait_until(f'{recorded.WL_UTIL_SUM}{{workload="{w.deployment}"}}', bool)
    assert [r["metric"] for r in sums] == [{"__name__": recorded.WL_UTIL_SUM, **labels}]
    assert values_of(sums) == values_of(prom.query(w.query))
    avg = prom.wait_until(f'{recorded.WL_UTIL_AVG}{{workload="{w.deployment}"}}', bool)
    assert values_of(avg) == [pytest.approx(67.75)]
    per_node = prom.wait_until(recorded.NODE_GPUS_REPORTING, lambda r: len(r) == len(scenario.exporter.nodes))
    assert {r["metric"]["node"]: float(r["value"][1]) for r in per_node} == {
        n.node: 8.0 for n in scenario.exporter.nodes}
    pods = prom.wait_until(f'{recorded.POD_GPU_UTIL}{{namespace="{w.namespace}",pod=~"{w.deployment}-.*"}}', bool)
    assert sorted(r["metric"]["pod"] for r in pods) == sorted(
        [w.pod(i) for i in range(8)] + [f"{w.deployment}-canary-7c9d5b8f6d-00000"])


# --- deliberate breaks -------------------------------------------------------------------------------


def test_honor_labels_off_renames_the_workload_labels(scenario: Scenario, servers: Servers) -> None:
    w = scenario.inference
    prom = servers.honor_labels_off
    with pytest.raises(AssertionError, match="exactly one element"):
        check_query(prom, w.query, 542)
    renamed = prom.query(f'{dcgm.GPU_UTIL_METRIC}{{exported_pod="{w.pod(0)}",exported_namespace="{w.namespace}"}}')
    assert len(renamed) == 1
    assert renamed[0]["metric"]["pod"].startswith(dcgm.EXPORTER_APP_LABEL)  # the exporter pod, not ours
    assert renamed[0]["metric"]["namespace"] == GPU_OPERATOR_NAMESPACE


def test_a_query_on_exported_pod_finds_nothing(scenario: Scenario, servers: Servers) -> None:
    w = scenario.inference
    broken = w.query.replace("pod=~", "exported_pod=~").replace("namespace=", "exported_namespace=")
    assert broken != w.query
    with pytest.raises(AssertionError, match="exactly one element"):
        check_query(servers.program, broken, 542)


def test_a_second_scrape_job_is_caught(scenario: Scenario, servers: Servers) -> None:
    prom = servers.scraped_twice
    with pytest.raises(AssertionError, match="more than once"):
        check_each_gpu_once(prom, scenario.gpu_count)
    w = scenario.inference
    # The program's `max by (UUID)` still counts each GPU once; a plain sum would double the load.
    check_query(prom, w.query, 542)
    naive = w.query.replace(f"max by ({dcgm.GPU_ID_LABEL}) ", "")
    assert values_of(prom.query(naive)) == [pytest.approx(2 * 542)]
    assert math.isclose(values_of(servers.program.query(naive))[0], 542)
