"""Rules across the cluster's keys: Kubernetes version, chart compatibility, Cluster Autoscaler flags."""

from __future__ import annotations

import re

from stackconfig import versions
from stackconfig.cluster import AUTOSCALER_BOOLS, AUTOSCALER_DURATIONS, AUTOSCALER_INTS, AUTOSCALER_KEYS
from stackconfig.errors import Problem
from stackconfig.stack import StackConfig
from stackconfig.units import go_duration_seconds, is_number


def _version_tuple(value: str, prefix: str) -> tuple[int, int] | None:
    match = re.fullmatch(rf"{prefix}(\d+)\.(\d+)\.(\d+)", value)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _minors(rng: tuple[int, int]) -> str:
    return f"1.{rng[0]}-1.{rng[1]}"


def cluster_problems(cfg: StackConfig) -> list[Problem]:
    c = cfg.cluster
    out: list[Problem] = []
    if not c.version.startswith("v"):
        out.append(Problem("cluster.version", c.version, "lacks the 'v' prefix that Gcore's API requires",
                           f"write 'v{c.version}'"))
    elif c.version not in versions.GCORE_K8S_VERSIONS:
        out.append(Problem("cluster.version", c.version, "is not a version Gcore offers for new clusters",
                           f"use one of {', '.join(versions.GCORE_K8S_VERSIONS)} "
                           "(the list lives in stackconfig/versions.py)"))
    if (c.project_id is None) == (c.project_name is None):
        out.append(Problem("cluster.projectId/projectName", c.project_id or c.project_name,
                           "must be given exactly once", "set either cluster.projectId or cluster.projectName"))
    if (c.region_id is None) == (c.region_name is None):
        out.append(Problem("cluster.regionId/regionName", c.region_id or c.region_name,
                           "must be given exactly once", "set either cluster.regionId or cluster.regionName"))
    if c.subnet and not c.network:
        out.append(Problem("cluster.subnet", c.subnet, "is set without cluster.network",
                           "set cluster.network to the subnet's network id, or drop cluster.subnet"))
    for key in c.autoscaler:
        if key not in AUTOSCALER_KEYS:
            out.append(Problem(f"cluster.autoscaler.{key}", c.autoscaler[key],
                               "is not a Cluster Autoscaler option Gcore accepts",
                               f"use one of: {', '.join(AUTOSCALER_KEYS)}"))
    return out


def chart_problems(cfg: StackConfig) -> list[Problem]:
    minor = cfg.cluster.minor if cfg.cluster.version in versions.GCORE_K8S_VERSIONS else None
    out: list[Problem] = []
    checks = (
        ("charts.gpuOperator", cfg.charts.gpu_operator, "v", versions.GPU_OPERATOR_K8S),
        ("charts.keda", cfg.charts.keda, "", versions.KEDA_K8S),
    )
    for key, value, prefix, matrix in checks:
        line = _version_tuple(value, prefix)
        if line is None:
            out.append(Problem(key, value, "is not an exact chart version", f"pin it like '{prefix}1.2.3'"))
        elif line not in matrix:
            known = ", ".join(f"{prefix}{a}.{b}.x" for a, b in matrix)
            out.append(Problem(key, value, "is a release line with no known compatibility matrix",
                               f"use one of {known}, or add its matrix to stackconfig/versions.py"))
        elif minor is not None and not matrix[line][0] <= minor <= matrix[line][1]:
            out.append(Problem(key, value,
                               f"supports Kubernetes {_minors(matrix[line])}, not {cfg.cluster.version}",
                               "pick a chart version whose matrix includes the cluster version, or change "
                               "cluster.version"))
    kps = _version_tuple(cfg.charts.kube_prometheus_stack, "")
    if kps is None:
        out.append(Problem("charts.kubePrometheusStack", cfg.charts.kube_prometheus_stack,
                           "is not an exact chart version", "pin it like '88.5.3'"))
    elif kps[0] not in versions.KUBE_PROMETHEUS_STACK_MIN_K8S:
        out.append(Problem("charts.kubePrometheusStack", cfg.charts.kube_prometheus_stack,
                           "is not a supported major", "use 79.x-88.x (older majors default Grafana's password "
                           "to 'prom-operator')"))
    elif minor is not None and minor < versions.KUBE_PROMETHEUS_STACK_MIN_K8S[kps[0]]:
        out.append(Problem("charts.kubePrometheusStack", cfg.charts.kube_prometheus_stack,
                           f"needs Kubernetes ≥ 1.{versions.KUBE_PROMETHEUS_STACK_MIN_K8S[kps[0]]}",
                           "change cluster.version"))
    return out


def autoscaler_problems(cfg: StackConfig) -> list[Problem]:
    """Cluster Autoscaler flags in the unit the autoscaler parses (a bare number is no duration)."""
    out = []
    for key, value in cfg.cluster.autoscaler.items():
        where = f"cluster.autoscaler.{key}"
        if key in AUTOSCALER_DURATIONS and go_duration_seconds(value) is None:
            fix = f"write '{value}m' or '{value}s'" if is_number(value) else "write it like '20m' or '90s'"
            out.append(Problem(where, value, "is not a duration with a unit (the autoscaler would refuse to start)",
                               fix))
        elif key in AUTOSCALER_INTS and not re.fullmatch(r"-?\d+", value):
            out.append(Problem(where, value, "is not a whole number", "write a whole number such as '10'"))
        elif key in AUTOSCALER_BOOLS and value not in ("true", "false"):
            out.append(Problem(where, value, "is not a boolean", "write true or false"))
        elif key == "scale-down-utilization-threshold" and not (
            re.fullmatch(r"\d+(\.\d+)?", value) and float(value) <= 1
        ):
            out.append(Problem(where, value, "is a fraction of a node's requested resources, between 0 and 1",
                               "write 0.5 for 50 %"))
        elif key == "max-total-unready-percentage" and not (
            re.fullmatch(r"\d+(\.\d+)?", value) and float(value) <= 100
        ):
            out.append(Problem(where, value, "is a percentage between 0 and 100", "write 45 for 45 %"))
    return out


def provision_time_problems(cfg: StackConfig) -> list[Problem]:
    """The autoscaler must not give up on a GPU node sooner than the pool needs to provision one.

    With `max-node-provision-time` below `gpuPool.provisionMinutes` the Cluster Autoscaler deletes bare-metal
    nodes that are still booting and asks for new ones, so the pool never grows (Cluster Autoscaler FAQ,
    kubernetes/autoscaler cluster-autoscaler/FAQ.md, "--max-node-provision-time").
    """
    key = "max-node-provision-time"
    if key not in cfg.cluster.autoscaler:
        return []
    value = cfg.cluster.autoscaler[key]
    minutes = cfg.gpu_pool.provision_minutes
    seconds = go_duration_seconds(value)
    if seconds is None:  # not a duration at all: _autoscaler_problems reports that
        return []
    if seconds < minutes * 60:
        return [Problem(f"cluster.autoscaler.{key}", value,
                        f"is shorter than gpuPool.provisionMinutes ({minutes}): the autoscaler would give up on "
                        "GPU nodes that are still provisioning",
                        f"set it to at least '{minutes}m', or drop it (the default is gpuPool.provisionMinutes)")]
    return []
