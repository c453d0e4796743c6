"""The Horizontal Pod Autoscaler's arithmetic for an External `AverageValue` metric, as KEDA's HPA runs it.

kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator.go (`GetExternalPerPodMetricReplicas`) and
horizontal.go (`computeReplicasForMetrics`): `ceil(total / threshold)` replicas unless the usage ratio is within
the tolerance. The simulator's HPA loop and the metrics-path tests run these.
"""

from __future__ import annotations

import math

#: The HPA's default tolerance (--horizontal-pod-autoscaler-tolerance).
HPA_TOLERANCE = 0.1


def hpa_desired_replicas(
    total: float, threshold: float, current_replicas: int, tolerance: float = HPA_TOLERANCE
) -> int:
    """The HPA's answer for an External AverageValue metric (replica_calculator.go).

    `current_replicas` counts Pending pods too (Deployment status.replicas): they add no GPU series,
    so they dilute the average and can hold scaling back (k8s.io/api apps/v1 `DeploymentStatus.Replicas`: "Total
    number of non-terminating pods targeted by this deployment").
    """
    if current_replicas <= 0:
        raise ValueError("current_replicas must be positive")
    usage_ratio = total / (threshold * current_replicas)
    if abs(1.0 - usage_ratio) <= tolerance:
        return current_replicas
    return math.ceil(total / threshold)


def hpa_desired_replicas_all(metrics: list[tuple[float, float]], current_replicas: int) -> int:
    """With several metrics the HPA computes one proposal per metric and takes the largest.

    kubernetes pkg/controller/podautoscaler/horizontal.go, computeReplicasForMetrics: "replicas =
    max(replicas, replicaCountProposal)"; `metrics` is a list of (total, per-replica threshold).
    """
    if not metrics:
        raise ValueError("at least one metric")
    return max(hpa_desired_replicas(total, threshold, current_replicas) for total, threshold in metrics)
