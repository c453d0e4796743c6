"""`monitoring`: how long Prometheus keeps its series, and where."""

from __future__ import annotations

from stackconfig.values import Model, Retention, StorageSize


class MonitoringConfig(Model):
    """Prometheus' retention and volume (kube-prometheus-stack's `prometheus.prometheusSpec`)."""

    retention: Retention = "15d"
    #: Persistent volume for Prometheus' TSDB, e.g. "100Gi"; unset keeps it on an emptyDir (lost on restart).
    storage_size: StorageSize = None
    #: Storage class of that volume; unset uses the cluster's default class.
    storage_class: str | None = None
