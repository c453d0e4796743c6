"""GpuOperator: NVIDIA GPU Operator, which exposes `nvidia.com/gpu` and runs dcgm-exporter (values:
renderers/chart_values.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kube import namespace, pinned_release
from renderers.chart_values import gpu_operator_values
from stackconfig import versions
from stacknames import GPU_OPERATOR_NAMESPACE


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
