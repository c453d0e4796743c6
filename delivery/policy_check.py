"""Run every policy of the pack over an offline plan, for pull requests that cannot run `pulumi preview`.

Why this exists: pull requests from forks and Dependabot get no secrets, so no `pulumi preview` runs for them
and `--policy-pack policy` never does either; only the offline plan diff and delivery.guard did. Re-running the
pull request's program with the pack would run untrusted code next to it, so the review job runs only the
base branch's code (its policies, its `policy/config/<stack>.json`) over the pull request's plan files, which
arrive as data: the YAML `python -m offline.plan <stack>` writes.

Each plan entry reaches the policies the way the Pulumi CLI and the Python analyzer present a resource
(pulumi_policy/policy.py `Analyze`, `AnalyzeStack`; the CLI's `ReconcilePolicyPackConfig`):
- props go through a protobuf `Struct` and `deserialize_properties`, so every number is a float, and are wrapped
  in `unknown_checking_proxy`; each policy gets its own copy;
- options: `protect`, `ignoreChanges`, `deleteBeforeReplace` (None unless set), custom timeouts in seconds,
  `additionalSecretOutputs` and the parent's URN; URNs are built as the engine builds them
  (`urn:pulumi:<stack>::<project>::<parent type chain>$<type>::<name>`);
- an explicit provider as a `PolicyProviderResource` with its props; stack policies get every resource with its
  parent, dependencies and property dependencies linked as objects;
- config: each policy starts from its own enforcement level and its schema's defaults, `all` sets every level,
  then a policy's entry (a level, or an object with `enforcementLevel` and properties) applies on top; a
  policy gets None (so `{}`) when it has no properties; `disabled` skips it, `remediate` counts as mandatory.

What the plan cannot give, so the policies see it differently from a real preview: secret values are the
string `[secret]`; a resource on its package's default provider gets no provider object (the plan does not name
the default provider's version); the root `pulumi:pulumi:Stack` resource is not in the plan; props are the
program's inputs, while a preview's stack policies see outputs (the inputs plus what the provider computes).

    python -m delivery.policy_check plan/prod.yaml --config policy/config/prod.json [--out report.md]

Exit status: 0 no mandatory violation (advisory ones are listed), 1 a mandatory violation, 2 the plan or the
config cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from delivery.guard import load_json, load_plan
from policy.gpu_policies import POLICIES
from stackconfig.units import go_duration_seconds

STACK_TYPE = "pulumi:pulumi:Stack"
#: policy/__main__.py builds the pack with this level (it cannot be imported: `PolicyPack(...)` blocks).
PACK_ENFORCEMENT_LEVEL = EnforcementLevel.MANDATORY
#: offline.plan's name for "the package's default provider"; older plans leave the field empty.
DEFAULT_PROVIDERS = frozenset({"default", ""})
#: Used in URNs when the plan names no root stack resource to read the project name from.
UNKNOWN_PROJECT = "project"

def seconds(duration: str) -> float:
    """A Pulumi custom timeout (`90m`, `1h30m`: a Go duration, as the engine parses it) in seconds, as the analyzer
    receives it; '' is 0."""
    if not duration:
        return 0.0
    value = go_duration_seconds(duration)
    if value is None:
        raise ValueError(f"custom timeout {duration!r} is not a duration")
    return value


def engine_value(value: Mapping[str, Any]) -> dict[str, Any]:
    """`value` as the analyzer deserializes it from the wire: through a protobuf Struct, numbers as floats."""
    try:
        struct = json_format.ParseDict(dict(value), struct_pb2.Struct())
    except (json_format.ParseError, TypeError) as exc:
        raise ValueError(f"not representable as engine properties: {exc}") from exc
    return deserialize_properties(json_format.MessageToDict(struct))


# ----------------------------------------------------------------------------------------------------------------
# Policy config, reconciled as the CLI does before `Configure`


@dataclass(frozen=True)
class PolicySetting:
    """What the CLI hands one policy: its enforcement level and its properties (None when it has none)."""

    level: EnforcementLevel
    properties: Mapping[str, Any] | None


def _level(key: str, value: Any) -> EnforcementLevel:
    try:
        return EnforcementLevel(value)
    except ValueError:
        raise ValueError(f"{key}: {value!r} is not an enforcement level") from None


def reconcile_config(raw: Mapping[str, Any], policies: Sequence[Policy] = POLICIES) -> dict[str, PolicySetting]:
    """Per-policy settings from a `--policy-pack-config` document, with the CLI's precedence and defaults."""
    given: dict[str, tuple[EnforcementLevel | None, dict[str, Any]]] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            given[key] = (_level(key, value), {})
        elif isinstance(value, Mapping):
            properties = {k: v for k, v in value.items() if k != "enforcementLevel"}
            level = _level(key, value["enforcementLevel"]) if "enforcementLevel" in value else None
            given[key] = (level, properties)
        else:
            raise ValueError(f"{key}: {value!r} is neither an enforcement level nor an object")

    all_level = given.get("all", (None, {}))[0]
    settings: dict[str, PolicySetting] = {}
    for policy in policies:
        level = all_level or policy.enforcement_level or PACK_ENFORCEMENT_LEVEL
        schema = policy.config_schema.properties if policy.config_schema else {}
        properties = {name: spec["default"] for name, spec in schema.items() if "default" in spec}
        own_level, own_properties = given.get(policy.name, (None, {}))
        properties.update(own_properties)
        settings[policy.name] = PolicySetting(own_level or level, engine_value(properties) if properties else None)
    return settings


def read_config(path: Path, policies: Sequence[Policy] = POLICIES) -> dict[str, PolicySetting]:
    """`policy/config/<stack>.json` as the CLI would configure the pack with it; ValueError when malformed."""
    return reconcile_config(load_json(path), policies)


# ----------------------------------------------------------------------------------------------------------------
# Offline plan → the analyzer's resources


def _is_refs(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(ref, str) for ref in value)


#: Each field the conversion reads, and what it must be when present (as `offline.plan` writes it).
_ENTRY_FIELDS: dict[str, tuple[str, Any]] = {
    "parent": ("a reference", lambda v: isinstance(v, str)),
    "provider": ("a reference", lambda v: isinstance(v, str)),
    "dependencies": ("a list of references", _is_refs),
    "propertyDependencies": (
        "a mapping of lists of references",
        lambda v: isinstance(v, Mapping) and all(_is_refs(refs) for refs in v.values()),
    ),
    "options": (
        "a mapping (`customTimeouts` a mapping too)",
        lambda v: isinstance(v, Mapping) and isinstance(v.get("customTimeouts") or {}, Mapping),
    ),
    "inputs": ("a mapping", lambda v: isinstance(v, Mapping)),
}


def read_plan(path: Path) -> Mapping[str, Any]:
    """An offline plan file, checked for the fields the conversion reads; OSError or ValueError otherwise.

    The file comes from the pull request, so a malformed one must end as "cannot read" (exit 2), not as a
    traceback whose status 1 would read as a policy violation.
    """
    plan = load_plan(path)
    resources = plan.get("resources")
    if not isinstance(resources, list):
        raise ValueError(f"{path}: `resources` must be a list")
    for index, entry in enumerate(resources):
        if not (
            isinstance(entry, Mapping) and isinstance(entry.get("type"), str) and isinstance(entry.get("name"), str)
        ):
            raise ValueError(f"{path}: resources[{index}] must be a mapping with a `type` and a `name`")
        for field, (expected, valid) in _ENTRY_FIELDS.items():
            if entry.get(field) is not None and not valid(entry[field]):
                raise ValueError(f"{path}: `{entry['type']}::{entry['name']}` `{field}` must be {expected}")
    return plan


class PlanGraph:
    """The resources of one plan with the URNs the engine would give them (plan references are `type::name`)."""

    def __init__(self, plan: Mapping[str, Any]) -> None:
        self.stack = str(plan.get("stack") or "stack")
        self.entries: dict[str, Mapping[str, Any]] = {f"{e['type']}::{e['name']}": e for e in plan["resources"]}
        roots = [ref for e in self.entries.values() if (ref := str(e.get("parent") or "")).startswith(STACK_TYPE)]
        root_name = roots[0].split("::", 1)[1] if roots else f"{UNKNOWN_PROJECT}-{self.stack}"
        self.project = root_name.removesuffix(f"-{self.stack}")
        self._qualified: dict[str, str] = {}
        self.ref_of = {self.urn(ref): ref for ref in self.entries}

    def _qualified_type(self, ref: str, seen: frozenset[str] = frozenset()) -> str:
        """The URN's type part: the parents' types joined by `$`, the root stack left out (as the engine does)."""
        if ref in self._qualified:
            return self._qualified[ref]
        if ref in seen:
            raise ValueError(f"parent cycle at {ref}")
        own_type = ref.rsplit("::", 1)[0]
        entry = self.entries.get(ref)
        parent = str(entry.get("parent") or "") if entry is not None else ""
        if not parent or parent.startswith(f"{STACK_TYPE}::"):
            qualified = own_type
        elif parent in self.entries:
            qualified = f"{self._qualified_type(parent, seen | {ref})}${own_type}"
        else:  # a component the plan does not list: its own type is all that is known
            qualified = f"{parent.rsplit('::', 1)[0]}${own_type}"
        self._qualified[ref] = qualified
        return qualified

    def urn(self, ref: str) -> str:
        """The engine's URN for a plan reference (`type::name`), the root stack included."""
        name = ref.rsplit("::", 1)[-1]
        typ = STACK_TYPE if ref.startswith(f"{STACK_TYPE}::") else self._qualified_type(ref)
        return f"urn:pulumi:{self.stack}::{self.project}::{typ}::{name}"

    def _options(self, entry: Mapping[str, Any]) -> PolicyResourceOptions:
        opts = entry.get("options") or {}
        timeouts = opts.get("customTimeouts") or {}
        parent = str(entry.get("parent") or "")
        return PolicyResourceOptions(
            protect=bool(opts.get("protect")),
            ignore_changes=list(opts.get("ignoreChanges") or []),
            delete_before_replace=True if opts.get("deleteBeforeReplace") else None,
            aliases=[],
            custom_timeouts=PolicyCustomTimeouts(
                *(seconds(str(timeouts.get(k) or "")) for k in ("create", "update", "delete"))
            ),
            additional_secret_outputs=list(opts.get("additionalSecretOutputs") or []),
            parent=self.urn(parent) if parent else None,
        )

    def _props(self, entry: Mapping[str, Any]) -> Any:
        return unknown_checking_proxy(engine_value(entry.get("inputs") or {}))

    def _provider(self, entry: Mapping[str, Any]) -> PolicyProviderResource | None:
        ref = str(entry.get("provider") or "")
        if ref in DEFAULT_PROVIDERS:
            return None
        typ, _, name = ref.rpartition("::")
        provider = self.entries.get(ref, {})
        return PolicyProviderResource(typ, self._props(provider), self.urn(ref), name)

    def policy_resources(self) -> list[PolicyResource]:
        """Fresh resources, linked to their parents and dependencies as `AnalyzeStack` links them."""
        built = {
            ref: PolicyResource(
                e["type"], self._props(e), self.urn(ref), e["name"], self._options(e), self._provider(e), None, [], {}
            )
            for ref, e in self.entries.items()
        }
        for ref, entry in self.entries.items():
            resource = built[ref]
            resource.parent = built.get(str(entry.get("parent") or ""))
            resource.dependencies = [built[d] for d in entry.get("dependencies") or [] if d in built]
            resource.property_dependencies = {
                key: [built[d] for d in refs if d in built]
                for key, refs in (entry.get("propertyDependencies") or {}).items()
            }
        return list(built.values())


# ----------------------------------------------------------------------------------------------------------------
# Running the pack


@dataclass(frozen=True)
class Violation:
    """One report of one policy: on a resource (`type::name`), or on the stack as a whole (None)."""

    policy: str
    description: str
    level: EnforcementLevel
    resource: str | None
    message: str

    @property
    def mandatory(self) -> bool:
        return self.level is EnforcementLevel.MANDATORY


class PolicyFailed(RuntimeError):
    """A policy raised instead of reporting: the pack cannot judge this plan (exit 2, as a failed preview)."""


async def _awaited(result: Any) -> None:
    await result


def _validate(
    policy: ResourceValidationPolicy | StackValidationPolicy,
    args: ResourceValidationArgs | StackValidationArgs,
    level: EnforcementLevel,
    where: str | None,
    graph: PlanGraph,
    into: list[Violation],
) -> None:
    """Call the policy as the analyzer does (an async `validate` is awaited) and collect what it reports.

    A report names a resource by URN, or by nothing: then it is about `where` (None for a stack policy).
    """

    def report(message: str, urn: str | None = None) -> None:
        resource = graph.ref_of.get(urn, urn) if urn else where
        into.append(Violation(policy.name, policy.description, level, resource, message))

    try:
        # run_policies pairs each policy with its kind of arguments (resource or stack).
        result = policy.validate(args, report)  # type: ignore[arg-type]
        if inspect.isawaitable(result):
            asyncio.run(_awaited(result))
    except Exception as exc:
        raise PolicyFailed(f"policy `{policy.name}` failed on {where or 'the stack'}: {exc!r}") from exc


def run_policies(
    plan: Mapping[str, Any], settings: Mapping[str, PolicySetting], policies: Sequence[Policy] = POLICIES
) -> list[Violation]:
    """Every violation the pack reports over `plan` with `settings` (from `read_config`), in pack order."""
    graph = PlanGraph(plan)
    violations: list[Violation] = []
    for policy in policies:
        setting = settings.get(policy.name) or PolicySetting(policy.enforcement_level or PACK_ENFORCEMENT_LEVEL, None)
        if setting.level is EnforcementLevel.DISABLED:
            continue
        level = EnforcementLevel.MANDATORY if setting.level is EnforcementLevel.REMEDIATE else setting.level
        config = dict(setting.properties) if setting.properties else None
        resources = graph.policy_resources()
        if isinstance(policy, ResourceValidationPolicy):
            for res in resources:
                args = ResourceValidationArgs(
                    res.resource_type, res.props, res.urn, res.name, res.opts, res.provider, config
                )
                _validate(policy, args, level, graph.ref_of[res.urn], graph, violations)
        elif isinstance(policy, StackValidationPolicy):
            _validate(policy, StackValidationArgs(resources, config), level, None, graph, violations)
    return violations


# ----------------------------------------------------------------------------------------------------------------
# Report and command line


def render_markdown(violations: Sequence[Violation], *, stack: str, resources: int, policies: int) -> str:
    """The pull-request comment section: verdict first, then each violated policy with its reports."""
    mandatory = sum(v.mandatory for v in violations)
    lines = [f"### Policy pack — `{stack}` (offline plan)", ""]
    if mandatory:
        lines.append(
            f"**FAILED**: {mandatory} mandatory violation{'s' if mandatory != 1 else ''}; "
            "`pulumi preview --policy-pack policy` would fail the same way. Fix the resources below."
        )
    elif violations:
        lines.append(f"**OK with advisories**: {len(violations)} advisory report(s), nothing mandatory.")
    else:
        lines.append(f"**OK**: {policies} policies, {resources} resources, no violation.")
    for name in dict.fromkeys(v.policy for v in violations):
        reported = [v for v in violations if v.policy == name]
        lines += ["", f"#### `{name}` ({reported[0].level.value})", "", reported[0].description, ""]
        for v in reported:
            where = f"`{v.resource}`" if v.resource else "stack"
            lines.append(f"- {where}: {' '.join(v.message.split())}")
    lines += [
        "",
        "_Checked on the offline plan: secret values are redacted and the cloud's computed values are unknown._",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delivery.policy_check", description=__doc__.splitlines()[0])
    parser.add_argument("plan", type=Path, help="offline plan YAML (`python -m offline.plan <stack> --out …`)")
    parser.add_argument("--config", type=Path, required=True, help="policy config, e.g. policy/config/prod.json")
    parser.add_argument("--out", type=Path, help="also write the markdown report to this file")
    args = parser.parse_args(argv)

    try:
        plan = read_plan(args.plan)
        settings = read_config(args.config)
        violations = run_policies(plan, settings)
    except (OSError, ValueError) as exc:
        print(f"delivery.policy_check: cannot read input: {exc}", file=sys.stderr)
        return 2
    except PolicyFailed as exc:
        print(f"delivery.policy_check: {exc}", file=sys.stderr)
        return 2

    report = render_markdown(
        violations,
        stack=str(plan.get("stack") or args.plan.stem),
        resources=len(plan["resources"]),
        policies=len(POLICIES),
    )
    print(report, end="")
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 1 if any(v.mandatory for v in violations) else 0


if __name__ == "__main__":
    sys.exit(main())
