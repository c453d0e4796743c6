"""Every pinned version the platform installs, and the compatibility matrices they are checked against.

One place: bump a chart here (or override it per stack under `charts:`), and the config model refuses
a combination that the upstream matrices do not support for the cluster's Kubernetes version.
Sources: NVIDIA/cloud-native-docs gpu-operator/platform-support.rst and its lifecycle policy; kedacore/keda-docs
content/docs/2.20/operate/cluster.md; prometheus-community/helm-charts charts/kube-prometheus-stack/Chart.yaml;
Gcore `GET /cloud/v2/k8s/{project_id}/{region_id}/create_versions` (example response in Gcore docs,
https://gcore.com/docs/edge-ai/managed-kubernetes/create-a-gpu-kubernetes-cluster); G-Core/terraform-provider-gcore
tags (v0.34.3 is the newest v0 release whose schema this repository snapshots).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Kubernetes versions Gcore Managed Kubernetes offers for new clusters (create_versions, GPU cluster doc).
GCORE_K8S_VERSIONS: tuple[str, ...] = ("v1.33.10", "v1.34.6", "v1.35.3", "v1.36.1")
#: Newest version every pinned chart supports (KEDA 2.20 is tested up to 1.35).
DEFAULT_K8S_VERSION = "v1.35.3"

#: Gcore Terraform provider (v0 line; the v2 pre-releases share its name, so always pin) and the bridge.
GCORE_PROVIDER_VERSION = "0.34.3"
TERRAFORM_BRIDGE_VERSION = "1.4.0"


@dataclass(frozen=True)
class Chart:
    """A Helm chart as the platform installs it."""

    name: str
    repo: str
    default_version: str

    def archive(self, version: str) -> str:
        """The packaged chart's file name, as `helm package` and the chart repositories name it."""
        return f"{self.name}-{version}.tgz"


GPU_OPERATOR = Chart("gpu-operator", "https://helm.ngc.nvidia.com/nvidia", "v26.7.0")
KEDA = Chart("keda", "https://kedacore.github.io/charts", "2.20.2")
KUBE_PROMETHEUS_STACK = Chart(
    "kube-prometheus-stack", "https://prometheus-community.github.io/helm-charts", "88.5.3"
)

#: dcgm-exporter, pinned by us in the GPU Operator's values (`dcgmExporter.repository/image/version`) rather than left
#: to whichever exporter a GPU Operator release ships: its metric names and units are what every threshold, rule and
#: dashboard reads, and they change between exporter releases (docs/operations.md#upgrade-dcgm-exporter). Today equal
#: to what GPU Operator v26.7.0 ships (NVIDIA/gpu-operator deployments/gpu-operator/values.yaml). The release is the
#: NVIDIA/dcgm-exporter tag, `<DCGM version>-<exporter version>`; its counters list is vendored beside
#: delivery/exporter_metrics.py, which refuses a pin without one.
DCGM_EXPORTER_REPOSITORY = "nvcr.io/nvidia/k8s"
DCGM_EXPORTER_IMAGE = "dcgm-exporter"
DCGM_EXPORTER_RELEASE = "4.6.0-4.8.3"
DCGM_EXPORTER_TAG = f"{DCGM_EXPORTER_RELEASE}-distroless"

#: GPU Operator release line (major.minor) -> supported Kubernetes minors (platform-support.rst, Ubuntu 22.04 row).
#: Lines at End of Support (25.3.x and older, lifecycle policy) are deliberately absent.
GPU_OPERATOR_K8S: dict[tuple[int, int], tuple[int, int]] = {
    (25, 10): (30, 35),
    (26, 3): (33, 36),
    (26, 7): (33, 36),
}

#: KEDA minor -> Kubernetes minors it is tested on ("N-2", keda-docs operate/cluster.md).
KEDA_K8S: dict[tuple[int, int], tuple[int, int]] = {
    (2, 17): (30, 32),
    (2, 18): (31, 33),
    (2, 19): (32, 34),
    (2, 20): (33, 35),
}

#: kube-prometheus-stack major -> minimum Kubernetes minor (Chart.yaml kubeVersion ">=1.25.0-0").
#: Majors before 79 shipped the `prom-operator` Grafana default password and are not offered.
KUBE_PROMETHEUS_STACK_MIN_K8S: dict[int, int] = {major: 25 for major in range(79, 89)}

#: busybox for kube-prometheus-stack's CRD upgrade job (its init container unpacks the CRDs; the chart's default
#: tag is `latest`). The job's kubectl image follows the cluster's own version (the chart's default tag).
CRD_UPGRADE_BUSYBOX_TAG = "1.37.0"
#: The headroom placeholders' container: Kubernetes' `pause` image (does nothing, ~300 KB, runs as 65535),
#: as the cluster-autoscaler FAQ's overprovisioning example uses it. Pinned by the multi-arch index digest of
#: registry.k8s.io/pause:3.10 so every node runs the same bytes.
PAUSE_IMAGE = "registry.k8s.io/pause:3.10@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a"
#: The GPU-ready gate's image (renderers/gpu_ready_gate.py): Kubernetes' own kubectl image, published for every
#: release since v1.28 (kubernetes/kubernetes PR #116672, build/server-image/kubectl/Dockerfile), one per Kubernetes
#: minor the cluster may run, at the patch Gcore offers for it (GCORE_K8S_VERSIONS), so that kubectl stays within
#: its supported skew of the API server (kubernetes.io/releases/version-skew-policy: kubectl ±1 minor). Run in exec
#: form only: the gate needs no shell, whichever base the image is built on.
KUBECTL_IMAGES: dict[int, str] = {
    int(v.split(".")[1]): f"registry.k8s.io/kubectl:{v}" for v in GCORE_K8S_VERSIONS
}


def kubectl_image(kubernetes_minor: int) -> str:
    """The pinned kubectl image for a cluster of this Kubernetes minor (config refuses any other minor)."""
    return KUBECTL_IMAGES[kubernetes_minor]
