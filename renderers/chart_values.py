"""The Helm values of the three pinned charts, and what the platform adds beside them for their metrics.

- GPU Operator (NVIDIA/gpu-operator deployments/gpu-operator/values.yaml, v26.7.0, and its getting-started.rst):
  drivers come preinstalled on Gcore's GPU images (`driver.enabled=false`); no `operator.defaultRuntime` (removed
  in 25.3.0, CRI-O is auto-detected); logging stays at the chart's `info`; DCGM reaches Prometheus through the
  operator's one ServiceMonitor with the workload's labels intact (renderers/dcgm.py); the exporter image is our pin
  (stackconfig/versions.py), not the chart's.
- KEDA: the operator's own metrics on, scraped by the ServiceMonitor below (`keda_service_monitor`).
- kube-prometheus-stack (prometheus-community/helm-charts charts/kube-prometheus-stack/values.yaml, 88.5.3): the
  selector switches live under `prometheus.prometheusSpec` (the guide's top-level keys are silently ignored and
  nothing is ever scraped); no extra scrape job (the GPU Operator's ServiceMonitor is the only DCGM path);
  Grafana's admin password comes from the program's Secret; every Service stays ClusterIP, no Ingress.

Pure functions: components/gpu_operator.py, keda.py and monitoring.py pass them to their `helm.v3.Release`, and
tests/test_render.py renders the pinned charts with them (every leaf must be read by a template).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from renderers import dcgm
from renderers.placement import tolerations_for
from stackconfig import GpuPoolConfig, StackConfig
from stackconfig.versions import (
    CRD_UPGRADE_BUSYBOX_TAG,
    DCGM_EXPORTER_IMAGE,
    DCGM_EXPORTER_REPOSITORY,
    DCGM_EXPORTER_TAG,
)
from stacknames import GPU_RESOURCE, NAME_LABEL, NODE_EXPORTER_NAMESPACE

# --- GPU Operator ----------------------------------------------------------------------------------------------

#: The chart's own defaults, which a values list replaces rather than extends.
_DEFAULT_DAEMONSET_TOLERATIONS = [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]
_CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule",
}


def _merge(base: list[dict[str, Any]], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return base + [t for t in extra if t not in base]


def gpu_operator_values(pool_taints: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """Chart values; the operands must tolerate every GPU pool's taints (one mapping per pool, in pool order), or
    no GPU is ever advertised on the pool they miss (a spot pool's spot taint, say)."""
    pool_tolerations: list[dict[str, Any]] = []
    for taints in pool_taints:
        pool_tolerations = _merge(pool_tolerations, tolerations_for(taints))
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
            "repository": DCGM_EXPORTER_REPOSITORY,
            "image": DCGM_EXPORTER_IMAGE,
            "version": DCGM_EXPORTER_TAG,
            "env": [{"name": "DCGM_EXPORTER_INTERVAL", "value": str(dcgm.EXPORTER_COLLECT_INTERVAL_MS)}],
            "serviceMonitor": dcgm.service_monitor_values(),
        },
    }


# --- KEDA ------------------------------------------------------------------------------------------------------

#: KEDA chart defaults (values-2.20.2.yaml `operator.name`; templates/manager/service.yaml): the operator
#: Service is named after it, labelled `app.kubernetes.io/name: <name>`, and, with
#: `prometheus.operator.enabled`, gets a port `metrics` (8080) serving the operator's metrics.
KEDA_OPERATOR = "keda-operator"
KEDA_METRICS_PORT_NAME = "metrics"


def keda_values() -> dict[str, Any]:
    """Expose the operator's Prometheus metrics (scaler errors feed the alerts); the Monitoring
    component scrapes them with its own ServiceMonitor, so this release needs no Prometheus CRDs
    and installs in parallel with kube-prometheus-stack."""
    return {
        "prometheus": {
            "operator": {"enabled": True, "serviceMonitor": {"enabled": False}},
            "metricServer": {"enabled": True, "serviceMonitor": {"enabled": False}},
        },
        # The chart ships its CRDs as templates (crds.install), so a release that is replaced or uninstalled deletes
        # them, and with them every ScaledObject in the cluster. Helm keeps a resource that carries this policy
        # (helm.sh/docs "Tell Helm Not To Uninstall a Resource"); keda chart 2.20.2 values `crds.additionalAnnotations`.
        "crds": {"additionalAnnotations": {"helm.sh/resource-policy": "keep"}},
    }


def keda_service_monitor(keda_namespace: str) -> dict[str, Any]:
    """`spec` of a ServiceMonitor for the KEDA operator's metrics (scaler and ScaledObject errors).

    Needs the KEDA chart value `prometheus.operator.enabled: true` (components/keda.py sets it), which
    adds the `metrics` port to the `keda-operator` Service and turns the metrics on. `honorLabels` keeps
    KEDA's own `namespace` label (the ScaledObject's namespace) instead of renaming it to
    `exported_namespace`; the job label is the Service name, `keda-operator`.
    """
    return {
        "namespaceSelector": {"matchNames": [keda_namespace]},
        "selector": {"matchLabels": {NAME_LABEL: KEDA_OPERATOR}},
        "endpoints": [
            {
                "port": KEDA_METRICS_PORT_NAME,
                "path": "/metrics",
                "interval": "30s",
                "honorLabels": True,
            }
        ],
    }


# --- kube-prometheus-stack -------------------------------------------------------------------------------------

#: Short, stable object names: services become `kps-prometheus`, `kps-grafana`, ...
FULLNAME = "kps"
PROMETHEUS_PORT = 9090
GRAFANA_ADMIN_SECRET = "grafana-admin"
GRAFANA_USER_KEY = "admin-user"
GRAFANA_PASSWORD_KEY = "admin-password"
DASHBOARD_LABEL = ("grafana_dashboard", "1")
#: Secret with `alertmanager.yaml` that the operator mounts instead of the chart's (alertmanagerSpec.configSecret).
ALERTMANAGER_CONFIG_SECRET = "alertmanager-gpu-platform"
ALERTMANAGER_CONFIG_KEY = "alertmanager.yaml"
#: Job label of kube-state-metrics in kube-prometheus-stack (its ServiceMonitor's jobLabel value).
KSM_JOB = "kube-state-metrics"
#: kube-state-metrics' spelling of the `nvidia.com/gpu` extended resource.
KSM_GPU_RESOURCE = "nvidia_com_gpu"
#: Node label set by the GPU Operator's feature discovery; identifies GPU nodes when the pool has no labels.
FALLBACK_GPU_NODE_LABEL = "nvidia.com/gpu.present"
_KSM_LABEL_CHARS = re.compile(r"[^a-zA-Z0-9_]")


def prometheus_url(namespace_name: str) -> str:
    """In-cluster URL of the Service the chart creates for Prometheus (`<fullname>-prometheus`)."""
    return f"http://{FULLNAME}-prometheus.{namespace_name}.svc.cluster.local:{PROMETHEUS_PORT}"


def storage_spec(size: str, storage_class: str | None) -> dict[str, Any]:
    """A PersistentVolumeClaim template for Prometheus: retention means nothing on an emptyDir."""
    claim: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if storage_class:
        claim["storageClassName"] = storage_class
    return {"volumeClaimTemplate": {"spec": claim}}


def monitoring_values(
    retention: str,
    namespace_name: str,
    extra: Mapping[str, Any] | None = None,
    storage: Mapping[str, Any] | None = None,
    node_exporter_namespace: str = NODE_EXPORTER_NAMESPACE,
) -> dict[str, Any]:
    values: dict[str, Any] = {
        "fullnameOverride": FULLNAME,
        # Helm installs `crds/` once and never upgrades them (kube-prometheus-stack README, "Upgrading CRDs"): a
        # chart bump with a newer prometheus-operator would then run against old CRDs. The chart's own upgrade job
        # (88.5.3 values `crds.upgradeJob`, a pre-install/pre-upgrade hook) applies the CRDs of the pinned chart
        # server-side on every `up` (force-conflicts: it takes them over from Helm). Its images: busybox pinned
        # here, kubectl at the cluster's own version (the chart's default).
        "crds": {"upgradeJob": {"enabled": True, "image": {"busybox": {"tag": CRD_UPGRADE_BUSYBOX_TAG}}}},
        # The subchart's own namespace (prometheus-community/helm-charts, charts/prometheus-node-exporter
        # templates/_helpers.tpl `prometheus-node-exporter.namespace`): DaemonSet, Service, ServiceMonitor.
        "prometheus-node-exporter": {"namespaceOverride": node_exporter_namespace},
        "prometheus": {
            "service": {"type": "ClusterIP", "port": PROMETHEUS_PORT},
            "ingress": {"enabled": False},
            "prometheusSpec": {
                # Select ServiceMonitors/PodMonitors/rules from every release, not only this one's.
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "podMonitorSelectorNilUsesHelmValues": False,
                "ruleSelectorNilUsesHelmValues": False,
                "retention": retention,
                **({"storageSpec": dict(storage)} if storage else {}),
            },
        },
        "alertmanager": {"service": {"type": "ClusterIP"}, "ingress": {"enabled": False}},
        "grafana": {
            "admin": {
                "existingSecret": GRAFANA_ADMIN_SECRET,
                "userKey": GRAFANA_USER_KEY,
                "passwordKey": GRAFANA_PASSWORD_KEY,
            },
            "ingress": {"enabled": False},
            "sidecar": {
                "dashboards": {
                    "enabled": True,
                    "label": DASHBOARD_LABEL[0],
                    "labelValue": DASHBOARD_LABEL[1],
                    "searchNamespace": namespace_name,
                }
            },
        },
    }
    return deep_merge(values, extra or {})


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in, mapping by mapping (Helm's own merge of values files)."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), dict) \
            else value
    return out


def alertmanager_secret_values() -> dict[str, Any]:
    """Alertmanager reads the program's Secret instead of the chart's config; `useExistingSecret`: the chart
    then renders no config Secret of its own (values.yaml 88.5.3, alertmanager.alertmanagerSpec.configSecret)."""
    spec = {"configSecret": ALERTMANAGER_CONFIG_SECRET, "useExistingSecret": True}
    return {"alertmanager": {"alertmanagerSpec": spec}}


def ksm_label_name(kubernetes_label: str) -> str:
    """The Prometheus label kube-state-metrics gives a Kubernetes label on `kube_<kind>_labels`.

    kube-state-metrics prefixes `label_` and replaces every character outside [a-zA-Z0-9_] with `_`:
    `platform.gcore-gpu/pool` becomes `label_platform_gcore_gpu_pool`.
    """
    return "label_" + _KSM_LABEL_CHARS.sub("_", kubernetes_label)


def pool_node_labels(pool: GpuPoolConfig) -> dict[str, str]:
    """The node labels that identify a GPU pool's nodes.

    The pool's own labels are set by Gcore when the node is created, so they identify the node even when
    the GPU Operator is broken on it (the case the allocatable alert exists for). A pool without labels
    falls back to the GPU Operator's feature-discovery label, which only appears once NFD has run (the config
    refuses a pool without labels of its own when there are several).
    """
    return dict(pool.labels) or {FALLBACK_GPU_NODE_LABEL: "true"}


def kube_state_metrics_values(cfg: StackConfig) -> dict[str, Any]:
    """kube-prometheus-stack values that make kube-state-metrics export the pools' node labels.

    kube-state-metrics exports `kube_node_labels` only with allow-listed label keys (none by default), so
    without this every pool-scoped rule below matches nothing and its alert can never fire. The subchart
    reads `kube-state-metrics.metricLabelsAllowlist` as `<plural kind>=[key,...]` entries.
    """
    keys = ",".join(sorted({key for pool in cfg.pools for key in pool_node_labels(pool)}))
    return {"kube-state-metrics": {"metricLabelsAllowlist": [f"nodes=[{keys}]"]}}
