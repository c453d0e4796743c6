"""GpuOperator: NVIDIA GPU Operator, which exposes `nvidia.com/gpu` and runs dcgm-exporter (values:
renderers/chart_values.py), and the GPU-ready gate of each gated pool (renderers/gpu_ready_gate.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.kube import AddonRelease
from renderers.chart_values import gpu_operator_values
from renderers.gpu_ready_gate import Gate, binding_spec, cluster_role_rules, daemonset_spec, labels
from stackconfig import versions
from stacknames import GPU_OPERATOR_NAMESPACE, GPU_READY_GATE_NAME, PLATFORM_LABELS


@dataclass(frozen=True)
class GpuOperatorArgs:
    version: str
    #: Each GPU pool's taints as its nodes register (one mapping per pool, start-up taint included): the operands
    #: must run on every GPU node, before the gate lets anything else on.
    pool_taints: Sequence[Mapping[str, str]]
    namespace: str = GPU_OPERATOR_NAMESPACE
    #: `charts.mirror`: where the chart comes from instead of its repository.
    mirror: str | None = None
    #: The gated pools (`gpuReadyGate`), and the kubectl image their gates run (stackconfig/versions.py).
    gates: Sequence[Gate] = field(default_factory=tuple)
    kubectl_image: str = ""


class GpuOperator(AddonRelease):
    gates: dict[str, k8s.apps.v1.DaemonSet]

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:addons:GpuOperator", name, None, opts)
        if args.gates and not args.kubectl_image:
            raise ValueError("GpuOperator: gates need a kubectl image")
        self.gates = {}
        # dcgm-exporter and the device plugin mount host paths: the namespace must allow privileged pods.
        self._install(name, args.namespace, versions.GPU_OPERATOR, args.version, gpu_operator_values(args.pool_taints),
                      pod_security="privileged", timeout=900, mirror=args.mirror, register=False)
        self._gates(name, args)
        self._register()

    def _gates(self, name: str, args: GpuOperatorArgs) -> None:
        """The gates' ServiceAccount and its one ClusterRole (nodes: get, list, watch, patch), then a DaemonSet per
        gated pool. Independent of the release: a gate only waits for GPUs, whoever makes them allocatable."""
        if not args.gates:
            return
        child = pulumi.ResourceOptions(parent=self)
        meta = {"name": GPU_READY_GATE_NAME, "labels": dict(PLATFORM_LABELS)}
        account = k8s.core.v1.ServiceAccount(
            f"{name}-gate-account", metadata={**meta, "namespace": self.namespace}, opts=child)
        role = k8s.rbac.v1.ClusterRole(f"{name}-gate-role", metadata=meta, rules=cluster_role_rules(), opts=child)
        binding = k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-gate-binding", metadata=meta, **binding_spec(args.namespace),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role, account]))
        for gate in args.gates:
            self.gates[gate.pool] = k8s.apps.v1.DaemonSet(
                f"{name}-gate-{gate.pool}",
                metadata={
                    "name": gate.name, "namespace": self.namespace, "labels": {**labels(gate), **PLATFORM_LABELS},
                    # A gate pod waits in Init until its node's GPUs are allocatable, 5-10 minutes on a first `up`:
                    # `pulumi up` need not wait for it (it serves nobody; the workloads wait for their own pods).
                    "annotations": {"pulumi.com/skipAwait": "true"},
                },
                spec=daemonset_spec(gate, args.kubectl_image, service_account=GPU_READY_GATE_NAME),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[account, binding]),
            )
