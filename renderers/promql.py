"""The PromQL a workload's ScaledObject asks Prometheus, and the threshold KEDA compares it with.

Pure functions, no Pulumi: renderers/workload_specs.py puts them into the ScaledObject, the recording rules and
dashboards reuse them, the metrics-path tests run the very same strings against a real Prometheus, and the
README quotes them. The HPA's arithmetic on the result is capacity/hpa.py's.

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
from decimal import Decimal

from renderers import dcgm
from renderers.chart_values import KSM_JOB

#: KEDA names the HPA it creates `keda-hpa-<ScaledObject name>` unless told otherwise.
HPA_PREFIX = "keda-hpa-"


def hpa_name(scaled_object: str) -> str:
    """The HPA's name: the ScaledObject sets it explicitly, the alerts and dashboards select its series by it."""
    return f"{HPA_PREFIX}{scaled_object}"


def pod_name_regex(deployment: str) -> str:
    """Pods of exactly this Deployment: `<deployment>-<pod-template-hash>-<5 chars>`.

    Prometheus anchors regexes, and a Deployment name is a DNS label (no regex metacharacters), so a
    sibling Deployment `<deployment>-canary` (pods `<deployment>-canary-<hash>-<x>`) does not match.
    """
    return f"{deployment}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}"


def pods(deployment: str, namespace: str) -> str:
    """The matchers of exactly the Deployment's pods in its namespace (the series carry the pod's own labels)."""
    return f'namespace="{namespace}",pod=~"{pod_name_regex(deployment)}"'


def gpu_utilization_query(deployment: str, namespace: str, window: str = dcgm.QUERY_WINDOW) -> str:
    """Sum of the average utilisation of every GPU held by the Deployment's pods in its namespace.

    - `namespace` and `pod` are the workload's own (the ServiceMonitor honours the exporter's labels);
    - `clamp(..., 0, 100)` drops DCGM's occasional garbage readings (go-dcgm #75) to the valid range;
    - `max by (UUID)` counts each physical GPU once even if a series were ever scraped twice;
    - `sum` returns one element, as KEDA requires, and an *empty* result when no GPU reports, which
      with `ignoreNullValues: "false"` is an error that triggers the fallback instead of reading as 0.
    """
    return (
        f"sum(max by ({dcgm.GPU_ID_LABEL}) "
        f"(clamp(avg_over_time({dcgm.GPU_UTIL_METRIC}{{{pods(deployment, namespace)}}}[{window}]), 0, 100)))"
    )


def zero_without_available_pods(query: str, deployment: str, namespace: str) -> str:
    """`query`, or 0 when kube-state-metrics reports that the Deployment has no available pod.

    For a workload that scales to zero: with no pods the query over its pods is empty, and KEDA turns an empty
    result with `ignoreNullValues: "false"` into a scaler error on every poll (kedacore/keda v2.20.2
    pkg/scalers/prometheus_scaler.go, `ExecutePromQuery`): the KedaScalerErrors alert would fire for as long as
    the workload sleeps. Here "no pod is available" is a positive reading from kube-state-metrics, so the result
    is a real 0 (no load: a pod that is not running holds no GPU work), while a broken scrape with pods running
    stays empty, i.e. an error and the fallback. If kube-state-metrics reports nothing, the result stays empty too.
    """
    available = (f'kube_deployment_status_replicas_available{{job="{KSM_JOB}",namespace="{namespace}",'
                 f'deployment="{deployment}"}}')
    return f"({query}) or on () (vector(0) and on () (max({available}) == 0))"


def threshold_value(target_utilization: float, gpus_per_pod: int) -> float:
    """Per-replica AverageValue target: per-GPU target times GPUs per pod."""
    return target_utilization * gpus_per_pod


def format_number(value: float) -> str:
    """A number as the exact decimal KEDA (Go's strconv.ParseFloat) and PromQL read back as the same float.

    60.0 is "60", 67.5 is "67.5", 1234567 is "1234567" and 12345.678 is "12345.678": the shortest digits that
    round-trip (Python's repr), written out without an exponent. `:g` would give "1.23457e+06" and "12345.7",
    six significant digits, i.e. another threshold than the one configured.
    """
    if not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    text = format(Decimal(repr(float(value))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
