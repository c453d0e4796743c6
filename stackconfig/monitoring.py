"""`monitoring`: how long Prometheus keeps its series, and where."""

from __future__ import annotations

from stackconfig.values import HttpUrl, Model, Retention, StorageSize


class MonitoringConfig(Model):
    """Prometheus' retention and volume (kube-prometheus-stack's `prometheus.prometheusSpec`)."""

    retention: Retention = "15d"
    #: Persistent volume for Prometheus' TSDB, e.g. "100Gi"; unset keeps it on an emptyDir (lost on restart).
    storage_size: StorageSize = None
    #: Storage class of that volume; unset uses the cluster's default class.
    storage_class: str | None = None
    #: The Prometheus-compatible API KEDA's triggers query (and the `prometheusUrl` output): unset, the stack's own
    #: kube-prometheus-stack. Set it for a Prometheus, Thanos or Mimir the cluster already has; it must scrape the
    #: GPU Operator's dcgm-exporter with this stack's relabelling (renderers/dcgm.py) for the queries to match.
    query_url: HttpUrl | None = None
