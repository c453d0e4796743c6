"""Render the pinned Helm charts offline exactly as the program installs them, and what the operators add.

Why: the program hands values to three charts; only a render shows what those values do (a misplaced key is
ignored silently, a pod the namespace's Pod Security level refuses only fails on the cluster, 15 minutes into
a `pulumi up`). This module reads each `helm.v3.Release` from a recorded graph (offline/engine.py: chart,
version, release name, namespace and values as the program passes them), renders the archive from the chart
cache (delivery/charts.py) with helm-python-sdk (Helm v4's Go SDK; the same engine as `helm template`), at
the cluster's Kubernetes version and with the API versions of the CRDs the releases install, so templates
that test `.Capabilities` take the branch they take on the cluster.

The GPU Operator creates dcgm-exporter's DaemonSet, Service and ServiceMonitor at run time from its
ClusterPolicy; `operands()` builds them from the operator's `assets/` the way the operator's controller does
(NVIDIA/gpu-operator controllers/object_controls.go, `TransformDCGMExporter` and
`TransformDCGMExporterServiceMonitor`), so the checks see the one scrape path that really exists.
"""

from __future__ import annotations

import functools
import io
import json
import tarfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from delivery import charts
from offline.engine import Recording, Secret
from stacknames import CLUSTER_TYPE, RELEASE_TYPE

HOOK_ANNOTATION = "helm.sh/hook"


def unwrap(value: Any) -> Any:
    """Secrets become their (mock) value: a render needs the shape, and nothing leaves the process."""
    if isinstance(value, Secret):
        return unwrap(value.value)
    if isinstance(value, Mapping):
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unwrap(v) for v in value]
    return value


@dataclass(frozen=True)
class ReleaseInputs:
    """What the program asks Helm to install: one `helm.v3.Release` of the recorded graph."""

    resource: str
    chart: str
    version: str
    name: str
    namespace: str
    values: Mapping[str, Any]

    @property
    def values_json(self) -> str:
        return json.dumps(self.values, sort_keys=True)


def releases(rec: Recording) -> list[ReleaseInputs]:
    out = []
    for res in rec.of_type(RELEASE_TYPE):
        inputs = unwrap(res.inputs)
        out.append(ReleaseInputs(
            resource=res.name, chart=inputs["chart"], version=inputs["version"],
            name=inputs.get("name") or res.name, namespace=inputs.get("namespace") or "default",
            values=inputs.get("values") or {},
        ))
    return out


def kube_version(rec: Recording) -> str:
    """The cluster's Kubernetes version as the program sets it on the Gcore cluster (`v1.35.3`)."""
    (cluster,) = rec.of_type(CLUSTER_TYPE)
    return str(cluster.inputs["version"])


# ----------------------------------------------------------------------------------------------------------------
# Rendering (cached per process: the same inputs always give the same manifests)


@functools.cache
def load_chart(chart: str, version: str) -> Any:
    """The chart archive from the cache, loaded once per process (raises charts.ChartMissing)."""
    import helm_python

    return helm_python.Chart.load(charts.chart_archive(chart, version))


@functools.lru_cache(maxsize=2048)
def render_text(
    chart: str, version: str, values_json: str, name: str, namespace: str, kube: str, api_versions: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """`helm template` of one release: (template path, rendered text) pairs, sorted by path.

    helm-python-sdk's `Chart.render` does not expose `kube_version`/`api_versions`, which its native render
    options take (`helm_render` opts, the C ABI of helm-python-sdk 0.2.x); so the options go to it directly.
    Raises helm_python.HelmValuesError (values fail the chart's values.schema.json) or HelmRenderError.
    """
    from helm_python import _native

    opts = {"name": name, "namespace": namespace, "kube_version": kube, "api_versions": list(api_versions),
            "is_install": True}
    rendered = json.loads(_native.call_string("helm_render", load_chart(chart, version)._raw(), values_json,
                                              json.dumps(opts)))
    return tuple(sorted((path, text) for path, text in rendered.items()))


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader, reading a bare `=` as the string it is to Kubernetes (PyYAML resolves it to
    the YAML 1.1 `!!value` tag, which it cannot construct; CRDs carry `- =` in operator enums)."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


def parse(texts: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """Kubernetes objects of rendered templates (NOTES.txt and empty documents dropped). The objects are
    shared between calls (parsing the charts' CRDs dominates a render): treat them as read-only."""
    return [obj for path, text in texts for obj in _parse_one(path, text)]


@functools.lru_cache(maxsize=4096)
def _parse_one(path: str, text: str) -> tuple[dict[str, Any], ...]:
    if not path.endswith((".yaml", ".yml", ".json")):
        return ()
    docs = yaml.load_all(text, Loader=_Loader)  # noqa: S506 (a safe loader)
    return tuple(doc for doc in docs if isinstance(doc, dict) and doc.get("kind"))


@functools.cache
def chart_crds(chart: str, version: str) -> tuple[dict[str, Any], ...]:
    """The CRDs under the chart's and its subcharts' `crds/` (Helm installs them before the templates)."""
    return tuple(parse((c["filename"], c["data"]) for c in load_chart(chart, version).crds))


def crd_api_versions(crds: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """`group/version` and `group/version/Kind` of every served version, as Helm's `.Capabilities.APIVersions`."""
    out: set[str] = set()
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            if version.get("served", True):
                group_version = f"{spec['group']}/{version['name']}"
                out |= {group_version, f"{group_version}/{spec['names']['kind']}"}
    return tuple(sorted(out))


def is_crd(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "CustomResourceDefinition" and str(obj.get("apiVersion", "")).startswith(
        "apiextensions.k8s.io/")


@dataclass(frozen=True)
class RenderedRelease:
    release: ReleaseInputs
    #: CRDs the release installs (its `crds/` directories and CRDs rendered from templates).
    crds: tuple[dict[str, Any], ...]
    #: Every rendered object, hooks included, in the order Helm returns the templates.
    objects: tuple[dict[str, Any], ...]
    api_versions: tuple[str, ...]
    kube_version: str

    def render(self, values: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        """This release rendered again with other values (same name, namespace, version, capabilities)."""
        r = self.release
        return render_text(r.chart, r.version, json.dumps(values, sort_keys=True), r.name, r.namespace,
                           self.kube_version, self.api_versions)

    @property
    def texts(self) -> tuple[tuple[str, str], ...]:
        return self.render(self.release.values)


@dataclass(frozen=True)
class StackRender:
    stack: str
    kube_version: str
    releases: tuple[RenderedRelease, ...]
    #: Objects the GPU Operator creates at run time from its ClusterPolicy (see `operands`).
    operands: tuple[dict[str, Any], ...]

    def release(self, chart: str) -> RenderedRelease:
        (hit,) = [r for r in self.releases if r.release.chart == chart]
        return hit

    def objects(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(origin, object) for every object that reaches the cluster from the charts and the operators."""
        for rel in self.releases:
            for obj in rel.crds:
                yield f"{rel.release.chart} crds/", obj
            for obj in rel.objects:
                yield f"{rel.release.chart} release {rel.release.name}", obj
        for obj in self.operands:
            yield "gpu-operator (created at run time from its ClusterPolicy)", obj

    def crds(self) -> list[dict[str, Any]]:
        return [crd for rel in self.releases for crd in rel.crds]


def render_stack(rec: Recording) -> StackRender:
    """Every release of `rec` rendered as Helm would install it on the stack's cluster."""
    kube = kube_version(rec)
    inputs = releases(rec)
    # First pass without CRD capabilities, only to learn the CRDs that templates render (KEDA ships its
    # CRDs as templates); the second pass renders with all of them, as on a cluster where they exist.
    crds: dict[int, tuple[dict[str, Any], ...]] = {}
    for i, r in enumerate(inputs):
        first = parse(render_text(r.chart, r.version, r.values_json, r.name, r.namespace, kube, ()))
        crds[i] = chart_crds(r.chart, r.version) + tuple(o for o in first if is_crd(o))
    api_versions = crd_api_versions(c for group in crds.values() for c in group)
    rendered = []
    for r in inputs:
        objects = parse(render_text(r.chart, r.version, r.values_json, r.name, r.namespace, kube, api_versions))
        templated_crds = tuple(o for o in objects if is_crd(o))
        rendered.append(RenderedRelease(
            release=r, crds=chart_crds(r.chart, r.version) + templated_crds,
            objects=tuple(o for o in objects if not is_crd(o)), api_versions=api_versions, kube_version=kube,
        ))
    gpu = [r for r in rendered if r.release.chart == "gpu-operator"]
    ops = tuple(operands(gpu[0])) if gpu else ()
    return StackRender(rec.stack, kube, tuple(rendered), ops)


# ----------------------------------------------------------------------------------------------------------------
# What the GPU Operator creates from its ClusterPolicy


@functools.cache
def _assets(version: str) -> dict[str, tuple[dict[str, Any], ...]]:
    """The operator's `assets/<state>/*.yaml` at `version`, by state directory."""
    out: dict[str, list[dict[str, Any]]] = {}
    with tarfile.open(charts.gpu_operator_assets(version)) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 3 or not parts[2].endswith(".yaml"):
                continue
            fh = tar.extractfile(member)
            text = fh.read().decode() if fh else ""
            out.setdefault(parts[1], []).extend(parse([(parts[2], text)]))
    return {state: tuple(objs) for state, objs in out.items()}


def asset_objects(version: str, state: str) -> tuple[dict[str, Any], ...]:
    return _assets(version)[state]


def cluster_policy(rel: RenderedRelease) -> dict[str, Any]:
    (policy,) = [o for o in rel.objects if o.get("kind") == "ClusterPolicy"]
    return policy


def operands(rel: RenderedRelease) -> list[dict[str, Any]]:
    """dcgm-exporter's DaemonSet, Service and ServiceMonitor as the operator creates them in its namespace.

    Emulates NVIDIA/gpu-operator controllers/object_controls.go at the pinned tag: `TransformDCGMExporter`
    appends `spec.dcgmExporter.env` to the exporter container's environment and sets hostNetwork/hostPID, and
    the common DaemonSet transform replaces the pod's tolerations with `spec.daemonsets.tolerations` when set;
    `TransformDCGMExporterServiceMonitor` copies `interval`, `honorLabels`, `relabelings` onto the first
    endpoint and `additionalLabels` onto the object, and deletes the ServiceMonitor when it is not enabled.
    Fields the ClusterPolicy CRD does not declare never reach the operator (the API server prunes them):
    the render check validates the ClusterPolicy against its CRD strictly (delivery/render_check.py).
    """
    spec = cluster_policy(rel).get("spec", {}).get("dcgmExporter", {})
    if not spec.get("enabled", True):
        return []
    ns = rel.release.namespace
    out: list[dict[str, Any]] = []
    for obj in asset_objects(rel.release.version, "state-dcgm-exporter"):
        obj = json.loads(json.dumps(obj))
        kind = obj["kind"]
        if kind not in ("DaemonSet", "Service", "ServiceMonitor"):
            continue  # RBAC and OpenShift-only objects
        obj["metadata"]["namespace"] = ns
        if kind == "DaemonSet":
            pod = obj["spec"]["template"]["spec"]
            exporter = next(c for c in pod["containers"] if c["name"] == "nvidia-dcgm-exporter")
            exporter.setdefault("env", []).extend(spec.get("env", []))
            for flag in ("hostNetwork", "hostPID"):
                if spec.get(flag):
                    pod[flag] = True
            tolerations = cluster_policy(rel).get("spec", {}).get("daemonsets", {}).get("tolerations")
            if tolerations:
                pod["tolerations"] = tolerations
        if kind == "ServiceMonitor":
            monitor = spec.get("serviceMonitor") or {}
            if not monitor.get("enabled"):
                continue
            obj["spec"]["namespaceSelector"]["matchNames"] = [ns]
            endpoint = obj["spec"]["endpoints"][0]
            if monitor.get("interval"):
                endpoint["interval"] = monitor["interval"]
            if "honorLabels" in monitor:
                endpoint["honorLabels"] = monitor["honorLabels"]
            if monitor.get("relabelings"):
                endpoint["relabelings"] = monitor["relabelings"]
            obj["metadata"].setdefault("labels", {}).update(monitor.get("additionalLabels") or {})
        out.append(obj)
    return out


def dump(objects: Iterable[Mapping[str, Any]]) -> str:
    """Objects as one multi-document YAML stream (for reading a render by eye)."""
    buf = io.StringIO()
    yaml.safe_dump_all(list(objects), buf, sort_keys=False)
    return buf.getvalue()
