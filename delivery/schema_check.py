"""The schema half of the render check: every object strictly against its schema, and the Pod Security level of
the namespace every pod lands in.

Built-in kinds are validated with kubernetes-validate's strict schemas at the cluster's version; custom resources
against the CRDs the charts install, with unknown fields refused (the API server would prune them); each chart's
values against its values.schema.json; every pod template against the `enforce` level of its namespace
(delivery/pod_security.py).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from delivery import pod_security
from delivery.placed_objects import Finding, Placed, describe, namespace_labels
from delivery.render import StackRender


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
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
        out["properties"] = {k: strict_schema(v) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = strict_schema(out[key])
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(out.get(key), list):
            out[key] = [strict_schema(s) for s in out[key]]
    return out


@functools.cache
def _crd_validator(crd_key: tuple[str, str, str], schema_json: str) -> Any:
    import jsonschema

    schema = strict_schema(json.loads(schema_json))
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
            yield Finding(check, f"{p.origin}: {describe(obj)}", detail)


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


def check_pod_security(placed: Sequence[Placed]) -> Iterator[Finding]:
    labels = namespace_labels(placed)
    for p in placed:
        pod = pod_security.pod_template(p.obj)
        if pod is None:
            continue
        where = f"{p.origin}: {describe(p.obj)}"
        if p.namespace not in labels:
            yield Finding("pod-security", where, f"lands in namespace {p.namespace!r}, which neither the program "
                          "nor a chart creates (its Pod Security level is unknown)")
            continue
        level = pod_security.enforce_level(labels[p.namespace])
        for v in pod_security.check(pod, level):
            yield Finding("pod-security", where,
                          f"namespace {p.namespace} enforces {level}; refused: {v.rule} ({v.level}): {v.detail}")
