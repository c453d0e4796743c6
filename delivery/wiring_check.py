"""The wiring half of the render check: the platform's own assumptions about the rendered objects.

One DCGM scrape path with `honorLabels` and our relabelings, the 10 s DCGM refresh, Prometheus selecting objects
other releases created, Grafana's existing admin Secret, the KEDA metrics port our ServiceMonitor selects, ClusterIP
Services only and no Ingress.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from delivery.placed_objects import Finding, Placed, describe, namespace_labels, of_kind
from delivery.render import StackRender
from renderers import dcgm
from renderers.chart_values import GRAFANA_ADMIN_SECRET, GRAFANA_PASSWORD_KEY, GRAFANA_USER_KEY, KEDA_METRICS_PORT_NAME


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Kubernetes label-selector semantics; None selects nothing, {} everything."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        ok = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return True


def _monitor_namespaces(monitor: Mapping[str, Any], own_namespace: str) -> set[str] | None:
    """Namespaces a ServiceMonitor/PodMonitor looks in; None = any."""
    sel = (monitor.get("spec") or {}).get("namespaceSelector") or {}
    if sel.get("any"):
        return None
    return set(sel.get("matchNames") or []) or {own_namespace}


def check_dcgm_path(placed: Sequence[Placed], rendered: StackRender) -> Iterator[Finding]:
    """Exactly one scrape path for dcgm-exporter, with honorLabels and our relabelings; the 5 s refresh."""
    exporter_services = [p for p in of_kind(placed, "Service")
                         if (p.obj["metadata"].get("labels") or {}).get("app") == dcgm.EXPORTER_APP_LABEL]
    exporter_pods = [p for p in of_kind(placed, "DaemonSet")
                     if p.obj["metadata"].get("name") == dcgm.EXPORTER_SERVICE]
    paths = []
    for m in of_kind(placed, "ServiceMonitor"):
        spaces = _monitor_namespaces(m.obj, m.namespace)
        for svc in exporter_services:
            if (spaces is None or svc.namespace in spaces) and selects(m.obj["spec"].get("selector"),
                                                                      svc.obj["metadata"].get("labels") or {}):
                paths.append(m)
    for m in of_kind(placed, "PodMonitor"):
        spaces = _monitor_namespaces(m.obj, m.namespace)
        for ds in exporter_pods:
            pod_labels = ds.obj["spec"]["template"]["metadata"].get("labels") or {}
            if (spaces is None or ds.namespace in spaces) and selects(m.obj["spec"].get("selector"), pod_labels):
                paths.append(m)
    for p in of_kind(placed, "Prometheus"):
        if p.obj.get("spec", {}).get("additionalScrapeConfigs"):
            paths.append(p)
    if len(paths) != 1:
        yield Finding("dcgm", "dcgm-exporter", f"{len(paths)} scrape paths "
                      f"({', '.join(describe(p.obj) for p in paths)}); exactly one (the GPU Operator's "
                      "ServiceMonitor) keeps every GPU series single")
    want = dcgm.service_monitor_values()
    for p in paths:
        if p.obj.get("kind") != "ServiceMonitor":
            continue
        for endpoint in p.obj["spec"]["endpoints"]:
            if endpoint.get("honorLabels") is not True:
                yield Finding("dcgm", describe(p.obj), "honorLabels is not true: the workload's pod/namespace labels "
                              "arrive as exported_pod/exported_namespace and KEDA's query finds nothing")
            missing = [r for r in want["relabelings"] if r not in (endpoint.get("relabelings") or [])]
            if missing:
                yield Finding("dcgm", describe(p.obj), f"relabelings {missing} are missing")
            if endpoint.get("interval") != dcgm.SCRAPE_INTERVAL:
                yield Finding("dcgm", describe(p.obj),
                              f"interval {endpoint.get('interval')!r}, want {dcgm.SCRAPE_INTERVAL}")
    if not exporter_pods:
        yield Finding("dcgm", "dcgm-exporter", "no dcgm-exporter DaemonSet (is dcgmExporter.enabled false?)")
    for ds in exporter_pods:
        for c in ds.obj["spec"]["template"]["spec"]["containers"]:
            if c["name"] != dcgm.EXPORTER_SERVICE:
                continue
            env = {e["name"]: e.get("value") for e in c.get("env") or []}
            if env.get("DCGM_EXPORTER_INTERVAL") != str(dcgm.EXPORTER_COLLECT_INTERVAL_MS):
                yield Finding("dcgm", describe(ds.obj),
                              f"DCGM_EXPORTER_INTERVAL={env.get('DCGM_EXPORTER_INTERVAL')!r}, "
                              f"want {dcgm.EXPORTER_COLLECT_INTERVAL_MS} (the exporter's default refresh is 30 s)")


def check_prometheus_selectors(placed: Sequence[Placed]) -> Iterator[Finding]:
    """Prometheus must pick up ServiceMonitors, PodMonitors and rules that its own release did not create."""
    labels = namespace_labels(placed)
    proms = of_kind(placed, "Prometheus")
    if len(proms) != 1:
        yield Finding("prometheus", "Prometheus", f"{len(proms)} Prometheus objects, want 1")
        return
    spec = proms[0].obj["spec"]
    # Objects of each kind this release did not create: ours, the operators', and one with no labels at all
    # in each namespace the program creates (what a workload team would add).
    foreign: dict[str, list[tuple[str, Mapping[str, str]]]] = {
        kind: [(p.namespace, p.obj["metadata"].get("labels") or {})
               for p in of_kind(placed, kind) if not p.origin.startswith("kube-prometheus-stack")]
        + [(ns, {}) for ns in labels]
        for kind in ("ServiceMonitor", "PodMonitor", "PrometheusRule")
    }
    for kind, field in (("ServiceMonitor", "serviceMonitor"), ("PodMonitor", "podMonitor"),
                        ("PrometheusRule", "rule")):
        selector, ns_selector = spec.get(f"{field}Selector"), spec.get(f"{field}NamespaceSelector")
        for ns, obj_labels in foreign[kind]:
            ns_ok = ns == proms[0].namespace if ns_selector is None else selects(ns_selector, labels.get(ns, {}))
            if not (ns_ok and selects(selector, obj_labels)):
                yield Finding("prometheus", describe(proms[0].obj),
                              f"{field}Selector={selector} {field}NamespaceSelector={ns_selector} does not select a "
                              f"{kind} labelled {dict(obj_labels)} in namespace {ns}")
                break


def check_grafana_secret(placed: Sequence[Placed]) -> Iterator[Finding]:
    """Grafana reads its admin user and password from the program's Secret; the chart renders no password."""
    deployments = [p for p in of_kind(placed, "Deployment") if "grafana" in p.obj["metadata"]["name"]
                   and p.origin.startswith("kube-prometheus-stack")]
    if len(deployments) != 1:
        yield Finding("grafana", "Grafana", f"{len(deployments)} Grafana Deployments, want 1")
        return
    grafana = deployments[0]
    secrets = {p.obj["metadata"]["name"]: p for p in of_kind(placed, "Secret") if p.namespace == grafana.namespace}
    env = {e["name"]: e.get("valueFrom", {}).get("secretKeyRef") for c in grafana.obj["spec"]["template"]["spec"]
           ["containers"] for e in c.get("env") or []}
    wanted = (("GF_SECURITY_ADMIN_USER", GRAFANA_USER_KEY), ("GF_SECURITY_ADMIN_PASSWORD", GRAFANA_PASSWORD_KEY))
    for var, key in wanted:
        ref = env.get(var)
        if not ref or ref.get("name") != GRAFANA_ADMIN_SECRET or ref.get("key") != key:
            yield Finding("grafana", describe(grafana.obj), f"{var} comes from {ref}, want Secret "
                          f"{GRAFANA_ADMIN_SECRET} key {key}")
    ours = secrets.get(GRAFANA_ADMIN_SECRET)
    if ours is None or ours.origin != "program":
        yield Finding("grafana", describe(grafana.obj), f"Secret {GRAFANA_ADMIN_SECRET} is not the program's")
    elif ("stringData" in ours.obj or "data" in ours.obj) and not {GRAFANA_USER_KEY, GRAFANA_PASSWORD_KEY} <= set(
        ours.obj.get("stringData") or ours.obj.get("data") or {}
    ):  # a plan redacts the whole field (recording_from_plan drops it): only a recording shows the keys
        yield Finding("grafana", describe(ours.obj), f"lacks keys {GRAFANA_USER_KEY}/{GRAFANA_PASSWORD_KEY}")
    for p in secrets.values():
        if p.origin != "program" and GRAFANA_PASSWORD_KEY in (p.obj.get("data") or p.obj.get("stringData") or {}):
            yield Finding("grafana", f"{p.origin}: {describe(p.obj)}", "the chart renders its own admin password")


def check_keda_metrics(placed: Sequence[Placed]) -> Iterator[Finding]:
    """Our ServiceMonitor for KEDA selects a rendered Service whose port exists and reaches the operator."""
    ours = [p for p in of_kind(placed, "ServiceMonitor") if p.origin == "program"
            and any(e.get("port") == KEDA_METRICS_PORT_NAME for e in p.obj["spec"].get("endpoints", []))]
    if not ours:
        yield Finding("keda", "ServiceMonitor", "no ServiceMonitor of the program scrapes KEDA's metrics port")
    for m in ours:
        spaces = _monitor_namespaces(m.obj, m.namespace)
        hits = [s for s in of_kind(placed, "Service") if (spaces is None or s.namespace in spaces)
                and selects(m.obj["spec"].get("selector"), s.obj["metadata"].get("labels") or {})]
        ports = {port.get("name"): port for s in hits for port in s.obj["spec"].get("ports", [])}
        if KEDA_METRICS_PORT_NAME not in ports:
            yield Finding("keda", describe(m.obj), f"selects Services {[describe(s.obj) for s in hits]} without a port "
                          f"named {KEDA_METRICS_PORT_NAME!r} (is prometheus.operator.enabled false?)")
            continue
        target = ports[KEDA_METRICS_PORT_NAME].get("targetPort")
        pods = [d for d in of_kind(placed, "Deployment") for s in hits if d.namespace == s.namespace
                and selects({"matchLabels": s.obj["spec"].get("selector") or {}},
                            d.obj["spec"]["template"]["metadata"].get("labels") or {})]
        container_ports = {cp.get(k) for d in pods for c in d.obj["spec"]["template"]["spec"]["containers"]
                           for cp in c.get("ports") or [] for k in ("name", "containerPort")}
        if target not in container_ports:
            yield Finding("keda", describe(m.obj), f"port {KEDA_METRICS_PORT_NAME} targets {target!r}, which no "
                          "selected operator pod exposes")


def check_exposure(placed: Sequence[Placed]) -> Iterator[Finding]:
    for p in placed:
        kind = p.obj.get("kind")
        if kind == "Ingress":
            yield Finding("exposure", f"{p.origin}: {describe(p.obj)}",
                          "an Ingress: nothing is exposed outside the cluster")
        if kind == "Service" and (p.obj.get("spec") or {}).get("type", "ClusterIP") != "ClusterIP":
            yield Finding("exposure", f"{p.origin}: {describe(p.obj)}", f"type {p.obj['spec']['type']}, want ClusterIP")
