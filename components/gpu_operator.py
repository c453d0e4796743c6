"""GpuOperator: NVIDIA GPU Operator, which exposes `nvidia.com/gpu` and runs dcgm-exporter (values:
renderers/chart_values.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi

from components.kube import AddonRelease
from renderers.chart_values import gpu_operator_values
from stackconfig import versions
from stacknames import GPU_OPERATOR_NAMESPACE


@dataclass(frozen=True)
class GpuOperatorArgs:
    version: str
    #: Each GPU pool's taints (one mapping per pool): the operands must run on every GPU node.
    pool_taints: Mapping[str, str] | Sequence[Mapping[str, str]]
    namespace: str = GPU_OPERATOR_NAMESPACE
    #: `charts.mirror`: where the chart comes from instead of its repository.
    mirror: str | None = None


class GpuOperator(AddonRelease):
    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:addons:GpuOperator", name, None, opts)
        # dcgm-exporter and the device plugin mount host paths: the namespace must allow privileged pods.
        self._install(name, args.namespace, versions.GPU_OPERATOR, args.version, gpu_operator_values(args.pool_taints),
                      pod_security="privileged", timeout=900, mirror=args.mirror)
