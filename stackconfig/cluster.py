"""`cluster`: the Gcore Managed Kubernetes cluster, and which Cluster Autoscaler flags a stack may set."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from stackconfig import versions
from stackconfig.values import GcoreName, Model, SecretKey

#: The Cluster Autoscaler options Gcore accepts in `autoscaler_config`.
AUTOSCALER_KEYS = (
    "balance-similar-node-groups", "expander", "expendable-pods-priority-cutoff",
    "ignore-daemonsets-utilization", "max-empty-bulk-delete", "max-graceful-termination-sec",
    "max-node-provision-time", "max-total-unready-percentage", "new-pod-scale-up-delay",
    "ok-total-unready-count", "scale-down-delay-after-add", "scale-down-delay-after-delete",
    "scale-down-delay-after-failure", "scale-down-enabled", "scale-down-unneeded-time",
    "scale-down-unready-time", "scale-down-utilization-threshold", "scan-interval",
    "skip-nodes-with-custom-controller-pods", "skip-nodes-with-local-storage", "skip-nodes-with-system-pods",
)
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


#: The keys of `cluster` that describe a cluster this stack creates; with `cluster.existing` they have no effect.
CREATING_FIELDS = ("project_id", "project_name", "region_id", "region_name", "keypair", "network", "subnet", "cni",
                   "autoscaler")


class ExistingClusterConfig(Model):
    """A cluster this stack does not create (made in the Gcore portal, or by another stack): the add-ons and
    workloads are deployed into it through its kubeconfig, given exactly one way."""

    #: `secrets:<key>` holding the kubeconfig (`pulumi config set --secret secrets:<key> "$(cat kubeconfig)"`).
    kubeconfig_secret: SecretKey | None = None
    #: `<organization>/<project>/<stack>` of a stack whose secret `kubeconfig` output is the cluster's.
    stack_reference: str | None = None


class ClusterConfig(Model):
    """The Gcore Managed Kubernetes cluster (keys: gpu_platform/cluster.py `Cluster`). Changing name, keypair,
    network, subnet or cni REPLACES it."""

    name: GcoreName
    #: Set when the cluster exists already: nothing of the cluster itself is then created or changed.
    existing: ExistingClusterConfig | None = None
    version: str = versions.DEFAULT_K8S_VERSION
    project_id: int | None = Field(default=None, ge=1)
    project_name: str | None = None
    region_id: int | None = Field(default=None, ge=1)
    region_name: str | None = None
    keypair: str | None = Field(default=None, min_length=1)
    network: str | None = None
    subnet: str | None = None
    cni: Literal["calico", "cilium"] = "calico"
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
