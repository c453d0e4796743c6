"""What the program sends to Gcore against the provider's real schemas, so a renamed or retyped field fails here.

Two fixtures:
- `pulumi-schema-v<pin>.json`: `pulumi package get-schema terraform-provider -- g-core/gcore <pin>` run on the real
  provider by the toolchain (`python -m realengine.gcore_sdk`; the real-engine suite checks that it and sdks/gcore
  are what the toolchain produces now), the Pulumi package the Any Terraform Provider makes of it (names, types,
  secrets);
- `terraform-schema-v<pin>.json`: `gcore_k8sv2`'s and `gcore_k8sv2_kubeconfig`'s Terraform schemas as read from
  the provider's Go source at that tag: ForceNew, defaults, descriptions, timeouts. ForceNew is not in what the
  provider serves over the plugin protocol, so this record is not regenerated: a new pin is read again by hand
  (docs/timeouts-and-recovery.md), and the real provider's replacements are checked end to end (e2e/).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from delivery.guard import CLUSTER_REPLACE_FIELDS, POOL_IN_PLACE_FIELDS, POOL_RECREATE_FIELDS
from offline.engine import Recording
from stackconfig import versions

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "gcore"
PULUMI = json.loads((FIXTURES / f"pulumi-schema-v{versions.GCORE_PROVIDER_VERSION}.json").read_text())
TERRAFORM = json.loads((FIXTURES / f"terraform-schema-v{versions.GCORE_PROVIDER_VERSION}.json").read_text())
K8SV2 = "gcore:index/k8sv2:K8sv2"
KUBECONFIG = "gcore:index/getK8sv2Kubeconfig:getK8sv2Kubeconfig"
JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "number": (int, float), "integer": int, "boolean": bool,
}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def unknown_fields(value: Any, spec: dict[str, Any], where: str) -> list[str]:
    """Every key (with its path) of `value` that the schema type `spec` does not have, or has another type."""
    if "$ref" in spec:
        return unknown_fields(value, PULUMI["types"][spec["$ref"].removeprefix("#/types/")], where)
    kind = spec.get("type")
    if kind == "object" and "properties" in spec:
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__} where the schema has an object"]
        out: list[str] = []
        for key, item in value.items():
            if key not in spec["properties"]:
                out.append(f"{where}.{key}: not in the schema")
            else:
                out += unknown_fields(item, spec["properties"][key], f"{where}.{key}")
        return out
    if kind == "object":  # a map
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__} where the schema has a map"]
        inner = spec.get("additionalProperties", {"type": "string"})
        return [p for k, v in value.items() for p in unknown_fields(v, inner, f"{where}[{k}]")]
    if kind == "array":
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} where the schema has a list"]
        return [p for i, v in enumerate(value) for p in unknown_fields(v, spec["items"], f"{where}[{i}]")]
    expected = JSON_TYPES.get(str(kind))
    if expected is not None and not isinstance(value, expected):
        return [f"{where}: {value!r} is not a {kind}"]
    return []


def plain(value: Any) -> Any:
    """Recorded inputs with secrets unwrapped (offline/engine.Secret)."""
    if hasattr(value, "value") and type(value).__name__ == "Secret":
        return plain(value.value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def test_every_cluster_input_the_program_sends_is_in_the_schema(rec: Recording) -> None:
    (cluster,) = rec.of_type(K8SV2)
    spec = {"type": "object", "properties": PULUMI["resources"][K8SV2]["inputProperties"]}
    assert unknown_fields(plain(dict(cluster.inputs)), spec, "K8sv2") == []
    missing = set(PULUMI["resources"][K8SV2].get("requiredInputs", [])) - set(cluster.inputs)
    assert missing == set()


def test_every_kubeconfig_argument_the_program_sends_is_in_the_schema(rec: Recording) -> None:
    invokes = [i for i in rec.invokes if i.token == KUBECONFIG]
    assert invokes
    fn = PULUMI["functions"][KUBECONFIG]
    for invoke in invokes:
        assert unknown_fields(plain(dict(invoke.args)), fn["inputs"], "getK8sv2Kubeconfig") == []
    # The program reads `kubeconfig` from the result: the schema must have it, and does not mark it secret.
    result = fn["outputs"]["properties"]
    assert "kubeconfig" in result and not result["kubeconfig"].get("secret")


def test_the_schema_check_catches_a_renamed_field(rec: Recording) -> None:
    """The check above would fail if Gcore renamed a pool field the program sends (here: flavorId)."""
    (cluster,) = rec.of_type(K8SV2)
    types = json.loads(json.dumps(PULUMI["types"]))
    pool = types["gcore:index/K8sv2Pool:K8sv2Pool"]["properties"]
    pool["flavor"] = pool.pop("flavorId")
    spec = {"type": "object", "properties": PULUMI["resources"][K8SV2]["inputProperties"]}
    saved = PULUMI["types"]
    try:
        PULUMI["types"] = types
        problems = unknown_fields(plain(dict(cluster.inputs)), spec, "K8sv2")
    finally:
        PULUMI["types"] = saved
    assert problems and all("flavorId: not in the schema" in p for p in problems)


def test_timeouts_are_create_and_update_only() -> None:
    """The resource declares create and update timeouts only (`Timeouts:` in resource_gcore_k8sv2.go)."""
    assert TERRAFORM["resources"]["gcore_k8sv2"]["timeouts_seconds"] == {"create": 3600, "update": 3600}
    timeouts = PULUMI["types"]["gcore:index/K8sv2Timeouts:K8sv2Timeouts"]["properties"]
    assert set(timeouts) == {"create", "update"}


def test_only_the_api_token_is_secret_in_the_provider_config() -> None:
    secret = {k for k, v in PULUMI["config"]["variables"].items() if v.get("secret")}
    assert secret == {"permanentApiToken"}


# --- what replaces things, as the preview guard (delivery/guard.py) knows it -------------------------------------


def force_new(schema: dict[str, Any], prefix: str = "") -> set[str]:
    out: set[str] = set()
    for name, attr in schema.items():
        if attr.get("force_new"):
            out.add(prefix + camel(name))
        inner = attr.get("elem", {}).get("resource")
        if inner and name != "pool":
            out |= force_new(inner["schema"], f"{prefix}{camel(name)}.")
    return out


def test_the_guard_knows_every_field_that_replaces_the_cluster() -> None:
    """ForceNew in the provider's schema: a change there makes a new cluster."""
    replacing = {f.split(".")[0] for f in force_new(TERRAFORM["resources"]["gcore_k8sv2"]["schema"])}
    assert replacing and replacing <= set(CLUSTER_REPLACE_FIELDS), replacing - set(CLUSTER_REPLACE_FIELDS)


def test_the_guard_knows_every_pool_field_and_what_it_does() -> None:
    """Pool fields are never ForceNew (the provider updates the cluster and deletes/recreates pools itself); their
    descriptions say which recreate the pool. Every settable pool field is classified by the guard."""
    pool = TERRAFORM["resources"]["gcore_k8sv2"]["schema"]["pool"]["elem"]["resource"]["schema"]
    assert not any(attr.get("force_new") for attr in pool.values())
    recreate = {camel(n) for n, a in pool.items() if "will trigger recreation of the cluster pool" in
                a.get("description", "")}
    # A renamed pool is another pool (the guard matches pools by name).
    assert recreate - {"name"} <= set(POOL_RECREATE_FIELDS)
    settable = {camel(n) for n, a in pool.items() if a.get("optional") or a.get("required")}
    assert settable - {"name"} == set(POOL_RECREATE_FIELDS) | set(POOL_IN_PLACE_FIELDS)


# --- the fixtures and the SDK belong together ----------------------------------------------------------------------


def test_the_sdk_was_generated_from_this_schema_at_the_pinned_versions() -> None:
    plugin = json.loads((ROOT / "sdks" / "gcore" / "pulumi_gcore" / "pulumi-plugin.json").read_text())
    param = PULUMI["parameterization"]
    assert plugin["name"] == param["baseProvider"]["name"] == "terraform-provider"
    assert plugin["version"] == param["baseProvider"]["version"]
    assert plugin["parameterization"] == {"name": "gcore", "version": PULUMI["version"], "value": param["parameter"]}
    package = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["packages"]["gcore"]
    assert package["parameters"] == ["g-core/gcore", PULUMI["version"]] == ["g-core/gcore", TERRAFORM["version"][1:]]


@pytest.mark.parametrize("name", ["k8sv2.py", "_inputs.py", "get_k8sv2_kubeconfig.py"])
def test_the_sdk_is_generated_not_edited(name: str) -> None:
    text = (ROOT / "sdks" / "gcore" / "pulumi_gcore" / name).read_text()
    assert re.search(r"WARNING: this file was generated by pulumi-language-python", text)
