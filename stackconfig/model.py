"""The typed stack configuration: what a stack file may say, its defaults, and every rule it must obey.

Pure Python (pydantic), no Pulumi resources: `__main__.py` reads the stack's structured config and
hands it to `load_stack_config`, which either returns a frozen `StackConfig` or raises `ConfigError`
listing every bad key, its value and the fix, before a single resource is registered.
Stack files state only what differs from these defaults (the ai-on-gke pool-spec idea).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from stackconfig import flavors, packing, versions
from stackconfig.errors import ConfigError, Problem, from_validation_error, key_path
from stackconfig.packing import pack
from stacknames import (
    AUTOSCALER_EXPENDABLE_CUTOFF,
    DEFAULT_WORKLOAD_NAMESPACE,
    GPU_RESOURCE,
    HEADROOM_NAMESPACE,
    HEADROOM_PRIORITY,
    POOL_LABEL,
    RESERVED_NAMESPACES,
    SECRETS_NAMESPACE,
    SERVING_DRAIN_SECONDS,
)

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


# --- values in the wrong unit (docs/configuration-checks.md) ---------------------------------------------------
#: Kubernetes quantities (k8s.io/apimachinery resource.Quantity): a bare number of memory is bytes, `m` is 1/1000.
MEMORY_QUANTITY = re.compile(r"^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)$")
CPU_QUANTITY = re.compile(r"^(\d+(\.\d+)?|\d+m)$")
PROMETHEUS_DURATION = re.compile(r"^\d+(ms|s|m|h|d|w|y)$")


def _is_number(value: Any) -> bool:
    """A YAML number or a string of digits: a quantity whose unit was left out."""
    return (isinstance(value, int | float) and not isinstance(value, bool)) or (
        isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?", value.strip()) is not None
    )


def _memory(value: Any) -> Any:
    if value is None:
        return value
    if _is_number(value):
        raise _invalid(f"{value} has no unit, and Kubernetes reads a bare memory number as bytes",
                       f"write '{value}Gi' (or Mi)")
    if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?m", value):
        raise _invalid("'m' means 1/1000 (millibytes) in Kubernetes quantities", f"write '{value[:-1]}Mi'")
    if not isinstance(value, str) or not MEMORY_QUANTITY.match(value):
        raise _invalid("is not a Kubernetes memory quantity", "write it like '64Gi' or '512Mi'")
    return value


def _cpu(value: Any) -> Any:
    if _is_number(value):  # cores: 8, 0.5 and "8" are all valid quantities
        value = str(value)
    if value is not None and (not isinstance(value, str) or not CPU_QUANTITY.match(value)):
        raise _invalid("is not a Kubernetes CPU quantity", "write cores like '8' or '0.5', or millicores like '500m'")
    return value


def _storage_size(value: Any) -> Any:
    if value is None:
        return value
    if _is_number(value):
        raise _invalid(f"{value} has no unit, and Kubernetes reads a bare size as bytes", f"write '{value}Gi'")
    if not isinstance(value, str) or not re.fullmatch(r"\d+(Mi|Gi|Ti)", value):
        raise _invalid("is not a volume size in Mi, Gi or Ti", "write it like '200Gi'")
    return value


def _retention(value: Any) -> Any:
    if _is_number(value):
        raise _invalid(f"{value} has no unit, and Prometheus reads retention as a duration", f"write '{value}d'")
    if not isinstance(value, str) or not PROMETHEUS_DURATION.match(value):
        raise _invalid("is not a Prometheus duration", "write it like '15d' or '36h' (units ms, s, m, h, d, w, y)")
    return value


def _percent(value: float) -> float:
    if value <= 1:
        raise _invalid(
            f"looks like a fraction, but this is a percentage: {value} would hold each GPU at {value} % utilisation, "
            "so the workload would sit at maxReplicas under any load",
            f"write {value * 100:g} for {value * 100:g} %",
        )
    return value


MemoryQuantity = Annotated[str | None, BeforeValidator(_memory)]
CpuQuantity = Annotated[str | None, BeforeValidator(_cpu)]
StorageSize = Annotated[str | None, BeforeValidator(_storage_size)]
Retention = Annotated[str, BeforeValidator(_retention)]
Percent = Annotated[float, AfterValidator(_percent)]

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


# --- headroom and schedules (issue 8) ---------------------------------------------------------------

#: Default price estimate per GPU-hour: policy/config/*.json `pricePerNodeHour` 32.0 / 8 GPUs.
DEFAULT_PRICE_PER_GPU_HOUR = 4.0
_CRON_NAMES = frozenset((
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT",
))


def _cron(value: str) -> str:
    """A 5-field cron expression as KEDA's cron scaler parses it (Minute Hour Dom Month Dow).

    KEDA parses with robfig/cron's standard parser, which knows no seconds field and none of the `L`, `W`
    or `#` extensions that croniter would accept; croniter then checks the ranges (minute 0-59, ...).
    """
    fields = value.split()
    if len(fields) != 5:
        raise _invalid(f"has {len(fields)} field(s); KEDA's cron scaler takes 5 (minute hour day month weekday)",
                       "write it like '0 8 * * 1-5' (08:00 Monday to Friday)")
    for part in fields:
        for token in re.split(r"[,/-]", part):
            if not (token.isdigit() or token in ("*", "?") or token.upper() in _CRON_NAMES):
                raise _invalid(f"field {part!r} is not standard cron (digits, '*', ',', '-', '/', month or "
                               "weekday names)", "write it like '0 8 * * 1-5' (08:00 Monday to Friday)")
    if not croniter.is_valid(value):
        raise _invalid("is out of range for cron (minute 0-59, hour 0-23, day 1-31, month 1-12, weekday 0-6)",
                       "write it like '0 8 * * 1-5' (08:00 Monday to Friday)")
    return " ".join(fields)


def _timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise _invalid("is not a time zone name of the IANA database",
                       "use a name such as 'Europe/Luxembourg', 'America/New_York' or 'UTC'") from None
    return value


Cron = Annotated[str, AfterValidator(_cron)]
TimeZone = Annotated[str, AfterValidator(_timezone)]


class ScheduleConfig(_Model):
    """A recurring window of minimum capacity, rendered as a KEDA `cron` trigger.

    From `start` until `end` (both cron, in `timezone`) the target holds at least `minReplicas` replicas:
    for a workload its pods, for `gpuPool.headroom` its placeholder pods (each `podGpus` GPUs).
    """

    start: Cron
    end: Cron
    timezone: TimeZone = "UTC"
    min_replicas: int = Field(ge=1)


class HeadroomConfig(_Model):
    """Spare GPUs held by low-priority placeholder pods, so that a burst starts in seconds, not 30 minutes.

    `gpus` are held at all times (0 with `schedules`: only in their windows); each placeholder pod holds
    `podGpus` GPUs (default: the largest `gpusPerPod` of the workloads, see `StackConfig.headroom_pod_gpus`).
    """

    gpus: int = Field(ge=0)
    pod_gpus: int | None = Field(default=None, ge=1)
    schedules: list[ScheduleConfig] = Field(default_factory=list)


DEFAULT_POOL_LABELS = {POOL_LABEL: "gpu"}
DEFAULT_POOL_TAINTS = {GPU_RESOURCE: "present:NoSchedule"}


class GpuPoolConfig(_Model):
    """The bare-metal GPU pool. Changing flavor or publicIpv4 RECREATES the pool (20-25 min, billed)."""

    name: GcoreName = "gpu"
    flavor: str = "bm3-ai-1xlarge-h100-80-8"
    gpus_per_node: int | None = Field(default=None, ge=1, le=16)
    min_nodes: int = Field(default=1, ge=1)
    max_nodes: int = Field(default=2, ge=1, le=200)
    public_ipv4: bool = False
    labels: Labels = Field(default_factory=lambda: dict(DEFAULT_POOL_LABELS))
    taints: Taints = Field(default_factory=lambda: dict(DEFAULT_POOL_TAINTS))
    #: Minutes a new node of this flavor needs until its GPUs are allocatable (BM: 20-25 min + 5-10 min).
    provision_minutes: int = Field(default=35, ge=5, le=120)
    #: A flavor newer than stackconfig/flavors.py: accepted only with this and an explicit gpusPerNode.
    accept_unlisted_flavor: bool = False
    #: Spare GPUs held by placeholder pods (issue 8); none by default.
    headroom: HeadroomConfig | None = None
    #: Estimated price of one GPU-hour (billing currency); prices the headroom in the stack outputs.
    price_per_gpu_hour: float = Field(default=DEFAULT_PRICE_PER_GPU_HOUR, gt=0)

    @property
    def gpus(self) -> int:
        """GPUs per node: explicit, else from the flavor table (stackconfig/flavors.py), never from the id."""
        if self.gpus_per_node is not None:
            return self.gpus_per_node
        return derived_gpus(self.flavor) or 0


def derived_gpus(flavor: str) -> int | None:
    """Only the table knows a flavor's GPU count: `bm3-ai-1xlarge-h100-80` is not 80 GPUs."""
    return flavors.gpus_of(flavor)


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
    retention: Retention = "15d"
    #: Persistent volume for Prometheus' TSDB, e.g. "100Gi"; unset keeps it on an emptyDir (lost on restart).
    storage_size: StorageSize = None
    #: Storage class of that volume; unset uses the cluster's default class.
    storage_class: str | None = None


class WakeTriggerConfig(_Model):
    """A demand signal (queue length, request rate) that can wake a workload scaled to zero.

    GPU utilisation cannot: with no pods there are no GPU series (keda-gpu-scaler #142).
    """

    query: str = Field(min_length=1)
    threshold: float = Field(gt=0)
    activation_threshold: float = Field(default=0, ge=0)


# --- serving (issue 10): ports, probes, secrets, shared memory, model cache, own metrics, alerting ----

#: Container port names (IANA_SVC_NAME): ≤ 15 lowercase alphanumerics or '-', at least one letter.
PORT_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SECRET_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
PROMETHEUS_METRIC = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
QUANTITY_MIB = {"Mi": 1, "Gi": 1024, "Ti": 1024 * 1024}


def _port_name(value: str) -> str:
    if len(value) > 15 or not PORT_NAME.match(value):
        raise _invalid("Kubernetes port names are ≤ 15 lowercase letters, digits or '-' with at least one letter",
                       "use a name such as 'http' or 'metrics'")
    return value


def _secret_key(value: str) -> str:
    if not SECRET_KEY.match(value):
        raise _invalid(f"{value!r} is not a config key name (letters, digits, '_' or '-', a letter first)",
                       f"name the key as set by 'pulumi config set --secret {SECRETS_NAMESPACE}:<key> <value>', "
                       "e.g. 'hfToken'")
    return value


def _abs_path(value: str) -> str:
    if not value.startswith("/"):
        raise _invalid("is not an absolute path", "start it with '/', e.g. '/models'")
    return value


def mebibytes(quantity: str) -> int:
    """A `<n>Mi|Gi|Ti` quantity in MiB (the only forms the serving keys accept)."""
    match = re.fullmatch(r"(\d+)(Mi|Gi|Ti)", quantity)
    if not match:
        raise ValueError(f"not a Mi/Gi/Ti quantity: {quantity!r}")
    return int(match.group(1)) * QUANTITY_MIB[match.group(2)]


def _metric(value: str) -> str:
    if not PROMETHEUS_METRIC.match(value):
        raise _invalid("is not a Prometheus metric name", "use the series name as exported, e.g. "
                       "'vllm:num_requests_waiting'")
    return value


PortName = Annotated[str, AfterValidator(_port_name)]
SecretKey = Annotated[str, AfterValidator(_secret_key)]
AbsPath = Annotated[str, AfterValidator(_abs_path)]
Quantity = Annotated[str, Field(pattern=r"^[1-9]\d*(Mi|Gi|Ti)$")]
EnvName = Annotated[str, Field(pattern=ENV_NAME.pattern)]


class PortConfig(_Model):
    """A container port, also exposed by the workload's ClusterIP Service."""

    name: PortName
    port: int = Field(ge=1, le=65535)


class ProbesConfig(_Model):
    """HTTP checks: startup (model loading), readiness (gates traffic and rollouts), liveness (restarts)."""

    #: Name of one of the workload's `ports`.
    port: PortName
    #: Readiness and liveness path (vLLM: /health).
    path: str = Field(default="/health", pattern=r"^/")
    #: How long loading may take before the container is restarted: a 16 GB model from a cold cache, a
    #: CUDA-graph capture and a torch.compile take minutes.
    startup_minutes: int = Field(default=30, ge=1, le=120)
    period_seconds: int = Field(default=10, ge=1, le=300)
    #: Failed readiness checks before the pod leaves the Service; liveness restarts after three times as many.
    failure_threshold: int = Field(default=3, ge=1, le=30)


class ImagePullSecretConfig(_Model):
    """Credentials for a private registry; the password (or token) comes from secret config."""

    server: str = Field(min_length=1, pattern=r"^[a-z0-9.-]+(:\d+)?$")
    username: str = Field(min_length=1)
    password_secret: SecretKey


class ModelCacheConfig(_Model):
    """Where model weights persist between pods, so that a new pod does not download them again.

    `hostPath`: a directory on the node's local NVMe (bare-metal GPU nodes have it); fastest, one copy per
    node, needs the namespace at Pod Security `privileged`. `nfs`: a Gcore File Share mounted by every pod;
    one copy for the pool, reads over the network. `pvc`: an existing PersistentVolumeClaim (ReadWriteMany
    for more than one pod), e.g. bound to a File Share through a CSI driver.
    """

    type: Literal["hostPath", "nfs", "pvc"]
    mount_path: AbsPath = "/models"
    #: On the node: its root disk, which is local NVMe on Gcore bare-metal GPU flavors.
    host_path: AbsPath = "/var/lib/model-cache"
    server: str | None = None
    path: AbsPath | None = None
    claim_name: DnsLabel | None = None
    read_only: bool = False


class MetricsConfig(_Model):
    """The workload's own Prometheus endpoint, scraped through a PodMonitor."""

    port: PortName
    path: str = Field(default="/metrics", pattern=r"^/")
    interval: str = Field(default="15s", pattern=r"^\d+(s|m)$")


class ServingTriggerConfig(_Model):
    """A KEDA trigger on one of the workload's own series, summed over exactly its pods."""

    name: DnsLabel
    metric: Annotated[str, AfterValidator(_metric)]
    #: Target value per replica (AverageValue), e.g. 5 waiting requests per pod.
    threshold: float = Field(gt=0)
    window: str = Field(default="1m", pattern=r"^\d+(s|m)$")


class WebhookReceiverConfig(_Model):
    url_secret: SecretKey


class SlackReceiverConfig(_Model):
    webhook_url_secret: SecretKey
    channel: str = Field(min_length=2, pattern=r"^[#@]")


class PagerDutyReceiverConfig(_Model):
    routing_key_secret: SecretKey


class HeartbeatConfig(_Model):
    """The dead-man's switch: the always-firing Watchdog alert pings this URL every `interval`."""

    url_secret: SecretKey
    interval: str = Field(default="1m", pattern=r"^\d+(s|m)$")


class AlertingConfig(_Model):
    """Alertmanager receivers; critical alerts page (PagerDuty), warnings go to chat and the webhook."""

    webhook: WebhookReceiverConfig | None = None
    slack: SlackReceiverConfig | None = None
    pagerduty: PagerDutyReceiverConfig | None = None
    heartbeat: HeartbeatConfig | None = None

    @property
    def any_receiver(self) -> bool:
        return any((self.webhook, self.slack, self.pagerduty, self.heartbeat))

    @property
    def secret_keys(self) -> list[str]:
        """The `secrets:` keys the receivers read, sorted."""
        return sorted(k for k in (self.webhook and self.webhook.url_secret,
                                  self.slack and self.slack.webhook_url_secret,
                                  self.pagerduty and self.pagerduty.routing_key_secret,
                                  self.heartbeat and self.heartbeat.url_secret) if k)


class ResourcesConfig(_Model):
    cpu: CpuQuantity = None
    memory: MemoryQuantity = None


class WorkloadConfig(_Model):
    """A GPU Deployment scaled by KEDA on its GPUs' utilisation."""

    name: Annotated[DnsLabel, Field(max_length=WORKLOAD_NAME_MAX)]
    namespace: DnsLabel = DEFAULT_WORKLOAD_NAMESPACE
    image: Image
    command: list[str] = Field(default_factory=list)
    args: list[str] = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    requests: ResourcesConfig = Field(default_factory=ResourcesConfig)
    gpus_per_pod: int = Field(default=1, ge=1)
    min_replicas: int = Field(default=1, ge=0)
    max_replicas: int = Field(ge=1)
    #: Average utilisation per GPU (%) the workload is scaled to hold.
    target_utilization: Percent = Field(default=60, gt=0, le=100)
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
    #: Windows of minimum replicas (KEDA cron triggers beside the utilisation trigger).
    schedules: list[ScheduleConfig] = Field(default_factory=list)
    # --- serving (issue 10) ---
    ports: list[PortConfig] = Field(default_factory=list)
    probes: ProbesConfig | None = None
    #: ENV_NAME -> key in the `secrets:` config namespace (set with `pulumi config set --secret`).
    secret_env: dict[EnvName, SecretKey] = Field(default_factory=dict)
    image_pull_secret: ImagePullSecretConfig | None = None
    #: Size of the memory-backed /dev/shm (vLLM, NCCL, PyTorch data loaders); counts against memory.
    shm_size: Quantity | None = None
    model_cache: ModelCacheConfig | None = None
    metrics: MetricsConfig | None = None
    triggers: list[ServingTriggerConfig] = Field(default_factory=list)

    @property
    def fallback(self) -> int:
        return self.fallback_replicas if self.fallback_replicas is not None else max(self.min_replicas, 1)


# --- what-if (python -m capacity): the demand trace a pull request's what-if replays ------------


class WhatIfConfig(_Model):
    """How `python -m capacity` and the pull-request what-if read this stack's demand trace.

    `trace` is a CSV path relative to the repository root; demand in GPUs = `column` / `perGpu` (units of
    the column one GPU serves per minute at 100 % utilisation). The ranges are uniform draws per node
    (Gcore bare metal 20-25 min to Ready, GPU Operator 5-10 min more); the price is `gpuPool.pricePerGpuHour`.
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
    alerting: AlertingConfig = Field(default_factory=AlertingConfig)  # serving (issue 10)
    #: Demand trace and conversion for `python -m capacity` (ignored by the Pulumi program).
    what_if: WhatIfConfig | None = None

    @property
    def max_gpus(self) -> int:
        return self.gpu_pool.max_nodes * self.gpu_pool.gpus

    @property
    def headroom_pod_gpus(self) -> int:
        """GPUs per placeholder pod: `gpuPool.headroom.podGpus`, else the largest `gpusPerPod` (1 without
        workloads), so that any workload pod fits the slot one placeholder frees."""
        h = self.gpu_pool.headroom
        if h is not None and h.pod_gpus is not None:
            return h.pod_gpus
        return max((w.gpus_per_pod for w in self.workloads), default=1)


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
    "workloads[].schedules[]": ScheduleConfig.keys(),
    "gpuPool.headroom": HeadroomConfig.keys(),
    "gpuPool.headroom.schedules[]": ScheduleConfig.keys(),
    # serving (issue 10)
    "workloads[].ports[]": PortConfig.keys(),
    "workloads[].probes": ProbesConfig.keys(),
    "workloads[].imagePullSecret": ImagePullSecretConfig.keys(),
    "workloads[].modelCache": ModelCacheConfig.keys(),
    "workloads[].metrics": MetricsConfig.keys(),
    "workloads[].triggers[]": ServingTriggerConfig.keys(),
    "alerting": AlertingConfig.keys(),
    "alerting.webhook": WebhookReceiverConfig.keys(),
    "alerting.slack": SlackReceiverConfig.keys(),
    "alerting.pagerduty": PagerDutyReceiverConfig.keys(),
    "alerting.heartbeat": HeartbeatConfig.keys(),
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
    return out


# --- flavor table, units, bin-packing (docs/configuration-checks.md) ------------------------------------------

#: Value types of Gcore's Cluster Autoscaler flags (kubernetes/autoscaler, cluster-autoscaler/FAQ.md, "What are the
#: parameters to CA?"). Durations are Go durations (time.ParseDuration needs a unit: "20" is refused, "20m" is not).
AUTOSCALER_DURATIONS = (
    "max-node-provision-time", "new-pod-scale-up-delay", "scale-down-delay-after-add", "scale-down-delay-after-delete",
    "scale-down-delay-after-failure", "scale-down-unneeded-time", "scale-down-unready-time", "scan-interval",
)
AUTOSCALER_INTS = ("expendable-pods-priority-cutoff", "max-empty-bulk-delete", "max-graceful-termination-sec",
                   "ok-total-unready-count")
AUTOSCALER_BOOLS = ("balance-similar-node-groups", "ignore-daemonsets-utilization", "scale-down-enabled",
                    "skip-nodes-with-custom-controller-pods", "skip-nodes-with-local-storage",
                    "skip-nodes-with-system-pods")


def _flavor_problems(cfg: StackConfig) -> list[Problem]:
    """The GPU count comes from the flavor table only; an unlisted flavor needs an explicit, acknowledged count."""
    p = cfg.gpu_pool
    listed = flavors.gpus_of(p.flavor)
    table = f"the table of Gcore's bare-metal GPU flavors (stackconfig/flavors.py, checked {flavors.CHECKED})"
    if listed is not None:
        out = []
        if p.gpus_per_node is not None and p.gpus_per_node != listed:
            out.append(Problem("gpuPool.gpusPerNode", p.gpus_per_node,
                               f"contradicts {table}: {p.flavor} has {listed} GPUs per node",
                               "remove gpuPool.gpusPerNode (it is derived from the flavor)"))
        if p.accept_unlisted_flavor:
            out.append(Problem("gpuPool.acceptUnlistedFlavor", True, f"is set, but {p.flavor} is in {table}",
                               "remove gpuPool.acceptUnlistedFlavor"))
        return out
    if p.accept_unlisted_flavor:
        if p.gpus_per_node is None:
            return [Problem("gpuPool.gpusPerNode", None,
                            f"is required with gpuPool.acceptUnlistedFlavor: {p.flavor} is not in {table}",
                            "set gpuPool.gpusPerNode to the GPUs of one node of that flavor (Gcore's flavor list)")]
        return []
    guess = flavors.closest(p.flavor)
    hint = f"did you mean '{guess}'? " if guess else ""
    return [Problem("gpuPool.flavor", p.flavor,
                    f"is not in {table}, so its GPUs per node are unknown",
                    f"{hint}use one of {', '.join(flavors.GPU_FLAVORS)}; for a flavor newer than the table set "
                    "gpuPool.gpusPerNode and gpuPool.acceptUnlistedFlavor: true")]


def _autoscaler_problems(cfg: StackConfig) -> list[Problem]:
    """Cluster Autoscaler flags in the unit the autoscaler parses (a bare number is no duration)."""
    out = []
    for key, value in cfg.cluster.autoscaler.items():
        where = f"cluster.autoscaler.{key}"
        if key in AUTOSCALER_DURATIONS and go_duration_seconds(value) is None:
            fix = f"write '{value}m' or '{value}s'" if _is_number(value) else "write it like '20m' or '90s'"
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


def _packing_problems(cfg: StackConfig) -> list[Problem]:
    """All workloads at their peak, pod by pod, onto maxNodes nodes (first-fit decreasing, stackconfig/packing.py).

    Runs only when each workload fits the pool on its own (else fit_problems already named the workload).
    """
    gpus, nodes = cfg.gpu_pool.gpus, cfg.gpu_pool.max_nodes
    if not gpus or not cfg.workloads or any(fit_problems("", w, gpus, nodes) for w in cfg.workloads):
        return []
    pods = [w.gpus_per_pod for w in cfg.workloads for _ in range(w.max_replicas)]
    if pack(pods, gpus, nodes) is not None:
        return []
    total = sum(pods)
    peak = " + ".join(f"{w.max_replicas}×{w.gpus_per_pod} GPU ({w.name})" for w in cfg.workloads)
    return [Problem("workloads[*].maxReplicas", total,
                    f"GPUs at maxReplicas ({peak}) cannot be placed on {nodes} node(s) of {gpus} GPUs (capacity of "
                    f"{cfg.max_gpus}): pods are not split across nodes, and first-fit decreasing leaves pods over; "
                    "they would stay Pending and stall the HPA",
                    "lower maxReplicas or gpusPerPod, or raise gpuPool.maxNodes")]


# --- type errors and cross-key rules in one run ----------------------------------------------------------------


def _drop(data: Any, loc: tuple[str | int, ...]) -> bool:
    """Delete the value at `loc` in nested dicts/lists; False if it is not there."""
    node = data
    for part in loc[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        del node[loc[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _clean(loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    return tuple(p for p in loc if not (isinstance(p, str) and p.startswith("function-")))


def _validate_what_validates(
    raw: dict[str, Any],
) -> tuple[list[Problem], StackConfig | None, dict[str, list[int]], set[str]]:
    """Validate; on errors, drop each bad value (its default applies) and validate again, so that the cross-key
    rules still run on everything that was valid. A required value that is bad drops its list item (a workload);
    outside a list nothing can stand in for it, and the rules are skipped (None).

    Returns the type problems, the config (or None), per list with dropped items the stack-file indexes of the
    items kept, and the key paths that were dropped (rule problems about those would only be about defaults).
    """
    data = copy.deepcopy(raw)
    problems: list[Problem] = []
    dropped: set[str] = set()
    kept: dict[str, list[int]] = {}
    for round_ in range(10):
        try:
            return problems, StackConfig.model_validate(data), kept, dropped
        except ValidationError as exc:
            if round_ == 0:  # later rounds only see what the pruning caused (a dropped required key)
                problems = from_validation_error(exc, KNOWN_KEYS)
            values: set[tuple[str | int, ...]] = set()
            items: set[tuple[str | int, ...]] = set()
            for err in exc.errors():
                loc = _clean(err["loc"])
                if err["type"] == "missing":  # required: drop the list item holding it, if any
                    index = max((i for i, p in enumerate(loc) if isinstance(p, int)), default=None)
                    if index is None:
                        return problems, None, kept, dropped
                    loc = loc[: index + 1]
                if loc:
                    (items if isinstance(loc[-1], int) else values).add(loc)
            if not values and not items:
                return problems, None, kept, dropped
            for loc in values:  # dict keys: deleting one does not move any other
                if _drop(data, loc):
                    dropped.add(_original_key(key_path(loc), kept))
            for loc in sorted(items, key=lambda t: tuple(str(p).zfill(8) for p in t), reverse=True):
                parent = data
                for part in loc[:-1]:
                    parent = parent[part]
                section = key_path(loc[:-1])
                kept.setdefault(section, list(range(len(parent))))
                dropped.add(_original_key(key_path(loc), kept))
                del kept[section][int(loc[-1])]
                del parent[int(loc[-1])]
    return problems, None, kept, dropped


def _original_key(key: str, kept: dict[str, list[int]]) -> str:
    """A key path into the pruned lists, with each list index as it stands in the stack file."""
    for section, indexes in kept.items():
        match = re.match(rf"^{re.escape(section)}\[(\d+)\]", key)
        if match and int(match.group(1)) < len(indexes):
            key = f"{section}[{indexes[int(match.group(1))]}]" + key[match.end():]
    return key


def _headroom_problems(cfg: StackConfig) -> list[Problem]:
    """Headroom and schedule rules across keys (issue 8): whole placeholder pods that fit the pool, a
    priority the autoscaler does not ignore, windows KEDA accepts."""
    out: list[Problem] = []
    pool = cfg.gpu_pool
    for i, w in enumerate(cfg.workloads):
        key = f"workloads[{i}]"
        if w.namespace == HEADROOM_NAMESPACE:
            out.append(Problem(f"{key}.namespace", w.namespace,
                               "is the namespace of the headroom placeholders (Pod Security restricted, "
                               "counted as spare capacity by the alerts)", "use a namespace of your own"))
        for j, sch in enumerate(w.schedules):
            out += _schedule_problems(f"{key}.schedules[{j}]", sch)
            if sch.min_replicas > w.max_replicas:
                out.append(Problem(f"{key}.schedules[{j}].minReplicas", sch.min_replicas,
                                   f"is greater than the workload's maxReplicas ({w.max_replicas})",
                                   "lower it, or raise maxReplicas"))
    h = pool.headroom
    if h is None or not pool.gpus:
        return out
    pod_gpus = cfg.headroom_pod_gpus
    for j, sch in enumerate(h.schedules):
        out += _schedule_problems(f"gpuPool.headroom.schedules[{j}]", sch)
    if h.gpus == 0 and not h.schedules:
        out.append(Problem("gpuPool.headroom.gpus", 0, "holds no GPUs and has no schedules",
                           "set gpus ≥ 1, add schedules, or remove gpuPool.headroom"))
    if pod_gpus > pool.gpus:
        out.append(Problem("gpuPool.headroom.podGpus", pod_gpus,
                           f"exceeds the GPUs of one pool node ({pool.gpus}); such a placeholder never schedules",
                           f"use at most {pool.gpus}"))
        return out
    if h.gpus % pod_gpus:
        low, high = h.gpus // pod_gpus * pod_gpus, (h.gpus // pod_gpus + 1) * pod_gpus
        out.append(Problem("gpuPool.headroom.gpus", h.gpus,
                           f"is not a whole number of placeholder pods of {pod_gpus} GPU(s) (gpuPool.headroom."
                           "podGpus, default the largest gpusPerPod)",
                           f"use {high}" + (f" or {low}" if low else "")))
        return out
    workload_pods = [w.gpus_per_pod for w in cfg.workloads for _ in range(w.min_replicas)]
    placeholders = h.gpus // pod_gpus
    if packing.pack([*workload_pods, *[pod_gpus] * placeholders], pool.gpus, pool.min_nodes) is None:
        fits = [n for n in range(placeholders)
                if packing.pack([*workload_pods, *[pod_gpus] * n], pool.gpus, pool.min_nodes) is not None]
        out.append(Problem("gpuPool.headroom.gpus", h.gpus,
                           f"does not fit the pool at minNodes ({pool.min_nodes} × {pool.gpus} GPUs) together with "
                           "the workloads' minReplicas; the autoscaler would keep extra nodes for placeholders "
                           "alone, i.e. a hidden higher minNodes",
                           f"lower gpuPool.headroom.gpus to at most {max(fits, default=0) * pod_gpus}, or raise "
                           "gpuPool.minNodes"))
    busiest = max((s.min_replicas for s in h.schedules), default=0)
    # Windows may overlap: the workloads at their highest scheduled minimum, the placeholders at theirs.
    peak_pods = [w.gpus_per_pod for w in cfg.workloads
                 for _ in range(max([w.min_replicas, *(s.min_replicas for s in w.schedules)]))]
    if busiest and packing.pack([*peak_pods, *[pod_gpus] * busiest], pool.gpus, pool.max_nodes) is None:
        out.append(Problem("gpuPool.headroom.schedules[*].minReplicas", busiest,
                           f"placeholder pods of {pod_gpus} GPU(s) do not fit the pool even at maxNodes "
                           f"({pool.max_nodes}) beside the workloads' scheduled minimum replicas; they would stay "
                           "Pending",
                           "lower the window's minReplicas or raise gpuPool.maxNodes"))
    cutoff = cfg.cluster.autoscaler.get("expendable-pods-priority-cutoff")
    if cutoff is not None:
        try:
            value = int(cutoff)
        except ValueError:
            out.append(Problem("cluster.autoscaler.expendable-pods-priority-cutoff", cutoff,
                               "is not an integer priority", f"remove the override or write an integer ≤ "
                               f"{HEADROOM_PRIORITY}"))
            return out
        if value > HEADROOM_PRIORITY:
            out.append(Problem("cluster.autoscaler.expendable-pods-priority-cutoff", cutoff,
                               f"is above the headroom placeholders' priority ({HEADROOM_PRIORITY}): the "
                               "autoscaler would treat Pending placeholders as expendable and never add a node "
                               "for them, so the headroom is gone after the first burst",
                               f"remove the override (default {AUTOSCALER_EXPENDABLE_CUTOFF}) or set it to an "
                               f"integer ≤ {HEADROOM_PRIORITY}"))
    return out


def _schedule_problems(key: str, sch: ScheduleConfig) -> list[Problem]:
    if sch.start == sch.end:
        return [Problem(f"{key}.end", sch.end, "is the same as start; KEDA's cron scaler rejects such a window",
                        "give the window an end different from its start, e.g. start '0 8 * * 1-5', "
                        "end '0 18 * * 1-5'")]
    return []


# --- serving (issue 10): rules across keys ---------------------------------------------------------

_BYTES = {"": 1, "k": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4,
          "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4}


def _bytes(quantity: str) -> int | None:
    """A Kubernetes memory quantity in bytes (plain, decimal or binary suffix); None if it is not one."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(|k|M|G|T|Ki|Mi|Gi|Ti)", quantity)
    return int(float(match.group(1)) * _BYTES[match.group(2)]) if match else None


def secret_config_keys(cfg: StackConfig) -> list[str]:
    """Every `secrets:<key>` the stack refers to (env, registry passwords, alert receivers), sorted."""
    keys = {k for w in cfg.workloads for k in w.secret_env.values()}
    keys |= {w.image_pull_secret.password_secret for w in cfg.workloads if w.image_pull_secret}
    keys |= set(cfg.alerting.secret_keys)
    return sorted(keys)


def _serving_problems(cfg: StackConfig) -> list[Problem]:
    return [p for i, w in enumerate(cfg.workloads) for p in serving_problems(f"workloads[{i}]", w)]


def serving_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    """One workload's serving rules across keys; shared with stacks that deploy onto this platform."""
    out: list[Problem] = []
    reserved_triggers = ("gpu-utilization", "demand")
    names = [p.name for p in w.ports]
    if w.ports and w.termination_grace_period_seconds <= SERVING_DRAIN_SECONDS:
        out.append(Problem(f"{key}.terminationGracePeriodSeconds", w.termination_grace_period_seconds,
                           f"leaves no time after the {SERVING_DRAIN_SECONDS} s a serving pod keeps answering while "
                           "it leaves the Service", f"set it above {SERVING_DRAIN_SECONDS}, e.g. 60"))
    for field_, values in (("name", names), ("port", [p.port for p in w.ports])):
        dupes = sorted({str(v) for v in values if values.count(v) > 1})
        if dupes:
            out.append(Problem(f"{key}.ports", ", ".join(dupes), f"repeats a port {field_}",
                               f"give every port its own {field_}"))
    for sub, ref in (("probes", w.probes), ("metrics", w.metrics)):
        if ref is not None and ref.port not in names:
            out.append(Problem(f"{key}.{sub}.port", ref.port, "is not the name of one of the workload's ports",
                               f"add {{name: {ref.port}, port: <number>}} to {key}.ports or use one of: "
                               f"{', '.join(names) or '(no ports declared)'}"))
    if w.triggers and w.metrics is None:
        out.append(Problem(f"{key}.triggers", [t.name for t in w.triggers],
                           "query series that nothing scrapes (no metrics endpoint declared)",
                           f"set {key}.metrics to the port name and path of the workload's /metrics"))
    trigger_names = [t.name for t in w.triggers]
    for j, t in enumerate(w.triggers):
        if t.name in reserved_triggers or trigger_names.count(t.name) > 1:
            out.append(Problem(f"{key}.triggers[{j}].name", t.name,
                               "is used twice or by a built-in trigger (gpu-utilization, demand)",
                               "give each trigger its own name, e.g. 'waiting-requests'"))
    clash = sorted(set(w.secret_env) & set(w.env))
    if clash:
        out.append(Problem(f"{key}.secretEnv", ", ".join(clash), "is also set in env (one would hide the other)",
                           "keep the variable in secretEnv only"))
    if w.shm_size is not None:
        memory = _bytes(w.requests.memory) if w.requests.memory else None
        shm = mebibytes(w.shm_size) * 1024**2
        if memory is None or memory <= shm:
            out.append(Problem(f"{key}.shmSize", w.shm_size,
                               "is memory the pod uses (a memory-backed /dev/shm counts against it), but "
                               f"requests.memory ({w.requests.memory or 'unset'}) does not cover it plus the "
                               "server itself", f"set {key}.requests.memory above {w.shm_size}, e.g. "
                               f"{mebibytes(w.shm_size) // 1024 * 4 or 4}Gi"))
    c = w.model_cache
    if c is not None:
        needs = {"hostPath": (), "nfs": ("server", "path"), "pvc": ("claim_name",)}[c.type]
        for attr in needs:
            if getattr(c, attr) is None:
                out.append(Problem(f"{key}.modelCache.{to_camel(attr)}", None,
                                   f"is required for modelCache.type {c.type}",
                                   f"set {key}.modelCache.{to_camel(attr)}"))
        for attr in sorted({"server", "path", "claim_name"} - set(needs)):
            if getattr(c, attr) is not None:
                out.append(Problem(f"{key}.modelCache.{to_camel(attr)}", getattr(c, attr),
                                   f"has no meaning for modelCache.type {c.type}", "remove the key"))
        if c.mount_path in ("/dev/shm", "/") or c.mount_path.startswith("/dev/"):
            out.append(Problem(f"{key}.modelCache.mountPath", c.mount_path, "hides a system directory",
                               "mount the cache at a path of its own, e.g. '/models'"))
    return out


# --- timeouts (docs/timeouts-and-recovery.md) ----------------------------------------------------

#: Go's time.ParseDuration units (pkg.go.dev/time#ParseDuration), longest first so "ms" is not read as "m" "s".
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|h|m|s)")
_GO_DURATION_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def go_duration_seconds(value: str) -> float | None:
    """Seconds of a Go duration as the Cluster Autoscaler parses its flags ('35m', '1h5m', '2100s'); None if not one."""
    if value == "0":  # the one duration Go accepts without a unit
        return 0.0
    parts = _GO_DURATION_PART.findall(value)
    if not value or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _GO_DURATION_SECONDS[u] for n, u in parts)


def _timeouts_problems(cfg: StackConfig) -> list[Problem]:
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


# --- keys that would do nothing ----------------------------------------------------------------


def _inert_key_problems(cfg: StackConfig) -> list[Problem]:
    """Keys set explicitly where they cannot take effect: refused rather than silently ignored."""
    out: list[Problem] = []
    s = cfg.system_pool
    if not s.enabled:
        for name in sorted(s.model_fields_set - {"enabled"}):
            key = SystemPoolConfig.model_fields[name].alias or name
            out.append(Problem(f"systemPool.{key}", getattr(s, name),
                               "is set, but systemPool.enabled is false, so no system pool is created",
                               f"drop systemPool.{key}, or set systemPool.enabled to true"))
    m = cfg.monitoring
    if m.storage_class is not None and m.storage_size is None:
        out.append(Problem("monitoring.storageClass", m.storage_class,
                           "is set without monitoring.storageSize, so Prometheus gets no volume to put it on",
                           "set monitoring.storageSize (e.g. '100Gi'), or drop monitoring.storageClass"))
    for i, w in enumerate(cfg.workloads):
        if "cooldown_period" in w.model_fields_set and w.min_replicas > 0:
            out.append(Problem(f"workloads[{i}].cooldownPeriod", w.cooldown_period,
                               f"only applies when scaling to zero (KEDA's cooldownPeriod), but minReplicas is "
                               f"{w.min_replicas}", "drop cooldownPeriod, or set minReplicas to 0 with a wakeTrigger"))
    return out


# --- removed keys ------------------------------------------------------------------------------

#: Keys that no longer exist, with why: a stack that still sets one is told so, not offered a "did you mean".
REMOVED_KEYS: dict[tuple[str, str], tuple[str, str]] = {
    ("gpuPool", "autohealing"): (
        "was removed: autohealing is always off for the bare-metal GPU pool, because Gcore's GPU autoscaling "
        "guide (step 7, 'Disable the Autohealing nodes toggle') requires it and a healing node whose GPUs are "
        "still initialising would be replaced; the only value it could take was false, so it did nothing",
        "delete gpuPool.autohealing from the stack file (the system pool keeps autohealing on)",
    ),
}


def _without_removed_keys(raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """`raw` without the removed keys, and one Problem per removed key the stack still sets."""
    out, problems = dict(raw), []
    for (section, key), (message, fix) in REMOVED_KEYS.items():
        block = out.get(section)
        if isinstance(block, Mapping) and key in block:
            problems.append(Problem(f"{section}.{key}", block[key], message, fix))
            out[section] = {k: v for k, v in block.items() if k != key}
    return out, problems


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
    raw, removed = _without_removed_keys(raw)
    problems, cfg, kept, dropped = _validate_what_validates(dict(raw))
    problems = [*removed, *problems]
    if cfg is not None:
        rules: list[Callable[[StackConfig], list[Problem]]] = [
            _cluster_problems, _pool_problems, _chart_problems, _workload_problems,
            _flavor_problems, _autoscaler_problems, _packing_problems, _headroom_problems,
            _serving_problems, _timeouts_problems, _inert_key_problems, _whatif_problems,
        ]
        for rule in rules:
            for problem in rule(cfg):
                key = _original_key(problem.key, kept)
                problem = Problem(key, problem.value, problem.message, problem.fix)
                if not any(problem.key == d or problem.key.startswith((f"{d}.", f"{d}[")) for d in dropped):
                    problems.append(problem)
    if problems:
        raise ConfigError(problems)
    assert cfg is not None
    return cfg
