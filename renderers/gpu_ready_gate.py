"""The GPU-ready gate: a DaemonSet on a GPU pool's nodes that removes the pool's start-up taint once the node's GPUs
are all allocatable, so that the Cluster Autoscaler counts a Ready node whose GPU Operator is still installing as
coming, not as a full node beside which Pending GPU pods need another one (docs/gpu-pools.md, "The GPU-ready gate").

Why a DaemonSet of the real kubectl and no controller of our own: the pinned GPU Operator (v26.7.0) has no start-up
taint of its own, and the whole job is two kubectl verbs. `kubectl wait` blocks until
`.status.allocatable["nvidia.com/gpu"]` equals the pool's GPUs per node (the device plugin advertises them once the
operator's validator passed), then `kubectl taint` removes the taint. kubectl runs in exec form (no shell): the image
needs nothing but kubectl, as kube-prometheus-stack's CRD upgrade job runs it (prometheus-community/helm-charts
charts/kube-prometheus-stack/charts/crds/templates/upgrade/job.yaml, 88.5.3).

Idempotent by construction, because a DaemonSet pod is re-created on a node whose taint is long gone (a node reboot,
an eviction, a rollout): `kubectl taint KEY-` fails with "not found" when the taint is absent, which would crash-loop
the pod and page through KubePodCrashLooping. So the gate first sets the taint (`--overwrite`: succeeds whether it is
there or not), then removes it (succeeds, since it is there now). On a node already serving, that re-taints it for
the few milliseconds between two API calls, and only after its GPUs are allocatable; NoSchedule evicts nothing.
The three steps are init containers (each runs once, in order, retried until it succeeds); the pod then idles in
Kubernetes' pause image, Ready, so nothing alerts on it. e2e/test_gpu_gate.py runs these very commands with kubectl
v1.35 against a real kube-apiserver, as the gate's ServiceAccount with the rules below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from renderers.chart_values import pool_node_labels
from renderers.placement import tolerations_for
from stackconfig import GpuPoolConfig
from stackconfig.versions import PAUSE_IMAGE
from stacknames import COMPONENT_LABEL, GPU_READY_GATE_NAME, GPU_READY_TAINT_KEY, GPU_RESOURCE, NAME_LABEL

#: The environment variable the commands name the node by (the downward API's `spec.nodeName`), substituted by the
#: kubelet in `command`/`args` as `$(NODE_NAME)` without a shell.
NODE_NAME_ENV = "NODE_NAME"
#: `kubectl wait --timeout`: negative waits a week (kubectl wait --help). A node whose GPUs never come keeps its pod
#: in Init, which KubePodNotReady reports after 15 minutes: the alert that node deserves.
WAIT_TIMEOUT = "-1s"
#: What the gate may do, and all it may do: read and watch nodes (`kubectl wait` lists with a field selector, then
#: watches), and patch one (`kubectl taint` gets the node, then patches its taints).
RBAC_RULES: tuple[Mapping[str, Any], ...] = (
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch"]},
)
#: kubectl as kube-prometheus-stack's CRD job runs it (values.yaml 88.5.3 `crds.upgradeJob`: uid 65534, read-only
#: root, no capabilities), which Pod Security `restricted` admits.
SECURITY_CONTEXT: Mapping[str, Any] = {
    "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]},
}
POD_SECURITY_CONTEXT: Mapping[str, Any] = {
    "runAsNonRoot": True, "runAsUser": 65534, "runAsGroup": 65534, "seccompProfile": {"type": "RuntimeDefault"},
}


def jsonpath_key(resource: str) -> str:
    """A resource name as a kubectl JSONPath key: `nvidia.com/gpu` -> `nvidia\\.com/gpu` (dots escaped)."""
    return resource.replace(".", "\\.")


@dataclass(frozen=True)
class Gate:
    """One gated GPU pool: the nodes it runs on (labels), the taints it tolerates (all the pool registers with), and
    how many GPUs a node of the pool must advertise before its taint goes."""

    pool: str
    labels: Mapping[str, str]
    node_taints: Mapping[str, str]
    gpus: int

    @classmethod
    def of(cls, pool: GpuPoolConfig) -> Gate:
        # The pool's own labels (Gcore sets them at registration), else the GPU Operator's GPU node label.
        return cls(pool.name, pool_node_labels(pool), pool.node_taints, pool.gpus)

    @property
    def name(self) -> str:
        return f"{GPU_READY_GATE_NAME}-{self.pool}"

    def commands(self, node: str = f"$({NODE_NAME_ENV})") -> list[list[str]]:
        """The init containers' commands, in order (`node`: a name, for a test that runs them itself)."""
        allocatable = f"{{.status.allocatable.{jsonpath_key(GPU_RESOURCE)}}}"
        return [
            ["kubectl", "wait", f"node/{node}", f"--for=jsonpath={allocatable}={self.gpus}",
             f"--timeout={WAIT_TIMEOUT}"],
            ["kubectl", "taint", "node", node, f"{GPU_READY_TAINT_KEY}=true:NoSchedule", "--overwrite"],
            ["kubectl", "taint", "node", node, f"{GPU_READY_TAINT_KEY}:NoSchedule-"],
        ]


STEPS = ("wait-for-gpus", "set-taint", "remove-taint")


def labels(gate: Gate) -> dict[str, str]:
    return {NAME_LABEL: gate.name, COMPONENT_LABEL: GPU_READY_GATE_NAME}


def daemonset_spec(gate: Gate, image: str, service_account: str = GPU_READY_GATE_NAME) -> dict[str, Any]:
    """The DaemonSet's `spec`: on the pool's nodes only, tolerating everything the pool registers with."""
    env = [{"name": NODE_NAME_ENV, "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    resources = {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}
    init = [{"name": step, "image": image, "command": cmd[:1], "args": cmd[1:], "env": env,
             "resources": resources, "securityContext": dict(SECURITY_CONTEXT)}
            for step, cmd in zip(STEPS, gate.commands(), strict=True)]
    return {
        "selector": {"matchLabels": labels(gate)},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": {"labels": labels(gate)},
            "spec": {
                "serviceAccountName": service_account,
                "nodeSelector": dict(gate.labels),
                "tolerations": tolerations_for(gate.node_taints),
                "securityContext": dict(POD_SECURITY_CONTEXT),
                "initContainers": init,
                "containers": [{
                    "name": "done", "image": PAUSE_IMAGE,
                    "resources": {"requests": {"cpu": "1m", "memory": "8Mi"}, "limits": {"memory": "16Mi"}},
                    "securityContext": dict(SECURITY_CONTEXT),
                }],
                "terminationGracePeriodSeconds": 5,
            },
        },
    }


def cluster_role_rules() -> list[dict[str, Any]]:
    return [dict(rule) for rule in RBAC_RULES]


def binding_spec(namespace: str) -> dict[str, Any]:
    """The ClusterRoleBinding's `roleRef` and `subjects`: the gates' one ClusterRole to their one ServiceAccount."""
    return {"role_ref": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": GPU_READY_GATE_NAME},
            "subjects": [{"kind": "ServiceAccount", "name": GPU_READY_GATE_NAME, "namespace": namespace}]}
