"""What the program renders, validated against real schemas: Kubernetes' own, and KEDA's CRD."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from offline.engine import Recording, Secret
from tests.chart_cache import crd as chart_crd

#: Kinds kubernetes-validate knows, by the Pulumi type token the program registers.
BUILTIN = {
    "kubernetes:core/v1:Namespace": ("v1", "Namespace"),
    "kubernetes:core/v1:Secret": ("v1", "Secret"),
    "kubernetes:core/v1:ConfigMap": ("v1", "ConfigMap"),
    "kubernetes:apps/v1:Deployment": ("apps/v1", "Deployment"),
    "kubernetes:policy/v1:PodDisruptionBudget": ("policy/v1", "PodDisruptionBudget"),
    "kubernetes:scheduling.k8s.io/v1:PriorityClass": ("scheduling.k8s.io/v1", "PriorityClass"),
}


def unwrap(value: Any) -> Any:
    """Secrets become placeholder strings: the schema checks shape, not content."""
    if isinstance(value, Secret):
        return unwrap(value.value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


def manifest(res: Any) -> dict[str, Any]:
    api_version, kind = BUILTIN[res.type]
    body = {k: v for k, v in unwrap(dict(res.inputs)).items() if k not in ("apiVersion", "kind")}
    return {"apiVersion": api_version, "kind": kind, **body}


def k8s_version(rec: Recording) -> str:
    cluster = next(r for r in rec.resources if r.type == "gcore:index/k8sv2:K8sv2")
    return cluster.inputs["version"].removeprefix("v").rsplit(".", 1)[0] + ".0"


def test_builtin_kinds_validate_strictly(rec: Recording) -> None:
    version = k8s_version(rec)
    checked = 0
    for res in rec.resources:
        if res.type in BUILTIN:
            kubernetes_validate.validate(manifest(res), version, strict=True)
            checked += 1
    assert checked >= 7


def test_strict_validation_catches_a_misspelled_field(recordings: dict[str, Recording]) -> None:
    rec = recordings["dev"]
    bad = manifest(rec.get("inference-deployment"))
    bad["spec"]["template"]["spec"]["tolerations"][0]["efect"] = "NoSchedule"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, k8s_version(rec), strict=True)


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """Kubernetes prunes fields a structural schema does not declare: reject them here instead."""
    schema = dict(schema)
    if schema.get("type") == "object" and "properties" in schema and not schema.get(
        "x-kubernetes-preserve-unknown-fields"
    ):
        schema.setdefault("additionalProperties", False)
    for key in ("properties",):
        if key in schema:
            schema[key] = {k: _strict(v) for k, v in schema[key].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            schema[key] = _strict(schema[key])
    return schema


@pytest.fixture(scope="module")
def scaled_object_schema(recordings: dict[str, Recording]) -> dict[str, Any]:
    """The ScaledObject CRD as the pinned KEDA chart installs it (rendered from the chart cache)."""
    crd = chart_crd(recordings["dev"], "keda", "scaledobjects.keda.sh")
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return _strict(version["schema"]["openAPIV3Schema"])


def scaled_objects(rec: Recording) -> list[dict[str, Any]]:
    return [unwrap(dict(r.inputs)) for r in rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")]


def test_scaled_objects_validate_against_the_keda_crd(rec: Recording, scaled_object_schema: dict[str, Any]) -> None:
    objects = scaled_objects(rec)
    assert objects
    for so in objects:
        jsonschema.validate(so, scaled_object_schema)
        # The CRD's CEL rule, which jsonschema cannot evaluate.
        assert so["spec"]["minReplicaCount"] <= so["spec"]["maxReplicaCount"]


def test_crd_schema_catches_a_misspelled_field(
    recordings: dict[str, Recording], scaled_object_schema: dict[str, Any]
) -> None:
    so = copy.deepcopy(scaled_objects(recordings["dev"])[0])
    so["spec"]["fallback"]["behaviour"] = so["spec"]["fallback"].pop("behavior")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(so, scaled_object_schema)
    so = copy.deepcopy(scaled_objects(recordings["dev"])[0])
    so["spec"]["fallback"]["behavior"] = "hold"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(so, scaled_object_schema)
