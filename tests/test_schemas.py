"""What the program renders, validated against real schemas: Kubernetes' own, and KEDA's CRD (the render check's
own collection and strict CRD schemas, delivery/)."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from delivery.placed_objects import program_objects
from delivery.render import kube_version, unwrap
from delivery.schema_check import strict_schema
from offline.engine import Recording
from tests.chart_cache import crd as chart_crd

#: Kinds kubernetes-validate knows (the rest are custom resources, checked against their CRDs).
BUILTIN_API_VERSIONS = ("v1", "apps/v1", "policy/v1", "scheduling.k8s.io/v1")


def builtin_manifests(rec: Recording) -> list[dict[str, Any]]:
    """The program's own objects of built-in kinds, as the render check collects them (delivery/placed_objects)."""
    return [obj for obj in program_objects(rec) if obj["apiVersion"] in BUILTIN_API_VERSIONS]


def k8s_version(rec: Recording) -> str:
    """The cluster's Kubernetes minor as kubernetes-validate names its schemas (`1.35.0`)."""
    return kube_version(rec).removeprefix("v").rsplit(".", 1)[0] + ".0"


def test_builtin_kinds_validate_strictly(rec: Recording) -> None:
    version = k8s_version(rec)
    checked = 0
    for obj in builtin_manifests(rec):
        kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked >= 7


def test_strict_validation_catches_a_misspelled_field(recordings: dict[str, Recording]) -> None:
    rec = recordings["dev"]
    (bad,) = [obj for obj in builtin_manifests(rec) if obj["kind"] == "Deployment"]
    bad["spec"]["template"]["spec"]["tolerations"][0]["efect"] = "NoSchedule"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, k8s_version(rec), strict=True)


@pytest.fixture(scope="module")
def scaled_object_schema(recordings: dict[str, Recording]) -> dict[str, Any]:
    """The ScaledObject CRD as the pinned KEDA chart installs it (rendered from the chart cache)."""
    crd = chart_crd(recordings["dev"], "keda", "scaledobjects.keda.sh")
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return strict_schema(version["schema"]["openAPIV3Schema"])


def scaled_objects(rec: Recording) -> list[dict[str, Any]]:
    return [unwrap(dict(r.inputs)) for r in rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")]


@pytest.mark.charts
def test_scaled_objects_validate_against_the_keda_crd(rec: Recording, scaled_object_schema: dict[str, Any]) -> None:
    objects = scaled_objects(rec)
    assert objects
    for so in objects:
        jsonschema.validate(so, scaled_object_schema)
        # The CRD's CEL rule, which jsonschema cannot evaluate.
        assert so["spec"]["minReplicaCount"] <= so["spec"]["maxReplicaCount"]


@pytest.mark.charts
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
