"""One more GPU workload on the GPU platform's cluster, deployed by a stack that owns only the workload.

Why a separate stack: a team that owns a model ships it on its own schedule, without write access to the
platform stack. It reaches the cluster only through the platform's stack outputs (the README's "Stack
outputs" contract): kubeconfig, prometheusUrl, gpuPool, namespaces and workloads. Nothing else of the
platform's stack is read: not its stack files, not its config.

The platform's code is reused, not copied: `stackconfig.WorkloadConfig` validates the workload with the
platform's rules and `components.workload.GpuWorkload` renders the Deployment, PDB and ScaledObject exactly
as the platform's own workloads. Both are imported from the repository root, two folders up (README.md).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import pulumi  # noqa: E402
import pulumi_kubernetes as k8s  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from components.workload import GpuWorkload, GpuWorkloadArgs, WorkloadNamespaces  # noqa: E402
from renderers import promql  # noqa: E402
from renderers.placement import PoolPlacement  # noqa: E402
from renderers.scaling_triggers import scaling_triggers  # noqa: E402
from renderers.workload_specs import pod_security_level  # noqa: E402
from stackconfig import ConfigError, Problem, WorkloadConfig  # noqa: E402
from stackconfig.errors import from_validation_error  # noqa: E402
from stackconfig.rules.serving import serving_problems  # noqa: E402
from stackconfig.rules.workloads import fit_problems  # noqa: E402
from stackconfig.stack import KNOWN_KEYS  # noqa: E402
from stacknames import RESERVED_NAMESPACES  # noqa: E402


class ContractError(ValueError):
    """The platform stack's outputs lack what this stack relies on: a breaking change on the platform side."""


@dataclass(frozen=True)
class Platform:
    """The part of the platform's output contract this stack relies on."""

    labels: dict[str, str]
    taints: dict[str, str]
    gpus_per_node: int
    max_nodes: int
    max_gpus: int
    #: Namespaces the platform's add-ons own (GPU Operator, KEDA, monitoring).
    system_namespaces: frozenset[str]
    #: Workload namespaces the platform creates (and would delete with its stack).
    workload_namespaces: frozenset[str]
    #: The platform's own workloads: name → (namespace, GPUs at maxReplicas).
    workloads: dict[str, tuple[str, int]]

    @classmethod
    def from_outputs(cls, stack: str, gpu_pool: Any, namespaces: Any, workloads: Any) -> Platform:
        try:
            return cls(
                labels=dict(gpu_pool["labels"]),
                taints=dict(gpu_pool["taints"]),
                gpus_per_node=int(gpu_pool["gpusPerNode"]),
                max_nodes=int(gpu_pool["maxNodes"]),
                max_gpus=int(gpu_pool["maxGpus"]),
                system_namespaces=frozenset(namespaces[k] for k in ("gpuOperator", "keda", "monitoring")),
                workload_namespaces=frozenset(namespaces["workloads"]),
                workloads={
                    name: (w["namespace"], int(w["maxReplicas"]) * int(w["gpusPerPod"]))
                    for name, w in (workloads or {}).items()
                },
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ContractError(
                f"the outputs of platform stack {stack} lack {exc!s} (gpuPool, namespaces or workloads): a breaking "
                "change of its output contract (README: Stack outputs); pin the platform to a compatible version"
            ) from None


def read_workload(raw: Any) -> WorkloadConfig:
    """The workload, validated by the platform's own model: same defaults, same rules, same messages."""
    known = {key.replace("workloads[]", "workload"): keys for key, keys in KNOWN_KEYS.items() if "workloads[]" in key}
    try:
        return WorkloadConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(from_validation_error(exc, known, prefix=("workload",))) from None


def placement_problems(w: WorkloadConfig, p: Platform) -> list[Problem]:
    """What cannot work in this platform: the rules the platform applies to its own workloads, on its outputs."""
    out: list[Problem] = []
    if w.namespace in p.system_namespaces or w.namespace in RESERVED_NAMESPACES:
        out.append(
            Problem(
                "workload.namespace",
                w.namespace,
                "belongs to the platform or Kubernetes",
                "use a namespace of your own",
            )
        )
    if p.workloads.get(w.name, (None, 0))[0] == w.namespace:
        out.append(
            Problem(
                "workload.name",
                w.name,
                f"is a workload of the platform in namespace {w.namespace}",
                "pick another name or namespace",
            )
        )
    out += fit_problems("workload", w, p.gpus_per_node, p.max_nodes)
    out += serving_problems("workload", w)
    # Secret config is resolved by the platform program only (its `secrets:` namespace); this example has none.
    for key, used in (("secretEnv", bool(w.secret_env)), ("imagePullSecret", w.image_pull_secret is not None)):
        if used:
            out.append(Problem(f"workload.{key}", key, "needs secret config, which this example consumer does not read",
                               "deploy the workload through the platform stack's workloads, or drop the key"))
    if w.model_cache is not None and w.model_cache.type == "hostPath" and w.namespace in p.workload_namespaces:
        out.append(Problem("workload.modelCache.type", "hostPath",
                           f"needs Pod Security 'privileged', but namespace {w.namespace} is the platform's",
                           "use a namespace of this stack's own, or an nfs/pvc cache"))
    return out


def shared_capacity_warning(w: WorkloadConfig, p: Platform) -> str | None:
    """The pool is shared: at their peaks together, the workloads may want more GPUs than it can have."""
    platform_gpus = sum(gpus for _, gpus in p.workloads.values())
    wanted = platform_gpus + w.max_replicas * w.gpus_per_pod
    if wanted <= p.max_gpus:
        return None
    return (
        f"workload {w.name}: with the platform's workloads ({platform_gpus} GPUs at maxReplicas) it may want "
        f"{wanted} of the pool's {p.max_gpus} GPUs at peak; pods beyond that stay Pending until load drops"
    )


config = pulumi.Config()
platform_stack = config.require("platformStack")
workload = read_workload(config.require_object("workload"))
platform = pulumi.StackReference(platform_stack)

# Secret on the platform side already; wrapped again so it stays secret even if the platform stopped marking it.
kubeconfig = pulumi.Output.secret(platform.require_output("kubeconfig"))
provider = k8s.Provider("platform-cluster", kubeconfig=kubeconfig, enable_server_side_apply=True)
prometheus_url = platform.require_output("prometheusUrl")


def deploy(outputs: list[Any]) -> dict[str, Any]:
    """Create the workload once the platform's outputs are known.

    `GpuWorkload` takes the pool's labels and taints as plain values (they shape the pod spec), so the
    resources are created inside this apply. Stack-reference outputs are known during `pulumi preview`, so
    the preview still shows every resource.
    """
    p = Platform.from_outputs(platform_stack, *outputs)
    problems = placement_problems(workload, p)
    if problems:
        raise ConfigError(problems)
    warning = shared_capacity_warning(workload, p)
    if warning:
        pulumi.log.warn(warning)
    in_cluster = pulumi.ResourceOptions(providers={"kubernetes": provider})
    if workload.namespace in p.workload_namespaces:
        namespace: pulumi.Input[str] = workload.namespace  # the platform owns it: never create or delete it here
    else:
        namespace = WorkloadNamespaces(
            "workloads", [workload.namespace], opts=in_cluster,
            pod_security={workload.namespace: pod_security_level([workload], workload.namespace)},
        ).names[workload.namespace]
    GpuWorkload(
        workload.name,
        GpuWorkloadArgs(
            workload=workload,
            namespace=namespace,
            placement=PoolPlacement(labels=p.labels, taints=p.taints),
            prometheus_url=prometheus_url,
        ),
        opts=in_cluster,
    )
    return {
        "namespace": workload.namespace,
        "namespaceOwner": "platform" if workload.namespace in p.workload_namespaces else "this stack",
        "deployment": workload.name,
        "scaledObject": workload.name,
        "hpa": promql.hpa_name(workload.name),
        "triggers": scaling_triggers(workload),
        "gpusPerPod": workload.gpus_per_pod,
        "minReplicas": workload.min_replicas,
        "maxReplicas": workload.max_replicas,
    }


contract = [platform.require_output(name) for name in ("gpuPool", "namespaces", "workloads")]
pulumi.export("platformStack", platform_stack)
pulumi.export("workload", pulumi.Output.all(*contract).apply(deploy))
