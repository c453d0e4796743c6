"""Grafana dashboards that show scaling happen: generated from the stack config, not hand-edited JSON.

Built with Grafana's own grafana-foundation-sdk (its panel builders, grid placement and JSON encoder), so
field names and the layout follow Grafana's dashboard schema instead of a hand-rolled copy of it.

Two dashboards, loaded by kube-prometheus-stack's Grafana sidecar from ConfigMaps labelled
`grafana_dashboard: "1"` (the chart's default `grafana.sidecar.dashboards.label`/`labelValue`):

- `gpu-autoscaling.json`: the pools (nodes against min/max, GPUs provisioned / allocatable / allocated, pending
  GPU pods, utilisation per node, GPU-hours and their cost: one row over the pools a `pool` variable selects, a
  line per pool, each priced at its own price), the headroom of each pool that has it, and one row per workload
  (replicas wanted by the metric, desired, current, available and max; utilisation per GPU against the target;
  the value KEDA reads against threshold × replicas; utilisation per pod; pending pods; GPU-hours).
- `gpu-health.json`: temperatures, XIDs, exporter targets, GPUs reporting per node, KEDA scaler errors
  and the platform's firing alerts.

Panels (renderers/dashboard_panels.py) read the recording rules of renderers/rule_groups.py, so a dashboard
shows exactly what the alerts and KEDA compute; tests/test_dashboards.py checks every query parses and names only
recorded series. Workloads get their own rows (generated) instead of a `$workload` variable: each row carries the
workload's namespace, pod regex and threshold, which a variable could not.
"""

from __future__ import annotations

import json
from typing import Any

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as dm

from renderers import dcgm, promql, serving_profile, serving_rules
from renderers import recording_rules as recorded
from renderers import rule_groups as rules
from renderers.chart_values import KSM_GPU_RESOURCE, KSM_JOB
from renderers.dashboard_panels import GRID_WIDTH, TAGS
from renderers.dashboard_panels import Layout as _Layout
from renderers.dashboard_panels import hours as _hours
from renderers.dashboard_panels import stat_panel as _stat
from renderers.dashboard_panels import table_panel as _table
from renderers.dashboard_panels import timeseries_panel as _timeseries
from renderers.scaling_triggers import serving_query
from renderers.serving_rules import series as _wl
from stackconfig import GpuPoolConfig, StackConfig, WorkloadConfig

__all__ = ["GRID_WIDTH", "dashboards"]


#: The dashboard variable that picks the GPU pools shown.
POOL_VARIABLE = "pool"


def _of_pools(metric: str) -> str:
    """A pool series of the pools the `pool` variable selects."""
    return f'{metric}{{{recorded.POOL}=~"${POOL_VARIABLE}"}}'


def _pool_section(layout: _Layout, cfg: StackConfig) -> None:
    """The GPU pools: one row, every panel over the pools the `pool` variable selects, one line per pool."""
    pools = ", ".join(f"{p.name} ({p.flavor}{', spot' if p.spot else ''}, {p.min_nodes}-{p.max_nodes} × {p.gpus} "
                      "GPUs)" for p in cfg.pools)
    layout.row(f"GPU pools: {pools}")
    layout.add(_timeseries(
        "Pool nodes",
        "Nodes of each selected GPU pool (from their labels in kube-state-metrics) against its minNodes and "
        "maxNodes. A bare-metal node takes 20-25 minutes from scale-up to Ready; at maxNodes the pool cannot grow.",
        (_of_pools(recorded.POOL_NODES), "{{pool}} nodes"), (_of_pools(recorded.POOL_NODES_READY), "{{pool}} Ready"),
        (_of_pools(recorded.POOL_NODES_MIN), "{{pool}} minNodes"),
        (_of_pools(recorded.POOL_NODES_MAX), "{{pool}} maxNodes"),
    ), 12, 8)
    layout.add(_timeseries(
        "GPUs: provisioned, allocatable, allocated",
        "Per selected pool. Provisioned: pool nodes × GPUs per node (billed). Allocatable: what the device plugin "
        "offers (lower than provisioned while a node is booting or broken). Allocated: GPUs requested by Running "
        "pods on the pool's nodes.",
        (_of_pools(recorded.POOL_GPUS_PROVISIONED), "{{pool}} provisioned"),
        (_of_pools(recorded.POOL_GPUS_ALLOCATABLE), "{{pool}} allocatable"),
        (_of_pools(recorded.POOL_GPUS_ALLOCATED), "{{pool}} allocated"),
    ), 12, 8)
    layout.add(_timeseries(
        "Pending GPU pods",
        "Pods that request nvidia.com/gpu and are Pending. They trigger the Cluster Autoscaler and, while "
        "they wait, count in the HPA's replicas without adding GPU utilisation.",
        (f"count by (namespace) ({recorded.POD_GPU_PENDING})", "{{namespace}}"), stack=True,
    ), 12, 8)
    layout.add(_timeseries(
        "GPU utilisation per node",
        f"Average {dcgm.GPU_UTIL_METRIC} of each node's GPUs (each GPU counted once).",
        (f"{recorded.NODE_GPU_UTIL} and on (node) {_of_pools(recorded.POOL_NODE)}", "{{node}}"), unit="percent",
        max_=100,
    ), 12, 8)
    allocated, provisioned = (_hours(f"sum({_of_pools(m)})")
                              for m in (recorded.POOL_GPUS_ALLOCATED, recorded.POOL_GPUS_PROVISIONED))
    layout.add(_stat(
        "GPU-hours allocated",
        "GPU-hours requested by Running pods on the selected pools over the dashboard's time range (sampled each "
        "minute).", allocated, "none"), 6, 4)
    layout.add(_stat(
        "GPU-hours provisioned",
        "GPU-hours of the selected pools' nodes over the time range: what the bare-metal servers are billed for.",
        provisioned, "none"), 6, 4)
    layout.add(_stat(
        "Idle share of provisioned GPU-hours",
        "1 - allocated / provisioned over the time range: the GPUs paid for but not requested by any pod.",
        f"1 - ({allocated}) / ({provisioned})", "percentunit"), 6, 4)
    layout.add(_stat(
        "Cost of provisioned GPU-hours",
        "Provisioned GPU-hours of each selected pool × its pricePerGpuHour (the stack's estimates: on-demand and spot "
        "capacity are priced apart).",
        f"sum({_hours(_of_pools(recorded.POOL_GPUS_PROVISIONED))} * on ({recorded.POOL}) {recorded.POOL_PRICE})",
        "currencyEUR", 0), 6, 4)


def _workload_section(layout: _Layout, w: WorkloadConfig, pool: str) -> None:
    threshold = promql.format_number(promql.threshold_value(w.gpu_target_utilization, w.gpus_per_pod))
    target = promql.format_number(w.gpu_target_utilization)
    pods = promql.pods(w.name, w.namespace)
    layout.row(
        f"Workload {w.namespace}/{w.name} on pool {pool!r}: {w.gpus_per_pod} GPU(s) per pod, "
        f"target {target} % "
        f"per GPU, {w.min_replicas}-{w.max_replicas} replicas"
    )
    layout.add(_timeseries(
        "Replicas: wanted, desired, current, available, max",
        f"Wanted: the most any trigger alone asks for (GPU: ceil(KEDA's value / {threshold}); a serving "
        "profile's: ceil(value × ready pods)). Desired: the HPA "
        f"{promql.hpa_name(w.name)} after its 10 % tolerance, behaviour and limits. Current: pods the HPA "
        "counts (Pending ones too). Available: pods serving. Desired above available for long means pods wait "
        "for GPUs; wanted above max means maxReplicas caps the workload.",
        (_wl(recorded.WL_WANTED, w), "wanted by triggers"), (_wl(recorded.WL_DESIRED, w), "desired (HPA)"),
        (_wl(recorded.WL_CURRENT, w), "current"), (_wl(recorded.WL_AVAILABLE, w), "available"),
        (_wl(recorded.WL_MAX, w), "maxReplicas"),
    ), 12, 8)
    layout.add(_timeseries(
        "Average utilisation per GPU vs target",
        f"Mean utilisation of the workload's GPUs; KEDA scales to hold it near {target} %.",
        (_wl(recorded.WL_UTIL_AVG, w), "per-GPU average"), (_wl(recorded.WL_UTIL_TARGET, w), "target"),
        unit="percent", max_=100,
    ), 12, 8)
    layout.add(_timeseries(
        "KEDA's value vs threshold × replicas",
        f"The ScaledObject's query result (sum over the workload's GPUs) and {threshold} × current replicas. "
        "The HPA acts when they differ by more than 10 %. A gap in KEDA's value means an empty query: KEDA "
        "then uses its fallback.",
        (_wl(recorded.WL_UTIL_SUM, w), "KEDA value"), (f"{_wl(recorded.WL_CURRENT, w)} * {threshold}",
                                                      "threshold × current replicas"),
    ), 12, 8)
    layout.add(_timeseries(
        "GPU utilisation per pod",
        "Average utilisation of each pod's GPUs, from the labels dcgm-exporter sets for the pod holding a GPU.",
        (f"{recorded.POD_GPU_UTIL}{{{pods}}}", "{{pod}}"), unit="percent", max_=100,
    ), 12, 8)
    layout.add(_stat(
        "Pending pods", "Pods of this workload waiting for a GPU.",
        f"count({recorded.POD_GPU_PENDING}{{{pods}}}) or vector(0)", "none", 0), 6, 4)
    layout.add(_stat(
        "GPU-hours used", "GPU-hours requested by this workload's Running pods over the time range.",
        _hours(_wl(recorded.WL_GPUS_ALLOCATED, w)), "none"), 6, 4)
    _serving_panels(layout, w)


def _serving_panels(layout: _Layout, w: WorkloadConfig) -> None:
    """The workload's own serving triggers next to its GPU panels (issue 10): the HPA follows the largest."""
    pods = promql.pods(w.name, w.namespace)
    for t in w.triggers:
        query = serving_query(w, t)
        threshold = promql.format_number(t.threshold)
        layout.add(_timeseries(
            f"Trigger {t.name}: {t.metric} vs threshold × replicas",
            f"The trigger's query (sum over the workload's pods) against {threshold} × current replicas, and "
            "the replicas it alone asks for. The HPA follows the largest recommendation of all triggers, so "
            "this one scales the workload when it asks for more than GPU utilisation does.",
            (query, "KEDA value"), (f"{_wl(recorded.WL_CURRENT, w)} * {threshold}", "threshold × current"),
            (f"ceil(({query}) / {threshold})", "replicas wanted by this trigger"),
        ), 12, 8)
        layout.add(_timeseries(
            f"{t.metric} per pod", "The series per pod, as the workload's PodMonitor scrapes it.",
            (f"{t.metric}{{{pods}}}", "{{pod}}"),
        ), 12, 8)
    _profile_panels(layout, w)


def _profile_panels(layout: _Layout, w: WorkloadConfig) -> None:
    """A serving profile's signals (issue 21), from renderers/serving_rules.py: the P90s against their objectives,
    the latency ratio in its band, queue and KV cache against their saturation, and what each trigger asks for."""
    s = w.serving
    if s is None:
        return
    wl = {name: serving_rules.series(name, w) for name in (
        serving_rules.WL_TTFT_P90, serving_rules.WL_TPOT_P90, serving_rules.WL_LATENCY_RATIO,
        serving_rules.WL_WAITING_PER_POD, serving_rules.WL_KV_CACHE)}
    objectives = serving_rules.objective_seconds(w)
    layout.add(_timeseries(
        "P90 time to first token and per output token, against the objective",
        "The engine's own histograms over the workload's pods, 1-minute rates; the dashed lines are "
        "serving.latencyObjective. Above a line the objective is missed.",
        (wl[serving_rules.WL_TTFT_P90], "P90 TTFT"), (wl[serving_rules.WL_TPOT_P90], "P90 TPOT"),
        *((f"vector({promql.format_number(v)})", f"objective {name.split(':')[1]}") for name, v in objectives.items()),
        unit="s",
    ), 12, 8)
    if s.latency_objective is not None:
        layout.add(_timeseries(
            "Latency ratio (P90 / objective) and its band",
            f"The larger of the P90s over their objectives, clamped at {serving_profile.CLAMP:g} and smoothed over "
            f"{serving_profile.SMOOTHING}: above {s.band.scale_up:g} replicas are added, below "
            f"{s.band.scale_down:g} removed, in between the count holds. Above 1 the objective is missed.",
            (wl[serving_rules.WL_LATENCY_RATIO], "latency ratio"), (f"vector({s.band.scale_up:g})", "scale up above"),
            (f"vector({s.band.scale_down:g})", "scale down below"), ("vector(1)", "objective"),
        ), 12, 8)
    layout.add(_timeseries(
        "Queue and KV cache per pod, against their saturation",
        f"Waiting requests per pod over serving.queuePerReplica ({s.queue_per_replica:g}) and KV-cache usage "
        f"over serving.kvCacheUsage ({s.kv_cache_usage:g}): at 1 a trigger asks for as many replicas as are ready.",
        (f"{wl[serving_rules.WL_WAITING_PER_POD]} / {promql.format_number(s.queue_per_replica)}", "queue"),
        (f"{wl[serving_rules.WL_KV_CACHE]} / {promql.format_number(s.kv_cache_usage)}", "KV cache"),
    ), 12, 8)
    ready = _wl(recorded.WL_AVAILABLE, w)
    value = _wl(serving_rules.WL_TRIGGER_VALUE, w)
    layout.add(_timeseries(
        "Replicas each serving trigger asks for",
        "ceil(value × ready replicas) per trigger (HPA metric type Value: pods still starting count as capacity, "
        "the ask is sized by the ready pods that serve). The HPA follows the largest, the GPU guardrail included.",
        (f"ceil({value} * on (workload, namespace) group_left {ready})", "{{trigger}}"),
    ), 12, 8)


def _headroom_section(layout: _Layout, cfg: StackConfig) -> None:
    """Spare GPUs held by the placeholders: held, preempted (Pending) and the target the schedules set; one row per
    pool with headroom."""
    for pool in cfg.pools:
        h = pool.headroom
        if h is None:
            continue
        windows = f", {len(h.schedules)} schedule window(s)" if h.schedules else ""
        layout.row(f"GPU headroom on pool '{pool.name}': {h.gpus} GPU(s) in placeholder pods of "
                   f"{cfg.headroom_pod_gpus(pool)}{windows}")

        def of(metric: str, p: GpuPoolConfig = pool) -> str:
            return recorded.pool_series(metric, p)

        layout.add(_timeseries(
            "Headroom GPUs: held, preempted, target",
            "Held: GPUs of Running placeholder pods, free for a burst within seconds. Preempted: GPUs of Pending "
            "placeholders (a workload took their GPUs; they wait for the node the autoscaler adds, or forever at "
            "maxNodes, see GpuHeadroomNotRestored). Target: placeholder replicas × GPUs per placeholder (moves "
            "with the schedules).",
            (of(recorded.HEADROOM_GPUS_HELD), "held"), (of(recorded.HEADROOM_GPUS_PENDING), "preempted (Pending)"),
            (of(recorded.HEADROOM_GPUS_WANTED), "target"), stack=False,
        ), 18, 8)
        cost = f"{_hours(of(recorded.HEADROOM_GPUS_HELD))} * on () {of(recorded.POOL_PRICE)}"
        how = f"× the pool's pricePerGpuHour ({promql.format_number(pool.price_per_gpu_hour)})"
        layout.add(_stat(
            "Cost of held headroom",
            f"GPU-hours held by Running placeholders over the time range {how}.",
            cost, "currencyEUR", 0), 6, 8)


def _dashboard(uid: str, title: str, description: str, layout: _Layout,
               pools: list[str] | None = None) -> dict[str, Any]:
    board = (
        db.Dashboard(title).uid(uid).description(description).tags(TAGS).readonly()
        .time("now-6h", "now").refresh("30s").timezone("").tooltip(dm.DashboardCursorSync.CROSSHAIR)
        .with_variable(db.DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
        .link(db.DashboardLink("GPU platform").type(dm.DashboardLinkType.DASHBOARDS).tags(TAGS).as_dropdown(False))
    )
    if pools:
        # Which GPU pools the pool panels show (all by default); the workload rows name their own pool.
        board = board.with_variable(
            db.CustomVariable(POOL_VARIABLE).label("GPU pool").values(",".join(pools)).multi(True).include_all(True)
            .current(dm.VariableOption(selected=True, text="All", value="$__all")))
    # The SDK's own JSON encoder gives Grafana's field names; the round trip makes it a plain dict.
    return json.loads(JSONEncoder(sort_keys=True).encode(layout.place(board).build()))


def _health(cfg: StackConfig) -> dict[str, Any]:
    layout = _Layout()
    layout.row("Alerts")
    names = "|".join(sorted(rules.alert_names(rules.rule_groups(cfg))))
    layout.add(_table(
        "Firing GPU platform alerts",
        "Alerts of the gpu-platform PrometheusRule that fire now (descriptions hold the runbook).",
        f'ALERTS{{alertstate="firing",alertname=~"{names}"}}',
    ), 24, 6)
    layout.row("GPUs")
    layout.add(_timeseries(
        "GPU temperature", f"Warning above {rules.GPU_TEMP_WARNING_C} °C, critical above "
        f"{rules.GPU_TEMP_CRITICAL_C} °C (GpuTemperatureHigh / GpuTemperatureCritical).",
        (recorded.GPU_TEMP, "{{node}} GPU {{gpu}}"), unit="celsius",
        thresholds=[("green", None), ("orange", rules.GPU_TEMP_WARNING_C), ("red", rules.GPU_TEMP_CRITICAL_C)],
    ), 12, 8)
    layout.add(_timeseries(
        "Last XID per GPU", "The code dcgm-exporter holds until the driver reloads: GpuXidError fires once when "
        "it changes, GpuXidErrorCritical while it is a hardware code.",
        (f"{recorded.GPU_XID_LAST} > 0", "{{node}} GPU {{gpu}} {{UUID}}"),
    ), 12, 8)
    layout.add(_timeseries(
        "GPUs reporting vs allocatable, per node",
        "GPUs with DCGM series per node (needs the `node` relabeling) against what the device plugin offers.",
        (recorded.NODE_GPUS_REPORTING, "{{node}} reporting"),
        (f'kube_node_status_allocatable{{job="{KSM_JOB}",resource="{KSM_GPU_RESOURCE}"}} '
         f"and on (node) {recorded.POOL_NODE}", "{{node}} allocatable"),
    ), 12, 8)
    layout.add(_timeseries(
        "DCGM exporter targets", "1 = the exporter pod of the node was scraped successfully.",
        (f'up{{job="{rules.DCGM_JOB}"}}', "{{node}}"), max_=1,
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
                      "GPU temperatures and XIDs, DCGM scrape health, KEDA errors and firing alerts.", layout)


def _autoscaling(cfg: StackConfig) -> dict[str, Any]:
    layout = _Layout()
    _pool_section(layout, cfg)
    _headroom_section(layout, cfg)
    for w in cfg.workloads:
        pool = cfg.pool_of(w)
        assert pool is not None  # stackconfig refuses a workload without a pool of the stack
        _workload_section(layout, w, pool.name)
    return _dashboard("gpu-platform-autoscaling", "GPU autoscaling", "How the GPU workloads and the GPU pools scale: "
                      "replicas against the metric, nodes against each pool's limits, GPU-hours and their cost per "
                      "pool.", layout, pools=[p.name for p in cfg.pools])


def dashboards(cfg: StackConfig) -> dict[str, dict[str, Any]]:
    """File name -> Grafana dashboard JSON (one ConfigMap each, labelled for the Grafana sidecar)."""
    return {"gpu-autoscaling.json": _autoscaling(cfg), "gpu-health.json": _health(cfg)}
