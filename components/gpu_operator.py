"""GpuOperator: NVIDIA GPU Operator, which exposes `nvidia.com/gpu` and runs dcgm-exporter.

Values follow NVIDIA/gpu-operator deployments/gpu-operator/values.yaml (v26.7.0) and its getting-started.rst:
drivers come preinstalled on Gcore's GPU images
(`driver.enabled=false`); no `operator.defaultRuntime` (removed in 25.3.0, CRI-O is auto-detected);
logging stays at the chart's `info`; DCGM reaches Prometheus through the operator's one ServiceMonitor
with the workload's labels intact (components/dcgm.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import dcgm
from components.kube import namespace, pinned_release, tolerations_for
from stackconfig import versions
from stacknames import GPU_OPERATOR_NAMESPACE, GPU_RESOURCE

#: The chart's own defaults, which a values list replaces rather than extends.
_DEFAULT_DAEMONSET_TOLERATIONS = [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]
_CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule",
}


def _merge(base: list[dict[str, Any]], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return base + [t for t in extra if t not in base]


def gpu_operator_values(pool_taints: Mapping[str, str]) -> dict[str, Any]:
    """Chart values; the operands must tolerate the GPU pool's taints or no GPU is ever advertised."""
    pool_tolerations = tolerations_for(pool_taints)
    return {
        "driver": {"enabled": False},
        "daemonsets": {"tolerations": _merge(_DEFAULT_DAEMONSET_TOLERATIONS, pool_tolerations)},
        "node-feature-discovery": {
            "worker": {
                "tolerations": _merge([_CONTROL_PLANE_TOLERATION, *_DEFAULT_DAEMONSET_TOLERATIONS], pool_tolerations)
            }
        },
        "dcgmExporter": {
            "enabled": True,
            "env": [{"name": "DCGM_EXPORTER_INTERVAL", "value": str(dcgm.EXPORTER_COLLECT_INTERVAL_MS)}],
            "serviceMonitor": dcgm.service_monitor_values(),
        },
    }


@dataclass(frozen=True)
class GpuOperatorArgs:
    version: str
    pool_taints: Mapping[str, str]
    namespace: str = GPU_OPERATOR_NAMESPACE


class GpuOperator(pulumi.ComponentResource):
    release: k8s.helm.v3.Release
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:addons:GpuOperator", name, None, opts)
        # dcgm-exporter and the device plugin mount host paths: the namespace must allow privileged pods.
        ns = namespace(f"{name}-ns", args.namespace, self, pod_security="privileged")
        self.namespace = ns.metadata.name
        self.release = pinned_release(
            f"{name}-release", versions.GPU_OPERATOR, args.version, self.namespace,
            gpu_operator_values(args.pool_taints), parent=self, timeout=900,
        )
        self.register_outputs({"namespace": self.namespace, "release": self.release.name})
