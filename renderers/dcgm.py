"""How GPU metrics reach Prometheus: the one scrape path the platform relies on.

The GPU Operator's dcgm-exporter publishes per-GPU series. We let the GPU Operator create exactly one
ServiceMonitor for it and never add a second scrape job, because two paths double every series and
`sum()` over them doubles the load KEDA sees. `honorLabels` must be true (prometheus/prometheus
docs/configuration/configuration.md, `honor_labels`; NVIDIA/dcgm-exporter PR #76):
otherwise Prometheus renames the exporter's `pod`/`namespace` (the workload's) to `exported_pod`/
`exported_namespace` and a query on `pod` finds only the exporter pod itself.
"""

from __future__ import annotations

from typing import Any

#: Per-GPU utilisation gauge, 0-100 (%). dcgm-exporter's default counter set includes it.
GPU_UTIL_METRIC = "DCGM_FI_DEV_GPU_UTIL"
#: Type and unit the program assumes for each DCGM metric it reads (thresholds, rules, dashboards), as the pinned
#: exporter's counters list states them (`(in %)` in its help; None: none stated). delivery/exporter_metrics.py fails
#: when a metric found in the rendered queries is missing here, or the pinned exporter disagrees.
METRIC_UNITS: dict[str, tuple[str, str | None]] = {
    GPU_UTIL_METRIC: ("gauge", "%"),
    "DCGM_FI_DEV_GPU_TEMP": ("gauge", "C"),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", None),  # the last XID seen, held until the next one
    "DCGM_FI_DEV_SM_CLOCK": ("gauge", "MHz"),  # read by runbooks (GpuTemperatureHigh)
    "DCGM_FI_DEV_POWER_USAGE": ("gauge", "W"),
}
#: Labels dcgm-exporter sets on every GPU series (render_metrics.go; Kubernetes mapping adds pod/namespace/container).
GPU_ID_LABEL = "UUID"

#: Service and port that the GPU Operator creates for the exporter (assets/state-dcgm-exporter).
EXPORTER_SERVICE = "nvidia-dcgm-exporter"
EXPORTER_PORT = 9400
EXPORTER_PORT_NAME = "gpu-metrics"
EXPORTER_APP_LABEL = "nvidia-dcgm-exporter"

#: The metric path (docs/design.md): dcgm-exporter refreshes every 5 s (its default 30 s: NVIDIA/dcgm-exporter
#: pkg/cmd/app.go `--collect-interval`), this ServiceMonitor scrapes every 5 s, and the query averages five scrapes
#: (tests/test_missed_scrape.py: one missed leaves four; tests/test_capacity.py: six would over-order a node).
SCRAPE_INTERVAL = "5s"
SCRAPE_TIMEOUT = "4s"
EXPORTER_COLLECT_INTERVAL_MS = 5_000
QUERY_WINDOW = "25s"

#: Target label with the node that runs the exporter (so dashboards can group per node).
NODE_LABEL = "node"


def service_monitor_values() -> dict[str, Any]:
    """`dcgmExporter.serviceMonitor` for the GPU Operator chart: the single scrape path, labels intact."""
    return {
        "enabled": True,
        "honorLabels": True,
        "interval": SCRAPE_INTERVAL,
        "scrapeTimeout": SCRAPE_TIMEOUT,
        "additionalLabels": {},
        "relabelings": [
            {
                "sourceLabels": ["__meta_kubernetes_pod_node_name"],
                "targetLabel": NODE_LABEL,
                "action": "replace",
            }
        ],
    }
