"""The stack's own names: its namespaces, priority classes, labels and headroom placeholders.

Why one module: config refuses a workload in a platform namespace, components create those namespaces, the
alerts and dashboards query them, the policy pack and the what-if rank pods by these priorities. Written once
here, a rename is one edit and no copy can drift. Plain constants only (the mappings are typed read-only: copy
them before changing), and no import of Pulumi or pydantic, so that every part of the repository, the policy
pack included, may read it. Names that belong to a chart (its Services, its release) stay with the renderer of
that chart's values; values a stack file may set stay in config.
"""

from __future__ import annotations

from collections.abc import Mapping

# --- namespaces -----------------------------------------------------------------------------------------------

#: The add-ons' namespaces, each created by its component.
GPU_OPERATOR_NAMESPACE = "gpu-operator"
KEDA_NAMESPACE = "keda"
MONITORING_NAMESPACE = "monitoring"
#: node-exporter reads the host (hostNetwork, hostPID, hostPath `/`, `/proc`, `/sys`), which Pod Security
#: `baseline` refuses: it runs alone in this `privileged` namespace, so `monitoring` stays `baseline`.
NODE_EXPORTER_NAMESPACE = "node-exporter"
#: The headroom placeholders' namespace (Pod Security `restricted`); counted as spare capacity by the alerts.
HEADROOM_NAMESPACE = "gpu-headroom"
#: Namespaces Kubernetes itself creates in every cluster (`default` can never be deleted): a workload there would
#: make the program register a Namespace that already exists, refused with AlreadyExists in the middle of `up`.
KUBERNETES_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: The prefix Kubernetes reserves for its own namespaces ("Avoid creating namespaces with the prefix `kube-`",
#: kubernetes.io/docs/concepts/overview/working-with-objects/namespaces).
KUBERNETES_NAMESPACE_PREFIX = "kube-"
#: Namespaces the platform owns or Kubernetes reserves: no workload may use one (the headroom's has a rule and a
#: message of its own).
RESERVED_NAMESPACES = (
    *KUBERNETES_NAMESPACES, GPU_OPERATOR_NAMESPACE, KEDA_NAMESPACE, MONITORING_NAMESPACE, NODE_EXPORTER_NAMESPACE,
)
#: Where a workload goes when its stack entry names no namespace.
DEFAULT_WORKLOAD_NAMESPACE = "gpu-workloads"

# --- labels and resources ---------------------------------------------------------------------------------------

#: On every object the program creates itself.
PLATFORM_LABELS: Mapping[str, str] = {
    "app.kubernetes.io/part-of": "gpu-platform", "app.kubernetes.io/managed-by": "pulumi",
}
#: The selector label of a workload's (and the placeholders') pods: `{NAME_LABEL: <name>}`.
NAME_LABEL = "app.kubernetes.io/name"
COMPONENT_LABEL = "app.kubernetes.io/component"
#: The GPU pool's node label by default: GPU pods select it, the alerts find the pool's nodes by it.
POOL_LABEL = "platform.gcore-gpu/pool"
#: The extended resource the NVIDIA device plugin advertises (and the pool's default taint key).
GPU_RESOURCE = "nvidia.com/gpu"
#: A spot pool's default taint (`key: value:Effect`, Gcore's form): only pods that tolerate it, the workloads that
#: say they can be interrupted, land on capacity Gcore may reclaim.
SPOT_TAINT_KEY = "platform.gcore-gpu/spot"
SPOT_TAINT_SPEC = "true:NoSchedule"
#: The prefix that makes the Cluster Autoscaler treat a Ready node as not ready yet, still coming with its node group's
#: template capacity, and drop the taint from that template (kubernetes/autoscaler cluster-autoscaler
#: utils/taints/taints.go `StartupTaintPrefix`, `FilterOutNodesWithStartupTaints`, `SanitizeTaints`; FAQ.md "How can
#: I use startup taints / status taints").
STARTUP_TAINT_PREFIX = "startup-taint.cluster-autoscaler.kubernetes.io/"
#: A GPU pool's nodes register with this taint (`gpuReadyGate`, on by default) until the gate DaemonSet sees all their
#: GPUs allocatable: the autoscaler then counts a Ready node whose GPU Operator is still installing as coming, not as
#: a full node beside which Pending GPU pods need another (kubernetes/autoscaler#461, NVIDIA/gpu-operator#708).
#: Workloads and placeholders never tolerate it; the GPU Operator's operands and node-exporter do.
GPU_READY_TAINT_KEY = STARTUP_TAINT_PREFIX + "gpu-not-ready"
GPU_READY_TAINT_SPEC = "true:NoSchedule"
#: The gate DaemonSet (and its ServiceAccount, ClusterRole and binding), in the GPU Operator's namespace.
GPU_READY_GATE_NAME = "gpu-ready-gate"

# --- priorities -------------------------------------------------------------------------------------------------

#: The platform's GPU workloads: Kubernetes' default for pods without a class (0), so they preempt only the
#: placeholders, never another tenant's pods on the pool.
WORKLOAD_PRIORITY_CLASS = "gpu-workload"
WORKLOAD_PRIORITY = 0
#: The headroom placeholders. The Cluster Autoscaler treats pods *below* `expendable-pods-priority-cutoff` as
#: expendable: they never trigger a scale-up (kubernetes/autoscaler cluster-autoscaler/FAQ.md, "How does Cluster
#: Autoscaler work with Pod Priority and Preemption?"). -10 is the FAQ's own overprovisioning value: not
#: expendable, below every real pod.
HEADROOM_PRIORITY_CLASS = "gpu-headroom"
HEADROOM_PRIORITY = -10
#: cluster-autoscaler's default `--expendable-pods-priority-cutoff` (FAQ.md, parameters table).
AUTOSCALER_EXPENDABLE_CUTOFF = -10

# --- the headroom placeholders ----------------------------------------------------------------------------------

#: The placeholder Deployment (and its ScaledObject).
PLACEHOLDER_NAME = "gpu-headroom"


def placeholder_name(pool: str, first: bool) -> str:
    """The placeholder Deployment of a GPU pool: the first pool keeps the name stacks had before there were
    several pools (a rename would recreate its placeholders), every other pool's carries the pool's name."""
    return PLACEHOLDER_NAME if first else f"{PLACEHOLDER_NAME}-{pool}"


#: What marks a placeholder pod: the policy pack tells placeholders from workloads by it.
PLACEHOLDER_COMPONENT = "headroom"
PLACEHOLDER_LABELS: Mapping[str, str] = {NAME_LABEL: PLACEHOLDER_NAME, COMPONENT_LABEL: PLACEHOLDER_COMPONENT}

# --- Pulumi type tokens of what the program registers (the engine, the plan, the guard and the policy pack) ----

CLUSTER_TYPE = "gcore:index/k8sv2:K8sv2"
#: The logical name of the cluster's component (its children are `gpu-cluster`, `gpu-provider`): fixed, never a
#: value a stack file sets, so renaming the cluster changes an input, not a URN.
CLUSTER_COMPONENT = "gpu"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"

# --- secrets ----------------------------------------------------------------------------------------------------

#: The Pulumi config namespace that holds secret values: `pulumi config set --secret secrets:<key> …`.
SECRETS_NAMESPACE = "secrets"

# --- a number config and components must agree on ----------------------------------------------------------------

#: Seconds a serving pod keeps answering after it is told to stop (its preStop sleep), while its address leaves
#: the Service; config requires terminationGracePeriodSeconds above it.
SERVING_DRAIN_SECONDS = 10
#: With a serving profile the engine gets this long after SIGTERM to shut down (close its engine core, free the GPU)
#: beyond the drain: terminationGracePeriodSeconds must cover preStop plus it.
ENGINE_SHUTDOWN_SECONDS = 30
#: The KEDA triggers a serving profile adds (renderers/serving_profile.py); a workload's own `triggers` and
#: the built-in ones may not reuse them.
SERVING_TRIGGER_NAMES = ("latency-objective", "queue-depth", "kv-cache")
