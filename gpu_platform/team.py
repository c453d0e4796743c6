"""TeamAccess: what a model team needs to deploy onto the platform from its own stack and nothing more: quotas on its
namespace (GPUs; no load balancer, node port or system-critical pod), a ServiceAccount allowed what the package's
GpuWorkload creates there (and ConfigMaps), and a kubeconfig with that account's token.

The admin kubeconfig can change anything; a team's program holding its own cannot reach outside its namespace, and
its pods no more GPUs than its quota: at tens of dollars an hour per node, a `maxReplicas` typo stays the team's.
"""

import base64
from pathlib import Path
from typing import Any, TypedDict

import pulumi
import pulumi_kubernetes as k8s
import yaml
from pydantic import ValidationError

from gpu_platform.arguments import refuse, whole
from stackconfig import Problem
from stackconfig.errors import from_validation_error
from stackconfig.rules.teams import team_namespace_problem
from stackconfig.stack import KNOWN_KEYS
from stackconfig.teams import TeamConfig
from stacknames import GPU_RESOURCE, PLATFORM_LABELS

TYPE = "gpu-platform:index:TeamAccess"
#: The ServiceAccount, Role and RoleBinding of every team, in its own namespace.
DEPLOYER = "deployer"
_EDIT = ["get", "list", "watch", "create", "update", "patch", "delete"]
_READ = ["get", "list", "watch"]
#: What GpuWorkload creates (Deployment, PodDisruptionBudget, ScaledObject, Service, PodMonitor, Secrets), what
#: `pulumi up` watches while it waits for them (pods, ReplicaSets, events), and what a team reads when it debugs
#: (logs, the HPA KEDA makes, its quota). Nothing cluster-scoped, no RBAC, no exec.
RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["services", "secrets", "configmaps"], "verbs": _EDIT},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": _EDIT},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _EDIT},
    {"apiGroups": ["keda.sh"], "resources": ["scaledobjects"], "verbs": _EDIT},
    {"apiGroups": ["monitoring.coreos.com"], "resources": ["podmonitors"], "verbs": _EDIT},
    {"apiGroups": [""], "resources": ["pods", "pods/log", "events", "endpoints", "persistentvolumeclaims",
                                      "resourcequotas"], "verbs": _READ},
    {"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": _READ},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": _READ},
    {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": _READ},
]


class TeamAccessArgs(TypedDict):
    namespace: pulumi.Input[str]
    """The team's namespace, made beforehand (the platform program makes it, at Pod Security `baseline`)."""
    gpus: int
    """The most GPUs the namespace's pods may request at once (a ResourceQuota on `requests.nvidia.com/gpu`)."""
    cluster_kubeconfig: pulumi.Input[str]
    """A kubeconfig of the cluster, e.g. GpuCluster's `kubeconfig`: the team's reaches the server the same way
    (its current context's cluster entry, CA included) with the team's own token."""


class TeamAccess(pulumi.ComponentResource):
    """A namespace's GPU quota, its deployer ServiceAccount and Role, and a kubeconfig (secret) for them."""

    namespace: pulumi.Output[str]
    """The team's namespace, read from its quota."""
    gpus: pulumi.Output[int]
    """The GPU quota, read from it."""
    kubeconfig: pulumi.Output[str]
    """The team's kubeconfig, secret: the deployer's token, the namespace as its context's default."""

    def __init__(self, name: str, args: TeamAccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, {}, opts)
        gpus = self._check(args)
        ns = args["namespace"]
        child = pulumi.ResourceOptions(parent=self)
        meta = {"name": DEPLOYER, "namespace": ns, "labels": dict(PLATFORM_LABELS)}
        # A Service of type LoadBalancer is a billed Gcore load balancer outside the cluster, a NodePort opens every
        # node: neither is a team's to make.
        quota = k8s.core.v1.ResourceQuota(f"{name}-quota", metadata={**meta, "name": "team"}, spec={"hard": {
            f"requests.{GPU_RESOURCE}": str(gpus), "services.loadbalancers": "0", "services.nodeports": "0"}},
            opts=child)
        # Any namespace may use the system PriorityClasses (Kubernetes 1.17 on), whose pods preempt everyone's.
        k8s.core.v1.ResourceQuota(f"{name}-system-priority", metadata={**meta, "name": "system-priority"}, spec={
            "hard": {"pods": "0"}, "scopeSelector": {"matchExpressions": [{
                "scopeName": "PriorityClass", "operator": "In",
                "values": ["system-node-critical", "system-cluster-critical"]}]}}, opts=child)
        account = k8s.core.v1.ServiceAccount(f"{name}-account", metadata=meta, opts=child)
        role = k8s.rbac.v1.Role(f"{name}-role", metadata=meta, rules=RULES, opts=child)
        binding = k8s.rbac.v1.RoleBinding(
            f"{name}-binding", metadata=meta,
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": DEPLOYER},
            subjects=[{"kind": "ServiceAccount", "name": DEPLOYER, "namespace": ns}],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role]))
        # A long-lived token: Kubernetes' token controller fills the Secret in for the account, which must exist
        # first (it deletes a token Secret whose account is missing); pulumi-kubernetes waits for the data
        # (provider/pkg/await/awaiters.go untilCoreV1SecretInitialized, v4.x).
        token = k8s.core.v1.Secret(
            f"{name}-token",
            metadata={**meta, "name": f"{DEPLOYER}-token",
                      "annotations": {"kubernetes.io/service-account.name": DEPLOYER}},
            type="kubernetes.io/service-account-token",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[account]))
        self.namespace = quota.metadata.apply(lambda m: m["namespace"])
        self.gpus = quota.spec.apply(lambda s: int(s["hard"][f"requests.{GPU_RESOURCE}"]))
        # Usable once its rights are: the binding and the quota are inputs of the kubeconfig, so whatever uses it
        # waits for them.
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
            args["cluster_kubeconfig"], self.namespace, token.data, binding.metadata, quota.metadata,
        ).apply(lambda v: team_kubeconfig(v[0], v[1], base64.b64decode(v[2]["token"]).decode())))
        self.register_outputs({"namespace": self.namespace, "gpus": self.gpus, "kubeconfig": self.kubeconfig})

    def _check(self, args: TeamAccessArgs) -> int:
        """The quota, and the namespace when it is known now (an Output is known only once it is made), checked by
        the stack file's team model before any child exists."""
        ns = args.get("namespace")
        known = isinstance(ns, str)
        try:
            # An Output namespace stands in as a valid name here: only the quota is checked then.
            team = TeamConfig.model_validate({"name": ns if known else "team", "gpus": whole(args.get("gpus"))})
        except ValidationError as exc:
            problems = from_validation_error(exc, {"": KNOWN_KEYS["teams[]"]})
            refuse(self, "TeamAccess", [Problem("namespace" if p.key == "name" else p.key, p.value, p.message, p.fix)
                                        for p in problems])
            raise  # not reached: refuse raised
        if known and (reserved := team_namespace_problem("namespace", team.name)) is not None:
            refuse(self, "TeamAccess", [reserved])
        return team.gpus


def team_kubeconfig(cluster_kubeconfig: str, namespace: str, token: str) -> str:
    """The cluster entry of `cluster_kubeconfig`'s current context, with `token` as its only user and `namespace`
    as its context's default; a CA file it names is inlined (the team's machine does not have it)."""
    config = yaml.safe_load(cluster_kubeconfig) or {}
    try:
        current = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
        cluster = next(c for c in config["clusters"] if c["name"] == current["cluster"])
    except (KeyError, TypeError, StopIteration):
        raise ValueError("TeamAccess: cluster_kubeconfig names no current-context with its context and cluster") \
            from None
    if ca := cluster.get("cluster", {}).pop("certificate-authority", None):
        cluster["cluster"]["certificate-authority-data"] = base64.b64encode(Path(ca).read_bytes()).decode()
    user = f"{namespace}-{DEPLOYER}"
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster], "current-context": user,
        "contexts": [{"name": user, "context": {"cluster": cluster["name"], "user": user, "namespace": namespace}}],
        "users": [{"name": user, "user": {"token": token}}],
    }, sort_keys=False)
