"""`charts`: the chart versions a stack installs (the pins and their matrices live in stackconfig/versions.py)."""

from __future__ import annotations

from stackconfig import versions
from stackconfig.values import Model


class ChartsConfig(Model):
    gpu_operator: str = versions.GPU_OPERATOR.default_version
    keda: str = versions.KEDA.default_version
    kube_prometheus_stack: str = versions.KUBE_PROMETHEUS_STACK.default_version
    #: Where the three charts come from instead of their upstream repositories: a Helm repository
    #: (`https://...`), an OCI registry path (`oci://...`), or an absolute local directory holding the packaged
    #: archives (`<chart>-<version>.tgz`). For air-gapped clusters and internal chart proxies.
    mirror: str | None = None

    def versions(self) -> dict[str, tuple[versions.Chart, str]]:
        """Stack-file key -> (chart, pinned version)."""
        return {
            "charts.gpuOperator": (versions.GPU_OPERATOR, self.gpu_operator),
            "charts.keda": (versions.KEDA, self.keda),
            "charts.kubePrometheusStack": (versions.KUBE_PROMETHEUS_STACK, self.kube_prometheus_stack),
        }
