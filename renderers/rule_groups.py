"""GPU platform alerts: what an on-call engineer needs when scaling goes wrong, and the PrometheusRule's groups.

No comparable stack ships GPU alerts (none in awslabs/ai-on-eks, awslabs/data-on-eks, aws-ia/terraform-aws-eks-
blueprints, GoogleCloudPlatform/ai-on-gke, NVIDIA Cloud Native Stack), and every failure in this platform is
silent: a GPU node that joins without allocatable GPUs, pods Pending behind a pool already at its
maximum, a DCGM scrape that stops (KEDA then runs on its fallback), a scaler that errors. Each alert
here names one of those states, and its description is a runbook (renderers/runbooks/<alert>.txt): what it
means, the likely causes on Gcore bare metal, what to check with kubectl, what to do.

Pure functions, no Pulumi: the Monitoring component renders `rule_groups()` into a
`monitoring.coreos.com/v1` PrometheusRule, and tests/test_alerts.py runs the very same groups through
`promtool test rules` on synthetic series. The alerts read the recording rules of renderers/recording_rules.py
and the KEDA operator's own series (2.20, `pkg/metricscollector/prommetrics.go`): `keda_scaler_detail_errors_total`
and `keda_scaled_object_errors_total` with `namespace`/`scaledObject` (renderers/chart_values.py
`keda_service_monitor`).
"""

from __future__ import annotations

import functools
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from renderers import dcgm, promql, serving_rules
from renderers.chart_values import KEDA_OPERATOR, KSM_GPU_RESOURCE, pool_node_labels
from renderers.recording_rules import (
    GPU_TEMP,
    GPU_XID_LAST,
    GPU_XID_NEW,
    HEADROOM_GPUS_PENDING,
    NODE_GPUS_REPORTING,
    POD_GPU_PENDING,
    POOL_NODE_READY,
    POOL_NODES,
    WL_AVAILABLE,
    WL_DESIRED,
    WL_GPUS_REPORTING,
    WL_MAX,
    WL_WANTED,
    XID_WINDOW,
    ksm,
    pool_labels,
    pool_series,
    recording_rules,
    sel,
)
from stackconfig import GpuPoolConfig, StackConfig, WorkloadConfig
from stacknames import GPU_OPERATOR_NAMESPACE, GPU_RESOURCE, HEADROOM_NAMESPACE, KEDA_NAMESPACE

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
#: Pods a namespace's GPU quota refuses are never created (no Pending pod, no other alert): long enough for a
#: rollout's brief dip below the wanted count (maxSurge 0) to pass.
QUOTA_REFUSES_FOR = "10m"
#: Placeholders Pending at maxNodes: the autoscaler cannot restore them; 15 min rules out a node on its way
#: out (scale-down) or a rollout of the placeholders themselves.
HEADROOM_NOT_RESTORED_FOR = "15m"


def _alert(name: str, expr: str, for_: str, severity: str, summary: str, values: Mapping[str, object],
           labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """An alert whose description is its runbook (`runbooks/<name>.txt`) with `values` in."""
    return {
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity, **(labels or {})},
        "annotations": {"summary": summary, "description": " ".join(runbook(name, values).split())},
    }


def _headroom_alerts(cfg: StackConfig, keda_namespace: str, gpu_operator_namespace: str) -> list[dict[str, Any]]:
    """Only with headroom: the pool is at maxNodes, so Pending placeholders will not get their node back (one alert
    per pool with headroom).

    `warning`, the lowest severity that reaches a receiver: kube-prometheus-stack's default Alertmanager
    config inhibits `severity: info` alerts (its InfoInhibitor rule) unless a warning fires beside them.
    """
    out = []
    for pool in cfg.pools:
        if pool.headroom is None:
            continue
        values = runbook_values(cfg, gpu_operator_namespace, keda_namespace, pool)
        out.append(_alert(
            "GpuHeadroomNotRestored",
            f"({pool_series(HEADROOM_GPUS_PENDING, pool)} > 0) and on () "
            f"({pool_series(POOL_NODES, pool)} >= {pool.max_nodes})", HEADROOM_NOT_RESTORED_FOR, "warning",
            f"GPU headroom lacks {{{{ $value }}}} GPU(s) and the pool '{pool.name}' is at maxNodes "
            f"({pool.max_nodes})", values, pool_labels(pool)))
    return out


# --- alerts --------------------------------------------------------------------------------------

#: An alert's description (its runbook) is the text file `runbooks/<alert>.txt`.
RUNBOOKS = Path(__file__).resolve().parent / "runbooks"
#: A GPU as dcgm-exporter's labels name it, in Prometheus' own template language.
GPU_REF = "GPU {{ $labels.gpu }} ({{ $labels.UUID }}, {{ $labels.modelName }}) on node {{ $labels.node }}"


class _Runbook(string.Template):
    """Only `${name}` is replaced; Prometheus' own `{{ $labels.node }}` and `{{ $value }}` pass through."""

    # A string, as string.Template documents it (its metaclass compiles it); typeshed types the compiled pattern.
    pattern = r"(?P<escaped>(?!x)x)|(?P<named>(?!x)x)|\$\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<invalid>(?!x)x)"  # type: ignore[assignment]


@functools.cache
def _runbook_text(alert: str) -> str:
    return (RUNBOOKS / f"{alert}.txt").read_text(encoding="utf-8")


def runbook(alert: str, values: Mapping[str, object]) -> str:
    """The alert's runbook with the stack's values in; a placeholder without a value is a KeyError."""
    return _Runbook(_runbook_text(alert)).substitute(values)


def runbook_values(cfg: StackConfig, gpu_operator_namespace: str, keda_namespace: str,
                   pool: GpuPoolConfig | None = None) -> dict[str, object]:
    """What the runbooks may say: the pool (`pool`, else the first) as the stack configures it, the namespaces, and
    the thresholds above."""
    pool = pool if pool is not None else cfg.pools[0]
    labels = sorted(pool_node_labels(pool).items())
    return {
        "pool_name": pool.name,
        "pool_key": cfg.pool_key(pool),
        "pool_flavor": pool.flavor,
        "pool_gpus": pool.gpus,
        "pool_max_nodes": pool.max_nodes,
        "pool_provision_minutes": pool.provision_minutes,
        "pool_labels": ", ".join(f"{k}={v}" for k, v in labels),
        "node_selector": ",".join(f"{k}={v}" for k, v in labels),
        "gpu_operator_namespace": gpu_operator_namespace,
        "keda_namespace": keda_namespace,
        "gpu_ref": GPU_REF,
        "EXPORTER_APP_LABEL": dcgm.EXPORTER_APP_LABEL,
        "EXPORTER_SERVICE": dcgm.EXPORTER_SERVICE,
        "GPU_UTIL_METRIC": dcgm.GPU_UTIL_METRIC,
        "DCGM_JOB": DCGM_JOB,
        "KEDA_OPERATOR": KEDA_OPERATOR,
        "HEADROOM_NAMESPACE": HEADROOM_NAMESPACE,
        "ALLOCATABLE_GRACE": ALLOCATABLE_GRACE,
        "AT_MAX_REPLICAS_FOR": AT_MAX_REPLICAS_FOR,
        "KEDA_ERRORS_FOR": KEDA_ERRORS_FOR,
        "KEDA_METRICS_ABSENT_FOR": KEDA_METRICS_ABSENT_FOR,
        "XID_WINDOW": XID_WINDOW,
        "GPU_TEMP_WARNING_C": GPU_TEMP_WARNING_C,
        "GPU_TEMP_WARNING_FOR": GPU_TEMP_WARNING_FOR,
        "GPU_TEMP_CRITICAL_C": GPU_TEMP_CRITICAL_C,
        "GPU_TEMP_CRITICAL_FOR": GPU_TEMP_CRITICAL_FOR,
        "HEADROOM_NOT_RESTORED_FOR": HEADROOM_NOT_RESTORED_FOR,
        "QUOTA_REFUSES_FOR": QUOTA_REFUSES_FOR,
    }



def _pending(cfg: StackConfig, pool: GpuPoolConfig) -> str | None:
    """The Pending GPU pods an alert of `pool` watches: each pool's workloads' pods, never the placeholders (Pending
    by design after a burst; GpuHeadroomNotRestored covers them); the first pool also takes the GPU pods of no
    workload here (other stacks deploy onto it: the `gpuPool` output is it)."""
    others = f'{POD_GPU_PENDING}{{namespace!="{HEADROOM_NAMESPACE}"}}'

    def pods(workloads: list[WorkloadConfig]) -> str:
        return " or ".join(f"{POD_GPU_PENDING}{{{promql.pods(w.name, w.namespace)}}}" for w in workloads)

    elsewhere = [w for p in cfg.pools if p != pool for w in cfg.workloads_on(p)]
    if cfg.first_pool(pool):
        return f"{others} unless on (namespace, pod) ({pods(elsewhere)})" if elsewhere else others
    own = cfg.workloads_on(pool)
    return pods(own) if own else None


def _pool_alerts(cfg: StackConfig, pool: GpuPoolConfig, values: Mapping[str, object]) -> list[dict[str, Any]]:
    """The alerts about one GPU pool: its nodes, its Pending pods, its maxNodes."""
    labels = pool_labels(pool)
    node_ready, nodes = pool_series(POOL_NODE_READY, pool), pool_series(POOL_NODES, pool)
    on_pool = f"{{{sel(**labels)}}}"
    named = f" '{pool.name}'"
    of_pool = f" of pool{named}"
    out = [_alert(
        "GpuNodeGpusNotAllocatable",
        f"{node_ready} unless on (node) ({ksm('kube_node_status_allocatable', resource=KSM_GPU_RESOURCE)} > 0)",
        ALLOCATABLE_GRACE, "warning",
        f"GPU node {{{{ $labels.node }}}}{of_pool} is Ready but offers no allocatable nvidia.com/gpu", values, labels)]
    pending = _pending(cfg, pool)
    if pending is not None:
        out.append(_alert(
            "GpuPodPendingTooLong", pending, f"{pool.provision_minutes}m", "warning",
            "GPU pod {{ $labels.namespace }}/{{ $labels.pod }} has been Pending longer than a GPU node"
            f"{of_pool} takes to provision", values, labels))
    return [*out, _alert(
        "GpuPoolAtMaxNodes",
        f"({WL_DESIRED}{on_pool} > {WL_AVAILABLE}{on_pool}) and on () ({nodes} >= {pool.max_nodes})",
        POOL_EXHAUSTED_FOR, "critical",
        f"GPU pool{named} is at maxNodes ({pool.max_nodes}) and workload {{{{ $labels.namespace }}}}/"
        "{{ $labels.workload }} wants more replicas than are available", values, labels,
    ), _alert(
        "GpuWorkloadAtMaxReplicas", f"{WL_WANTED}{on_pool} > {WL_MAX}{on_pool}", AT_MAX_REPLICAS_FOR, "warning",
        "Workload {{ $labels.namespace }}/{{ $labels.workload }} wants {{ $value }} replicas, more than its "
        "maxReplicas", values, labels,
    ), _alert(
        "DcgmExporterMissing", f"{node_ready} unless on (node) {NODE_GPUS_REPORTING}", DCGM_MISSING_FOR, "critical",
        "No DCGM GPU metrics from Ready GPU node {{ $labels.node }}", values, labels,
    )]


def _hardware_xid(series: str) -> str:
    """`series` where its value is one of XID_CRITICAL_CODES."""
    return " or ".join(f"{series} == {code}" for code in XID_CRITICAL_CODES)


def _alerts(cfg: StackConfig, keda_namespace: str, gpu_operator_namespace: str) -> list[dict[str, Any]]:
    values = runbook_values(cfg, gpu_operator_namespace, keda_namespace)
    new_xid = f"{GPU_XID_NEW} unless ({_hardware_xid(GPU_XID_NEW)})"
    pools = [alert for pool in cfg.pools
             for alert in _pool_alerts(cfg, pool, runbook_values(cfg, gpu_operator_namespace, keda_namespace, pool))]
    return [
        *pools,
        _alert("GpuWorkloadMetricsMissing", f"{WL_AVAILABLE} > 0 unless on (namespace, workload) {WL_GPUS_REPORTING}",
               WORKLOAD_METRICS_MISSING_FOR, "critical", "KEDA's GPU query for {{ $labels.namespace }}/"
               "{{ $labels.workload }} returns nothing while its pods run", values),
        # A namespace with a GPU quota (a team's, `teams:`) whose Deployments lack pods: the quota refuses them.
        # kube-state-metrics labels a quota's resource as the quota names it, unsanitised (internal/store/
        # resourcequota.go), unlike a node's allocatable.
        _alert("GpuQuotaRefusesPods",
               f"sum by (namespace, deployment) ({ksm('kube_deployment_spec_replicas')}) - sum by (namespace, "
               f"deployment) ({ksm('kube_deployment_status_replicas')}) > 0 and on (namespace) "
               f"{ksm('kube_resourcequota', resource=f'requests.{GPU_RESOURCE}', type='hard')}",
               QUOTA_REFUSES_FOR, "warning", "{{ $value }} pod(s) of {{ $labels.namespace }}/{{ $labels.deployment }}"
               " are not created: the namespace's GPU quota refuses them", values),
        _alert("KedaScalerErrors",
               "sum by (namespace, scaledObject) (rate(keda_scaler_detail_errors_total[5m])) > 0"
               " or sum by (namespace, scaledObject) (rate(keda_scaled_object_errors_total[5m])) > 0",
               KEDA_ERRORS_FOR, "warning",
               "KEDA scaler of ScaledObject {{ $labels.namespace }}/{{ $labels.scaledObject }} is failing", values),
        _alert("KedaMetricsAbsent", f'absent(up{{{sel(job=KEDA_OPERATOR, namespace=keda_namespace)}}} == 1)',
               KEDA_METRICS_ABSENT_FOR, "warning",
               "Prometheus is not scraping the KEDA operator, so KEDA scaler errors cannot alert", values),
        # While the gauge holds a hardware code: until the GPU is reset or the node replaced (its runbook says so).
        _alert("GpuXidErrorCritical", _hardware_xid(GPU_XID_LAST), "0m", "critical",
               f"{GPU_REF} holds hardware XID {{{{ $value }}}}: firing until the GPU is reset or the node replaced",
               values),
        # Once per new code, for XID_WINDOW: the gauge keeps the code, the alert does not.
        _alert("GpuXidError", new_xid, "0m", "warning", f"{GPU_REF} reported a new XID {{{{ $value }}}}", values),
        _alert("GpuTemperatureHigh", f"{GPU_TEMP} > {GPU_TEMP_WARNING_C}", GPU_TEMP_WARNING_FOR, "warning",
               f"{GPU_REF} runs at {{{{ $value }}}} °C", values),
        _alert("GpuTemperatureCritical", f"{GPU_TEMP} > {GPU_TEMP_CRITICAL_C}", GPU_TEMP_CRITICAL_FOR, "critical",
               f"{GPU_REF} is at {{{{ $value }}}} °C, throttling or about to shut down", values),
    ]


def rule_groups(
    cfg: StackConfig, *, gpu_operator_namespace: str = GPU_OPERATOR_NAMESPACE, keda_namespace: str = KEDA_NAMESPACE
) -> list[dict[str, Any]]:
    """PrometheusRule `spec.groups`: the recording rules first (alerts read them), then the alerts."""
    records = recording_rules(cfg)
    return [
        {"name": "gpu-platform.rules", "rules": records},
        {"name": "gpu-platform.alerts",
         "rules": [*_alerts(cfg, keda_namespace, gpu_operator_namespace),
                   *_headroom_alerts(cfg, keda_namespace, gpu_operator_namespace),
                   *serving_rules.serving_alerts(cfg, functools.partial(runbook, values={
                       **runbook_values(cfg, gpu_operator_namespace, keda_namespace),
                       **serving_rules.RUNBOOK_VALUES}))]},
    ]


def alert_names(groups: list[dict[str, Any]]) -> set[str]:
    """Every alert defined in `groups` (the tests require a promtool case for each)."""
    return {rule["alert"] for group in groups for rule in group["rules"] if "alert" in rule}

