"""GPU platform alerts and recording rules: what an on-call engineer needs when scaling goes wrong.

No comparable stack ships GPU alerts (none in awslabs/ai-on-eks, awslabs/data-on-eks, aws-ia/terraform-aws-eks-
blueprints, GoogleCloudPlatform/ai-on-gke, NVIDIA Cloud Native Stack), and every failure in this platform is
silent: a GPU node that joins without allocatable GPUs, pods Pending behind a pool already at its
maximum, a DCGM scrape that stops (KEDA then runs on its fallback), a scaler that errors. Each alert
here names one of those states, and its description is a runbook: what it means, the likely causes on
Gcore bare metal, what to check with kubectl, what to do.

Pure functions, no Pulumi: the Monitoring component renders `rule_groups()` into a
`monitoring.coreos.com/v1` PrometheusRule, and tests/test_alerts.py runs the very same groups through
`promtool test rules` on synthetic series.

Label names are the ones the sources really emit:
- dcgm-exporter: `UUID`, `gpu`, `modelName`, `Hostname`, and `pod`/`namespace`/`container` of the pod
  holding the GPU (NVIDIA/dcgm-exporter internal/pkg/rendermetrics/render_metrics.go,
  internal/pkg/transformation/const.go), kept because the ServiceMonitor honours labels; `node`
  comes from our relabeling (components/dcgm.py).
- kube-state-metrics (job `kube-state-metrics` in kube-prometheus-stack, honorLabels on): resources as
  `nvidia_com_gpu`, node labels as `label_<sanitised key>` on `kube_node_labels` only for allow-listed
  keys (see `kube_state_metrics_values`).
- KEDA operator 2.20 (`pkg/metricscollector/prommetrics.go`): `keda_scaler_detail_errors_total` and
  `keda_scaled_object_errors_total` with `namespace`/`scaledObject` (see `keda_service_monitor`).
"""

from __future__ import annotations

from typing import Any

from renderers import dcgm, promql
from renderers.chart_values import KEDA_OPERATOR, KSM_GPU_RESOURCE, KSM_JOB, ksm_label_name, pool_node_labels
from stackconfig import StackConfig, WorkloadConfig
from stacknames import GPU_OPERATOR_NAMESPACE, HEADROOM_NAMESPACE, KEDA_NAMESPACE, PLACEHOLDER_NAME

# --- where the metrics come from ---------------------------------------------------------------

#: The GPU Operator's ServiceMonitor has `jobLabel: app`, and the exporter Service's `app` label is this.
DCGM_JOB = dcgm.EXPORTER_APP_LABEL

# --- thresholds (each with its reason) ---------------------------------------------------------

#: Gcore: GPUs become allocatable "up to 5-10 min after the node is ready" (Gcore docs, "Configure GPU autoscaling
#: for Kubernetes", https://gcore.com/docs/cloud/kubernetes/clusters/autoscaling/configure-gpu-autoscaling-for-kubernetes);
#: kubernetes/autoscaler #451 saw up to ~15 min. Past that, the node is broken, not slow.
ALLOCATABLE_GRACE = "15m"
#: A Ready GPU node whose exporter reports nothing: the exporter pod starts within minutes of the operator.
DCGM_MISSING_FOR = "10m"
#: Running pods but no GPU series: KEDA's query is empty and the ScaledObject runs on its fallback after
#: `failureThreshold` polls; 5 minutes rules out one scrape hiccup.
WORKLOAD_METRICS_MISSING_FOR = "5m"
#: The pool is full and a workload lacks replicas: long enough for a large image to pull on a free GPU.
POOL_EXHAUSTED_FOR = "15m"
#: A workload asks for more than maxReplicas: sustained demand, not a spike.
AT_MAX_REPLICAS_FOR = "15m"
KEDA_ERRORS_FOR = "5m"
KEDA_METRICS_ABSENT_FOR = "10m"
#: H100/A100 datasheets throttle near 90 °C; sustained 85 °C on a bare-metal node means cooling trouble.
GPU_TEMP_WARNING_C = 85
GPU_TEMP_CRITICAL_C = 90
GPU_TEMP_WARNING_FOR = "10m"
GPU_TEMP_CRITICAL_FOR = "2m"
#: XID codes that mean broken hardware or a GPU that needs a reset (NVIDIA "XID Errors" catalogue):
#: 48 double-bit ECC, 61/62 internal micro-controller fault, 63/64 ECC page retirement / row remapping,
#: 74 NVLink error, 79 GPU has fallen off the bus, 92 high single-bit ECC rate, 94/95 contained /
#: uncontained ECC error, 119/120 GSP RPC timeout / GSP error, 140 unrecovered ECC error.
#: Others (13, 31, 43, 45 ...) usually come from the application and get a warning.
XID_CRITICAL_CODES: tuple[int, ...] = (48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140)
#: Window over which an XID counts as "recent" (the gauge holds the last XID code).
XID_WINDOW = "5m"

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
POD_GPU_REQUESTS = "namespace_pod:gpu_requests:sum"
POD_GPU_PENDING = "namespace_pod:gpu_pod_pending:info"
POD_GPU_RUNNING = "namespace_pod:gpu_pod_running:info"
POD_GPU_UTIL = "namespace_pod:dcgm_gpu_utilization:avg"
NODE_GPU_UTIL = "node:dcgm_gpu_utilization:avg"
NODE_GPUS_REPORTING = "node:dcgm_gpus:count"
GPU_XID_RECENT = "node_gpu:dcgm_xid_last:max5m"
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
WL_WANTED = "workload:replicas_wanted:ceil"
HEADROOM_GPUS_HELD = "headroom:gpus_held:sum"
HEADROOM_GPUS_PENDING = "headroom:gpus_pending:sum"
HEADROOM_GPUS_WANTED = "headroom:gpus_wanted:sum"
#: Placeholders Pending at maxNodes: the autoscaler cannot restore them; 15 min rules out a node on its way
#: out (scale-down) or a rollout of the placeholders themselves.
HEADROOM_NOT_RESTORED_FOR = "15m"

# --- helpers -------------------------------------------------------------------------------------


def _sel(**matchers: str) -> str:
    return ",".join(f'{name}="{value}"' for name, value in matchers.items())


def _ksm(metric: str, **matchers: str) -> str:
    return f"{metric}{{{_sel(job=KSM_JOB, **matchers)}}}"


def _record(name: str, expr: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"record": name, "expr": expr}
    if labels:
        rule["labels"] = dict(labels)
    return rule


def _alert(
    name: str, expr: str, for_: str, severity: str, summary: str, description: str
) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity},
        "annotations": {"summary": summary, "description": " ".join(description.split())},
    }


def _workload_labels(w: WorkloadConfig) -> dict[str, str]:
    return {"workload": w.name, "namespace": w.namespace}


def _wl(metric: str, w: WorkloadConfig) -> str:
    return f'{metric}{{workload="{w.name}",namespace="{w.namespace}"}}'


# --- recording rules -----------------------------------------------------------------------------


def _pool_rules(cfg: StackConfig) -> list[dict[str, Any]]:
    pool_matchers = {ksm_label_name(k): v for k, v in sorted(pool_node_labels(cfg).items())}
    ready = _ksm("kube_node_status_condition", condition="Ready", status="true")
    running = _ksm("kube_pod_status_phase", phase="Running")
    pending = _ksm("kube_pod_status_phase", phase="Pending")
    return [
        _record(POOL_NODE, f"max by (node) ({_ksm('kube_node_labels', **pool_matchers)})"),
        _record(POOL_NODE_READY, f"{POOL_NODE} and on (node) (max by (node) ({ready}) == 1)"),
        _record(POOL_NODES, f"count({POOL_NODE})"),
        _record(POOL_NODES_READY, f"count({POOL_NODE_READY})"),
        _record(POOL_NODES_MIN, f"vector({cfg.gpu_pool.min_nodes})"),
        _record(POOL_NODES_MAX, f"vector({cfg.gpu_pool.max_nodes})"),
        _record(
            POOL_GPUS_ALLOCATABLE,
            f"sum({_ksm('kube_node_status_allocatable', resource=KSM_GPU_RESOURCE)} and on (node) {POOL_NODE})",
        ),
        # Bare-metal nodes are billed per node, whether their GPUs are allocatable or busy.
        _record(POOL_GPUS_PROVISIONED, f"{POOL_NODES} * {cfg.gpu_pool.gpus}"),
        _record(
            POD_GPU_REQUESTS,
            f"sum by (namespace, pod) ({_ksm('kube_pod_container_resource_requests', resource=KSM_GPU_RESOURCE)})",
        ),
        _record(POD_GPU_PENDING, f"(max by (namespace, pod) ({pending}) == 1) and on (namespace, pod) "
                                 f"({POD_GPU_REQUESTS} > 0)"),
        _record(POD_GPU_RUNNING, f"(max by (namespace, pod) ({running}) == 1) and on (namespace, pod) "
                                 f"({POD_GPU_REQUESTS} > 0)"),
        _record(POOL_GPUS_ALLOCATED, f"sum({POD_GPU_REQUESTS} and on (namespace, pod) {POD_GPU_RUNNING})"),
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
        _record(
            GPU_XID_RECENT,
            f"max by ({node}, gpu, {gpu}, modelName) (max_over_time(DCGM_FI_DEV_XID_ERRORS[{XID_WINDOW}]))",
        ),
        _record(GPU_TEMP, f"max by ({node}, gpu, {gpu}, modelName) (DCGM_FI_DEV_GPU_TEMP)"),
    ]


def _hpa_metric(metric: str, w: WorkloadConfig) -> str:
    return f"max({_ksm(metric, namespace=w.namespace, horizontalpodautoscaler=promql.hpa_name(w.name))})"


def _workload_rules(w: WorkloadConfig) -> list[dict[str, Any]]:
    labels = _workload_labels(w)
    selector = _sel(namespace=w.namespace) + f',pod=~"{promql.pod_name_regex(w.name)}"'
    threshold = promql.format_number(promql.threshold_value(w.target_utilization, w.gpus_per_pod))
    available = _ksm("kube_deployment_status_replicas_available", namespace=w.namespace, deployment=w.name)
    return [
        # Exactly the value KEDA reads (the ScaledObject's query), so dashboards show what KEDA sees.
        _record(WL_UTIL_SUM, promql.gpu_utilization_query(w.name, w.namespace), labels),
        _record(
            WL_GPUS_REPORTING,
            f"count(max by ({dcgm.GPU_ID_LABEL}) ({dcgm.GPU_UTIL_METRIC}{{{selector}}}))",
            labels,
        ),
        # Per-GPU average: the quantity `targetUtilization` is about, whatever gpusPerPod is.
        _record(WL_UTIL_AVG, f"{_wl(WL_UTIL_SUM, w)} / {_wl(WL_GPUS_REPORTING, w)}", labels),
        _record(WL_UTIL_TARGET, f"vector({promql.format_number(w.target_utilization)})", labels),
        _record(
            WL_GPUS_ALLOCATED,
            f"sum({POD_GPU_REQUESTS}{{{selector}}} and on (namespace, pod) {POD_GPU_RUNNING})",
            labels,
        ),
        _record(WL_DESIRED, _hpa_metric("kube_horizontalpodautoscaler_status_desired_replicas", w), labels),
        _record(WL_CURRENT, _hpa_metric("kube_horizontalpodautoscaler_status_current_replicas", w), labels),
        _record(WL_MAX, _hpa_metric("kube_horizontalpodautoscaler_spec_max_replicas", w), labels),
        _record(WL_AVAILABLE, f"max({available})", labels),
        # What the metric alone asks for (the HPA formula before tolerance and maxReplicas).
        _record(WL_WANTED, f"ceil({_wl(WL_UTIL_SUM, w)} / {threshold})", labels),
    ]


def _headroom_rules(cfg: StackConfig) -> list[dict[str, Any]]:
    """GPUs the headroom placeholders hold (Running), lack (Pending: preempted by a burst or waiting for a
    node) and should hold (the Deployment's replicas, which KEDA moves with the schedules)."""
    held = f'{POD_GPU_REQUESTS}{{namespace="{HEADROOM_NAMESPACE}"}}'
    replicas = _ksm("kube_deployment_spec_replicas", namespace=HEADROOM_NAMESPACE, deployment=PLACEHOLDER_NAME)
    return [
        _record(HEADROOM_GPUS_HELD, f"sum({held} and on (namespace, pod) {POD_GPU_RUNNING}) or vector(0)"),
        _record(HEADROOM_GPUS_PENDING, f"sum({held} and on (namespace, pod) {POD_GPU_PENDING}) or vector(0)"),
        _record(HEADROOM_GPUS_WANTED, f"max({replicas}) * {cfg.headroom_pod_gpus}"),
    ]


def _headroom_alerts(cfg: StackConfig) -> list[dict[str, Any]]:
    """Only with headroom: the pool is at maxNodes, so Pending placeholders will not get their node back.

    `warning`, the lowest severity that reaches a receiver: kube-prometheus-stack's default Alertmanager
    config inhibits `severity: info` alerts (its InfoInhibitor rule) unless a warning fires beside them.
    """
    pool, h = cfg.gpu_pool, cfg.gpu_pool.headroom
    if h is None:
        return []
    return [
        _alert(
            "GpuHeadroomNotRestored",
            f"({HEADROOM_GPUS_PENDING} > 0) and on () ({POOL_NODES} >= {pool.max_nodes})",
            HEADROOM_NOT_RESTORED_FOR,
            "warning",
            f"GPU headroom lacks {{{{ $value }}}} GPU(s) and the pool is at maxNodes ({pool.max_nodes})",
            f"""{{{{ $value }}}} GPU(s) of the headroom (placeholder pods in namespace {HEADROOM_NAMESPACE})
            have been Pending for {HEADROOM_NOT_RESTORED_FOR}: workloads took their GPUs, and the pool '{pool.name}'
            is at gpuPool.maxNodes = {pool.max_nodes}, so the Cluster Autoscaler adds no node for them. Nothing
            is down, but the next burst waits for a node (20-25 min on bare metal plus GPU initialisation)
            instead of starting in seconds. Check: `kubectl -n {HEADROOM_NAMESPACE} get pods -o wide`;
            `kubectl get nodes -l {",".join(f"{k}={v}" for k, v in sorted(pool_node_labels(cfg).items()))}`;
            the scaling dashboard's headroom panel. Fix: raise gpuPool.maxNodes (and the policy budget), or
            accept running without spare GPUs at peak; lower gpuPool.headroom.gpus if the peak is the new
            normal.""",
        )
    ]


# --- alerts --------------------------------------------------------------------------------------


def _alerts(cfg: StackConfig, gpu_operator_namespace: str, keda_namespace: str) -> list[dict[str, Any]]:
    pool = cfg.gpu_pool
    ns = gpu_operator_namespace
    pool_labels = ", ".join(f"{k}={v}" for k, v in sorted(pool_node_labels(cfg).items()))
    node_selector = ",".join(f"{k}={v}" for k, v in sorted(pool_node_labels(cfg).items()))
    critical_xid = " or ".join(f"{GPU_XID_RECENT} == {code}" for code in XID_CRITICAL_CODES)
    gpu_ref = "GPU {{ $labels.gpu }} ({{ $labels.UUID }}, {{ $labels.modelName }}) on node {{ $labels.node }}"
    return [
        _alert(
            "GpuNodeGpusNotAllocatable",
            f"{POOL_NODE_READY} unless on (node) "
            f"({_ksm('kube_node_status_allocatable', resource=KSM_GPU_RESOURCE)} > 0)",
            ALLOCATABLE_GRACE,
            "warning",
            "GPU node {{ $labels.node }} is Ready but offers no allocatable nvidia.com/gpu",
            f"""Node {{{{ $labels.node }}}} of GPU pool '{pool.name}' ({pool_labels}) has been Ready for
            {ALLOCATABLE_GRACE} without allocatable nvidia.com/gpu. GPU pods cannot schedule on it, the Cluster
            Autoscaler still counts it as capacity, and the bare-metal node is billed. Likely causes on Gcore
            bare metal: the GPU Operator's device plugin or validator is not running there (a pool taint it
            does not tolerate, feature discovery has not labelled the node), the driver preinstalled in
            Gcore's image does not load, or a GPU fell off the bus (see GpuXidErrorCritical). Check:
            `kubectl get node {{{{ $labels.node }}}} -o jsonpath='{{.status.allocatable}}'`;
            `kubectl -n {ns} get pods -o wide --field-selector spec.nodeName={{{{ $labels.node }}}}`;
            `kubectl -n {ns} logs -l app=nvidia-operator-validator --all-containers --tail=50`;
            `kubectl describe node {{{{ $labels.node }}}}` (taints, conditions). Fix: restart the failing
            operator pod on that node; if the validator reports driver or GPU errors, cordon and drain the
            node and delete it so the pool replaces it (autohealing is off for GPU pools).""",
        ),
        _alert(
            "GpuPodPendingTooLong",
            # Placeholders are Pending by design after a burst (GpuHeadroomNotRestored covers them).
            f'{POD_GPU_PENDING}{{namespace!="{HEADROOM_NAMESPACE}"}}',
            f"{pool.provision_minutes}m",
            "warning",
            "GPU pod {{ $labels.namespace }}/{{ $labels.pod }} has been Pending longer than a GPU node takes "
            "to provision",
            f"""Pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} requests nvidia.com/gpu and has been Pending
            for {pool.provision_minutes} minutes, the time a new node of flavor {pool.flavor} needs to boot and
            expose its GPUs. Pending pods also count in the HPA's replica total and dilute the average, so a
            workload can stall below its target. Likely causes: the pool is at maxNodes
            ({pool.max_nodes}, see GpuPoolAtMaxNodes); Gcore has no free bare-metal capacity of this flavor in
            the region; the Cluster Autoscaler's max-node-provision-time expired; a new node came up without
            allocatable GPUs (see GpuNodeGpusNotAllocatable); the pod does not tolerate the pool's taints or
            select its labels. Check: `kubectl -n {{{{ $labels.namespace }}}} describe pod {{{{ $labels.pod }}}}`
            (Events: FailedScheduling / TriggeredScaleUp / NotTriggerScaleUp);
            `kubectl get nodes -l {node_selector}`;
            `kubectl -n kube-system get events --field-selector reason=NotTriggerScaleUp`. Fix: raise
            gpuPool.maxNodes, or lower the workload's maxReplicas, or ask Gcore about capacity; fix node
            selectors or tolerations if the autoscaler says the pod would not fit a new node.""",
        ),
        _alert(
            "GpuPoolAtMaxNodes",
            f"({WL_DESIRED} > {WL_AVAILABLE}) and on () ({POOL_NODES} >= {pool.max_nodes})",
            POOL_EXHAUSTED_FOR,
            "critical",
            f"GPU pool is at maxNodes ({pool.max_nodes}) and workload {{{{ $labels.namespace }}}}/"
            "{{ $labels.workload }} wants more replicas than are available",
            f"""The GPU pool '{pool.name}' has reached gpuPool.maxNodes = {pool.max_nodes}, and the HPA of
            workload {{{{ $labels.namespace }}}}/{{{{ $labels.workload }}}} wants more replicas than are
            available. The Cluster Autoscaler will not add a node, so the missing replicas stay Pending and the
            workload runs above its utilisation target. Check: `kubectl -n {{{{ $labels.namespace }}}} get hpa
            keda-hpa-{{{{ $labels.workload }}}}`; `kubectl -n {{{{ $labels.namespace }}}} get pods
            --field-selector=status.phase=Pending`; `kubectl get nodes -l {node_selector}`. Fix:
            raise gpuPool.maxNodes (each {pool.flavor} node adds {pool.gpus} GPUs and its bare-metal price) and
            `pulumi up`; or lower maxReplicas / gpusPerPod of the workloads sharing the pool; or free GPUs held
            by other pods (`kubectl get pods -A -o wide | grep <gpu-node>`).""",
        ),
        _alert(
            "GpuWorkloadAtMaxReplicas",
            f"{WL_WANTED} > {WL_MAX}",
            AT_MAX_REPLICAS_FOR,
            "warning",
            "Workload {{ $labels.namespace }}/{{ $labels.workload }} wants {{ $value }} replicas, more than "
            "its maxReplicas",
            f"""For {AT_MAX_REPLICAS_FOR}, the GPU utilisation of {{{{ $labels.namespace }}}}/
            {{{{ $labels.workload }}}} has asked for {{{{ $value }}}} replicas (query sum / threshold), more than
            the ScaledObject's maxReplicaCount. The HPA is capped (condition ScalingLimited / TooManyReplicas)
            and every GPU runs above target: latency grows. Check: `kubectl -n {{{{ $labels.namespace }}}}
            describe hpa keda-hpa-{{{{ $labels.workload }}}}` (conditions, current metric vs target). Fix: raise
            the workload's maxReplicas, and gpuPool.maxNodes if the pool cannot hold the extra GPUs (the stack
            config refuses maxReplicas that cannot fit); or make each replica faster.""",
        ),
        _alert(
            "DcgmExporterMissing",
            f"{POOL_NODE_READY} unless on (node) {NODE_GPUS_REPORTING}",
            DCGM_MISSING_FOR,
            "critical",
            "No DCGM GPU metrics from Ready GPU node {{ $labels.node }}",
            f"""Prometheus has no {dcgm.GPU_UTIL_METRIC} series with node="{{{{ $labels.node }}}}" although the
            node is Ready in the GPU pool. Workloads on it are invisible to KEDA: their queries miss those GPUs,
            and an empty query puts the ScaledObject on its fallback. Likely causes: the nvidia-dcgm-exporter
            pod on the node is not running (GPU Operator still installing, driver problem, scrape timeouts on
            busy H100 nodes); Prometheus no longer selects the ServiceMonitor {dcgm.EXPORTER_SERVICE} in
            namespace {ns} (kube-prometheus-stack serviceMonitorSelector); the `node` relabeling changed.
            Check: `kubectl -n {ns} get pods -l app={dcgm.EXPORTER_APP_LABEL} -o wide`;
            `kubectl -n {ns} get servicemonitor {dcgm.EXPORTER_SERVICE} -o yaml`; Prometheus UI, Status >
            Targets, job {DCGM_JOB} (`up` and the last scrape error). Fix: restart the exporter pod on the node;
            if every node is missing, repair the ServiceMonitor selection.""",
        ),
        _alert(
            "GpuWorkloadMetricsMissing",
            f"{WL_AVAILABLE} > 0 unless on (namespace, workload) {WL_GPUS_REPORTING}",
            WORKLOAD_METRICS_MISSING_FOR,
            "critical",
            "KEDA's GPU query for {{ $labels.namespace }}/{{ $labels.workload }} returns nothing while its "
            "pods run",
            """Workload {{ $labels.namespace }}/{{ $labels.workload }} has available replicas, but no GPU series
            carries its pods' `pod`/`namespace` labels, so the ScaledObject's query is empty. With
            ignoreNullValues "false" KEDA counts that as an error and, after failureThreshold polls, holds the
            fallback replica count: the workload no longer scales on load. Likely causes: the container lacks
            an nvidia.com/gpu limit (dcgm-exporter maps GPUs to pods only then); GPU time-slicing or MIG is on
            (dcgm-exporter cannot map shared GPUs to pods); the ServiceMonitor lost honorLabels (the labels
            become exported_pod / exported_namespace); the exporter is down (see DcgmExporterMissing).
            Check in Prometheus: `DCGM_FI_DEV_GPU_UTIL{namespace="{{ $labels.namespace }}"}` and
            `DCGM_FI_DEV_GPU_UTIL{exported_namespace="{{ $labels.namespace }}"}`;
            `kubectl -n {{ $labels.namespace }} describe scaledobject {{ $labels.workload }}` (Fallback
            condition). Fix: restore the GPU limit or honorLabels (both set by this stack: run `pulumi up`), or
            disable time-slicing for this pool.""",
        ),
        _alert(
            "KedaScalerErrors",
            "sum by (namespace, scaledObject) (rate(keda_scaler_detail_errors_total[5m])) > 0"
            " or sum by (namespace, scaledObject) (rate(keda_scaled_object_errors_total[5m])) > 0",
            KEDA_ERRORS_FOR,
            "warning",
            "KEDA scaler of ScaledObject {{ $labels.namespace }}/{{ $labels.scaledObject }} is failing",
            f"""KEDA has failed to read the trigger of ScaledObject {{{{ $labels.namespace }}}}/
            {{{{ $labels.scaledObject }}}} for {KEDA_ERRORS_FOR}. After failureThreshold failures the HPA gets
            the fallback replica count instead of a measurement, so the workload stops following its load.
            Likely causes: the query returns an empty result (no GPU series, see GpuWorkloadMetricsMissing;
            with ignoreNullValues "false" that is an error by design); Prometheus is unreachable or restarting
            (serverAddress); the query returns several series. Check: `kubectl -n {{{{ $labels.namespace }}}}
            describe scaledobject {{{{ $labels.scaledObject }}}}`; `kubectl -n {keda_namespace} logs
            deploy/{KEDA_OPERATOR} --tail=100 | grep {{{{ $labels.scaledObject }}}}`; run the trigger's query in
            the Prometheus UI. Fix the cause; KEDA resumes on the next successful poll.""",
        ),
        _alert(
            "KedaMetricsAbsent",
            f'absent(up{{{_sel(job=KEDA_OPERATOR, namespace=keda_namespace)}}} == 1)',
            KEDA_METRICS_ABSENT_FOR,
            "warning",
            "Prometheus is not scraping the KEDA operator, so KEDA scaler errors cannot alert",
            f"""No successful scrape of job {KEDA_OPERATOR} in namespace {keda_namespace} for
            {KEDA_METRICS_ABSENT_FOR}. KedaScalerErrors cannot fire while this lasts. Likely causes: the KEDA
            operator pod is down (then nothing scales at all), the Service lost its `metrics` port (chart value
            prometheus.operator.enabled), or Prometheus does not select the ServiceMonitor. Check:
            `kubectl -n {keda_namespace} get pods,svc`; `kubectl -n {keda_namespace} get svc {KEDA_OPERATOR}
            -o jsonpath='{{.spec.ports}}'`; Prometheus UI, Status > Targets. Fix: restore the operator or the
            scrape (`pulumi up` re-applies both).""",
        ),
        _alert(
            "GpuXidErrorCritical",
            critical_xid,
            "0m",
            "critical",
            f"{gpu_ref} reported XID {{{{ $value }}}}, a hardware-level fault",
            f"""{gpu_ref} reported XID {{{{ $value }}}} within the last {XID_WINDOW}. This XID means failed
            memory (ECC), a lost NVLink, a GPU off the bus or a firmware (GSP) fault: pods on this GPU are
            failing or will, and the GPU needs at least a reset. On Gcore bare metal this is a hardware case
            for Gcore support. Check: `kubectl -n {ns} exec ds/nvidia-dcgm-exporter -- nvidia-smi -q`
            on that node (ECC, retired pages, remapped rows); `kubectl get pods -A -o wide
            --field-selector spec.nodeName={{{{ $labels.node }}}}`. Fix: `kubectl cordon {{{{ $labels.node }}}}`,
            drain it (`kubectl drain {{{{ $labels.node }}}} --ignore-daemonsets --delete-emptydir-data`), then
            reboot the server or delete the node so the pool replaces it; open a Gcore ticket with the GPU UUID
            if the XID returns. If the value persists after remediation, restart the node's dcgm-exporter pod.""",
        ),
        _alert(
            "GpuXidError",
            f"{GPU_XID_RECENT} > 0 unless ({critical_xid})",
            "0m",
            "warning",
            f"{gpu_ref} reported XID {{{{ $value }}}}",
            f"""{gpu_ref} reported XID {{{{ $value }}}} within the last {XID_WINDOW}. Most non-hardware XIDs
            (13 graphics engine exception, 31 memory page fault, 43 GPU stopped processing, 45 preemptive
            cleanup) come from the application on that GPU: a bad kernel, out-of-bounds access or a killed
            process. Check: which pod holds the GPU (`DCGM_FI_DEV_GPU_UTIL{{UUID="{{{{ $labels.UUID }}}}"}}` in
            Prometheus shows its pod label) and that pod's logs; `kubectl get events -A
            --field-selector involvedObject.name={{{{ $labels.node }}}}`. Fix: the application; if XIDs repeat
            across different workloads on the same GPU, treat it as hardware (cordon, drain, replace).""",
        ),
        _alert(
            "GpuTemperatureHigh",
            f"{GPU_TEMP} > {GPU_TEMP_WARNING_C}",
            GPU_TEMP_WARNING_FOR,
            "warning",
            f"{gpu_ref} runs at {{{{ $value }}}} °C",
            f"""{gpu_ref} has been above {GPU_TEMP_WARNING_C} °C for {GPU_TEMP_WARNING_FOR}. Near 90 °C the
            GPU throttles its clocks, so every pod on it slows down and utilisation-based scaling adds
            replicas to make up for it. On Gcore bare metal the usual causes are datacenter cooling or a
            failing fan in that server. Check: `DCGM_FI_DEV_CLOCK_THROTTLE_REASONS` and
            `DCGM_FI_DEV_POWER_USAGE` for this GPU in Prometheus; the other GPUs of the node (one hot GPU:
            hardware; all hot: cooling). Fix: report the server to Gcore support with the node name; if it
            keeps rising, cordon and drain the node.""",
        ),
        _alert(
            "GpuTemperatureCritical",
            f"{GPU_TEMP} > {GPU_TEMP_CRITICAL_C}",
            GPU_TEMP_CRITICAL_FOR,
            "critical",
            f"{gpu_ref} is at {{{{ $value }}}} °C, throttling or about to shut down",
            f"""{gpu_ref} has been above {GPU_TEMP_CRITICAL_C} °C for {GPU_TEMP_CRITICAL_FOR}: the GPU is
            throttling hard and may shut down to protect itself, killing the pods on it. Fix now: `kubectl
            cordon {{{{ $labels.node }}}}` and `kubectl drain {{{{ $labels.node }}}} --ignore-daemonsets
            --delete-emptydir-data` so the pods move to healthy GPUs (the autoscaler adds a node if the pool
            allows), then open a Gcore support ticket for the server.""",
        ),
    ]


def rule_groups(
    cfg: StackConfig, *, gpu_operator_namespace: str = GPU_OPERATOR_NAMESPACE, keda_namespace: str = KEDA_NAMESPACE
) -> list[dict[str, Any]]:
    """PrometheusRule `spec.groups`: the recording rules first (alerts read them), then the alerts."""
    records = [*_pool_rules(cfg), *_dcgm_rules()]
    for w in cfg.workloads:
        records.extend(_workload_rules(w))
    records.extend(_headroom_rules(cfg))
    return [
        {"name": "gpu-platform.rules", "rules": records},
        {"name": "gpu-platform.alerts",
         "rules": [*_alerts(cfg, gpu_operator_namespace, keda_namespace), *_headroom_alerts(cfg)]},
    ]


def alert_names(groups: list[dict[str, Any]]) -> set[str]:
    """Every alert defined in `groups` (the tests require a promtool case for each)."""
    return {rule["alert"] for group in groups for rule in group["rules"] if "alert" in rule}


def recorded_names(groups: list[dict[str, Any]]) -> set[str]:
    """Every recording rule name in `groups` (dashboards may only read these)."""
    return {rule["record"] for group in groups for rule in group["rules"] if "record" in rule}
