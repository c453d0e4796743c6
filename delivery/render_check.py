"""Render check: the pinned charts rendered with the program's values, checked as the cluster would check them.

    python -m delivery.render_check <stack> [<stack>...] [--out report.md]

Evaluates the stack's program offline (offline/engine.py, the same graph `python -m offline.plan` writes),
renders its three Helm releases from the chart cache (delivery/render.py) and checks every object that would
reach the cluster, from the charts, from the GPU Operator at run time and from the program itself:

- strict schema validation: built-in kinds with kubernetes-validate at the cluster's version; custom resources
  against the CRDs the charts install, with unknown fields refused (the API server would prune them);
- each chart's values.schema.json (where it has one);
- Pod Security admission: every pod template against the `enforce` level of the namespace it lands in;
- the platform's wiring: one DCGM scrape path with `honorLabels` and our relabelings, the 10 s DCGM refresh,
  Prometheus selecting objects other releases created, Grafana's existing admin Secret, the KEDA metrics port
  our ServiceMonitor selects, ClusterIP Services only, no Ingress.

Exit 0: no violation; 1: violations (listed on stdout, and as Markdown in --out); 2: the stack or a chart could
not be read (the message says where the chart was looked for). No credentials, cluster or network needed.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delivery import pod_security
from delivery.render import RELEASE_TYPE, RenderedRelease, StackRender, render_stack, unwrap
from offline.engine import Recording
from renderers import dcgm
from renderers.chart_values import GRAFANA_ADMIN_SECRET, GRAFANA_PASSWORD_KEY, GRAFANA_USER_KEY, KEDA_METRICS_PORT_NAME

#: Pulumi type tokens of Kubernetes objects: `kubernetes:<group>/<version>:<Kind>`.
K8S_PREFIX = "kubernetes:"
NOT_OBJECTS = (RELEASE_TYPE, "pulumi:providers:kubernetes")
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Finding:
    check: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.where}: {self.detail}"


# ----------------------------------------------------------------------------------------------------------------
# The program's own Kubernetes objects, as manifests


def program_objects(rec: Recording) -> list[dict[str, Any]]:
    """Every Kubernetes object the program registers itself (not the releases), as a manifest."""
    out = []
    for res in rec.resources:
        if not res.type.startswith(K8S_PREFIX) or res.type in NOT_OBJECTS or not res.custom:
            continue
        group_version, _, kind = res.type.removeprefix(K8S_PREFIX).partition(":")
        group, _, version = group_version.partition("/")
        body = {k: v for k, v in unwrap(dict(res.inputs)).items() if k not in ("apiVersion", "kind")}
        api_version = res.inputs.get("apiVersion") or (version if group == "core" else f"{group}/{version}")
        out.append({"apiVersion": api_version, "kind": res.inputs.get("kind") or kind, **body})
    return out


def _where(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {ns}{meta.get('name')}"


@dataclass(frozen=True)
class Placed:
    """An object with the namespace it lands in (Helm puts namespaced objects without one in the release's)."""

    origin: str
    obj: Mapping[str, Any]
    namespace: str


def everything(rec: Recording, rendered: StackRender) -> list[Placed]:
    out = []
    by_chart = {r.release.chart: r.release.namespace for r in rendered.releases}
    for origin, obj in rendered.objects():
        chart = origin.split(" ", 1)[0]
        ns = (obj.get("metadata") or {}).get("namespace") or by_chart.get(chart, "")
        out.append(Placed(origin, obj, ns))
    for obj in program_objects(rec):
        out.append(Placed("program", obj, (obj.get("metadata") or {}).get("namespace") or ""))
    return out


def namespace_labels(placed: Sequence[Placed]) -> dict[str, dict[str, str]]:
    """Labels of every Namespace the program or a chart creates (plus the one the API server adds)."""
    out = {}
    for p in placed:
        if p.obj.get("kind") == "Namespace":
            meta = p.obj.get("metadata") or {}
            out[meta["name"]] = {**(meta.get("labels") or {}), NAMESPACE_NAME_LABEL: meta["name"]}
    return out


# ----------------------------------------------------------------------------------------------------------------
# Schemas


def _strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A CRD's structural schema as JSON Schema that refuses what the API server would prune or refuse.

    Kubernetes prunes fields a structural schema does not declare (unless x-kubernetes-preserve-unknown-fields),
    so `additionalProperties: false` turns a silently dropped field into an error; `nullable` allows null.
    """
    out = dict(schema)
    if out.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if out.get("type") == "object" and "properties" in out and not out.get("x-kubernetes-preserve-unknown-fields"):
        out.setdefault("additionalProperties", False)
    if "properties" in out:
        out["properties"] = {k: _strict(v) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = _strict(out[key])
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(out.get(key), list):
            out[key] = [_strict(s) for s in out[key]]
    return out


@functools.cache
def _crd_validator(crd_key: tuple[str, str, str], schema_json: str) -> Any:
    import jsonschema

    schema = _strict(json.loads(schema_json))
    # metadata is the API server's to check (ObjectMeta), not the CRD's.
    schema.get("properties", {}).pop("metadata", None)
    if "properties" in schema:
        schema["properties"]["apiVersion"] = {"type": "string"}
        schema["properties"]["kind"] = {"type": "string"}
        schema["properties"]["metadata"] = {"type": "object"}
    return jsonschema.Draft7Validator(schema)


def crd_schemas(crds: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], tuple[tuple[str, str, str], str]]:
    """(apiVersion, kind) -> (key, schema as JSON) for every served version of every CRD."""
    out = {}
    for crd in crds:
        spec = crd["spec"]
        for v in spec["versions"]:
            schema = (v.get("schema") or {}).get("openAPIV3Schema")
            if schema and v.get("served", True):
                key = (spec["group"], v["name"], spec["names"]["kind"])
                out[(f"{spec['group']}/{v['name']}", spec["names"]["kind"])] = (key, json.dumps(schema, sort_keys=True))
    return out


@functools.cache
def _builtin_validator(api_version: str, kind: str, version: str) -> Any:
    """kubernetes-validate's strict schema for a built-in kind, compiled once (its `validate()` reloads the
    whole definitions file on every call, which made a stack's check take seconds). Same files, same lookup
    as kubernetes_validate.utils.validate; None when the version has no such kind."""
    import re

    import jsonschema
    from kubernetes_validate import utils
    from referencing import Registry, Resource

    schema_version = [v for v in utils.all_versions() if utils.major_minor(v) <= utils.major_minor(version)][-1]
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema_dir = f"kubernetes-json-schema/v{schema_version}-local-strict"
    try:
        schema = utils.schema_contents(f"{schema_dir}/{kind.lower()}-{group}.json", version)
    except FileNotFoundError:
        return None
    registry = Resource.from_contents(_definitions(schema_dir, version)) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


@functools.cache
def _definitions(schema_dir: str, version: str) -> Any:
    from kubernetes_validate import utils

    return utils.schema_contents(f"{schema_dir}/_definitions.json", version)


def check_schemas(placed: Sequence[Placed], rendered: StackRender) -> Iterator[Finding]:
    schemas = crd_schemas(rendered.crds())
    for p in placed:
        obj = dict(p.obj)
        key = (str(obj.get("apiVersion")), str(obj.get("kind")))
        crd = schemas.get(key)
        for check, detail in _schema_errors(rendered.kube_version.removeprefix("v"), crd,
                                            json.dumps(obj, sort_keys=True, default=str)):
            yield Finding(check, f"{p.origin}: {_where(obj)}", detail)


@functools.lru_cache(maxsize=8192)
def _schema_errors(version: str, crd: tuple[tuple[str, str, str], str] | None, obj_json: str,
                   ) -> tuple[tuple[str, str], ...]:
    """(check, detail) per schema error of one object; cached, as most objects are the same in every render."""
    obj = json.loads(obj_json)
    if crd is not None:
        validator, check = _crd_validator(*crd), "crd-schema"
    else:
        validator, check = _builtin_validator(str(obj.get("apiVersion")), str(obj.get("kind")), version), "schema"
    if validator is None:
        return (("schema", f"no schema for {obj.get('apiVersion')} {obj.get('kind')} in Kubernetes {version} "
                 "nor in the charts' CRDs"),)
    out = []
    for err in sorted(validator.iter_errors(obj), key=str)[:5]:
        path = ".".join(str(x) for x in err.absolute_path)
        out.append((check, f"{path or '(root)'}: {err.message[:300]}"))
    return tuple(out)


def check_values_schemas(rendered: StackRender) -> Iterator[Finding]:
    import helm_python

    from delivery.render import load_chart

    for rel in rendered.releases:
        r = rel.release
        try:
            load_chart(r.chart, r.version).validate_schema(dict(r.values))
        except helm_python.HelmValuesError as err:
            yield Finding("values-schema", f"release {r.name} ({r.chart} {r.version})", str(err))


# ----------------------------------------------------------------------------------------------------------------
# Pod Security admission


def check_pod_security(placed: Sequence[Placed]) -> Iterator[Finding]:
    labels = namespace_labels(placed)
    for p in placed:
        pod = pod_security.pod_template(p.obj)
        if pod is None:
            continue
        where = f"{p.origin}: {_where(p.obj)}"
        if p.namespace not in labels:
            yield Finding("pod-security", where, f"lands in namespace {p.namespace!r}, which neither the program "
                          "nor a chart creates (its Pod Security level is unknown)")
            continue
        level = pod_security.enforce_level(labels[p.namespace])
        for v in pod_security.check(pod, level):
            yield Finding("pod-security", where, f"namespace {p.namespace} enforces {level}; refused: {v}")


# ----------------------------------------------------------------------------------------------------------------
# The platform's wiring


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


def _of_kind(placed: Sequence[Placed], *kinds: str) -> list[Placed]:
    return [p for p in placed if p.obj.get("kind") in kinds]


def check_dcgm_path(placed: Sequence[Placed], rendered: StackRender) -> Iterator[Finding]:
    """Exactly one scrape path for dcgm-exporter, with honorLabels and our relabelings; the 10 s refresh."""
    exporter_services = [p for p in _of_kind(placed, "Service")
                         if (p.obj["metadata"].get("labels") or {}).get("app") == dcgm.EXPORTER_APP_LABEL]
    exporter_pods = [p for p in _of_kind(placed, "DaemonSet")
                     if p.obj["metadata"].get("name") == dcgm.EXPORTER_SERVICE]
    paths = []
    for m in _of_kind(placed, "ServiceMonitor"):
        spaces = _monitor_namespaces(m.obj, m.namespace)
        for svc in exporter_services:
            if (spaces is None or svc.namespace in spaces) and selects(m.obj["spec"].get("selector"),
                                                                      svc.obj["metadata"].get("labels") or {}):
                paths.append(m)
    for m in _of_kind(placed, "PodMonitor"):
        spaces = _monitor_namespaces(m.obj, m.namespace)
        for ds in exporter_pods:
            pod_labels = ds.obj["spec"]["template"]["metadata"].get("labels") or {}
            if (spaces is None or ds.namespace in spaces) and selects(m.obj["spec"].get("selector"), pod_labels):
                paths.append(m)
    for p in _of_kind(placed, "Prometheus"):
        if p.obj.get("spec", {}).get("additionalScrapeConfigs"):
            paths.append(p)
    if len(paths) != 1:
        yield Finding("dcgm", "dcgm-exporter", f"{len(paths)} scrape paths "
                      f"({', '.join(_where(p.obj) for p in paths)}); exactly one (the GPU Operator's "
                      "ServiceMonitor) keeps every GPU series single")
    want = dcgm.service_monitor_values()
    for p in paths:
        if p.obj.get("kind") != "ServiceMonitor":
            continue
        for endpoint in p.obj["spec"]["endpoints"]:
            if endpoint.get("honorLabels") is not True:
                yield Finding("dcgm", _where(p.obj), "honorLabels is not true: the workload's pod/namespace labels "
                              "arrive as exported_pod/exported_namespace and KEDA's query finds nothing")
            missing = [r for r in want["relabelings"] if r not in (endpoint.get("relabelings") or [])]
            if missing:
                yield Finding("dcgm", _where(p.obj), f"relabelings {missing} are missing")
            if endpoint.get("interval") != dcgm.SCRAPE_INTERVAL:
                yield Finding("dcgm", _where(p.obj),
                              f"interval {endpoint.get('interval')!r}, want {dcgm.SCRAPE_INTERVAL}")
    if not exporter_pods:
        yield Finding("dcgm", "dcgm-exporter", "no dcgm-exporter DaemonSet (is dcgmExporter.enabled false?)")
    for ds in exporter_pods:
        for c in ds.obj["spec"]["template"]["spec"]["containers"]:
            if c["name"] != dcgm.EXPORTER_SERVICE:
                continue
            env = {e["name"]: e.get("value") for e in c.get("env") or []}
            if env.get("DCGM_EXPORTER_INTERVAL") != str(dcgm.EXPORTER_COLLECT_INTERVAL_MS):
                yield Finding("dcgm", _where(ds.obj), f"DCGM_EXPORTER_INTERVAL={env.get('DCGM_EXPORTER_INTERVAL')!r}, "
                              f"want {dcgm.EXPORTER_COLLECT_INTERVAL_MS} (the exporter's default refresh is 30 s)")


def check_prometheus_selectors(placed: Sequence[Placed]) -> Iterator[Finding]:
    """Prometheus must pick up ServiceMonitors, PodMonitors and rules that its own release did not create."""
    labels = namespace_labels(placed)
    proms = _of_kind(placed, "Prometheus")
    if len(proms) != 1:
        yield Finding("prometheus", "Prometheus", f"{len(proms)} Prometheus objects, want 1")
        return
    spec = proms[0].obj["spec"]
    # Objects of each kind this release did not create: ours, the operators', and one with no labels at all
    # in each namespace the program creates (what a workload team would add).
    foreign: dict[str, list[tuple[str, Mapping[str, str]]]] = {
        kind: [(p.namespace, p.obj["metadata"].get("labels") or {})
               for p in _of_kind(placed, kind) if not p.origin.startswith("kube-prometheus-stack")]
        + [(ns, {}) for ns in labels]
        for kind in ("ServiceMonitor", "PodMonitor", "PrometheusRule")
    }
    for kind, field in (("ServiceMonitor", "serviceMonitor"), ("PodMonitor", "podMonitor"),
                        ("PrometheusRule", "rule")):
        selector, ns_selector = spec.get(f"{field}Selector"), spec.get(f"{field}NamespaceSelector")
        for ns, obj_labels in foreign[kind]:
            ns_ok = ns == proms[0].namespace if ns_selector is None else selects(ns_selector, labels.get(ns, {}))
            if not (ns_ok and selects(selector, obj_labels)):
                yield Finding("prometheus", _where(proms[0].obj),
                              f"{field}Selector={selector} {field}NamespaceSelector={ns_selector} does not select a "
                              f"{kind} labelled {dict(obj_labels)} in namespace {ns}")
                break


def check_grafana_secret(placed: Sequence[Placed]) -> Iterator[Finding]:
    """Grafana reads its admin user and password from the program's Secret; the chart renders no password."""
    deployments = [p for p in _of_kind(placed, "Deployment") if "grafana" in p.obj["metadata"]["name"]
                   and p.origin.startswith("kube-prometheus-stack")]
    if len(deployments) != 1:
        yield Finding("grafana", "Grafana", f"{len(deployments)} Grafana Deployments, want 1")
        return
    grafana = deployments[0]
    secrets = {p.obj["metadata"]["name"]: p for p in _of_kind(placed, "Secret") if p.namespace == grafana.namespace}
    env = {e["name"]: e.get("valueFrom", {}).get("secretKeyRef") for c in grafana.obj["spec"]["template"]["spec"]
           ["containers"] for e in c.get("env") or []}
    wanted = (("GF_SECURITY_ADMIN_USER", GRAFANA_USER_KEY), ("GF_SECURITY_ADMIN_PASSWORD", GRAFANA_PASSWORD_KEY))
    for var, key in wanted:
        ref = env.get(var)
        if not ref or ref.get("name") != GRAFANA_ADMIN_SECRET or ref.get("key") != key:
            yield Finding("grafana", _where(grafana.obj), f"{var} comes from {ref}, want Secret "
                          f"{GRAFANA_ADMIN_SECRET} key {key}")
    ours = secrets.get(GRAFANA_ADMIN_SECRET)
    if ours is None or ours.origin != "program":
        yield Finding("grafana", _where(grafana.obj), f"Secret {GRAFANA_ADMIN_SECRET} is not the program's")
    elif ("stringData" in ours.obj or "data" in ours.obj) and not {GRAFANA_USER_KEY, GRAFANA_PASSWORD_KEY} <= set(
        ours.obj.get("stringData") or ours.obj.get("data") or {}
    ):  # a plan redacts the whole field (recording_from_plan drops it): only a recording shows the keys
        yield Finding("grafana", _where(ours.obj), f"lacks keys {GRAFANA_USER_KEY}/{GRAFANA_PASSWORD_KEY}")
    for p in secrets.values():
        if p.origin != "program" and GRAFANA_PASSWORD_KEY in (p.obj.get("data") or p.obj.get("stringData") or {}):
            yield Finding("grafana", f"{p.origin}: {_where(p.obj)}", "the chart renders its own admin password")


def check_keda_metrics(placed: Sequence[Placed]) -> Iterator[Finding]:
    """Our ServiceMonitor for KEDA selects a rendered Service whose port exists and reaches the operator."""
    ours = [p for p in _of_kind(placed, "ServiceMonitor") if p.origin == "program"
            and any(e.get("port") == KEDA_METRICS_PORT_NAME for e in p.obj["spec"].get("endpoints", []))]
    if not ours:
        yield Finding("keda", "ServiceMonitor", "no ServiceMonitor of the program scrapes KEDA's metrics port")
    for m in ours:
        spaces = _monitor_namespaces(m.obj, m.namespace)
        hits = [s for s in _of_kind(placed, "Service") if (spaces is None or s.namespace in spaces)
                and selects(m.obj["spec"].get("selector"), s.obj["metadata"].get("labels") or {})]
        ports = {port.get("name"): port for s in hits for port in s.obj["spec"].get("ports", [])}
        if KEDA_METRICS_PORT_NAME not in ports:
            yield Finding("keda", _where(m.obj), f"selects Services {[_where(s.obj) for s in hits]} without a port "
                          f"named {KEDA_METRICS_PORT_NAME!r} (is prometheus.operator.enabled false?)")
            continue
        target = ports[KEDA_METRICS_PORT_NAME].get("targetPort")
        pods = [d for d in _of_kind(placed, "Deployment") for s in hits if d.namespace == s.namespace
                and selects({"matchLabels": s.obj["spec"].get("selector") or {}},
                            d.obj["spec"]["template"]["metadata"].get("labels") or {})]
        container_ports = {cp.get(k) for d in pods for c in d.obj["spec"]["template"]["spec"]["containers"]
                           for cp in c.get("ports") or [] for k in ("name", "containerPort")}
        if target not in container_ports:
            yield Finding("keda", _where(m.obj), f"port {KEDA_METRICS_PORT_NAME} targets {target!r}, which no "
                          "selected operator pod exposes")


def check_exposure(placed: Sequence[Placed]) -> Iterator[Finding]:
    for p in placed:
        kind = p.obj.get("kind")
        if kind == "Ingress":
            yield Finding("exposure", f"{p.origin}: {_where(p.obj)}",
                          "an Ingress: nothing is exposed outside the cluster")
        if kind == "Service" and (p.obj.get("spec") or {}).get("type", "ClusterIP") != "ClusterIP":
            yield Finding("exposure", f"{p.origin}: {_where(p.obj)}", f"type {p.obj['spec']['type']}, want ClusterIP")


# ----------------------------------------------------------------------------------------------------------------
# Every values key we set is read by a template


def leaves(values: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, value) of every leaf; lists and empty maps are leaves (a list is replaced as a whole by Helm)."""
    for key, value in values.items():
        if isinstance(value, Mapping) and value:
            yield from leaves(value, (*path, key))
        else:
            yield (*path, key), value


def sentinel(value: Any) -> Any:
    """A different value of the same type, so a template that reads the key renders something else."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return f"{value}sentinel"
    if isinstance(value, list):
        return [] if value else ["sentinel"]
    if isinstance(value, Mapping):
        return {"sentinel": "sentinel"}
    return "sentinel"


def replaced(values: Mapping[str, Any], path: Sequence[str], new: Any) -> dict[str, Any]:
    out = dict(values)
    out[path[0]] = new if len(path) == 1 else replaced(out[path[0]], path[1:], new)
    return out


def unread_values(rel: RenderedRelease, skip: Callable[[tuple[str, ...], Any], bool] = lambda p, v: False,
                  ) -> Iterator[Finding]:
    """Each leaf of the release's values set to a sentinel: a leaf whose change leaves the render identical is
    read by no template (a misspelt or misplaced key, which these charts ignore silently)."""
    import helm_python

    base = rel.texts
    for path, value in leaves(rel.release.values):
        if skip(path, value):
            continue
        dotted = ".".join(path)
        try:
            changed = rel.render(replaced(rel.release.values, path, sentinel(value))) != base
        except helm_python.HelmRenderError:
            changed = True  # a template read the key (and failed on the sentinel)
        except helm_python.HelmValuesError as err:
            yield Finding("values-read", f"release {rel.release.name}", f"{dotted}: sentinel refused by the "
                          f"chart's values.schema.json ({err}); cannot tell whether a template reads it")
            continue
        if not changed:
            yield Finding("values-read", f"release {rel.release.name}", f"{dotted}={value!r} is read by no "
                          f"template of {rel.release.chart} {rel.release.version}: changing it changes nothing")


# ----------------------------------------------------------------------------------------------------------------


def check(rec: Recording, rendered: StackRender | None = None, values_read: bool = True) -> list[Finding]:
    """Every finding for one recorded stack; [] means the render check passes.

    `values_read=False` leaves out the per-key re-renders (one render per values leaf), which the tests run
    separately to keep the suite fast.
    """
    rendered = rendered or render_stack(rec)
    placed = everything(rec, rendered)
    return [
        *check_values_schemas(rendered), *check_schemas(placed, rendered), *check_pod_security(placed),
        *check_dcgm_path(placed, rendered), *check_prometheus_selectors(placed), *check_grafana_secret(placed),
        *check_keda_metrics(placed), *check_exposure(placed),
        *(f for rel in rendered.releases for f in (unread_values(rel) if values_read else ())),
    ]


def recording_from_plan(path: Path) -> Recording:
    """The resources of an offline plan (`python -m offline.plan <stack> --out <file>`) as a Recording.

    Lets the fork review (base branch code, .github/scripts/offline-plan-review.sh) check the pull request's
    plan as data, without running the pull request's program. Secrets are redacted in a plan (`[secret]`),
    which changes no check: they are never rendered into a chart.
    """
    from delivery.policy_check import read_plan
    from offline.engine import RecordedResource
    from offline.plan import REDACTED

    plan = read_plan(path)
    rec = Recording(str(plan.get("stack") or path.stem))
    for entry in plan["resources"]:
        ref = f"{entry['type']}::{entry['name']}"
        rec.resources.append(RecordedResource(
            type=entry["type"], name=entry["name"], urn=ref, custom=True, parent=str(entry.get("parent") or ""),
            provider=str(entry.get("provider") or ""), dependencies=tuple(entry.get("dependencies") or ()),
            property_dependencies={}, options=dict(entry.get("options") or {}),
            # A redacted field (`[secret]`) has lost its shape: leave it out rather than check a placeholder.
            inputs={k: v for k, v in (entry.get("inputs") or {}).items() if v != REDACTED},
        ))
    return rec


def _fetch_charts(rec: Recording) -> None:
    """The chart versions `rec` installs, into the cache (pins and stack overrides alike)."""
    from delivery import charts

    chart_of = {c.name: c for c in charts.PINNED}
    pins = sorted({(str(r.inputs["chart"]), str(r.inputs["version"])) for r in rec.of_type(RELEASE_TYPE)})
    unknown = [name for name, _ in pins if name not in chart_of]
    if unknown:
        raise ValueError(f"releases of charts {unknown} that stackconfig/versions.py does not know")
    charts.fetch(tuple((chart_of[name], version) for name, version in pins))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delivery.render_check", description=__doc__.split("\n")[0])
    parser.add_argument("stacks", nargs="*", help="stacks whose program is evaluated offline")
    parser.add_argument("--plan", type=Path, action="append", default=[],
                        help="an offline plan file to check instead of evaluating the program (repeatable)")
    parser.add_argument("--out", type=Path, help="also write the report as Markdown")
    args = parser.parse_args(argv)
    if not args.stacks and not args.plan:
        parser.error("name a stack or --plan <file>")

    from delivery.charts import ChartMissing
    from offline.engine import record_stack
    from stackconfig import ConfigError

    lines, failed = [], False
    for label, load in [*((s, functools.partial(record_stack, s)) for s in args.stacks),
                        *((str(p), functools.partial(recording_from_plan, p)) for p in args.plan)]:
        try:
            rec = load()
            _fetch_charts(rec)
            findings = check(rec)
        except (ConfigError, ChartMissing, OSError, ValueError) as err:
            print(f"render check of {label}: cannot run: {err}", file=sys.stderr)
            return 2
        failed |= bool(findings)
        head = f"Render check — `{rec.stack}`: " + (f"**{len(findings)} violation(s)**" if findings else "**OK**")
        print(head)
        for f in findings:
            print(f"  {f}")
        lines += [f"### {head}", "", *(f"- {f}" for f in findings), ""]
    if args.out:
        args.out.write_text("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
