"""Keda: the KEDA operator and metrics server that turn ScaledObjects into HPAs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kube import namespace, pinned_release
from stackconfig import versions
from stacknames import KEDA_NAMESPACE


def keda_values() -> dict[str, Any]:
    """Expose the operator's Prometheus metrics (scaler errors feed the alerts); the Monitoring
    component scrapes them with its own ServiceMonitor, so this release needs no Prometheus CRDs
    and installs in parallel with kube-prometheus-stack."""
    return {
        "prometheus": {
            "operator": {"enabled": True, "serviceMonitor": {"enabled": False}},
            "metricServer": {"enabled": True, "serviceMonitor": {"enabled": False}},
        },
    }


@dataclass(frozen=True)
class KedaArgs:
    version: str
    namespace: str = KEDA_NAMESPACE


class Keda(pulumi.ComponentResource):
    release: k8s.helm.v3.Release
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: KedaArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:addons:Keda", name, None, opts)
        ns = namespace(f"{name}-ns", args.namespace, self)
        self.namespace = ns.metadata.name
        self.release = pinned_release(
            f"{name}-release", versions.KEDA, args.version, self.namespace, keda_values(), parent=self
        )
        self.register_outputs({"namespace": self.namespace, "release": self.release.name})
