"""Keda: the KEDA operator and metrics server that turn ScaledObjects into HPAs (values: renderers/chart_values.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.kube import AddonRelease
from renderers.chart_values import keda_values
from stackconfig import versions
from stacknames import KEDA_NAMESPACE


@dataclass(frozen=True)
class KedaArgs:
    version: str
    namespace: str = KEDA_NAMESPACE
    #: `charts.mirror`: where the chart comes from instead of its repository.
    mirror: str | None = None


class Keda(AddonRelease):
    def __init__(self, name: str, args: KedaArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:addons:Keda", name, None, opts)
        self._install(name, args.namespace, versions.KEDA, args.version, keda_values(), mirror=args.mirror)
