"""The recording rules: the series the alerts, the dashboards and the what-if's reviewers read instead of raw ones.

Label names are the ones the sources really emit:
- dcgm-exporter: `UUID`, `gpu`, `modelName`, `Hostname`, and `pod`/`namespace`/`container` of the pod
  holding the GPU (NVIDIA/dcgm-exporter internal/pkg/rendermetrics/render_metrics.go,
  internal/pkg/transformation/const.go), kept because the ServiceMonitor honours labels; `node`
  comes from our relabeling (renderers/dcgm.py).
- kube-state-metrics (job `kube-state-metrics` in kube-prometheus-stack, honorLabels on): resources as
  `nvidia_com_gpu`, node labels as `label_<sanitised key>` on `kube_node_labels` only for allow-listed
  keys (renderers/chart_values.py `kube_state_metrics_values`).

Pure functions: renderers/rule_groups.py puts `recording_rules()` first in the PrometheusRule's groups.
"""

from __future__ import annotations

from typing import Any

from renderers import dcgm, promql, serving_rules
from renderers.chart_values import KSM_GPU_RESOURCE, KSM_JOB, ksm_label_name, pool_node_labels
from renderers.scaling_triggers import gpu_query, scaling_triggers
from renderers.serving_rules import series as _wl
from stackconfig import GpuPoolConfig, StackConfig, WorkloadConfig
from stacknames import HEADROOM_NAMESPACE, placeholder_name

#: dcgm-exporter's `DCGM_FI_DEV_XID_ERRORS` is a gauge: "Value of the last XID error encountered." (NVIDIA/dcgm-exporter
#: etc/dcp-metrics-included.csv, the list the GPU Operator v26.7.0's exporter 4.6.0-4.8.3 reads), held until the
#: driver reloads. So a *new* XID is a change of that gauge: the warning fires for this long after the change, then
#: clears while the gauge still holds the code. (The exporter's XID count, DCGM_EXP_XID_ERRORS_COUNT, is not in that
#: list; exporting it would replace the operator's whole metrics list with one of ours.)
XID_WINDOW = "5m"
#: How long a GPU's last code is remembered across a scrape gap: a series back after a gap is not a new XID.
XID_MEMORY = "1h"
#: The labels of one GPU in the XID series (the exporter's, plus our `node`).
XID_BY = f"{dcgm.NODE_LABEL}, gpu, {dcgm.GPU_ID_LABEL}, modelName"

# --- recording rule names (dashboards and alerts read these, not the raw series) -----------------

POOL_NODE = "gpu_pool:node:info"
POOL_NODE_READY = "gpu_pool:node_ready:info"
POOL_NODES = "gpu_pool:nodes:count"
POOL_NODES_READY = "gpu_pool:nodes_ready:count"
POOL_NODES_MIN = "gpu_pool:nodes_min:value"
POOL_NODES_MAX = "gpu_pool:nodes_max:value"
POOL_GPUS_ALLOCATABLE = "gpu_pool:gpus_allocatable:sum"
POOL_GPUS_PROVISIONED = "gpu_pool:gpus_provisioned:sum"
POOL_GPUS_ALLOCATED = "gpu_pool:gpus_allocated:sum"
#: The pool's estimated price per GPU-hour (its `pricePerGpuHour`): the dashboards price each pool's GPU-hours at it.
POOL_PRICE = "gpu_pool:price_per_gpu_hour:value"
POD_GPU_REQUESTS = "namespace_pod:gpu_requests:sum"
POD_GPU_PENDING = "namespace_pod:gpu_pod_pending:info"
POD_GPU_RUNNING = "namespace_pod:gpu_pod_running:info"
POD_GPU_UTIL = "namespace_pod:dcgm_gpu_utilization:avg"
NODE_GPU_UTIL = "node:dcgm_gpu_utilization:avg"
NODE_GPUS_REPORTING = "node:dcgm_gpus:count"
#: The last XID code each GPU holds (0: none since the driver loaded).
GPU_XID_LAST = "node_gpu:dcgm_xid_last:max"
#: That code while it is new: the gauge changed to it, or first showed it, within XID_WINDOW.
GPU_XID_NEW = "node_gpu:dcgm_xid_new:max"
GPU_TEMP = "node_gpu:dcgm_gpu_temp:max"
WL_UTIL_SUM = "workload:gpu_utilization:sum"
WL_GPUS_REPORTING = "workload:gpus_reporting:count"
WL_UTIL_AVG = "workload:gpu_utilization:avg"
WL_UTIL_TARGET = "workload:gpu_utilization_target:percent"
WL_GPUS_ALLOCATED = "workload:gpus_allocated:sum"
WL_DESIRED = "workload:replicas_desired:max"
WL_CURRENT = "workload:replicas_current:max"
WL_AVAILABLE = "workload:replicas_available:max"
WL_MAX = "workload:replicas_max:max"
#: Per trigger (label `trigger`): the replicas the HPA's formula asks for on that trigger alone.
WL_WANTED_BY_TRIGGER = "workload:replicas_wanted_by_trigger:ceil"
#: The most any trigger asks for.
WL_WANTED = "workload:replicas_wanted:ceil"
HEADROOM_GPUS_HELD = "headroom:gpus_held:sum"
HEADROOM_GPUS_PENDING = "headroom:gpus_pending:sum"
HEADROOM_GPUS_WANTED = "headroom:gpus_wanted:sum"


def sel(**matchers: str) -> str:
    """`name="value",...` for a PromQL selector."""
    return ",".join(f'{name}="{value}"' for name, value in matchers.items())


def ksm(metric: str, **matchers: str) -> str:
    """A kube-state-metrics series (its job), with more matchers."""
    return f"{metric}{{{sel(job=KSM_JOB, **matchers)}}}"


def _record(name: str, expr: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"record": name, "expr": expr}
    if labels:
        rule["labels"] = dict(labels)
    return rule


#: The label that tells one GPU pool's series from another's (a stack with one pool has it too).
POOL = "pool"


def pool_labels(pool: GpuPoolConfig) -> dict[str, str]:
    return {POOL: pool.name}


def pool_series(metric: str, pool: GpuPoolConfig) -> str:
    """A pool-scoped recorded series: `metric{pool="<name>"}`."""
    return f"{metric}{{{sel(**pool_labels(pool))}}}"


def _workload_labels(cfg: StackConfig, w: WorkloadConfig) -> dict[str, str]:
    pool = cfg.pool_of(w)
    return {"workload": w.name, "namespace": w.namespace, **(pool_labels(pool) if pool is not None else {})}


# --- recording rules -----------------------------------------------------------------------------


def _one_pool_rules(pool: GpuPoolConfig) -> list[dict[str, Any]]:
    """The nodes and GPUs of one pool, found by its node labels."""
    pool_matchers = {ksm_label_name(k): v for k, v in sorted(pool_node_labels(pool).items())}
    ready = ksm("kube_node_status_condition", condition="Ready", status="true")
    labels = pool_labels(pool)
    node, node_ready, nodes = (pool_series(m, pool) for m in (POOL_NODE, POOL_NODE_READY, POOL_NODES))
    return [
        _record(POOL_NODE, f"max by (node) ({ksm('kube_node_labels', **pool_matchers)})", labels),
        _record(POOL_NODE_READY, f"{node} and on (node) (max by (node) ({ready}) == 1)", labels),
        _record(POOL_NODES, f"count({node})", labels),
        _record(POOL_NODES_READY, f"count({node_ready})", labels),
        _record(POOL_NODES_MIN, f"vector({pool.min_nodes})", labels),
        _record(POOL_NODES_MAX, f"vector({pool.max_nodes})", labels),
        _record(
            POOL_GPUS_ALLOCATABLE,
            f"sum({ksm('kube_node_status_allocatable', resource=KSM_GPU_RESOURCE)} and on (node) {node})",
            labels,
        ),
        # Bare-metal nodes are billed per node, whether their GPUs are allocatable or busy.
        _record(POOL_GPUS_PROVISIONED, f"{nodes} * {pool.gpus}", labels),
        _record(POOL_PRICE, f"vector({promql.format_number(pool.price_per_gpu_hour)})", labels),
    ]


def _allocated_rule(pool: GpuPoolConfig) -> dict[str, Any]:
    """GPUs requested by Running pods on the pool's nodes."""
    running = f"{POD_GPU_REQUESTS} and on (namespace, pod) {POD_GPU_RUNNING}"
    on_pool = (f"(max by (namespace, pod, node) ({ksm('kube_pod_info')}) and on (node) "
               f"{pool_series(POOL_NODE, pool)})")
    return _record(POOL_GPUS_ALLOCATED, f"sum({running} and on (namespace, pod) {on_pool})", pool_labels(pool))


def _pool_rules(cfg: StackConfig) -> list[dict[str, Any]]:
    running = ksm("kube_pod_status_phase", phase="Running")
    pending = ksm("kube_pod_status_phase", phase="Pending")
    return [
        *(rule for pool in cfg.pools for rule in _one_pool_rules(pool)),
        _record(
            POD_GPU_REQUESTS,
            f"sum by (namespace, pod) ({ksm('kube_pod_container_resource_requests', resource=KSM_GPU_RESOURCE)})",
        ),
        _record(POD_GPU_PENDING, f"(max by (namespace, pod) ({pending}) == 1) and on (namespace, pod) "
                                 f"({POD_GPU_REQUESTS} > 0)"),
        _record(POD_GPU_RUNNING, f"(max by (namespace, pod) ({running}) == 1) and on (namespace, pod) "
                                 f"({POD_GPU_REQUESTS} > 0)"),
        *(_allocated_rule(pool) for pool in cfg.pools),
    ]


def _dcgm_rules() -> list[dict[str, Any]]:
    util = f"clamp({dcgm.GPU_UTIL_METRIC}, 0, 100)"
    gpu = dcgm.GPU_ID_LABEL
    node = dcgm.NODE_LABEL
    return [
        # `max by (..., UUID)` first: a GPU counts once even if a second scrape path ever duplicates it.
        _record(NODE_GPU_UTIL, f"avg by ({node}) (max by ({node}, {gpu}) ({util}))"),
        _record(NODE_GPUS_REPORTING, f"count by ({node}) (max by ({node}, {gpu}) ({dcgm.GPU_UTIL_METRIC}))"),
        _record(
            POD_GPU_UTIL,
            f'avg by (namespace, pod) (max by (namespace, pod, {gpu}) '
            f'(clamp({dcgm.GPU_UTIL_METRIC}{{namespace!="",pod!=""}}, 0, 100)))',
        ),
        # Per GPU, not per exporter pod: a restarted exporter (new `instance`) continues the same series.
        _record(GPU_XID_LAST, f"max by ({XID_BY}) (DCGM_FI_DEV_XID_ERRORS)"),
        _record(
            GPU_XID_NEW,
            f"{GPU_XID_LAST} > 0 and on ({XID_BY}) ((changes({GPU_XID_LAST}[{XID_WINDOW}]) > 0) or "
            f"({GPU_XID_LAST} unless on ({XID_BY}) last_over_time({GPU_XID_LAST}[{XID_MEMORY}] offset {XID_WINDOW})))",
        ),
        _record(GPU_TEMP, f"max by ({node}, gpu, {gpu}, modelName) (DCGM_FI_DEV_GPU_TEMP)"),
    ]


def _hpa_metric(metric: str, w: WorkloadConfig) -> str:
    return f"max({ksm(metric, namespace=w.namespace, horizontalpodautoscaler=promql.hpa_name(w.name))})"


def _workload_rules(cfg: StackConfig, w: WorkloadConfig) -> list[dict[str, Any]]:
    labels = _workload_labels(cfg, w)
    selector = promql.pods(w.name, w.namespace)
    available = ksm("kube_deployment_status_replicas_available", namespace=w.namespace, deployment=w.name)
    return [
        # Exactly the value KEDA reads (the ScaledObject's query), so dashboards show what KEDA sees.
        _record(WL_UTIL_SUM, gpu_query(w), labels),
        _record(
            WL_GPUS_REPORTING,
            f"count(max by ({dcgm.GPU_ID_LABEL}) ({dcgm.GPU_UTIL_METRIC}{{{selector}}}))",
            labels,
        ),
        # Per-GPU average: the quantity `targetUtilization` is about, whatever gpusPerPod is.
        _record(WL_UTIL_AVG, f"{_wl(WL_UTIL_SUM, w)} / {_wl(WL_GPUS_REPORTING, w)}", labels),
        _record(WL_UTIL_TARGET, f"vector({promql.format_number(w.gpu_target_utilization)})", labels),
        _record(
            WL_GPUS_ALLOCATED,
            f"sum({POD_GPU_REQUESTS}{{{selector}}} and on (namespace, pod) {POD_GPU_RUNNING})",
            labels,
        ),
        _record(WL_DESIRED, _hpa_metric("kube_horizontalpodautoscaler_status_desired_replicas", w), labels),
        _record(WL_CURRENT, _hpa_metric("kube_horizontalpodautoscaler_status_current_replicas", w), labels),
        _record(WL_MAX, _hpa_metric("kube_horizontalpodautoscaler_spec_max_replicas", w), labels),
        _record(WL_AVAILABLE, f"max({available})", labels),
        *_wanted_rules(w, labels),
    ]


def _wanted_rules(w: WorkloadConfig, labels: dict[str, str]) -> list[dict[str, Any]]:
    """What each metric trigger of the ScaledObject asks for alone (the HPA's formula before its tolerance and
    maxReplicas), then the most of them: the HPA takes the largest (kubernetes/kubernetes
    pkg/controller/podautoscaler/horizontal.go `computeReplicasForMetrics`). `AverageValue`: value / threshold.
    `Value` (the serving profile's): value / threshold × ready pods (replica_calculator.go
    `GetExternalMetricReplicas`), ready pods read as the Deployment's available replicas. A cron window asks for at
    most maxReplicas (the stack config refuses more), so it cannot put a workload over it."""
    out = []
    for t in scaling_triggers(w):
        if t["type"] != "prometheus":
            continue
        ratio = f"({t['query']}) / {t['threshold']}"
        if t["metricType"] == "Value":
            ratio += f" * scalar({_wl(WL_AVAILABLE, w)})"
        out.append(_record(WL_WANTED_BY_TRIGGER, f"ceil({ratio})", {**labels, "trigger": t["name"]}))
    out.append(_record(WL_WANTED, f"max({_wl(WL_WANTED_BY_TRIGGER, w)})", labels))
    return out


def _headroom_rules(cfg: StackConfig) -> list[dict[str, Any]]:
    """GPUs the headroom placeholders hold (Running), lack (Pending: preempted by a burst or waiting for a
    node) and should hold (the Deployment's replicas, which KEDA moves with the schedules): one set per pool with
    headroom, each over that pool's placeholder Deployment."""
    return [rule for pool in cfg.pools if pool.headroom is not None for rule in _placeholder_rules(cfg, pool)]


def _placeholder_rules(cfg: StackConfig, pool: GpuPoolConfig) -> list[dict[str, Any]]:
    name = placeholder_name(pool.name, cfg.first_pool(pool))
    held = f"{POD_GPU_REQUESTS}{{{promql.pods(name, HEADROOM_NAMESPACE)}}}"
    replicas = ksm("kube_deployment_spec_replicas", namespace=HEADROOM_NAMESPACE, deployment=name)
    labels = pool_labels(pool)
    return [
        _record(HEADROOM_GPUS_HELD, f"sum({held} and on (namespace, pod) {POD_GPU_RUNNING}) or vector(0)", labels),
        _record(HEADROOM_GPUS_PENDING, f"sum({held} and on (namespace, pod) {POD_GPU_PENDING}) or vector(0)", labels),
        _record(HEADROOM_GPUS_WANTED, f"max({replicas}) * {cfg.headroom_pod_gpus(pool)}", labels),
    ]


def recording_rules(cfg: StackConfig) -> list[dict[str, Any]]:
    """Every recording rule of the stack: pools, DCGM, per workload, headroom."""
    records = [*_pool_rules(cfg), *_dcgm_rules()]
    for w in cfg.workloads:
        records.extend(_workload_rules(cfg, w))
        records.extend(serving_rules.serving_rules(w))
    records.extend(_headroom_rules(cfg))
    return records
