"""`charts`: the chart versions a stack installs (the pins and their matrices live in stackconfig/versions.py)."""

from __future__ import annotations

from stackconfig import versions
from stackconfig.values import Model


class ChartsConfig(Model):
    """Chart versions; defaults live in stackconfig/versions.py."""

    gpu_operator: str = versions.GPU_OPERATOR.default_version
    keda: str = versions.KEDA.default_version
    kube_prometheus_stack: str = versions.KUBE_PROMETHEUS_STACK.default_version
