"""Keda: the KEDA operator and metrics server that turn ScaledObjects into HPAs (values: renderers/chart_values.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kube import namespace, pinned_release
from renderers.chart_values import keda_values
from stackconfig import versions
from stacknames import KEDA_NAMESPACE


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
