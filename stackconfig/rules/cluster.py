"""Rules across the cluster's keys: Kubernetes version, chart compatibility, Cluster Autoscaler flags."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from stackconfig import versions
from stackconfig.cluster import (
    AUTOSCALER_BOOLS,
    AUTOSCALER_DURATIONS,
    AUTOSCALER_INTS,
    AUTOSCALER_KEYS,
    CREATING_FIELDS,
)
from stackconfig.errors import Problem
from stackconfig.stack import StackConfig
from stackconfig.units import go_duration_seconds, is_number


def version_tuple(value: str, prefix: str) -> tuple[int, int] | None:
    match = re.fullmatch(rf"{prefix}(\d+)\.(\d+)\.(\d+)", value)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _minors(rng: tuple[int, int]) -> str:
    return f"1.{rng[0]}-1.{rng[1]}"


#: What an existing cluster's GPU pool must state: none of it is created here, so a default would be a guess about
#: nodes this stack does not control (their labels and taints are what the workloads select and tolerate).
EXISTING_POOL_FIELDS = ("flavor", "min_nodes", "max_nodes", "labels", "taints")
#: GPU pool keys that only shape a pool this stack creates.
POOL_CREATING_FIELDS = ("public_ipv4",)
STACK_REFERENCE = re.compile(r"^[^/\s]+/[^/\s]+/[^/\s]+$")


def _stated(model: BaseModel, fields: tuple[str, ...]) -> list[str]:
    """The fields of `fields` the stack file states (as opposed to defaults)."""
    return [f for f in fields if f in model.model_fields_set]


def existing_cluster_problems(cfg: StackConfig) -> list[Problem]:
    """`cluster.existing`: the kubeconfig given one way, and nothing stated that only a created cluster reads."""
    c, e = cfg.cluster, cfg.cluster.existing
    assert e is not None
    out: list[Problem] = []
    given = [k for k, v in (("kubeconfigSecret", e.kubeconfig_secret), ("stackReference", e.stack_reference)) if v]
    if len(given) != 1:
        out.append(Problem("cluster.existing", ", ".join(given) or None,
                           "needs exactly one way to reach the cluster",
                           "set cluster.existing.kubeconfigSecret (a `secrets:` key holding its kubeconfig) or "
                           "cluster.existing.stackReference (org/project/stack of the stack that owns it)"))
    if e.stack_reference is not None and not STACK_REFERENCE.match(e.stack_reference):
        out.append(Problem("cluster.existing.stackReference", e.stack_reference, "is not a fully qualified stack name",
                           "write <organization>/<project>/<stack>, e.g. acme/gpu-cluster/prod"))
    for field in _stated(c, CREATING_FIELDS):
        out.append(Problem(f"cluster.{to_camel(field)}", getattr(c, field),
                           "has no effect with cluster.existing: this stack does not create or change the cluster",
                           f"remove cluster.{to_camel(field)} (it is the cluster owner's setting: the Gcore portal, "
                           "or the stack that created it)"))
    if "version" not in c.model_fields_set:
        out.append(Problem("cluster.version", None, "must be stated with cluster.existing: the chart pins are checked "
                           "against the cluster's Kubernetes version", "set it to what `kubectl version` reports as "
                           "the server version, e.g. v1.35.3"))
    elif not version_tuple(c.version, "v"):
        out.append(Problem("cluster.version", c.version, "is not a Kubernetes version", "write it like v1.35.3"))
    for key, pool in zip(cfg.pool_keys, cfg.pools, strict=True):
        for field in _stated(pool, POOL_CREATING_FIELDS):
            out.append(Problem(f"{key}.{to_camel(field)}", getattr(pool, field),
                               "has no effect with cluster.existing: this stack creates no pool",
                               f"remove {key}.{to_camel(field)}"))
        for field in EXISTING_POOL_FIELDS:
            if field not in pool.model_fields_set:
                name = f"{key}.{to_camel(field)}"
                out.append(Problem(name, None,
                                   "must be stated with cluster.existing: the GPU pool is not created here, so this "
                                   "stack cannot know it",
                                   f"set {name} to the existing GPU pool's (`kubectl get nodes --show-labels` "
                                   "shows its labels; the Gcore portal its flavor, taints and node range)"))
    if cfg.system_pool.model_fields_set:
        out.append(Problem("systemPool", ", ".join(sorted(to_camel(f) for f in cfg.system_pool.model_fields_set)),
                           "has no effect with cluster.existing: this stack creates no node pools",
                           "remove the systemPool section"))
    if "protect" in cfg.model_fields_set and cfg.protect:
        out.append(Problem("protect", True, "has no effect with cluster.existing: it protects the Gcore cluster "
                           "resource, which this stack does not have", "remove protect"))
    return out


def cluster_problems(cfg: StackConfig) -> list[Problem]:
    c = cfg.cluster
    if c.existing is not None:
        return existing_cluster_problems(cfg)
    out: list[Problem] = []
    if c.keypair is None:
        out.append(Problem("cluster.keypair", None, "is required to create a cluster",
                           "set it to the name of an SSH keypair that exists in the Gcore project, or set "
                           "cluster.existing to deploy into a cluster made elsewhere"))
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
    version_known = cfg.cluster.version in versions.GCORE_K8S_VERSIONS or (
        cfg.cluster.existing is not None and version_tuple(cfg.cluster.version, "v") is not None)
    minor = cfg.cluster.minor if version_known else None
    out: list[Problem] = []
    checks = (
        ("charts.gpuOperator", cfg.charts.gpu_operator, "v", versions.GPU_OPERATOR_K8S),
        ("charts.keda", cfg.charts.keda, "", versions.KEDA_K8S),
    )
    for key, value, prefix, matrix in checks:
        line = version_tuple(value, prefix)
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
    kps = version_tuple(cfg.charts.kube_prometheus_stack, "")
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
        elif key == "expander":
            out += expander_problems(where, value)
        elif key == "max-total-unready-percentage" and not (
            re.fullmatch(r"\d+(\.\d+)?", value) and float(value) <= 100
        ):
            out.append(Problem(where, value, "is a percentage between 0 and 100", "write 45 for 45 %"))
    return out


#: Expanders the managed Cluster Autoscaler can run for a Gcore cluster (kubernetes/autoscaler cluster-autoscaler/
#: FAQ.md, "What are Expanders?"; several, comma-separated, from CA 1.23: each breaks the previous one's ties).
EXPANDERS = ("random", "most-pods", "least-waste")
#: Expanders Gcore's key accepts but that cannot work there, with why.
EXPANDERS_REFUSED = {
    "priority": "needs the ConfigMap cluster-autoscaler-priority-expander in the autoscaler pod's own namespace, with "
                "regular expressions over node-group names; Gcore manages the autoscaler and documents neither that "
                "namespace nor its node-group names, so the program cannot write it",
    "price": "needs node prices from the cloud provider's autoscaler integration (cloudprovider.Pricing), which "
             "Gcore does not document",
    "grpc": "needs an expander service and the --grpc-expander-url and --grpc-expander-cert flags, which are not "
            "among the keys Gcore accepts",
}


def expander_problems(where: str, value: str) -> list[Problem]:
    """`cluster.autoscaler.expander`: it decides which pool grows only for a Pending pod that several pools could
    take. The platform's workloads each select one pool, so for them there is never a choice (docs/gpu-pools.md)."""
    out = []
    for name in (part.strip() for part in value.split(",")):
        if name in EXPANDERS_REFUSED:
            out.append(Problem(where, value, f"uses the {name} expander, which cannot work here: "
                               f"{EXPANDERS_REFUSED[name]}", f"use {', '.join(EXPANDERS)} (or a comma-separated "
                               "chain of them), or drop the key (random)"))
        elif name not in EXPANDERS:
            out.append(Problem(where, value, f"names {name!r}, which is not a Cluster Autoscaler expander",
                               f"use one of {', '.join(EXPANDERS)}"))
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
    pool_key, minutes = max(zip(cfg.pool_keys, (p.provision_minutes for p in cfg.pools), strict=True),
                            key=lambda kv: kv[1])
    seconds = go_duration_seconds(value)
    if seconds is None:  # not a duration at all: _autoscaler_problems reports that
        return []
    if seconds < minutes * 60:
        return [Problem(f"cluster.autoscaler.{key}", value,
                        f"is shorter than {pool_key}.provisionMinutes ({minutes}): the autoscaler would give up on "
                        "GPU nodes that are still provisioning",
                        f"set it to at least '{minutes}m', or drop it (the default is the longest provisionMinutes "
                        "of the GPU pools)")]
    return []


#: Schemes Helm pulls charts over (helm.sh/helm/v3 pkg/getter: http/https, and OCI registries).
MIRROR_SCHEMES = ("https", "http", "oci")


def chart_mirror_problems(cfg: StackConfig) -> list[Problem]:
    """`charts.mirror`: a repository URL Helm can pull from, or a directory that holds every pinned archive."""
    mirror = cfg.charts.mirror
    if mirror is None:
        return []
    scheme, sep, _ = mirror.partition("://")
    if sep:
        if scheme not in MIRROR_SCHEMES:
            return [Problem("charts.mirror", mirror, f"uses '{scheme}://', which Helm cannot pull charts from",
                            "use an https:// (or http://) Helm repository, an oci:// registry path, or an absolute "
                            "local directory")]
        return []
    path = Path(mirror)
    if not path.is_absolute():
        return [Problem("charts.mirror", mirror, "is a relative path, which would depend on where pulumi runs",
                        f"write it as an absolute path, e.g. {Path.cwd() / mirror}")]
    if not path.is_dir():
        return [Problem("charts.mirror", mirror, "is not a directory on this machine",
                        "create it with the packaged charts (`helm pull <chart> --version <pin>`), or fix the path")]
    out: list[Problem] = []
    for key, (chart, version) in cfg.charts.versions().items():
        if not (path / chart.archive(version)).is_file():
            out.append(Problem("charts.mirror", mirror, f"holds no {chart.archive(version)} for {key} {version}",
                               f"add it: `helm pull {chart.name} --repo {chart.repo} --version {version} "
                               f"--destination {mirror}`"))
    return out
