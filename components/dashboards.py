"""Grafana dashboards that show scaling happen: generated from the stack config, not hand-edited JSON.

Two dashboards, loaded by kube-prometheus-stack's Grafana sidecar from ConfigMaps labelled
`grafana_dashboard: "1"` (the chart's default `grafana.sidecar.dashboards.label`/`labelValue`):

- `gpu-autoscaling.json`: the pool (nodes against min/max, GPUs provisioned / allocatable / allocated,
  pending GPU pods, utilisation per node, GPU-hours and their cost) and one row per workload (replicas
  wanted by the metric, desired, current, available and max; utilisation per GPU against the target;
  the value KEDA reads against threshold × replicas; utilisation per pod; pending pods; GPU-hours).
- `gpu-health.json`: temperatures, XIDs, exporter targets, GPUs reporting per node, KEDA scaler errors
  and the platform's firing alerts.

Panels read the recording rules of components/alerts.py, so a dashboard shows exactly what the alerts
and KEDA compute; tests/test_dashboards.py checks every query parses and names only recorded series.
Workloads get their own rows (generated) instead of a `$workload` variable: each row carries the
workload's namespace, pod regex and threshold, which a variable could not.
"""

from __future__ import annotations

from typing import Any

from components import alerts, dcgm, scaling
from stackconfig import StackConfig, WorkloadConfig

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
#: Grid is 24 columns wide (Grafana's fixed dashboard width).
GRID_WIDTH = 24
SCHEMA_VERSION = 39
TAGS = ["gpu-platform"]
#: Subquery step for GPU-hours: one sample per minute, so `sum_over_time(...) / 60` is hours.
HOURS_STEP = "1m"


class _Layout:
    """Places panels left to right, wrapping rows, and numbers them (ids must be unique per dashboard)."""

    def __init__(self) -> None:
        self.panels: list[dict[str, Any]] = []
        self._x = 0
        self._y = 0
        self._row_height = 0
        self._id = 0

    def _next_id(self) -> int:
        self._id += 1
        return self._id

    def row(self, title: str) -> None:
        self._newline()
        self.panels.append({
            "id": self._next_id(), "type": "row", "title": title, "collapsed": False,
            "gridPos": {"x": 0, "y": self._y, "w": GRID_WIDTH, "h": 1}, "panels": [],
        })
        self._y += 1

    def _newline(self) -> None:
        if self._x:
            self._y += self._row_height
            self._x, self._row_height = 0, 0

    def add(self, panel: dict[str, Any], w: int, h: int) -> None:
        if self._x + w > GRID_WIDTH:
            self._newline()
        panel = {"id": self._next_id(), **panel, "gridPos": {"x": self._x, "y": self._y, "w": w, "h": h}}
        self.panels.append(panel)
        self._x += w
        self._row_height = max(self._row_height, h)


def _targets(*queries: tuple[str, str]) -> list[dict[str, Any]]:
    return [
        {"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
        for i, (expr, legend) in enumerate(queries)
    ]


def _timeseries(title: str, description: str, *queries: tuple[str, str], unit: str = "short",
                max_: float | None = None, thresholds: list[tuple[str, float | None]] | None = None,
                stack: bool = False) -> dict[str, Any]:
    defaults: dict[str, Any] = {"unit": unit, "custom": {"fillOpacity": 10, "lineWidth": 2}}
    if stack:
        defaults["custom"]["stacking"] = {"mode": "normal"}
    if max_ is not None:
        defaults["max"] = max_
        defaults["min"] = 0
    if thresholds:
        defaults["thresholds"] = {"mode": "absolute", "steps": [{"color": c, "value": v} for c, v in thresholds]}
        defaults["custom"]["thresholdsStyle"] = {"mode": "line"}
    return {
        "type": "timeseries", "title": title, "description": description, "datasource": DATASOURCE,
        "targets": _targets(*queries), "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right", "calcs": ["lastNotNull", "max"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
    }


def _stat(title: str, description: str, expr: str, unit: str, decimals: int = 1) -> dict[str, Any]:
    return {
        "type": "stat", "title": title, "description": description, "datasource": DATASOURCE,
        "targets": _targets((expr, "")),
        "fieldConfig": {"defaults": {"unit": unit, "decimals": decimals}, "overrides": []},
        "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "value", "graphMode": "none", "textMode": "value"},
    }


def _hours(expr: str) -> str:
    """Hours of `expr` (a count of GPUs) over the dashboard's time range."""
    return f"sum_over_time({expr}[$__range:{HOURS_STEP}]) / 60"


def _wl(metric: str, w: WorkloadConfig) -> str:
    return f'{metric}{{workload="{w.name}",namespace="{w.namespace}"}}'


def _pool_section(layout: _Layout, cfg: StackConfig) -> None:
    pool = cfg.gpu_pool
    layout.row(f"GPU pool '{pool.name}': {pool.flavor}, {pool.min_nodes}-{pool.max_nodes} nodes × {pool.gpus} GPUs")
    layout.add(_timeseries(
        "Pool nodes",
        "Nodes of the GPU pool (from their labels in kube-state-metrics) against minNodes and maxNodes. "
        "A bare-metal node takes 20-25 minutes from scale-up to Ready; at maxNodes the pool cannot grow.",
        (alerts.POOL_NODES, "nodes"), (alerts.POOL_NODES_READY, "Ready"),
        (alerts.POOL_NODES_MIN, "minNodes"), (alerts.POOL_NODES_MAX, "maxNodes"),
    ), 12, 8)
    layout.add(_timeseries(
        "GPUs: provisioned, allocatable, allocated",
        "Provisioned: pool nodes × GPUs per node (billed). Allocatable: what the device plugin offers "
        "(lower than provisioned while a node is booting or broken). Allocated: GPUs requested by Running pods.",
        (alerts.POOL_GPUS_PROVISIONED, "provisioned"), (alerts.POOL_GPUS_ALLOCATABLE, "allocatable"),
        (alerts.POOL_GPUS_ALLOCATED, "allocated"),
    ), 12, 8)
    layout.add(_timeseries(
        "Pending GPU pods",
        "Pods that request nvidia.com/gpu and are Pending. They trigger the Cluster Autoscaler and, while "
        "they wait, count in the HPA's replicas without adding GPU utilisation.",
        (f"count by (namespace) ({alerts.POD_GPU_PENDING})", "{{namespace}}"), stack=True,
    ), 12, 8)
    layout.add(_timeseries(
        "GPU utilisation per node",
        f"Average {dcgm.GPU_UTIL_METRIC} of each node's GPUs (each GPU counted once).",
        (alerts.NODE_GPU_UTIL, "{{node}}"), unit="percent", max_=100,
    ), 12, 8)
    layout.add(_stat(
        "GPU-hours allocated",
        "GPU-hours requested by Running pods over the dashboard's time range (sampled each minute).",
        _hours(alerts.POOL_GPUS_ALLOCATED), "none"), 6, 4)
    layout.add(_stat(
        "GPU-hours provisioned",
        "GPU-hours of the pool's nodes over the time range: what the bare-metal servers are billed for.",
        _hours(alerts.POOL_GPUS_PROVISIONED), "none"), 6, 4)
    layout.add(_stat(
        "Idle share of provisioned GPU-hours",
        "1 - allocated / provisioned over the time range: the GPUs paid for but not requested by any pod.",
        f"1 - ({_hours(alerts.POOL_GPUS_ALLOCATED)}) / ({_hours(alerts.POOL_GPUS_PROVISIONED)})",
        "percentunit"), 6, 4)
    layout.add(_stat(
        "Cost of provisioned GPU-hours",
        "Provisioned GPU-hours × the `gpu_hour_price` variable (set it to your Gcore price per GPU-hour).",
        f"{_hours(alerts.POOL_GPUS_PROVISIONED)} * $gpu_hour_price", "currencyEUR", 0), 6, 4)


def _workload_section(layout: _Layout, w: WorkloadConfig) -> None:
    threshold = scaling.threshold_value(w.target_utilization, w.gpus_per_pod)
    pods = f'namespace="{w.namespace}",pod=~"{scaling.pod_name_regex(w.name)}"'
    layout.row(
        f"Workload {w.namespace}/{w.name}: {w.gpus_per_pod} GPU(s) per pod, target {w.target_utilization:g} % "
        f"per GPU, {w.min_replicas}-{w.max_replicas} replicas"
    )
    layout.add(_timeseries(
        "Replicas: wanted, desired, current, available, max",
        f"Wanted: ceil(KEDA's value / {threshold:g}), what the metric alone asks for. Desired: the HPA "
        f"{scaling.hpa_name(w.name)} after its 10 % tolerance, behaviour and limits. Current: pods the HPA "
        "counts (Pending ones too). Available: pods serving. Desired above available for long means pods wait "
        "for GPUs; wanted above max means maxReplicas caps the workload.",
        (_wl(alerts.WL_WANTED, w), "wanted by metric"), (_wl(alerts.WL_DESIRED, w), "desired (HPA)"),
        (_wl(alerts.WL_CURRENT, w), "current"), (_wl(alerts.WL_AVAILABLE, w), "available"),
        (_wl(alerts.WL_MAX, w), "maxReplicas"),
    ), 12, 8)
    layout.add(_timeseries(
        "Average utilisation per GPU vs target",
        f"Mean utilisation of the workload's GPUs; KEDA scales to hold it near {w.target_utilization:g} %.",
        (_wl(alerts.WL_UTIL_AVG, w), "per-GPU average"), (_wl(alerts.WL_UTIL_TARGET, w), "target"),
        unit="percent", max_=100,
    ), 12, 8)
    layout.add(_timeseries(
        "KEDA's value vs threshold × replicas",
        f"The ScaledObject's query result (sum over the workload's GPUs) and {threshold:g} × current replicas. "
        "The HPA acts when they differ by more than 10 %. A gap in KEDA's value means an empty query: KEDA "
        "then uses its fallback.",
        (_wl(alerts.WL_UTIL_SUM, w), "KEDA value"), (f"{_wl(alerts.WL_CURRENT, w)} * {threshold:g}",
                                                      "threshold × current replicas"),
    ), 12, 8)
    layout.add(_timeseries(
        "GPU utilisation per pod",
        "Average utilisation of each pod's GPUs, from the labels dcgm-exporter sets for the pod holding a GPU.",
        (f"{alerts.POD_GPU_UTIL}{{{pods}}}", "{{pod}}"), unit="percent", max_=100,
    ), 12, 8)
    layout.add(_stat(
        "Pending pods", "Pods of this workload waiting for a GPU.",
        f"count({alerts.POD_GPU_PENDING}{{{pods}}}) or vector(0)", "none", 0), 6, 4)
    layout.add(_stat(
        "GPU-hours used", "GPU-hours requested by this workload's Running pods over the time range.",
        _hours(_wl(alerts.WL_GPUS_ALLOCATED, w)), "none"), 6, 4)
    _serving_panels(layout, w)


def _serving_panels(layout: _Layout, w: WorkloadConfig) -> None:
    """The workload's own serving triggers next to its GPU panels (issue 10): the HPA follows the largest."""
    pods = f'namespace="{w.namespace}",pod=~"{scaling.pod_name_regex(w.name)}"'
    for t in w.triggers:
        query = scaling.serving_metric_query(w.name, w.namespace, t.metric, t.window)
        layout.add(_timeseries(
            f"Trigger {t.name}: {t.metric} vs threshold × replicas",
            f"The trigger's query (sum over the workload's pods) against {t.threshold:g} × current replicas, and "
            "the replicas it alone asks for. The HPA follows the largest recommendation of all triggers, so "
            "this one scales the workload when it asks for more than GPU utilisation does.",
            (query, "KEDA value"), (f"{_wl(alerts.WL_CURRENT, w)} * {t.threshold:g}", "threshold × current"),
            (f"ceil(({query}) / {t.threshold:g})", "replicas wanted by this trigger"),
        ), 12, 8)
        layout.add(_timeseries(
            f"{t.metric} per pod", "The series per pod, as the workload's PodMonitor scrapes it.",
            (f"{t.metric}{{{pods}}}", "{{pod}}"),
        ), 12, 8)


def _variables(price: bool) -> dict[str, Any]:
    variables: list[dict[str, Any]] = [{
        "name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
        "current": {}, "hide": 0, "refresh": 1,
    }]
    if price:
        variables.append({
            "name": "gpu_hour_price", "label": "Price per GPU-hour", "type": "textbox", "query": "0",
            "current": {"text": "0", "value": "0"}, "hide": 0,
        })
    return {"list": variables}


def _dashboard(uid: str, title: str, description: str, panels: list[dict[str, Any]],
               price: bool = False) -> dict[str, Any]:
    return {
        "uid": uid, "title": title, "description": description, "tags": TAGS, "editable": False,
        "schemaVersion": SCHEMA_VERSION, "time": {"from": "now-6h", "to": "now"}, "refresh": "30s",
        "timezone": "", "graphTooltip": 1, "templating": _variables(price), "annotations": {"list": []},
        "links": [{"type": "dashboards", "tags": TAGS, "title": "GPU platform", "asDropdown": False}],
        "panels": panels,
    }


def _health(cfg: StackConfig) -> dict[str, Any]:
    layout = _Layout()
    layout.row("Alerts")
    names = "|".join(sorted(alerts.alert_names(alerts.rule_groups(cfg))))
    layout.add({
        "type": "table", "title": "Firing GPU platform alerts", "datasource": DATASOURCE,
        "description": "Alerts of the gpu-platform PrometheusRule that fire now (descriptions hold the runbook).",
        "targets": [{**_targets((f'ALERTS{{alertstate="firing",alertname=~"{names}"}}', ""))[0],
                     "instant": True, "format": "table"}],
        "fieldConfig": {"defaults": {}, "overrides": []}, "options": {"showHeader": True},
    }, 24, 6)
    layout.row("GPUs")
    layout.add(_timeseries(
        "GPU temperature", f"Warning above {alerts.GPU_TEMP_WARNING_C} °C, critical above "
        f"{alerts.GPU_TEMP_CRITICAL_C} °C (GpuTemperatureHigh / GpuTemperatureCritical).",
        (alerts.GPU_TEMP, "{{node}} GPU {{gpu}}"), unit="celsius",
        thresholds=[("green", None), ("orange", alerts.GPU_TEMP_WARNING_C), ("red", alerts.GPU_TEMP_CRITICAL_C)],
    ), 12, 8)
    layout.add(_timeseries(
        "XID errors (last code, 5 min window)", "Non-zero: the GPU reported an XID (GpuXidError / "
        "GpuXidErrorCritical name the codes).",
        (f"{alerts.GPU_XID_RECENT} > 0", "{{node}} GPU {{gpu}} {{UUID}}"),
    ), 12, 8)
    layout.add(_timeseries(
        "GPUs reporting vs allocatable, per node",
        "GPUs with DCGM series per node (needs the `node` relabeling) against what the device plugin offers.",
        (alerts.NODE_GPUS_REPORTING, "{{node}} reporting"),
        (f'kube_node_status_allocatable{{job="{alerts.KSM_JOB}",resource="{alerts.KSM_GPU_RESOURCE}"}} '
         f"and on (node) {alerts.POOL_NODE}", "{{node}} allocatable"),
    ), 12, 8)
    layout.add(_timeseries(
        "DCGM exporter targets", "1 = the exporter pod of the node was scraped successfully.",
        (f'up{{job="{alerts.DCGM_JOB}"}}', "{{node}}"), max_=1,
    ), 12, 8)
    layout.row("KEDA")
    layout.add(_timeseries(
        "KEDA scaler errors per second", "Failed trigger reads per ScaledObject; with ignoreNullValues \"false\" "
        "an empty query counts as an error and KEDA falls back.",
        ("sum by (namespace, scaledObject) (rate(keda_scaler_detail_errors_total[$__rate_interval]))",
         "{{namespace}}/{{scaledObject}}"),
    ), 12, 8)
    layout.add(_timeseries(
        "KEDA's value per trigger", "keda_scaler_metrics_value: the number KEDA hands the HPA.",
        ('max by (namespace, scaledObject, metric) (keda_scaler_metrics_value{type="scaledobject"})',
         "{{namespace}}/{{scaledObject}} {{metric}}"),
    ), 12, 8)
    return _dashboard("gpu-platform-health", "GPU platform health",
                      "GPU temperatures and XIDs, DCGM scrape health, KEDA errors and firing alerts.", layout.panels)


def _autoscaling(cfg: StackConfig) -> dict[str, Any]:
    layout = _Layout()
    _pool_section(layout, cfg)
    for w in cfg.workloads:
        _workload_section(layout, w)
    return _dashboard(
        "gpu-platform-autoscaling", "GPU autoscaling",
        "How the GPU workloads and the GPU pool scale: replicas against the metric, nodes against the pool's "
        "limits, GPU-hours.", layout.panels, price=True,
    )


def dashboards(cfg: StackConfig) -> dict[str, dict[str, Any]]:
    """File name -> Grafana dashboard JSON (one ConfigMap each, labelled for the Grafana sidecar)."""
    return {"gpu-autoscaling.json": _autoscaling(cfg), "gpu-health.json": _health(cfg)}
