"""GpuWorkload for programs that deploy onto the platform: a GPU Deployment, its PodDisruptionBudget, the KEDA
ScaledObject that scales it on GPU utilisation, and (with `ports` and `metrics`) its Service and PodMonitor.

The arguments are the keys of a stack file's `workloads[]` entry (docs/configuration.md), under the same names in
the component's schema, plus what the workload needs of the platform: its GPU pool's labels and taints and its
Prometheus, which a consumer reads from the platform stack's outputs (`gpuPool`, `prometheusUrl`) and passes on as
Outputs. The workload's own keys shape the objects and are checked before any child is registered, with the
platform's own rules (stackconfig): a bad one raises `pulumi.InputPropertiesError` naming the argument, its value
and the fix. The pool and the platform's own workloads are known only when the platform stack's outputs are; their
rules (a pod's GPUs within a node's, no name the platform has in the same namespace) are checked then, before the
Deployment is sent.

A serving profile's triggers query the engine's own series, so it scales here as on the platform; the recording
rules its dashboards and alerts read are the platform's, for its own workloads only. A `hostPath` model cache is
refused: it needs a namespace at Pod Security `privileged`, which this component neither creates nor can check.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import pulumi
from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from components.workload import GpuWorkloadArgs as ChildArgs
from components.workload import workload_children, workload_summary
from gpu_platform.arguments import camel, refuse, whole
from renderers.placement import PoolPlacement
from stackconfig import Problem, WorkloadConfig
from stackconfig.errors import from_validation_error
from stackconfig.gpu_pool import DEFAULT_PROVISION_MINUTES
from stackconfig.rules.inert import inert_workload_problems
from stackconfig.rules.serving import serving_problems
from stackconfig.rules.serving_profile import profile_problems
from stackconfig.rules.workloads import fit_problems, own_problems
from stackconfig.stack import KNOWN_KEYS

#: The arguments' names in the stack file's words, for "did you mean" on a key this component does not take.
_KEYS = {"": KNOWN_KEYS["workloads[]"], **{k.removeprefix("workloads[]."): v for k, v in KNOWN_KEYS.items()
                                          if k.startswith("workloads[].")}}


class Port(TypedDict):
    name: str
    """The port's name (a DNS label), which `metrics.port` refers to."""
    port: int
    """The container port, 1 to 65535."""


class Metrics(TypedDict):
    port: str
    """The name of the port (in `ports`) that serves the workload's own Prometheus metrics."""
    path: NotRequired[str]
    """The metrics path; default `/metrics`."""
    interval: NotRequired[str]
    """The scrape interval, e.g. `15s` (the default)."""


class ResourceRequests(TypedDict):
    cpu: NotRequired[str]
    """CPU per pod, a Kubernetes quantity such as `4`."""
    memory: NotRequired[str]
    """Memory per pod, a Kubernetes quantity such as `32Gi`."""


class Schedule(TypedDict):
    start: str
    """When the window opens: a five-field cron expression, e.g. `0 8 * * 1-5`."""
    end: str
    """When it closes, the same way, e.g. `0 20 * * 1-5`."""
    min_replicas: int
    """The fewest replicas while it is open (KEDA's cron trigger)."""
    timezone: NotRequired[str]
    """The IANA time zone of `start` and `end` (default `UTC`), e.g. `Europe/Luxembourg`."""


class Probes(TypedDict):
    port: str
    """The name of the port (in `ports`) the HTTP checks go to."""
    path: NotRequired[str]
    """The readiness and liveness path (default `/health`, vLLM's)."""
    startup_minutes: NotRequired[int]
    """How long loading may take before the container is restarted (default 30)."""
    period_seconds: NotRequired[int]
    """Seconds between checks (default 10)."""
    failure_threshold: NotRequired[int]
    """Failed readiness checks before the pod leaves the Service (default 3); liveness restarts after three times
    as many."""


class Trigger(TypedDict):
    name: str
    """The trigger's name (a DNS label), e.g. `queue-depth`."""
    metric: str
    """One of the workload's own series, summed over exactly its pods, e.g. `vllm:num_requests_waiting`."""
    threshold: float
    """The target per replica, e.g. 5 waiting requests per pod."""
    window: NotRequired[str]
    """The window the series is averaged over (default `1m`)."""


class WakeTrigger(TypedDict):
    query: str
    """A PromQL demand signal that exists while the workload has no pods (a gateway's queue length)."""
    threshold: float
    """The target per replica."""
    activation_threshold: NotRequired[float]
    """Above this value the workload wakes from zero (default 0)."""


class LatencyObjective(TypedDict):
    ttft_p90: NotRequired[str]
    """The P90 time to first token to hold, e.g. `500ms`."""
    tpot_p90: NotRequired[str]
    """The P90 time per output token to hold, e.g. `50ms`."""


class PerGpuLatency(TypedDict):
    ttft_p90: str
    """P90 time to first token of a request alone on one GPU (measured), e.g. `40ms`."""
    tpot_p90: str
    """P90 time per output token at low load, e.g. `7ms`."""
    tpot_p90_at_knee: str
    """P90 time per output token at the knee of the throughput curve, e.g. `40ms`."""


class Band(TypedDict):
    scale_up: NotRequired[float]
    """Replicas are added above this latency ratio (P90 / objective; default 0.6)."""
    scale_down: NotRequired[float]
    """Replicas are removed below it (default 0.35)."""


class Serving(TypedDict):
    engine: NotRequired[str]
    """The model server whose series the triggers read, e.g. `vllm`."""
    latency_objective: NotRequired[LatencyObjective]
    """The P90s the workload is scaled to hold."""
    per_gpu: NotRequired[PerGpuLatency]
    """What one GPU delivers for this model and request mix."""
    band: NotRequired[Band]
    """Hysteresis on the latency ratio."""
    queue_per_replica: NotRequired[float]
    """Waiting requests per ready replica that count as saturated (default 5)."""
    kv_cache_usage: NotRequired[float]
    """KV-cache usage per ready replica, 0 to 1, that counts as saturated (default 0.8)."""
    longest_request: NotRequired[str]
    """The longest request the engine serves: a removed pod keeps serving this long (default `120s`)."""


class ModelCache(TypedDict):
    type: str
    """`nfs` (a Gcore File Share every pod mounts) or `pvc` (an existing ReadWriteMany claim)."""
    mount_path: NotRequired[str]
    """Where the pods see it (default `/models`)."""
    server: NotRequired[str]
    """`nfs`: the File Share's server."""
    path: NotRequired[str]
    """`nfs`: the export's path."""
    claim_name: NotRequired[str]
    """`pvc`: the claim's name."""
    read_only: NotRequired[bool]
    """Mount it read-only (default false)."""


class RegistryCredentials(TypedDict):
    server: str
    """The registry's host, e.g. `registry.example.com`."""
    username: str
    """The registry user."""
    password: pulumi.Input[str]
    """The password or token (pass `config.requireSecret(...)`): kept in a `kubernetes.io/dockerconfigjson` Secret
    the pods pull with, secret in every state file."""


class Pool(TypedDict):
    name: NotRequired[pulumi.Input[str]]
    """The pool's name (`gpuPool.name`): which of `platform_workloads` share it with this workload."""
    labels: pulumi.Input[Mapping[str, pulumi.Input[str]]]
    """The GPU pool's node labels, which the pods select: the platform stack's `gpuPool.labels`."""
    taints: NotRequired[pulumi.Input[Mapping[str, pulumi.Input[str]]]]
    """The pool's taints as `{key: "value:Effect"}`, which the pods tolerate: the platform stack's `gpuPool.taints`."""
    # Numbers, not integers: the Python provider host converts an integer input with int(), which fails on the
    # Output another stack's value arrives as (pulumi 3.272, provider/experimental/component.py
    # `map_input_properties`); a whole number is still required.
    gpus_per_node: NotRequired[pulumi.Input[float]]
    """GPUs of one node (`gpuPool.gpusPerNode`, a whole number): checked against `gpusPerPod`, and sizes a spot
    pool's budget."""
    max_nodes: NotRequired[pulumi.Input[float]]
    """The pool's node ceiling (`gpuPool.maxNodes`, a whole number): checked against `maxReplicas` × `gpusPerPod`."""
    spot: NotRequired[pulumi.Input[bool]]
    """Whether the pool's nodes are spot (reclaimable): pods on a lost node are replaced after 30 s."""


class GpuWorkloadArgs(TypedDict):
    name: str
    """The workload's name (a DNS label): its Deployment's, ScaledObject's and pods' `app.kubernetes.io/name`."""
    image: str
    """The container image, pinned by tag or digest (not `:latest`)."""
    max_replicas: int
    """The most replicas KEDA may scale to."""
    pool: Pool
    """The GPU pool the pods run on: the fields of the platform stack's `gpuPool` output (each an Input)."""
    prometheus_url: pulumi.Input[str]
    """The Prometheus KEDA queries: the platform stack's `prometheusUrl` output."""
    namespace: NotRequired[str]
    """The namespace the objects go in (default `gpu-workloads`); it must exist (the platform's or your own)."""
    min_replicas: NotRequired[int]
    """The fewest replicas (default 1); 0 needs `wake_trigger` (GPU utilisation cannot wake a workload that has no
    pods)."""
    gpus_per_pod: NotRequired[int]
    """GPUs per pod (default 1): at most a node's."""
    target_utilization: NotRequired[float]
    """The GPU utilisation per GPU, in percent (default 60), KEDA scales towards: 60, not 0.6."""
    command: NotRequired[list[str]]
    """The container's command (default: the image's entrypoint)."""
    args: NotRequired[list[str]]
    """The container's arguments."""
    env: NotRequired[dict[str, str]]
    """Environment variables (plain values; not for secrets)."""
    secret_env: NotRequired[Mapping[str, pulumi.Input[str]]]
    """Environment variables whose values are secret (an API token: pass `config.requireSecret(...)`): kept in a
    Kubernetes Secret the container reads them from, secret in every state file. A name must not also be in
    `env`."""
    requests: NotRequired[ResourceRequests]
    """CPU and memory per pod."""
    interruptible: NotRequired[bool]
    """Whether the workload tolerates losing its pods at once (batch work): required on a spot pool."""
    polling_interval: NotRequired[int]
    """Seconds between KEDA's queries (default 15)."""
    scale_down_stabilization_seconds: NotRequired[int]
    """Seconds the HPA waits before it removes replicas (default 300)."""
    cooldown_period: NotRequired[int]
    """Seconds KEDA waits before scaling to zero (default 300)."""
    fallback_replicas: NotRequired[int]
    """Replicas KEDA holds while its query fails (default: minReplicas, at least 1)."""
    termination_grace_period_seconds: NotRequired[int]
    """Seconds a removed pod has to finish (default 60)."""
    ports: NotRequired[list[Port]]
    """Ports the container serves; with any, a ClusterIP Service over them."""
    metrics: NotRequired[Metrics]
    """The workload's own metrics endpoint, scraped through a PodMonitor."""
    schedules: NotRequired[list[Schedule]]
    """Recurring windows of minimum capacity (a known daily peak, held before it comes)."""
    triggers: NotRequired[list[Trigger]]
    """Triggers on the workload's own series (a queue, a request rate) beside the GPU one; the HPA takes the largest."""
    wake_trigger: NotRequired[WakeTrigger]
    """The demand signal that wakes the workload from `min_replicas` 0."""
    image_pull_secret: NotRequired[RegistryCredentials]
    """Credentials for a private registry."""
    serving: NotRequired[Serving]
    """A serving profile: scale a model server on its latency objective, queue and KV cache."""
    model_cache: NotRequired[ModelCache]
    """Where model weights persist between pods."""
    probes: NotRequired[Probes]
    """HTTP startup, readiness and liveness checks (needs `ports`)."""
    priority_class_name: NotRequired[pulumi.Input[str]]
    """The pods' PriorityClass; the platform's workloads use `gpu-workload` (above its headroom placeholders)."""
    platform_workloads: NotRequired[pulumi.Input[Mapping[str, Any]]]
    """The platform stack's `workloads` output, as it is. A name one of them has in the same namespace is refused:
    Kubernetes' server-side apply would take over its objects, and this stack's destroy would delete them. A
    warning says when, at their `maxReplicas`, they and this workload want more GPUs than the pool has."""


#: The component's type token. The platform program's workloads had `gpu-platform:workloads:GpuWorkload` before they
#: came from this package: __main__.py gives them that as an alias, so no workload is replaced.
TYPE = "gpu-platform:index:GpuWorkload"
#: The arguments the workload's model does not read as given: the platform's wiring, and `secret_env`, whose
#: values are Inputs (the model sees only the variables' names, below).
_PLATFORM_ARGS = ("pool", "prometheus_url", "priority_class_name", "secret_env", "platform_workloads",
                  "image_pull_secret")
#: Arguments whose objects' keys are the schema's properties, which arrive under their Python names through the
#: provider host (`min_replicas`): named in the stack file's words here, as the model's messages are. Not `env`,
#: whose keys are the user's variable names.
_OBJECTS = ("ports", "metrics", "requests", "schedules", "probes", "triggers", "wake_trigger", "serving", "model_cache")


@dataclass(frozen=True)
class PlatformWiring:
    """What the platform's own program gives its workloads besides their arguments (no schema carries resources):
    the namespace it created (an Output, so the objects wait for it), what the pods and the ScaledObject wait for
    (the GPU Operator; KEDA and Prometheus), its pool's provisioning time and name. With it, a hostPath model cache
    is accepted: the platform creates the namespace at the Pod Security level the cache needs."""

    namespace: pulumi.Input[str] | None = None
    gpu_ready: Sequence[pulumi.Resource] = ()
    scaler_ready: Sequence[pulumi.Resource] = ()
    provision_minutes: int = DEFAULT_PROVISION_MINUTES
    pool: str | None = None


class GpuWorkload(pulumi.ComponentResource):
    """A GPU workload on the platform: what the platform program creates for a stack file's workload."""

    deployment_name: pulumi.Output[str]
    """The Deployment's name, read from it."""
    scaled_object_name: pulumi.Output[str]
    """The ScaledObject's name, read from it (KEDA's HPA is `keda-hpa-<this>`)."""
    namespace: pulumi.Output[str]
    """The namespace the objects are in, read from the Deployment."""

    def __init__(self, name: str, args: GpuWorkloadArgs, opts: pulumi.ResourceOptions | None = None, *,
                 wiring: PlatformWiring | None = None) -> None:
        super().__init__(TYPE, name, {}, opts)
        workload = self._workload(args, hosted=wiring is not None)
        wiring = wiring or PlatformWiring()
        placement = pulumi.Output.all(args["pool"], args.get("platform_workloads") or {}).apply(
            lambda v: self._placement(workload, v[0], v[1]))
        deployment, scaled_object, service = workload_children(self, name, ChildArgs(
            workload=workload, namespace=wiring.namespace or workload.namespace, placement=placement,
            prometheus_url=args["prometheus_url"], priority_class=args.get("priority_class_name"),
            secret_env=dict(args.get("secret_env") or {}),
            registry_password=registry["password"] if (registry := args.get("image_pull_secret")) else None,
            gpu_ready=wiring.gpu_ready, scaler_ready=wiring.scaler_ready, provision_minutes=wiring.provision_minutes))
        #: The workload's entry of the platform's `workloads` stack output, read from its objects.
        self.summary = workload_summary(deployment, scaled_object, service, wiring.pool)
        self.deployment_name = deployment.metadata.apply(lambda m: m["name"])
        self.scaled_object_name = scaled_object.metadata.apply(lambda m: m["name"])
        self.namespace = deployment.metadata.apply(lambda m: m["namespace"])
        self.register_outputs({"deploymentName": self.deployment_name, "scaledObjectName": self.scaled_object_name,
                               "namespace": self.namespace})

    def _workload(self, args: GpuWorkloadArgs, hosted: bool) -> WorkloadConfig:
        """The workload's own keys, checked by the platform's model and rules before any child exists."""
        raw: dict[str, Any] = {to_camel(k): whole(camel(v) if k in _OBJECTS else v) for k, v in args.items()
                               if k not in _PLATFORM_ARGS}
        # The model names each secret variable's config key; here the value is the argument's own, so the key is
        # the variable's name (the rules read only the names: a clash with `env`, a valid variable name).
        raw["secretEnv"] = {name: name for name in args.get("secret_env") or {}}
        if (registry := args.get("image_pull_secret")) is not None:  # the password is the argument's own, as above
            raw["imagePullSecret"] = {"server": registry.get("server"), "username": registry.get("username"),
                                      "passwordSecret": "password"}
        try:
            workload = WorkloadConfig.model_validate(raw)
        except ValidationError as exc:
            refuse(self, "GpuWorkload", from_validation_error(exc, _KEYS))
        problems = [*own_problems("", workload), *serving_problems("", workload), *profile_problems("", workload),
                    *inert_workload_problems("", workload)]
        if workload.model_cache is not None and workload.model_cache.type == "hostPath" and not hosted:
            problems.append(Problem("modelCache.type", "hostPath", "needs the namespace at Pod Security "
                                    "'privileged', which this component cannot check; without it no pod is admitted",
                                    "use an nfs or pvc cache"))
        refuse(self, "GpuWorkload", problems)
        return workload

    def _placement(self, w: WorkloadConfig, pool: Mapping[str, Any], platform: Mapping[str, Any]) -> PoolPlacement:
        """The pool as the pods see it, once the platform stack's outputs are known; their rules checked then."""
        try:
            placement = PoolPlacement(labels=dict(pool["labels"]), taints=dict(pool.get("taints") or {}),
                                      spot=bool(pool.get("spot", False)),
                                      gpus_per_node=int(pool.get("gpus_per_node") or 0))
            max_nodes = int(pool.get("max_nodes") or 0)
        except (KeyError, TypeError, ValueError) as exc:
            refuse(self, "GpuWorkload", [Problem(
                "pool", pool, f"lacks {exc!s} or has a value of the wrong type",
                "pass the fields of the platform stack's gpuPool output (labels, taints, gpusPerNode, maxNodes)")])
            raise  # not reached: refuse raised
        try:  # what the platform's workloads on this pool may take at their peaks
            theirs = {name: (o["namespace"], int(o["maxReplicas"]) * int(o["gpusPerPod"]), o.get("pool"))
                      for name, o in platform.items()}
        except (KeyError, TypeError, ValueError) as exc:
            refuse(self, "GpuWorkload", [Problem(
                "platformWorkloads", platform, f"lacks {exc!s} or has a value of the wrong type",
                "pass the platform stack's workloads output as it is")])
            raise  # not reached
        problems = []
        if theirs.get(w.name, ("",))[0] == w.namespace:
            problems.append(Problem("name", w.name, f"is a workload of the platform in namespace {w.namespace}: "
                                    "server-side apply would take over its objects, and destroying this stack would "
                                    "delete them", "pick another name or namespace"))
        if placement.gpus_per_node and max_nodes:
            problems += fit_problems("", w, placement.gpus_per_node, max_nodes)
        refuse(self, "GpuWorkload", problems)
        shared = sum(gpus for _, gpus, on in theirs.values() if pool.get("name") in (None, on))
        most = placement.gpus_per_node * max_nodes
        if most and shared + w.max_replicas * w.gpus_per_pod > most:
            pulumi.log.warn(f"{w.name}: with the platform's workloads on its pool ({shared} GPUs at their "
                            f"maxReplicas), it may want {shared + w.max_replicas * w.gpus_per_pod} of the pool's "
                            f"{most} GPUs at peak; pods beyond that stay Pending until the load drops", self)
        return placement
