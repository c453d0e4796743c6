"""The GPU alerts on promtool: every alert fires on the synthetic series that mean trouble, and stays quiet
on the ones that look alike but are fine.

`promtool test rules` evaluates the very groups the program ships in its PrometheusRule for the prod
stack (two workloads, one with 2 GPUs per pod, a two-label pool), including the recording rules the
alerts read. Expected annotations are the rule's own templates rendered here from the expected labels
and value, so a template that names a label the alert does not carry fails too. A new alert without a
case fails `test_every_alert_has_a_firing_and_a_quiet_case`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from offline.engine import Recording
from renderers import chart_values as cv
from renderers import dcgm, promql
from renderers import recording_rules as recorded
from renderers import rule_groups as alerts
from renderers.workload_specs import scaled_object_spec
from stackconfig import StackConfig, WorkloadConfig, versions
from stacknames import HEADROOM_NAMESPACE
from tests.chart_cache import chart_values
from tests.conftest import STACKS
from tests.prometheus_harness import dump_yaml, promtool, stack_config

# --- series builders --------------------------------------------------------------------------------


def series(metric: str, /, **labels: str) -> str:
    return metric + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def ksm(metric: str, /, **labels: str) -> str:
    return series(metric, job=cv.KSM_JOB, **labels)


def pod_name(w: WorkloadConfig, suffix: str) -> str:
    """A pod of the workload's Deployment: `<name>-<pod-template-hash>-<5 chars>`."""
    return f"{w.name}-5d8f7c9b6d-{suffix}"


def gpu(metric: str, node: str, index: int, /, *, pod: str = "", namespace: str = "",
        container: str = "", node_label: bool = True, **extra: str) -> str:
    """A DCGM series after the scrape: dcgm-exporter's labels, honoured, plus the ServiceMonitor's targets."""
    labels = {
        "gpu": str(index), "UUID": f"GPU-{node}-{index:02d}", "pci_bus_id": f"00000000:{0x18 + index:02X}:00.0",
        "device": f"nvidia{index}", "modelName": "NVIDIA H100 80GB HBM3", "Hostname": node,
        "DCGM_FI_DRIVER_VERSION": "570.124.06", "container": container, "namespace": namespace, "pod": pod,
        "job": alerts.DCGM_JOB, "endpoint": dcgm.EXPORTER_PORT_NAME, "service": dcgm.EXPORTER_SERVICE,
        "instance": f"10.0.0.{index + 10}:{dcgm.EXPORTER_PORT}",
    }
    labels = {k: v for k, v in labels.items() if v != ""}  # empty labels do not exist in Prometheus
    if node_label:
        labels[dcgm.NODE_LABEL] = node
    labels.update(extra)
    return series(metric, **labels)


def gpu_labels(node: str, index: int) -> dict[str, str]:
    """The labels a per-GPU alert keeps (node, gpu, UUID, modelName)."""
    return {"node": node, "gpu": str(index), "UUID": f"GPU-{node}-{index:02d}", "modelName": "NVIDIA H100 80GB HBM3"}


def pool_node(cfg: StackConfig, node: str, *, ready: str = "1x60", allocatable: str | None = "8x60",
              in_pool: bool = True) -> dict[str, str]:
    labels = {cv.ksm_label_name(k): v for k, v in cv.pool_node_labels(cfg.pools[0]).items()} if in_pool else {}
    out = {
        ksm("kube_node_labels", node=node, **labels): "1x60",
        ksm("kube_node_status_condition", node=node, condition="Ready", status="true"): ready,
    }
    if allocatable is not None:
        out[ksm("kube_node_status_allocatable", node=node, resource=cv.KSM_GPU_RESOURCE,
                unit="integer")] = allocatable
    return out


def workload_gpus(w: WorkloadConfig, node: str, per_gpu: list[str], **extra: Any) -> dict[str, str]:
    """DCGM utilisation series for `len(per_gpu) / gpusPerPod` pods of the workload."""
    out = {}
    for i, values in enumerate(per_gpu):
        pod = pod_name(w, f"p{i // w.gpus_per_pod:04d}")
        out[gpu(dcgm.GPU_UTIL_METRIC, node, i, pod=pod, namespace=w.namespace, container=w.name, **extra)] = values
    return out


def hpa(w: WorkloadConfig, *, desired: str | None = None, maximum: str | None = None) -> dict[str, str]:
    name = promql.hpa_name(w.name)
    out = {}
    if desired is not None:
        out[ksm("kube_horizontalpodautoscaler_status_desired_replicas", namespace=w.namespace,
                horizontalpodautoscaler=name)] = desired
    if maximum is not None:
        out[ksm("kube_horizontalpodautoscaler_spec_max_replicas", namespace=w.namespace,
                horizontalpodautoscaler=name)] = maximum
    return out


def available(w: WorkloadConfig, values: str) -> dict[str, str]:
    return {ksm("kube_deployment_status_replicas_available", namespace=w.namespace, deployment=w.name): values}


def quota_case(namespace: str, deployment: str, *, wanted: str, created: str, hard: str | None) -> dict[str, str]:
    """A Deployment's wanted and created pods, and its namespace's GPU quota (kube-state-metrics' own labels)."""
    out = {ksm("kube_deployment_spec_replicas", namespace=namespace, deployment=deployment): wanted,
           ksm("kube_deployment_status_replicas", namespace=namespace, deployment=deployment): created}
    if hard is not None:
        out[ksm("kube_resourcequota", namespace=namespace, resourcequota="gpus", resource="requests.nvidia.com/gpu",
                type="hard")] = hard
    return out


# --- cases --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fires:
    """An alert instance: the labels its expression yields (severity comes from the rule) and its value."""

    labels: Mapping[str, str]
    value: float | None = None


@dataclass(frozen=True)
class Check:
    at: str
    alert: str
    fires: tuple[Fires, ...] = ()


@dataclass(frozen=True)
class Case:
    name: str
    series: Mapping[str, str]
    checks: tuple[Check, ...] = ()
    #: (eval time, expression, [(labels, value)]) for the recording rules dashboards rely on.
    exprs: tuple[tuple[str, str, tuple[tuple[Mapping[str, str], float], ...]], ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: promtool's interval between the input samples (the serving histograms' rates need scrapes within 1m).
    interval: str = "1m"


def workloads(cfg: StackConfig) -> tuple[WorkloadConfig, WorkloadConfig]:
    one = next(w for w in cfg.workloads if w.gpus_per_pod == 1)
    multi = next(w for w in cfg.workloads if w.gpus_per_pod > 1)
    return one, multi


def headroom_cases(cfg: StackConfig, placeholder: Any) -> list[Case]:
    """Pending placeholders at maxNodes (the autoscaler cannot restore the headroom) and below it."""
    if cfg.pools[0].headroom is None:
        return []
    max_nodes = cfg.pools[0].max_nodes
    pending = {**placeholder("Pending", "a0001", "1x60"), **placeholder("Pending", "a0002", "0x10 1x50"),
               **placeholder("Running", "a0003", "1x60")}
    lacking = 2 * cfg.headroom_pod_gpus(cfg.pools[0])
    return [
        Case(
            "preempted placeholders cannot come back: the pool is at maxNodes",
            {**{k: v for i in range(max_nodes) for k, v in pool_node(cfg, f"gpu-{i}").items()}, **pending,
             ksm("kube_deployment_spec_replicas", namespace=HEADROOM_NAMESPACE, deployment="gpu-headroom"): "3x60"},
            (
                Check("10m", "GpuHeadroomNotRestored"),
                Check("20m", "GpuHeadroomNotRestored", (Fires({}, lacking),)),
            ),
            exprs=(("30m", recorded.HEADROOM_GPUS_HELD, (({"pool": "gpu"}, cfg.headroom_pod_gpus(cfg.pools[0])),)),
                   ("30m", recorded.HEADROOM_GPUS_PENDING, (({"pool": "gpu"}, lacking),)),
                   ("30m", recorded.HEADROOM_GPUS_WANTED,
                    (({"pool": "gpu"}, 3 * cfg.headroom_pod_gpus(cfg.pools[0])),))),
        ),
        Case(
            "preempted placeholders wait for a node the autoscaler is adding",
            {**{k: v for i in range(max_nodes - 1) for k, v in pool_node(cfg, f"gpu-{i}").items()}, **pending},
            (Check("30m", "GpuHeadroomNotRestored"),),
        ),
    ]


def serving_cases(w: WorkloadConfig) -> list[Case]:
    """A serving profile's alert (renderers/serving_rules.py): vLLM's TTFT histogram for one pod, every request in
    the bucket that ends at 7.5 s (the ratio clamped at 2) or at 0.25 s (healthy: ratio 0.47 against 500 ms)."""
    if w.serving is None:
        return []
    pod = f'namespace="{w.namespace}",pod="{pod_name(w, "abcde")}"'
    ttft = "vllm:time_to_first_token_seconds"

    def history(upper: str) -> dict[str, str]:
        """40 requests every 15 s, all with a TTFT in the bucket that ends at `upper`."""
        return {**{f'{ttft}_bucket{{{pod},le="{le}"}}': "0+40x120" if keep else "0+0x120"
                   for le, keep in (("0.1", False), (upper, True), ("+Inf", True))},
                f"{ttft}_count{{{pod}}}": "0+40x120"}

    return [
        Case(f"{w.name} misses its latency objective", history("7.5"), (
            Check("9m", "ServingLatencyObjectiveMissed"),  # pending for its 10 minutes
            Check("15m", "ServingLatencyObjectiveMissed", (Fires({"namespace": w.namespace, "workload": w.name}, 2),)),
        ), interval="15s"),
        Case(f"{w.name} within its latency objective", history("0.25"),
             (Check("15m", "ServingLatencyObjectiveMissed"),), interval="15s"),
    ]


def serving_at_max_cases(w: WorkloadConfig) -> list[Case]:
    """A serving workload's HPA asks for more than maxReplicas on its queue (a `Value` trigger: value / 1 × ready
    pods), with no GPU series at all: GpuWorkloadAtMaxReplicas reads every trigger, not only the GPU guardrail."""
    if w.serving is None:
        return []
    pods = [pod_name(w, f"q{i:04d}") for i in range(w.max_replicas)]
    full = {**hpa(w, maximum=f"{w.max_replicas}x60"), **available(w, f"{w.max_replicas}x60")}

    def waiting(per_pod: float) -> dict[str, str]:
        return {series("vllm:num_requests_waiting", namespace=w.namespace, pod=pod): f"{per_pod:g}x60" for pod in pods}

    queue = w.serving.queue_per_replica
    # clamped at 2: twice the ready pods
    return [
        Case(f"{w.name}'s queue asks for more than maxReplicas", {**full, **waiting(4 * queue)}, (
            Check("10m", "GpuWorkloadAtMaxReplicas"),
            Check("20m", "GpuWorkloadAtMaxReplicas",
                  (Fires({"workload": w.name, "namespace": w.namespace}, 2 * w.max_replicas),)),
        )),
        Case(f"{w.name}'s queue at maxReplicas within its target", {**full, **waiting(0.8 * queue)},
             (Check("20m", "GpuWorkloadAtMaxReplicas"),)),
    ]


def cases(cfg: StackConfig) -> list[Case]:
    w1, w2 = workloads(cfg)
    provision = cfg.pools[0].provision_minutes
    max_nodes = cfg.pools[0].max_nodes
    assert w2.target_utilization <= 90, "the at-max case needs room above the target"
    hot, cool = w2.target_utilization + 10, w2.target_utilization - 10
    pods = w2.max_replicas * w2.gpus_per_pod
    wanted_hot = math.ceil(pods * hot / promql.threshold_value(w2.target_utilization, w2.gpus_per_pod))

    def w1_pod(state: str, suffix: str, phase_values: str, gpus: str | None = "1x60",
               namespace: str | None = None, node: str | None = None) -> dict[str, str]:
        ns, pod = namespace or w1.namespace, pod_name(w1, suffix)
        out = {ksm("kube_pod_status_phase", namespace=ns, pod=pod, phase=state): phase_values}
        if node is not None:  # bound to a node: kube-state-metrics' kube_pod_info names it
            out[ksm("kube_pod_info", namespace=ns, pod=pod, node=node)] = phase_values
        if gpus is not None:
            out[ksm("kube_pod_container_resource_requests", namespace=ns, pod=pod, container=w1.name,
                    resource=cv.KSM_GPU_RESOURCE, unit="integer", node="")] = gpus
        else:
            out[ksm("kube_pod_container_resource_requests", namespace=ns, pod=pod, container=w1.name,
                    resource="cpu", unit="core", node="")] = "2x60"
        return out

    def placeholder(state: str, suffix: str, phase_values: str) -> dict[str, str]:
        """A headroom placeholder pod (renderers/headroom_specs.py) holding `podGpus` GPUs."""
        pod = f"gpu-headroom-7c9d8f6b5c-{suffix}"
        return {
            ksm("kube_pod_status_phase", namespace=HEADROOM_NAMESPACE, pod=pod, phase=state): phase_values,
            ksm("kube_pod_container_resource_requests", namespace=HEADROOM_NAMESPACE, pod=pod, container="pause",
                resource=cv.KSM_GPU_RESOURCE, unit="integer", node=""): f"{cfg.headroom_pod_gpus(cfg.pools[0])}x60",
        }

    return [
        *headroom_cases(cfg, placeholder),
        *(case for w in cfg.workloads for case in serving_cases(w)),
        *(case for w in cfg.workloads for case in serving_at_max_cases(w)),
        Case(
            "a pool node is Ready without allocatable GPUs",
            {
                **pool_node(cfg, "gpu-a", allocatable=None),  # device plugin never registered the resource
                **pool_node(cfg, "gpu-b", allocatable="0x60"),
                **pool_node(cfg, "gpu-c"),  # healthy
                **pool_node(cfg, "gpu-d", allocatable="0x9 8x50"),  # slow but within the grace period
                **pool_node(cfg, "gpu-e", ready="0x60", allocatable=None),  # not Ready yet: the autoscaler's case
                **pool_node(cfg, "cpu-a", allocatable=None, in_pool=False),  # system node, no GPUs expected
            },
            (
                Check("10m", "GpuNodeGpusNotAllocatable"),
                Check("20m", "GpuNodeGpusNotAllocatable", (Fires({"node": "gpu-a"}), Fires({"node": "gpu-b"}))),
            ),
        ),
        Case(
            "a GPU pod stays Pending longer than a node takes to provision",
            {
                **w1_pod("Pending", "stuck", "1x60"),
                **w1_pod("Pending", "late1", "0x19 1x40"),  # Pending only since minute 20
                **w1_pod("Pending", "cpu01", "1x60", gpus=None),  # no GPU request: not ours
                **w1_pod("Running", "runs1", "1x60"),
                **w1_pod("Pending", "runs1", "0x60"),
                **placeholder("Pending", "wait1", "1x60"),  # preempted placeholder: by design, not an alert
            },
            (
                Check(f"{provision - 5}m", "GpuPodPendingTooLong"),
                Check(f"{provision + 5}m", "GpuPodPendingTooLong",
                      (Fires({"namespace": w1.namespace, "pod": pod_name(w1, "stuck")}),)),
            ),
        ),
        Case(
            "the pool is at maxNodes and a workload lacks replicas",
            {
                **{k: v for i in range(max_nodes) for k, v in pool_node(cfg, f"gpu-{i}").items()},
                **hpa(w1, desired="12x60"), **available(w1, "10x60"),
                **hpa(w2, desired="3x60"), **available(w2, "3x60"),
            },
            (
                Check("10m", "GpuPoolAtMaxNodes"),
                Check("20m", "GpuPoolAtMaxNodes", (Fires({"workload": w1.name, "namespace": w1.namespace}),)),
            ),
        ),
        Case(
            "a workload lacks replicas but the pool can still grow",
            {
                **{k: v for i in range(max_nodes - 1) for k, v in pool_node(cfg, f"gpu-{i}").items()},
                **hpa(w1, desired="12x60"), **available(w1, "10x60"),
            },
            (Check("20m", "GpuPoolAtMaxNodes"),),
        ),
        Case(
            f"the {w2.gpus_per_pod}-GPU workload's GPUs ask for more than maxReplicas",
            {**hpa(w2, maximum=f"{w2.max_replicas}x60"), **workload_gpus(w2, "gpu-a", [f"{hot:g}x60"] * pods)},
            (
                Check("10m", "GpuWorkloadAtMaxReplicas"),
                Check("20m", "GpuWorkloadAtMaxReplicas",
                      (Fires({"workload": w2.name, "namespace": w2.namespace}, wanted_hot),)),
            ),
        ),
        Case(
            f"the {w2.gpus_per_pod}-GPU workload at maxReplicas below its per-GPU target",
            {**hpa(w2, maximum=f"{w2.max_replicas}x60"), **workload_gpus(w2, "gpu-a", [f"{cool:g}x60"] * pods)},
            (Check("20m", "GpuWorkloadAtMaxReplicas"),),
        ),
        Case(
            "a Ready GPU node without DCGM series",
            {
                **pool_node(cfg, "gpu-a"), gpu(dcgm.GPU_UTIL_METRIC, "gpu-a", 0): "0x60",
                **pool_node(cfg, "gpu-b"),  # exporter down or not scraped
                **pool_node(cfg, "gpu-c"),
                gpu(dcgm.GPU_UTIL_METRIC, "gpu-c", 0, node_label=False): "0x60",  # `node` relabeling lost
                **pool_node(cfg, "gpu-d", ready="0x60", allocatable=None),  # not Ready: nothing to scrape yet
            },
            (
                Check("5m", "DcgmExporterMissing"),
                Check("15m", "DcgmExporterMissing", (Fires({"node": "gpu-b"}), Fires({"node": "gpu-c"}))),
            ),
        ),
        Case(
            "pods run but KEDA's query finds no GPU series (labels renamed to exported_*)",
            {
                **available(w1, "2x60"),
                **{
                    gpu(dcgm.GPU_UTIL_METRIC, "gpu-a", i, pod="nvidia-dcgm-exporter-x7k2p", namespace="gpu-operator",
                        container="nvidia-dcgm-exporter", exported_pod=pod_name(w1, f"p000{i}"),
                        exported_namespace=w1.namespace, exported_container=w1.name): "70x60"
                    for i in range(2)
                },
                **available(w2, "1x60"), **workload_gpus(w2, "gpu-b", ["70x60"] * w2.gpus_per_pod),
            },
            (
                Check("3m", "GpuWorkloadMetricsMissing"),
                Check("10m", "GpuWorkloadMetricsMissing",
                      (Fires({"workload": w1.name, "namespace": w1.namespace, "pool": "gpu"}),)),
            ),
        ),
        Case(
            "a workload scaled to zero has no GPU series, rightly",
            {**available(w1, "0x60")},
            (Check("10m", "GpuWorkloadMetricsMissing"),),
        ),
        Case(
            "KEDA scalers fail",
            {
                series("keda_scaler_detail_errors_total", job=cv.KEDA_OPERATOR, namespace=w1.namespace,
                       scaledObject=w1.name, scaler="prometheusScaler", triggerIndex="0", metric="s0-prometheus",
                       type="scaledobject"): "0+2x30",
                series("keda_scaled_object_errors_total", job=cv.KEDA_OPERATOR, namespace=w1.namespace,
                       scaledObject=w1.name): "0+2x30",
                series("keda_scaled_object_errors_total", job=cv.KEDA_OPERATOR, namespace=w2.namespace,
                       scaledObject=w2.name): "0+1x30",
            },
            (
                Check("3m", "KedaScalerErrors"),
                Check("15m", "KedaScalerErrors", (
                    Fires({"namespace": w1.namespace, "scaledObject": w1.name}),
                    Fires({"namespace": w2.namespace, "scaledObject": w2.name}),
                )),
            ),
        ),
        Case(
            "KEDA scalers failed once, long ago",
            {series("keda_scaler_detail_errors_total", job=cv.KEDA_OPERATOR, namespace=w1.namespace,
                    scaledObject=w1.name, scaler="prometheusScaler", triggerIndex="0", metric="s0-prometheus",
                    type="scaledobject"): "7x30"},
            (Check("15m", "KedaScalerErrors"),),
        ),
        Case("KEDA's operator is not scraped at all", {}, (
            Check("5m", "KedaMetricsAbsent"),
            Check("15m", "KedaMetricsAbsent", (Fires({}),)),
        )),
        Case("KEDA's operator target is down", {series("up", job=cv.KEDA_OPERATOR, namespace="keda"): "0x30"},
             (Check("15m", "KedaMetricsAbsent", (Fires({}),)),)),
        Case("KEDA's operator is scraped", {series("up", job=cv.KEDA_OPERATOR, namespace="keda"): "1x30"},
             (Check("15m", "KedaMetricsAbsent"),)),
        # dcgm-exporter's XID series is a gauge holding the last code until the driver reloads: it never drops back
        # to 0 on its own (etc/dcp-metrics-included.csv). Here a code is held for ten hours.
        Case(
            "an XID held for hours: hardware fires until the node is rebooted, an application code once",
            {
                gpu("DCGM_FI_DEV_XID_ERRORS", "gpu-a", 0): "0x9 79x600 _x10 0x60",  # off the bus; reboot, driver 0
                gpu("DCGM_FI_DEV_XID_ERRORS", "gpu-a", 1): "0x9 13x660",  # application fault, held
                gpu("DCGM_FI_DEV_XID_ERRORS", "gpu-a", 2): "0x670",
            },
            (
                Check("5m", "GpuXidErrorCritical"),
                Check("5m", "GpuXidError"),
                Check("12m", "GpuXidErrorCritical", (Fires(gpu_labels("gpu-a", 0), 79),)),
                Check("12m", "GpuXidError", (Fires(gpu_labels("gpu-a", 1), 13),)),
                Check("20m", "GpuXidError"),  # the gauge still holds 13: not new any more
                Check("300m", "GpuXidErrorCritical", (Fires(gpu_labels("gpu-a", 0), 79),)),
                Check("300m", "GpuXidError"),
                Check("630m", "GpuXidErrorCritical"),  # rebooted: the driver reports 0
                Check("630m", "GpuXidError"),
            ),
        ),
        Case(
            "a new code replaces the held one; a GPU first seen holding an XID; a scrape gap is no new XID",
            {
                gpu("DCGM_FI_DEV_XID_ERRORS", "gpu-a", 3): "0x9 13x100 31x300",
                gpu("DCGM_FI_DEV_XID_ERRORS", "gpu-a", 4): "43x30 _x20 43x60",  # exporter unreachable for 20 min
            },
            (
                Check("2m", "GpuXidError", (Fires(gpu_labels("gpu-a", 4), 43),)),
                Check("53m", "GpuXidError"),
                Check("115m", "GpuXidError", (Fires(gpu_labels("gpu-a", 3), 31),)),
                Check("115m", "GpuXidErrorCritical"),
            ),
        ),
        Case(
            "GPUs run hot",
            {
                gpu("DCGM_FI_DEV_GPU_TEMP", "gpu-a", 0): "87x30",
                gpu("DCGM_FI_DEV_GPU_TEMP", "gpu-a", 1): "95x30",
                gpu("DCGM_FI_DEV_GPU_TEMP", "gpu-a", 2): "62x30",
            },
            (
                Check("5m", "GpuTemperatureHigh"),
                Check("15m", "GpuTemperatureHigh",
                      (Fires(gpu_labels("gpu-a", 0), 87), Fires(gpu_labels("gpu-a", 1), 95))),
                Check("1m", "GpuTemperatureCritical"),
                Check("5m", "GpuTemperatureCritical", (Fires(gpu_labels("gpu-a", 1), 95),)),
            ),
        ),
        Case(
            "a team's Deployment lacks pods its namespace's GPU quota refuses; one without a quota is another matter",
            {
                **quota_case("search", "reranker", wanted="4x30", created="2x30", hard="8x30"),
                **quota_case("search", "catching-up", wanted="4x30", created="2x5 4x25", hard="8x30"),
                **quota_case(w1.namespace, "no-quota", wanted="4x30", created="2x30", hard=None),
            },
            (
                Check("5m", "GpuQuotaRefusesPods"),
                Check("15m", "GpuQuotaRefusesPods", (Fires({"namespace": "search", "deployment": "reranker"}, 2),)),
            ),
        ),
        Case(
            "recording rules the dashboards read",
            {
                **{k: v for i in range(3) for k, v in pool_node(cfg, f"gpu-{i}").items()},
                **workload_gpus(w2, "gpu-0", ["70x10", "80x10", "90x10", "60x10"][: 2 * w2.gpus_per_pod]),
                **w1_pod("Running", "runs1", "1x10", node="gpu-0"), **w1_pod("Running", "runs2", "1x10", node="gpu-1"),
                **w1_pod("Running", "elsewhere", "1x10", node="cpu-0"),  # a GPU pod on no node of the pool
                **w1_pod("Pending", "stuck", "1x10"),
            },
            exprs=(
                ("5m", recorded.POOL_GPUS_PROVISIONED, (({"pool": "gpu"}, 3 * cfg.pools[0].gpus),)),
                ("5m", recorded.POOL_GPUS_ALLOCATABLE, (({"pool": "gpu"}, 3 * 8),)),
                ("5m", recorded.POOL_GPUS_ALLOCATED, (({"pool": "gpu"}, 2),)),
                ("5m", f"count({recorded.POD_GPU_PENDING})", (({}, 1),)),
                ("5m", f'{recorded.WL_UTIL_AVG}{{workload="{w2.name}"}}',
                 (({"workload": w2.name, "namespace": w2.namespace, "pool": "gpu"},
                   sum([70, 80, 90, 60][: 2 * w2.gpus_per_pod]) / (2 * w2.gpus_per_pod)),)),
                ("5m", f'{recorded.WL_WANTED}{{workload="{w2.name}"}}',
                 (({"workload": w2.name, "namespace": w2.namespace, "pool": "gpu"},
                   math.ceil(sum([70, 80, 90, 60][: 2 * w2.gpus_per_pod])
                             / promql.threshold_value(w2.target_utilization, w2.gpus_per_pod))),)),
            ),
        ),
    ]


# --- rendering the promtool test file -------------------------------------------------------------

_TEMPLATE = re.compile(r"\{\{\s*\$(?:labels\.(\w+)|(value))\s*\}\}")


def render(template: str, labels: Mapping[str, str], value: float | None) -> str:
    """Expand `{{ $labels.x }}` and `{{ $value }}` as Prometheus would; anything else is refused."""

    def expand(match: re.Match[str]) -> str:
        if match.group(1):
            return labels[match.group(1)]  # KeyError: the template names a label the alert lacks
        assert value is not None, f"template uses $value, the case gives none: {template[:60]}"
        return f"{value:g}"

    out = _TEMPLATE.sub(expand, template)
    assert "{{" not in out, f"template construct the tests cannot render: {out}"
    return out


def sample_labels(expr: str, labels: Mapping[str, str]) -> str:
    """promtool's form of a result's labels; a plain selector keeps its metric name."""
    selector = re.fullmatch(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?", expr)
    full = {"__name__": selector.group(1), **labels} if selector else dict(labels)
    return "{" + ",".join(f'{k}="{v}"' for k, v in full.items()) + "}"


def rules_by_alert(groups: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}


def promtool_tests(cfg: StackConfig, groups: list[dict[str, Any]]) -> dict[str, Any]:
    rules = rules_by_alert(groups)
    tests = []
    for case in cases(cfg):
        alert_tests = []
        for check in case.checks:
            rule = rules[check.alert]
            exp = []
            for fire in check.fires:
                labels = {**fire.labels, **rule["labels"]}
                exp.append({
                    "exp_labels": labels,
                    "exp_annotations": {k: render(v, labels, fire.value) for k, v in rule["annotations"].items()},
                })
            alert_tests.append({"eval_time": check.at, "alertname": check.alert, "exp_alerts": exp})
        expr_tests = [
            {"expr": expr, "eval_time": at,
             "exp_samples": [{"labels": sample_labels(expr, labels), "value": value} for labels, value in samples]}
            for at, expr, samples in case.exprs
        ]
        test: dict[str, Any] = {
            "name": case.name,
            "interval": case.interval,
            "input_series": [{"series": s, "values": v} for s, v in case.series.items()],
        }
        if alert_tests:
            test["alert_rule_test"] = alert_tests
        if expr_tests:
            test["promql_expr_test"] = expr_tests
        tests.append(test)
    return {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}


@pytest.fixture(scope="module")
def prod() -> StackConfig:
    return stack_config("prod")


def shipped(rec: Recording) -> list[dict[str, Any]]:
    """The rule groups of the PrometheusRule the program registers: what Prometheus is given, not the renderer's
    answer to a call made here (namespaces and all are the program's)."""
    (rule,) = [r for r in rec.resources if r.inputs.get("kind") == "PrometheusRule"]
    groups: list[dict[str, Any]] = rule.inputs["spec"]["groups"]
    return groups


@pytest.fixture(scope="module")
def groups(recordings: dict[str, Recording]) -> list[dict[str, Any]]:
    return shipped(recordings["prod"])


def test_every_alert_has_a_firing_and_a_quiet_case(prod: StackConfig, groups: list[dict[str, Any]]) -> None:
    firing = {c.alert for case in cases(prod) for c in case.checks if c.fires}
    quiet = {c.alert for case in cases(prod) for c in case.checks if not c.fires}
    defined = alerts.alert_names(groups)
    assert firing == defined, f"alerts without a firing case: {defined - firing}; unknown: {firing - defined}"
    assert quiet == defined, f"alerts without a quiet case: {defined - quiet}"


@pytest.mark.subprocess
def test_promtool_unit_tests_pass(tmp_path: Path, prod: StackConfig, groups: list[dict[str, Any]]) -> None:
    dump_yaml({"groups": groups}, tmp_path / "rules.yaml")
    dump_yaml(promtool_tests(prod, groups), tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.subprocess
def test_promtool_check_rules(tmp_path: Path, stack: str, recordings: dict[str, Recording]) -> None:
    rules = dump_yaml({"groups": shipped(recordings[stack])}, tmp_path / "rules.yaml")
    result = promtool("check", "rules", str(rules))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_each_alert_is_a_runbook(groups: list[dict[str, Any]]) -> None:
    """Severity an Alertmanager route can use; a summary; a description that says what to check and do."""
    for name, rule in rules_by_alert(groups).items():
        assert rule["labels"]["severity"] in {"warning", "critical"}, name
        assert rule["annotations"]["summary"], name
        description = rule["annotations"]["description"]
        assert "kubectl" in description or "Prometheus" in description, f"{name}: no check to run"
        assert "Fix" in description or "Fix now" in description, f"{name}: no action"


def test_workload_rules_follow_the_program(prod: StackConfig, groups: list[dict[str, Any]]) -> None:
    """Per-workload rules use the ScaledObject's exact queries, thresholds and HPA name."""
    records = [r for g in groups for r in g["rules"] if "record" in r]
    for w in prod.workloads:
        mine = {r["record"]: r["expr"] for r in records if r.get("labels", {}).get("workload") == w.name}
        assert mine[recorded.WL_UTIL_SUM] == promql.gpu_utilization_query(w.name, w.namespace)
        assert f'horizontalpodautoscaler="{promql.hpa_name(w.name)}"' in mine[recorded.WL_DESIRED]
        # wanted replicas: one series per metric trigger of the ScaledObject, on its query and threshold
        wanted = {r["labels"]["trigger"]: r["expr"] for r in records
                  if r["record"] == recorded.WL_WANTED_BY_TRIGGER and r["labels"]["workload"] == w.name}
        rendered = [t for t in scaled_object_spec(w, "http://p:9090")["triggers"] if t["type"] == "prometheus"]
        assert list(wanted) == [t["name"] for t in rendered]
        for t in rendered:
            assert wanted[t["name"]].startswith(f"ceil(({t['metadata']['query']}) / {t['metadata']['threshold']}")
        per_trigger = f'{recorded.WL_WANTED_BY_TRIGGER}{{workload="{w.name}",namespace="{w.namespace}"}}'
        assert mine[recorded.WL_WANTED] == f"max({per_trigger})"
    assert [w.gpu_target_utilization for w in prod.workloads] == [100, 75]


def test_kube_state_metrics_allowlist_covers_every_node_label_the_rules_read(groups: list[dict[str, Any]],
                                                                             prod: StackConfig) -> None:
    values = cv.kube_state_metrics_values(prod)
    (entry,) = values["kube-state-metrics"]["metricLabelsAllowlist"]
    kind, _, keys = entry.partition("=")
    assert kind == "nodes"
    allowed = {cv.ksm_label_name(k) for k in keys.strip("[]").split(",")}
    # node labels as kube-state-metrics exports them (`label_<key>`), not PromQL's label_replace() of the serving rules
    read = {m for g in groups for r in g["rules"] for m in re.findall(r"\blabel_\w+\b(?!\s*\()", r["expr"])}
    assert read, "the pool rules select nodes by their labels"
    assert read <= allowed, f"labels the rules read but kube-state-metrics does not export: {read - allowed}"


def test_ksm_label_name_matches_kube_state_metrics_sanitising() -> None:
    assert cv.ksm_label_name("platform.gcore-gpu/pool") == "label_platform_gcore_gpu_pool"
    assert cv.ksm_label_name("nvidia.com/gpu.present") == "label_nvidia_com_gpu_present"


@pytest.mark.charts
def test_keda_service_monitor_matches_the_keda_chart() -> None:
    """Selector label and port name as the KEDA chart 2.20.2 renders the operator Service."""
    values = chart_values(versions.KEDA)
    spec = cv.keda_service_monitor("keda")
    assert values["operator"]["name"] == cv.KEDA_OPERATOR
    assert spec["selector"]["matchLabels"] == {"app.kubernetes.io/name": values["operator"]["name"]}
    # The chart's own ServiceMonitor targets the same port name on the same Service.
    assert spec["endpoints"][0]["port"] == values["prometheus"]["operator"]["serviceMonitor"]["port"]
    assert spec["namespaceSelector"] == {"matchNames": ["keda"]}
    assert spec["endpoints"][0]["honorLabels"] is True


# --- what the program sends ---------------------------------------------------------------------------

def _deep_subset(part: Mapping[str, Any], whole: Mapping[str, Any]) -> bool:
    return all(
        k in whole and (_deep_subset(v, whole[k]) if isinstance(v, Mapping) else whole[k] == v)
        for k, v in part.items()
    )


def test_program_exports_the_pool_labels_and_scrapes_keda(rec: Recording) -> None:
    cfg = stack_config(rec.stack)
    values = rec.get("monitoring-release").inputs["values"]
    assert _deep_subset(cv.kube_state_metrics_values(cfg), values)
    monitors = [r for r in rec.resources if r.inputs.get("kind") == "ServiceMonitor"]
    assert [m.inputs["spec"] for m in monitors] == [cv.keda_service_monitor(rec.outputs["namespaces"]["keda"])]
    assert rec.get("keda-release").inputs["values"]["prometheus"]["operator"]["enabled"] is True


def test_every_alert_has_its_runbook_file_and_every_runbook_is_rendered_whole() -> None:
    """Runbooks are text files (renderers/runbooks/<alert>.txt): one per alert, none orphaned, every `${name}` in it
    filled from the stack, and Prometheus' own `{{ $labels.x }}` templates kept for Alertmanager to fill."""
    from tests.vllm_history import prod_with_profile

    cfg = stack_config("prod")
    groups = alerts.rule_groups(cfg)
    served = alerts.rule_groups(prod_with_profile())  # prod with a serving profile: its alert too
    files = {path.stem for path in alerts.RUNBOOKS.glob("*.txt")}
    assert files == alerts.alert_names(groups) | alerts.alert_names(served)
    for group in [*groups, *served]:
        for rule in group["rules"]:
            if "alert" in rule:
                description = rule["annotations"]["description"]
                assert "${" not in description and "\n" not in description, rule["alert"]
    (allocatable,) = [r for g in groups for r in g["rules"] if r.get("alert") == "GpuNodeGpusNotAllocatable"]
    text = allocatable["annotations"]["description"]
    assert f"of GPU pool '{cfg.pools[0].name}'" in text and "`kubectl get node {{ $labels.node }} -o" in text
    with pytest.raises(KeyError, match="pool_name"):
        alerts.runbook("GpuNodeGpusNotAllocatable", {})
