"""The `pulumi_gcore` test double against the provider's schema snapshot, so the double cannot drift.

The snapshot (tests/fixtures/gcore/schema-v<pin>.json) is derived by scripts/gcore_schema_snapshot.py from the
provider's generated documentation. What the Pulumi Terraform bridge does to that schema, and this test expects
(pulumi/pulumi-terraform-bridge `pkg/tfbridge/names.go` and the dynamic bridge's `dynamic/info.go`):
- a list/set block without `MaxItems: 1` gets a plural name (`pool` -> `pools`), its element type the singular
  (`K8sv2PoolArgs`); a `MaxItems: 1` or single block becomes one object (`cni` -> `K8sv2CniArgs`);
- nested types `K8sv2<Path>Args` (inputs, with the block's read-only fields as optional inputs) and
  `outputs.K8sv2<Path>`; Terraform numbers are Python floats;
- the resource's `id` becomes the input/output `k8sv2_id` (the Pulumi id is separate);
- `SetAutonaming` makes the required `name` optional (the program always sets it);
- invoke arguments are all optional in Python; the function result holds every field.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from delivery.guard import CLUSTER_REPLACE_FIELDS, POOL_RECREATE_FIELDS
from stackconfig import versions
from tests.test_gcore_double import gcore

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gcore"
SNAPSHOT = json.loads((FIXTURES / f"schema-v{versions.GCORE_PROVIDER_VERSION}.json").read_text())
K8SV2 = SNAPSHOT["resources"]["gcore_k8sv2"]["fields"]
KUBECONFIG = SNAPSHOT["data_sources"]["gcore_k8sv2_kubeconfig"]["fields"]
PROVIDER = SNAPSHOT["provider"]["gcore"]["fields"]
#: Required in Terraform, optional in the SDK because the dynamic bridge auto-names it.
AUTONAMED = {"name"}
#: Python annotation fragment per Terraform type.
PY_TYPES = {"String": "str", "Number": "float", "Boolean": "bool", "Map of String": "Mapping[str",
            "Set of String": "Sequence[", "List of String": "Sequence["}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def pascal(name: str) -> str:
    return "".join(p.title() for p in name.split("_"))


def is_collection(field: dict[str, Any]) -> bool:
    return field.get("nesting") in ("list", "set") and field.get("max_items") != 1


def py_name(name: str, field: dict[str, Any]) -> str:
    if is_collection(field) and not name.endswith("s"):
        return f"{name}s"
    return name


def type_segment(name: str, field: dict[str, Any]) -> str:
    """`pools` -> `Pool`, `security_group_rules` -> `SecurityGroupRule`, `cni` -> `Cni`."""
    plural = py_name(name, field)
    return pascal(plural[:-1] if is_collection(field) else plural)


def blocks(fields: dict[str, Any], prefix: str = "K8sv2") -> Iterator[tuple[str, dict[str, Any]]]:
    """(type name without `Args`, fields) for every nested block, depth first."""
    for name, field in fields.items():
        if "block" in field:
            type_name = prefix + type_segment(name, field)
            yield type_name, field["block"]["fields"]
            yield from blocks(field["block"]["fields"], type_name)


def init_params(cls: Any) -> dict[str, inspect.Parameter]:
    params = inspect.signature(cls.__init__).parameters
    return {n: p for n, p in params.items() if n not in ("self", "__self__", "resource_name", "opts", "args",
                                                          "__props__")}


def required(params: dict[str, inspect.Parameter]) -> set[str]:
    return {n for n, p in params.items() if p.default is inspect.Parameter.empty}


def check_types(params: dict[str, inspect.Parameter], fields: dict[str, Any], where: str) -> None:
    for name, field in fields.items():
        param = params[py_name(name, field)]
        expected = PY_TYPES.get(field["type"])
        if expected is not None:
            assert expected in str(param.annotation), f"{where}.{name}: {param.annotation} is not {field['type']}"


# --- the resource ----------------------------------------------------------------------------------------------------


def test_k8sv2_arguments_match_the_provider() -> None:
    settable = {py_name(n, f) for n, f in K8SV2.items() if f["kind"] != "computed"}
    expected_required = {py_name(n, f) for n, f in K8SV2.items() if f["kind"] == "required"} - AUTONAMED
    for cls in (gcore.K8sv2Args, gcore.K8sv2):
        params = init_params(cls)
        assert set(params) == settable | {"k8sv2_id"}, cls.__name__
        assert required(params) == (expected_required if cls is gcore.K8sv2Args else set()), cls.__name__
        check_types(params, {n: f for n, f in K8SV2.items() if f["kind"] != "computed"}, cls.__name__)


def test_k8sv2_outputs_match_the_provider() -> None:
    outputs = {n for n, v in vars(gcore.K8sv2).items() if isinstance(v, property)}
    assert outputs == {"k8sv2_id" if n == "id" else py_name(n, f) for n, f in K8SV2.items()}


def test_k8sv2_nested_input_and_output_types_match_the_provider() -> None:
    found = list(blocks(K8SV2))
    assert {name for name, _ in found} >= {"K8sv2Pool", "K8sv2Cni", "K8sv2CniCilium", "K8sv2Timeouts"}
    for type_name, fields in found:
        args, out = getattr(gcore, f"{type_name}Args"), getattr(gcore.outputs, type_name)
        typed_dict = getattr(gcore, f"{type_name}ArgsDict")
        every = {py_name(n, f) for n, f in fields.items()}
        params = init_params(args)
        assert set(params) == every, f"{type_name}Args"
        assert required(params) == {py_name(n, f) for n, f in fields.items() if f["kind"] == "required"}, type_name
        assert set(typed_dict.__annotations__) == every, f"{type_name}ArgsDict"
        assert set(init_params(out)) == every, f"outputs.{type_name}"
        check_types(params, fields, f"{type_name}Args")


def test_timeouts_are_create_and_update_only() -> None:
    assert set(K8SV2["timeouts"]["block"]["fields"]) == {"create", "update"}
    assert set(init_params(gcore.K8sv2TimeoutsArgs)) == {"create", "update"}


# --- the kubeconfig function and the provider ------------------------------------------------------------------------


def test_kubeconfig_function_matches_the_data_source() -> None:
    settable = {n for n, f in KUBECONFIG.items() if f["kind"] != "computed"} | {"id"}
    for fn in (gcore.get_k8sv2_kubeconfig, gcore.get_k8sv2_kubeconfig_output):
        params = {n: p for n, p in inspect.signature(fn).parameters.items() if n != "opts"}
        assert set(params) == settable, fn.__name__
    result = {n for n, v in vars(gcore.GetK8sv2KubeconfigResult).items() if isinstance(v, property)}
    assert result == set(KUBECONFIG) == set(init_params(gcore.GetK8sv2KubeconfigResult))


def test_provider_configuration_matches_the_provider() -> None:
    params = init_params(gcore.ProviderArgs)
    assert set(params) == set(PROVIDER) == set(init_params(gcore.Provider))
    assert not required(params)
    check_types(params, PROVIDER, "ProviderArgs")
    assert {n for n, f in PROVIDER.items() if f.get("sensitive")} == {"permanent_api_token"}


# --- what replaces things, as the preview guard (delivery/guard.py) knows it -------------------------------------


def test_the_guard_knows_every_field_that_replaces_the_cluster_or_a_pool() -> None:
    cluster = {camel(n) for n, f in K8SV2.items() if f.get("replaces") == "resource"}
    assert cluster and cluster <= set(CLUSTER_REPLACE_FIELDS)
    pool = {camel(n) for n, f in K8SV2["pool"]["block"]["fields"].items() if f.get("replaces") == "pool"}
    # A renamed pool is another pool (the guard matches pools by name); every other field must be listed.
    assert pool - {"name"} and pool - {"name"} <= set(POOL_RECREATE_FIELDS)


# --- the snapshot script itself ------------------------------------------------------------------------------------

DOC = """
## Schema

### Required

- `name` (String) Cluster name.
- `pool` (Block List, Min: 1) (see [below for nested schema](#nestedblock--pool))

### Optional

- `timeouts` (Block, Optional) (see [below for nested schema](#nestedblock--timeouts))
- `token` (String, Sensitive) Secret.

### Read-Only

- `id` (String) The ID of this resource.

<a id="nestedblock--pool"></a>
### Nested Schema for `pool`

Required:

- `flavor_id` (String) Flavor. Changing the value of this attribute will trigger recreation of the cluster pool.

Read-Only:

- `node_count` (Number) Nodes.

<a id="nestedblock--timeouts"></a>
### Nested Schema for `timeouts`

Optional:

- `create` (String)

## Import
"""


def test_the_snapshot_script_reads_generated_docs() -> None:
    import scripts.gcore_schema_snapshot as script

    schema = script.parse(DOC)["fields"]
    assert schema["name"] == {"kind": "required", "type": "String"}
    assert schema["token"] == {"kind": "optional", "type": "String", "sensitive": True}
    assert schema["id"] == {"kind": "computed", "type": "String"}
    assert schema["pool"]["min_items"] == 1 and schema["pool"]["nesting"] == "list"
    assert schema["pool"]["block"]["fields"] == {
        "flavor_id": {"kind": "required", "type": "String", "replaces": "pool"},
        "node_count": {"kind": "computed", "type": "Number"},
    }
    assert schema["timeouts"]["nesting"] == "single"
    assert schema["timeouts"]["block"]["fields"] == {"create": {"kind": "optional", "type": "String"}}


def test_the_snapshot_records_the_pinned_version() -> None:
    assert SNAPSHOT["version"] == versions.GCORE_PROVIDER_VERSION
    assert re.fullmatch(r"https://github.com/G-Core/terraform-provider-gcore/tree/v[\d.]+/docs", SNAPSHOT["source"])
