"""The typed stack configuration: what a stack file may say, its defaults, and every rule it must obey.

Pure Python (pydantic), no Pulumi resources: `__main__.py` reads the stack's structured config and
hands it to `load_stack_config`, which either returns a frozen `StackConfig` or raises `ConfigError`
listing every bad key, its value and the fix, before a single resource is registered.
Stack files state only what differs from these defaults (the ai-on-gke pool-spec idea).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from stackconfig import versions
from stackconfig.errors import ConfigError, Problem, from_validation_error

# --- value rules -------------------------------------------------------------------------------

#: Gcore cluster and pool names (API K8sClusterCreateV2Serializer): 2-20 chars.
GCORE_NAME = re.compile(r"^[a-z][a-z0-9\-]{0,18}[a-z0-9]$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
BARE_METAL_GPU_FLAVOR = re.compile(r"^bm\d+-ai-[a-z0-9-]+$")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: Pod names are `<deployment>-<hash up to 10>-<5>`, truncated by Kubernetes at 58+5 chars; a name of at
#: most 40 keeps every pod name whole, so the query's pod regex matches all of the workload's pods.
WORKLOAD_NAME_MAX = 40
#: Namespaces the platform owns or Kubernetes reserves: workloads go elsewhere.
RESERVED_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "gpu-operator", "keda", "monitoring")
AUTOSCALER_KEYS = (
    "balance-similar-node-groups", "expander", "expendable-pods-priority-cutoff",
    "ignore-daemonsets-utilization", "max-empty-bulk-delete", "max-graceful-termination-sec",
    "max-node-provision-time", "max-total-unready-percentage", "new-pod-scale-up-delay",
    "ok-total-unready-count", "scale-down-delay-after-add", "scale-down-delay-after-delete",
    "scale-down-delay-after-failure", "scale-down-enabled", "scale-down-unneeded-time",
    "scale-down-unready-time", "scale-down-utilization-threshold", "scan-interval",
    "skip-nodes-with-custom-controller-pods", "skip-nodes-with-local-storage", "skip-nodes-with-system-pods",
)


def _invalid(reason: str, fix: str) -> PydanticCustomError:
    return PydanticCustomError("invalid_value", "{reason}", {"reason": reason, "fix": fix})


def _gcore_name(value: str) -> str:
    if not GCORE_NAME.match(value):
        raise _invalid(
            "Gcore accepts 2-20 characters: a lowercase letter first, then lowercase letters, digits or '-', "
            "not ending in '-'",
            "pick a short name such as 'gpu-prod'",
        )
    return value


def _dns_label(value: str) -> str:
    if len(value) > 63 or not DNS_LABEL.match(value):
        raise _invalid(
            "Kubernetes needs a DNS-1123 label (lowercase letters, digits, '-', at most 63 characters)",
            "use lowercase letters, digits and '-' only",
        )
    return value


def _label_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix)):
        return False
    return len(name) <= 63 and bool(LABEL_NAME.match(name))


def _labels(value: dict[str, str]) -> dict[str, str]:
    for key, val in value.items():
        if not _label_key(key):
            raise _invalid(f"label key {key!r} is not a valid Kubernetes label key",
                           "use '[prefix/]name' with name ≤ 63 chars of [A-Za-z0-9-_.]")
        if val and (len(val) > 63 or not LABEL_NAME.match(val)):
            raise _invalid(f"label value {val!r} (key {key!r}) is not a valid Kubernetes label value",
                           "use ≤ 63 chars of [A-Za-z0-9-_.], starting and ending alphanumeric")
    return value


def _taints(value: dict[str, str]) -> dict[str, str]:
    for key, spec in value.items():
        taint_value, sep, effect = spec.rpartition(":")
        if not _label_key(key) or not sep or effect not in TAINT_EFFECTS or (
            taint_value and not LABEL_NAME.match(taint_value)
        ):
            raise _invalid(
                f"taint {key!r}: {spec!r} is not in Gcore's form 'key: value:Effect'",
                f"write it like 'nvidia.com/gpu: present:NoSchedule'; Effect is one of {', '.join(TAINT_EFFECTS)}",
            )
    return value


IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def _image(value: str) -> str:
    if "@" in value:
        if not IMAGE_DIGEST.search(value):
            raise _invalid("the digest is not 'sha256:' followed by 64 lowercase hex digits",
                           "copy the full digest, e.g. 'registry.example.com/app@sha256:<64 hex>'")
        return value
    last = value.rsplit("/", 1)[-1]
    if ":" not in last:
        raise _invalid("the image has no tag, so every node may pull a different build",
                       "pin a version tag or a digest, e.g. 'registry.example.com/app:1.4.2'")
    if last.rsplit(":", 1)[1].lower() == "latest":
        raise _invalid("the image is tagged 'latest', so every node may pull a different build",
                       "pin a version tag or a digest, e.g. 'registry.example.com/app:1.4.2'")
    return value


def _env(value: dict[str, str]) -> dict[str, str]:
    for key in value:
        if not ENV_NAME.match(key):
            raise _invalid(f"environment variable name {key!r} is not valid",
                           "use letters, digits, '_', '-' or '.', not starting with a digit")
    return value


GcoreName = Annotated[str, AfterValidator(_gcore_name)]
DnsLabel = Annotated[str, AfterValidator(_dns_label)]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]
Taints = Annotated[dict[str, str], AfterValidator(_taints)]
Image = Annotated[str, AfterValidator(_image)]
Env = Annotated[dict[str, str], AfterValidator(_env)]


class _Model(BaseModel):
    """Frozen, camelCase in stack files, and strict about unknown keys."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, str_strip_whitespace=True
    )

    @classmethod
    def keys(cls) -> list[str]:
        return [f.alias or name for name, f in cls.model_fields.items()]


# --- sections ----------------------------------------------------------------------------------


class ClusterConfig(_Model):
    """The Gcore Managed Kubernetes cluster. Changing name, keypair, network, subnet or cni REPLACES it."""

    name: GcoreName
    version: str = versions.DEFAULT_K8S_VERSION
    project_id: int | None = Field(default=None, ge=1)
    project_name: str | None = None
    region_id: int | None = Field(default=None, ge=1)
    region_name: str | None = None
    keypair: str = Field(min_length=1)
    network: str | None = None
    subnet: str | None = None
    cni: Literal["calico", "cilium"] = "calico"
    #: Cluster Autoscaler flags that override the ones derived from the GPU pool.
    autoscaler: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _strings_for_autoscaler(cls, data: Any) -> Any:
        # Gcore's autoscaler_config is string->string; accept YAML numbers/bools and quote them.
        if isinstance(data, dict) and isinstance(data.get("autoscaler"), dict):
            data = {**data, "autoscaler": {k: _as_flag(v) for k, v in data["autoscaler"].items()}}
        return data

    @property
    def minor(self) -> int:
        return int(self.version.split(".")[1])


def _as_flag(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


DEFAULT_POOL_LABELS = {"platform.gcore-gpu/pool": "gpu"}
DEFAULT_POOL_TAINTS = {"nvidia.com/gpu": "present:NoSchedule"}


class GpuPoolConfig(_Model):
    """The bare-metal GPU pool. Changing flavor or publicIpv4 RECREATES the pool (20-25 min, billed)."""

    name: GcoreName = "gpu"
    flavor: str = "bm3-ai-1xlarge-h100-80-8"
    gpus_per_node: int | None = Field(default=None, ge=1, le=16)
    min_nodes: int = Field(default=1, ge=1)
    max_nodes: int = Field(default=2, ge=1, le=200)
    public_ipv4: bool = False
    autohealing: bool = False
    labels: Labels = Field(default_factory=lambda: dict(DEFAULT_POOL_LABELS))
    taints: Taints = Field(default_factory=lambda: dict(DEFAULT_POOL_TAINTS))
    #: Minutes a new node of this flavor needs until its GPUs are allocatable (BM: 20-25 min + 5-10 min).
    provision_minutes: int = Field(default=35, ge=5, le=120)

    @property
    def gpus(self) -> int:
        """GPUs per node: explicit, else the trailing count of the flavor id (bm3-ai-...-h100-80-8 -> 8)."""
        if self.gpus_per_node is not None:
            return self.gpus_per_node
        return derived_gpus(self.flavor) or 0


def derived_gpus(flavor: str) -> int | None:
    match = re.search(r"-(\d+)$", flavor)
    return int(match.group(1)) if match else None


class SystemPoolConfig(_Model):
    """A small VM pool for the platform's own pods (operators, KEDA, Prometheus, Grafana, CoreDNS).

    The GPU pool is tainted, so without this pool those pods have nowhere to run; and a GPU node that
    hosts Prometheus (local storage, non-DaemonSet pods) can never be scaled down by the autoscaler.
    """

    enabled: bool = True
    name: GcoreName = "system"
    flavor: str = "g1-standard-4-8"
    min_nodes: int = Field(default=1, ge=1)
    max_nodes: int = Field(default=3, ge=1, le=200)
    #: Gcore requires a server-group policy and a boot volume for VM pools (and forbids both for bare metal).
    servergroup_policy: Literal["anti-affinity", "soft-anti-affinity", "affinity"] = "soft-anti-affinity"
    boot_volume_size: int = Field(default=50, ge=10)
    boot_volume_type: Literal["standard", "ssd_hiiops", "cold", "ultra"] = "standard"


class ChartsConfig(_Model):
    """Chart versions; defaults live in stackconfig/versions.py."""

    gpu_operator: str = versions.GPU_OPERATOR.default_version
    keda: str = versions.KEDA.default_version
    kube_prometheus_stack: str = versions.KUBE_PROMETHEUS_STACK.default_version


class MonitoringConfig(_Model):
    retention: str = Field(default="15d", pattern=r"^\d+(ms|s|m|h|d|w|y)$")
    #: Persistent volume for Prometheus' TSDB, e.g. "100Gi"; unset keeps it on an emptyDir (lost on restart).
    storage_size: str | None = Field(default=None, pattern=r"^\d+(Mi|Gi|Ti)$")
    #: Storage class of that volume; unset uses the cluster's default class.
    storage_class: str | None = None


class WakeTriggerConfig(_Model):
    """A demand signal (queue length, request rate) that can wake a workload scaled to zero.

    GPU utilisation cannot: with no pods there are no GPU series (keda-gpu-scaler #142).
    """

    query: str = Field(min_length=1)
    threshold: float = Field(gt=0)
    activation_threshold: float = Field(default=0, ge=0)


class ResourcesConfig(_Model):
    cpu: str | None = None
    memory: str | None = None


class WorkloadConfig(_Model):
    """A GPU Deployment scaled by KEDA on its GPUs' utilisation."""

    name: Annotated[DnsLabel, Field(max_length=WORKLOAD_NAME_MAX)]
    namespace: DnsLabel = "gpu-workloads"
    image: Image
    command: list[str] = Field(default_factory=list)
    args: list[str] = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    requests: ResourcesConfig = Field(default_factory=ResourcesConfig)
    gpus_per_pod: int = Field(default=1, ge=1)
    min_replicas: int = Field(default=1, ge=0)
    max_replicas: int = Field(ge=1)
    #: Average utilisation per GPU (%) the workload is scaled to hold.
    target_utilization: float = Field(default=60, gt=0, le=100)
    polling_interval: int = Field(default=15, ge=5, le=300)
    #: Seconds of lower recommendations before the HPA removes replicas (GPU pods start slowly).
    scale_down_stabilization_seconds: int = Field(default=300, ge=0, le=3600)
    #: Seconds before scaling from 1 to 0 (only with minReplicas: 0).
    cooldown_period: int = Field(default=300, ge=0)
    #: Replicas to hold while the metric is unavailable (at least the current count is kept).
    fallback_replicas: int | None = Field(default=None, ge=0)
    fallback_failure_threshold: int = Field(default=3, ge=1)
    termination_grace_period_seconds: int = Field(default=60, ge=0, le=3600)
    wake_trigger: WakeTriggerConfig | None = None

    @property
    def fallback(self) -> int:
        return self.fallback_replicas if self.fallback_replicas is not None else max(self.min_replicas, 1)


# --- what-if (python -m capacity): the demand trace a pull request's what-if replays ------------


class WhatIfConfig(_Model):
    """How `python -m capacity` and the pull-request what-if read this stack's demand trace.

    `trace` is a CSV path relative to the repository root; demand in GPUs = `column` / `perGpu` (units of
    the column one GPU serves per minute at 100 % utilisation). The ranges are uniform draws per node
    (Gcore bare metal 20-25 min to Ready, GPU Operator 5-10 min more); `pricePerGpuHour` is an estimate.
    """

    trace: str | None = None
    column: str = "requests"
    per_gpu: float | None = Field(default=None, gt=0)
    workload: str | None = None
    #: Wall-clock time of the trace's first row, for cron windows (ISO 8601 with offset).
    start: str = "2026-01-05T00:00:00+00:00"
    pod_start_seconds: int = Field(default=180, ge=0, le=7200)
    node_ready_minutes: tuple[float, float] = (20, 25)
    gpu_ready_minutes: tuple[float, float] = (5, 10)
    price_per_gpu_hour: float = Field(default=4.0, ge=0)
    seed: int = 1


class StackConfig(_Model):
    cluster: ClusterConfig
    gpu_pool: GpuPoolConfig = Field(default_factory=GpuPoolConfig)
    system_pool: SystemPoolConfig = Field(default_factory=SystemPoolConfig)
    charts: ChartsConfig = Field(default_factory=ChartsConfig)
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig)
    workloads: list[WorkloadConfig] = Field(default_factory=list)
    #: Protect the cluster from `pulumi destroy` and replacements (on in production).
    protect: bool = False
    #: Demand trace and conversion for `python -m capacity` (ignored by the Pulumi program).
    what_if: WhatIfConfig | None = None

    @property
    def max_gpus(self) -> int:
        return self.gpu_pool.max_nodes * self.gpu_pool.gpus


#: Accepted keys per section, for "did you mean" hints on typos.
KNOWN_KEYS: dict[str, list[str]] = {
    "": StackConfig.keys(),
    "cluster": ClusterConfig.keys(),
    "gpuPool": GpuPoolConfig.keys(),
    "systemPool": SystemPoolConfig.keys(),
    "charts": ChartsConfig.keys(),
    "monitoring": MonitoringConfig.keys(),
    "workloads[]": WorkloadConfig.keys(),
    "workloads[].wakeTrigger": WakeTriggerConfig.keys(),
    "workloads[].requests": ResourcesConfig.keys(),
    "whatIf": WhatIfConfig.keys(),
}


# --- rules across keys -------------------------------------------------------------------------


def _version_tuple(value: str, prefix: str) -> tuple[int, int] | None:
    match = re.fullmatch(rf"{prefix}(\d+)\.(\d+)\.(\d+)", value)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _minors(rng: tuple[int, int]) -> str:
    return f"1.{rng[0]}-1.{rng[1]}"


def _cluster_problems(cfg: StackConfig) -> list[Problem]:
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


def _pool_problems(cfg: StackConfig) -> list[Problem]:
    p = cfg.gpu_pool
    out: list[Problem] = []
    if not BARE_METAL_GPU_FLAVOR.match(p.flavor):
        out.append(Problem("gpuPool.flavor", p.flavor, "is not a bare-metal GPU flavor (bm<gen>-ai-...)",
                           "use a flavor such as 'bm3-ai-1xlarge-h100-80-8' (list: GET /cloud/v1/k8s/"
                           "{project}/{region}/flavors)"))
    if p.gpus_per_node is None and derived_gpus(p.flavor) is None:
        out.append(Problem("gpuPool.gpusPerNode", None, "cannot be derived from the flavor id",
                           "set gpuPool.gpusPerNode to the flavor's GPU count"))
    if p.max_nodes <= p.min_nodes:
        out.append(Problem("gpuPool.maxNodes", p.max_nodes,
                           f"must be greater than gpuPool.minNodes ({p.min_nodes}), or the autoscaler never "
                           "adds a node (min == max disables it)",
                           f"set gpuPool.maxNodes to at least {p.min_nodes + 1}"))
    s = cfg.system_pool
    if s.enabled:
        if s.name == p.name:
            out.append(Problem("systemPool.name", s.name, "is the GPU pool's name too; Gcore matches pools by name",
                               "give the system pool another name"))
        if not re.match(r"^[ga]\d", s.flavor):
            out.append(Problem("systemPool.flavor", s.flavor, "is not a VM flavor (g…/a…)",
                               "use a VM flavor such as 'g1-standard-4-8'"))
        if s.max_nodes < s.min_nodes:
            out.append(Problem("systemPool.maxNodes", s.max_nodes, f"is below systemPool.minNodes ({s.min_nodes})",
                               f"set systemPool.maxNodes to at least {s.min_nodes}"))
    elif any(spec.endswith((":NoSchedule", ":NoExecute")) for spec in p.taints.values()):
        out.append(Problem("systemPool.enabled", False,
                           "leaves only the tainted GPU pool, so KEDA, Prometheus and the operators cannot schedule",
                           "keep the system pool, or remove the GPU pool's NoSchedule/NoExecute taints"))
    if p.autohealing:
        out.append(Problem("gpuPool.autohealing", True,
                           "must stay off for GPU bare-metal pools (Gcore's GPU autoscaling guide, step 1.7): "
                           "a node whose GPUs are still initialising would be replaced", "remove the key"))
    return out


def _chart_problems(cfg: StackConfig) -> list[Problem]:
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


def fit_problems(key: str, w: WorkloadConfig, gpus_per_node: int, max_nodes: int) -> list[Problem]:
    """Whether one workload fits a GPU pool at all; shared with stacks that deploy onto this platform."""
    if w.gpus_per_pod > gpus_per_node:
        return [Problem(f"{key}.gpusPerPod", w.gpus_per_pod,
                        f"exceeds the GPUs of one pool node ({gpus_per_node}); such a pod never schedules",
                        f"use at most {gpus_per_node} GPUs per pod")]
    per_node = gpus_per_node // w.gpus_per_pod
    if w.max_replicas > per_node * max_nodes:
        return [Problem(f"{key}.maxReplicas", w.max_replicas,
                        f"cannot fit: {max_nodes} node(s) hold {per_node} pod(s) of {w.gpus_per_pod} GPU(s) each; "
                        "extra replicas stay Pending and stall the HPA",
                        f"lower maxReplicas to {per_node * max_nodes} or raise gpuPool.maxNodes")]
    return []


def _workload_problems(cfg: StackConfig) -> list[Problem]:
    gpus_per_node = cfg.gpu_pool.gpus
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, w in enumerate(cfg.workloads):
        key = f"workloads[{i}]"
        if w.name in seen:
            out.append(Problem(f"{key}.name", w.name, f"is already used by workloads[{seen[w.name]}]",
                               "give every workload its own name"))
        seen.setdefault(w.name, i)
        if w.namespace in RESERVED_NAMESPACES:
            out.append(Problem(f"{key}.namespace", w.namespace, "is reserved for the platform or Kubernetes",
                               "use a namespace of your own, e.g. 'gpu-workloads'"))
        if w.min_replicas > w.max_replicas:
            out.append(Problem(f"{key}.minReplicas", w.min_replicas,
                               f"is greater than maxReplicas ({w.max_replicas})",
                               "lower minReplicas or raise maxReplicas"))
        if gpus_per_node:
            out += fit_problems(key, w, gpus_per_node, cfg.gpu_pool.max_nodes)
        if w.min_replicas == 0 and w.wake_trigger is None:
            out.append(Problem(f"{key}.minReplicas", 0,
                               "scales to zero, but GPU utilisation cannot wake a workload with no pods",
                               f"add {key}.wakeTrigger (a demand query such as queue length) or set "
                               "minReplicas ≥ 1"))
        if w.fallback_replicas is not None and not w.min_replicas <= w.fallback_replicas <= w.max_replicas:
            out.append(Problem(f"{key}.fallbackReplicas", w.fallback_replicas,
                               f"is outside minReplicas..maxReplicas ({w.min_replicas}..{w.max_replicas})",
                               "pick a value in that range"))
    total = sum(w.max_replicas * w.gpus_per_pod for w in cfg.workloads)
    if gpus_per_node and total > cfg.max_gpus:
        out.append(Problem("workloads[*].maxReplicas", total,
                           f"GPUs requested at maxReplicas exceed the pool's capacity of {cfg.max_gpus} "
                           f"({cfg.gpu_pool.max_nodes} nodes × {gpus_per_node} GPUs); pods would stay Pending",
                           "lower maxReplicas × gpusPerPod or raise gpuPool.maxNodes"))
    return out


def _whatif_problems(cfg: StackConfig) -> list[Problem]:
    """The what-if section must name a real workload, ordered ranges and a parseable start time."""
    w = cfg.what_if
    if w is None:
        return []
    out: list[Problem] = []
    names = [x.name for x in cfg.workloads]
    if w.workload is not None and w.workload not in names:
        out.append(Problem("whatIf.workload", w.workload, "is not one of the stack's workloads",
                           f"use one of: {', '.join(names) or '(none: add a workload)'}"))
    for key, (low, high) in (("whatIf.nodeReadyMinutes", w.node_ready_minutes),
                             ("whatIf.gpuReadyMinutes", w.gpu_ready_minutes)):
        if not 0 <= low <= high:
            out.append(Problem(key, [low, high], "is not a range [low, high] with 0 ≤ low ≤ high",
                               "write it like [20, 25]"))
    try:
        datetime.fromisoformat(w.start)
    except ValueError:
        out.append(Problem("whatIf.start", w.start, "is not an ISO 8601 time",
                           "write it like '2026-01-05T00:00:00+00:00'"))
    return out


def load_stack_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the project's structured config (keys without the `<project>:` prefix)."""
    try:
        cfg = StackConfig.model_validate(dict(raw))
    except ValidationError as exc:
        raise ConfigError(from_validation_error(exc, KNOWN_KEYS)) from None
    problems = [*_cluster_problems(cfg), *_pool_problems(cfg), *_chart_problems(cfg), *_workload_problems(cfg),
                *_whatif_problems(cfg)]
    if problems:
        raise ConfigError(problems)
    return cfg
