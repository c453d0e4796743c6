"""What a workload's ScaledObject asks Prometheus, and the numbers KEDA and the HPA derive from it.

Pure functions, no Pulumi: the GpuWorkload component renders them into the ScaledObject, the
metrics-path tests run the very same strings against a real Prometheus, and the README quotes them.

Semantics (kedacore/keda-docs content/docs/2.20/scalers/prometheus.md; Kubernetes docs "Horizontal Pod
Autoscaling", https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/; kubernetes/kubernetes
pkg/controller/podautoscaler/replica_calculator.go): the trigger is `AverageValue`, so the HPA divides
the query result by the number of replicas and asks for `ceil(total / threshold)` replicas. The query
sums per-GPU utilisation over the workload's GPUs; with `k` GPUs per pod a pod contributes `k`
series, so the threshold is `targetUtilization * k`. Then `targetUtilization` means "average
utilisation per GPU", whatever `k` is.
"""

from __future__ import annotations

import math

from components import dcgm

#: KEDA names the HPA it creates `keda-hpa-<ScaledObject name>` unless told otherwise.
HPA_PREFIX = "keda-hpa-"
#: The HPA's default tolerance (--horizontal-pod-autoscaler-tolerance).
HPA_TOLERANCE = 0.1


def hpa_name(scaled_object: str) -> str:
    return f"{HPA_PREFIX}{scaled_object}"


def pod_name_regex(deployment: str) -> str:
    """Pods of exactly this Deployment: `<deployment>-<pod-template-hash>-<5 chars>`.

    Prometheus anchors regexes, and a Deployment name is a DNS label (no regex metacharacters), so a
    sibling Deployment `<deployment>-canary` (pods `<deployment>-canary-<hash>-<x>`) does not match.
    """
    return f"{deployment}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}"


def gpu_utilization_query(deployment: str, namespace: str, window: str = dcgm.QUERY_WINDOW) -> str:
    """Sum of the average utilisation of every GPU held by the Deployment's pods in its namespace.

    - `namespace` and `pod` are the workload's own (the ServiceMonitor honours the exporter's labels);
    - `clamp(..., 0, 100)` drops DCGM's occasional garbage readings (go-dcgm #75) to the valid range;
    - `max by (UUID)` counts each physical GPU once even if a series were ever scraped twice;
    - `sum` returns one element, as KEDA requires, and an *empty* result when no GPU reports, which
      with `ignoreNullValues: "false"` is an error that triggers the fallback instead of reading as 0.
    """
    selector = f'namespace="{namespace}",pod=~"{pod_name_regex(deployment)}"'
    return (
        f"sum(max by ({dcgm.GPU_ID_LABEL}) "
        f"(clamp(avg_over_time({dcgm.GPU_UTIL_METRIC}{{{selector}}}[{window}]), 0, 100)))"
    )


def threshold_value(target_utilization: float, gpus_per_pod: int) -> float:
    """Per-replica AverageValue target: per-GPU target times GPUs per pod."""
    return target_utilization * gpus_per_pod


def format_number(value: float) -> str:
    """KEDA reads thresholds as strings; render 60.0 as "60" and 67.5 as "67.5"."""
    return f"{value:g}"


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


# --- serving (issue 10): triggers on the workload's own series --------------------------------------


def serving_metric_query(deployment: str, namespace: str, metric: str, window: str = "1m") -> str:
    """Sum over exactly the Deployment's pods of one of their own series (e.g. vllm:num_requests_waiting).

    The PodMonitor's targets carry the pod's `namespace` and `pod` labels (prometheus-operator's PodMonitor
    relabelling), so the selector is the GPU query's; `sum` returns one element or, when no pod reports,
    an empty result that `ignoreNullValues: "false"` turns into an error and the fallback.
    """
    selector = f'namespace="{namespace}",pod=~"{pod_name_regex(deployment)}"'
    return f"sum(avg_over_time({metric}{{{selector}}}[{window}]))"


def hpa_desired_replicas_all(metrics: list[tuple[float, float]], current_replicas: int) -> int:
    """With several metrics the HPA computes one proposal per metric and takes the largest.

    kubernetes pkg/controller/podautoscaler/horizontal.go, computeReplicasForMetrics: "replicas =
    max(replicas, replicaCountProposal)"; `metrics` is a list of (total, per-replica threshold).
    """
    if not metrics:
        raise ValueError("at least one metric")
    return max(hpa_desired_replicas(total, threshold, current_replicas) for total, threshold in metrics)
