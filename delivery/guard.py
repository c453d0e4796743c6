"""Stop a pull request whose change would replace the Gcore cluster or recreate one of its node pools.

Why this exists: the Gcore provider models every node pool inside the one `gcore:index/k8sv2:K8sv2`
resource, so `pulumi preview` shows a pool that the provider will delete and create again (new flavor,
public IPv4, kubelet or CRI-O config, a rename) as a plain *update*, exactly like a harmless
`maxNodeCount` bump. A bare-metal GPU pool takes 20-25 minutes to come back and is billed per hour, and a
cluster replacement takes every workload down (G-Core/terraform-provider-gcore v0.34.3, gcore/resource_gcore_k8sv2.go:
`ForceNew` fields and `resourceK8sV2Update`; docs/resources/k8sv2.md). Nobody should
find that out from a merged pull request.

The rules read two kinds of input with the same comparison (`compare_cluster`):
- `pulumi preview --json`: the engine's steps, each with `op`, `urn`, `oldState`/`newState` (type and
  inputs), `diffReasons`, `replaceReasons` and `detailedDiff` (pulumi/pulumi pkg/backend/display/json.go);
- two offline plan files (`python -m offline.plan`), for pull requests from forks that get no secrets:
  YAML with a `resources:` list of `{type, name, inputs, ...}`.

Pools are compared by name, as the provider matches them (PR #68), not by list position: removing the
first pool shifts every index in the engine's `detailedDiff`, but recreates nothing else.

    python -m delivery.guard preview preview.json [--stack dev] [--event "$GITHUB_EVENT_PATH"] [--out guard.md]
    python -m delivery.guard plan base.yaml head.yaml [--stack dev] [--event ...] [--allow]

Exit status: 0 nothing blocking, or allowed by the pull-request label `allow-gpu-pool-replacement` (read from
the event payload) or `--allow`; 1 blocked; 2 unreadable input (a failed preview must not pass the guard).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stacknames import CLUSTER_TYPE

ALLOW_LABEL = "allow-gpu-pool-replacement"
#: How `pulumi preview --json` renders a value that is only known after apply.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

#: Pool fields the provider cannot change in place: it deletes the pool and creates it again (`resourceK8sV2Update`
#: in gcore/resource_gcore_k8sv2.go at v0.34.3; the docs say "will trigger recreation of the cluster pool").
POOL_RECREATE_FIELDS = (
    "flavorId",
    "isPublicIpv4",
    "servergroupPolicy",
    "bootVolumeSize",
    "bootVolumeType",
    "crioConfig",
    "kubeletConfig",
)
#: Pool fields the provider updates in place (`pools.Update`): reported, never blocking.
POOL_IN_PLACE_FIELDS = ("minNodeCount", "maxNodeCount", "autoHealingEnabled", "labels", "taints")
#: Cluster fields that force a new cluster: ForceNew in the v0 schema (gcore/resource_gcore_k8sv2.go at v0.34.3);
#: project and region are RequiresReplace in v2 (internal/services/cloud_k8s_cluster/schema.go at v2.0.0-alpha.11)
#: and a cluster cannot move between them.
CLUSTER_REPLACE_FIELDS = (
    "name",
    "keypair",
    "projectId",
    "projectName",
    "regionId",
    "regionName",
    "fixedNetwork",
    "fixedSubnet",
    "podsIpPool",
    "servicesIpPool",
    "podsIpv6Pool",
    "servicesIpv6Pool",
    "isIpv6",
    "cni",
    "csi",
)
#: In-place cluster changes that still touch nodes: reported, never blocking.
CLUSTER_NOTABLE_FIELDS = {
    "version": "Kubernetes upgrade in place: every node, GPU nodes included, is replaced one at a time "
    "(needs quota for one extra node of each flavor; cannot be cancelled)",
    "autoscalerConfig": "cluster-autoscaler settings change in place",
}

GPU_POOL_IMPACT = "GPU pool would be recreated: 20–25 min outage, billed per hour"
VM_POOL_IMPACT = "pool would be recreated: its nodes are deleted and created again"
CLUSTER_IMPACT = (
    "the cluster, every node pool and every workload are deleted and created again "
    "(bare-metal GPU nodes take 20–25 min to return, billed per hour)"
)
#: Engine step ops that replace a resource (`--show-replacement-steps` splits `replace` into the other two).
REPLACE_OPS = frozenset({"replace", "create-replacement", "delete-replaced", "import-replacement"})

_POOL_PATH = re.compile(r"^pools\[(\d+)\](?:\.(\w+))?")


@dataclass(frozen=True)
class Finding:
    """One change to the cluster resource, as a reviewer should read it."""

    blocking: bool
    resource: str
    subject: str
    detail: str


# ----------------------------------------------------------------------------------------------------------------
# Comparison shared by the preview and the offline plan


def _clean(value: Any) -> Any:
    """Drop the Terraform bridge's `__defaults` bookkeeping, which is not a property of the cluster."""
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if k != "__defaults"}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _blank(value: Any) -> Any:
    """Absent, false and empty mean the same to the provider (API defaults), so they never count as a change."""
    return None if value is None or value is False or value in ("", {}, []) else value


def _differs(old: Mapping[str, Any], new: Mapping[str, Any], field: str) -> bool:
    return _blank(old.get(field)) != _blank(new.get(field))


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    if value == UNKNOWN:
        return "(known after apply)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Mapping | list):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _changes(old: Mapping[str, Any], new: Mapping[str, Any], fields: Sequence[str]) -> list[str]:
    return [f"`{f}` {_show(old.get(f))} → {_show(new.get(f))}" for f in fields if _differs(old, new, f)]


def _pool_impact(*pools: Mapping[str, Any]) -> str:
    """Bare-metal flavors (`bm…`) are the GPU pools here; VM pools come back in minutes."""
    bare_metal = any(str(pool.get("flavorId", "")).startswith("bm") for pool in pools)
    return GPU_POOL_IMPACT if bare_metal else VM_POOL_IMPACT


def _pools(inputs: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    pools = inputs.get("pools") or []
    return {str(p.get("name")): p for p in pools if isinstance(p, Mapping)}


def compare_cluster(resource: str, old_inputs: Mapping[str, Any], new_inputs: Mapping[str, Any]) -> list[Finding]:
    """What changing a K8sv2 resource's inputs from `old_inputs` to `new_inputs` does to the cluster and its pools."""
    old, new = _clean(old_inputs), _clean(new_inputs)
    findings: list[Finding] = []

    forced = _changes(old, new, CLUSTER_REPLACE_FIELDS)
    if forced:
        findings.append(
            Finding(True, resource, "cluster", f"would be replaced ({'; '.join(forced)}): {CLUSTER_IMPACT}")
        )
    for field, why in CLUSTER_NOTABLE_FIELDS.items():
        if _differs(old, new, field):
            findings.append(Finding(False, resource, "cluster", f"{'; '.join(_changes(old, new, [field]))}: {why}"))

    old_pools, new_pools = _pools(old), _pools(new)
    for name in sorted(old_pools.keys() - new_pools.keys()):
        flavor = _show(old_pools[name].get("flavorId"))
        findings.append(
            Finding(
                True,
                resource,
                f"pool `{name}`",
                f"would be deleted (removed or renamed; flavor {flavor}): {_pool_impact(old_pools[name])}",
            )
        )
    for name in sorted(new_pools.keys() - old_pools.keys()):
        pool = new_pools[name]
        findings.append(
            Finding(
                False,
                resource,
                f"pool `{name}`",
                f"would be created (flavor {_show(pool.get('flavorId'))}, "
                f"{_show(pool.get('minNodeCount'))}–{_show(pool.get('maxNodeCount'))} nodes)",
            )
        )
    for name in sorted(old_pools.keys() & new_pools.keys()):
        before, after = old_pools[name], new_pools[name]
        recreate = _changes(before, after, POOL_RECREATE_FIELDS)
        if recreate:
            findings.append(
                Finding(True, resource, f"pool `{name}`", f"{'; '.join(recreate)}: {_pool_impact(before, after)}")
            )
        in_place = _changes(before, after, POOL_IN_PLACE_FIELDS)
        if in_place:
            findings.append(Finding(False, resource, f"pool `{name}`", f"{'; '.join(in_place)} (in place)"))
    return findings


# ----------------------------------------------------------------------------------------------------------------
# `pulumi preview --json`


def _urn_parts(urn: str) -> tuple[str, str]:
    """(type, name) from `urn:pulumi:<stack>::<project>::<parent types$type>::<name>`."""
    parts = urn.split("::", 3)
    if len(parts) < 4:
        return "", urn
    return parts[2].rsplit("$", 1)[-1], parts[3]


def _step_type(step: Mapping[str, Any]) -> str:
    for state in ("newState", "oldState"):
        typ = (step.get(state) or {}).get("type")
        if typ:
            return str(typ)
    return _urn_parts(str(step.get("urn", "")))[0]


def _from_detailed_diff(resource: str, detailed_diff: Mapping[str, Any]) -> list[Finding]:
    """Fallback when a step carries no inputs: classify the engine's property paths (`pools[0].flavorId`)."""
    findings: list[Finding] = []
    for path in sorted(detailed_diff):
        match = _POOL_PATH.match(path)
        if not match:
            continue
        field = match.group(2)
        subject = f"pool #{match.group(1)}"
        if field is None or field == "name" or field in POOL_RECREATE_FIELDS:
            findings.append(Finding(True, resource, subject, f"`{path}` changes: {GPU_POOL_IMPACT}"))
        elif field in POOL_IN_PLACE_FIELDS:
            findings.append(Finding(False, resource, subject, f"`{path}` changes (in place)"))
    return findings


def check_preview(preview: Mapping[str, Any]) -> list[Finding]:
    """Findings for every K8sv2 step of a `pulumi preview --json` document."""
    findings: list[Finding] = []
    replaced: set[str] = set()
    for step in preview.get("steps") or []:
        if not isinstance(step, Mapping) or _step_type(step) != CLUSTER_TYPE:
            continue
        op, urn = step.get("op"), str(step.get("urn", ""))
        name = _urn_parts(urn)[1]
        if op in REPLACE_OPS:
            if urn in replaced:
                continue
            replaced.add(urn)
            reasons = step.get("replaceReasons") or sorted(
                path
                for path, diff in (step.get("detailedDiff") or {}).items()
                if str((diff or {}).get("kind", "")).endswith("-replace")
            )
            because = ", ".join(f"`{r}`" for r in reasons) or "reason not reported"
            findings.append(
                Finding(True, name, "cluster", f"would be replaced (because of {because}): {CLUSTER_IMPACT}")
            )
        elif op == "delete":
            findings.append(Finding(True, name, "cluster", f"would be deleted: {CLUSTER_IMPACT}"))
        elif op == "update":
            old = (step.get("oldState") or {}).get("inputs")
            new = (step.get("newState") or {}).get("inputs")
            if isinstance(old, Mapping) and isinstance(new, Mapping):
                found = compare_cluster(name, old, new)
            else:
                found = _from_detailed_diff(name, step.get("detailedDiff") or {})
            reasons = ", ".join(f"`{r}`" for r in step.get("diffReasons") or []) or "no property reported"
            findings.extend(found or [Finding(False, name, "cluster", f"updated in place ({reasons})")])
        elif op in ("create", "import"):
            findings.append(Finding(False, name, "cluster", f"would be {'imported' if op == 'import' else 'created'}"))
    return findings


# ----------------------------------------------------------------------------------------------------------------
# Offline plan (YAML: `resources:` list of {type, name, inputs, ...})


def _plan_clusters(plan: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        str(r.get("name")): r.get("inputs") or {}
        for r in plan.get("resources") or []
        if isinstance(r, Mapping) and r.get("type") == CLUSTER_TYPE
    }


def _renamed(old_plan: Mapping[str, Any], new_plan: Mapping[str, Any]) -> dict[str, str]:
    """Old cluster resource name -> new one, where the new resource is aliased to the old (name and parent): the
    engine moves the state over, so it is the same cluster under a new name, not a deletion and a creation."""
    old = {str(r.get("name")): str(r.get("parent")) for r in old_plan.get("resources") or []
           if isinstance(r, Mapping) and r.get("type") == CLUSTER_TYPE}
    out = {}
    for r in new_plan.get("resources") or []:
        if not (isinstance(r, Mapping) and r.get("type") == CLUSTER_TYPE):
            continue
        for alias in (r.get("options") or {}).get("aliases") or []:
            if isinstance(alias, Mapping) and old.get(str(alias.get("name"))) == alias.get("parent", r.get("parent")):
                out[str(alias["name"])] = str(r.get("name"))
    return out


def check_plans(old_plan: Mapping[str, Any], new_plan: Mapping[str, Any]) -> list[Finding]:
    """Findings between the desired states of two offline plans (base branch → pull request)."""
    old, new = _plan_clusters(old_plan), _plan_clusters(new_plan)
    for former, current in _renamed(old_plan, new_plan).items():
        if former not in new:
            old[current] = old.pop(former)
    findings = [
        Finding(True, name, "cluster", f"is no longer in the program, so `pulumi up` would delete it: {CLUSTER_IMPACT}")
        for name in sorted(old.keys() - new.keys())
    ]
    findings += [Finding(False, name, "cluster", "would be created") for name in sorted(new.keys() - old.keys())]
    for name in sorted(old.keys() & new.keys()):
        findings += compare_cluster(name, old[name], new[name])
    return findings


# ----------------------------------------------------------------------------------------------------------------
# Report and command line


def labels_from_event(event: Mapping[str, Any]) -> set[str]:
    """Label names of the pull request in a GitHub event payload (`$GITHUB_EVENT_PATH`)."""
    labels = (event.get("pull_request") or {}).get("labels") or []
    return {str(label["name"]) for label in labels if isinstance(label, Mapping) and label.get("name")}


def render_markdown(findings: Sequence[Finding], *, stack: str | None, allowed: bool, source: str) -> str:
    """The pull-request comment: verdict first, then one line per finding."""
    blocking = [f for f in findings if f.blocking]
    title = f"### Cluster and GPU pool guard{f' — `{stack}`' if stack else ''} ({source})"
    if blocking and allowed:
        verdict = (
            f"**ALLOWED by the `{ALLOW_LABEL}` label**: this change replaces the cluster or recreates a node pool. "
            "Merge only inside a maintenance window."
        )
    elif blocking:
        verdict = (
            "**BLOCKED**: this change replaces the cluster or recreates a node pool. If that is intended, "
            f"add the label `{ALLOW_LABEL}` to the pull request and plan a maintenance window; otherwise "
            "create a new pool under a new name, move the workloads, then remove the old pool."
        )
    elif findings:
        verdict = "**OK**: no replacement of the cluster or of a node pool; in-place changes below."
    else:
        verdict = "**OK**: no change to the Gcore cluster or its node pools."
    lines = [title, "", verdict]
    if findings:
        lines.append("")
        for f in sorted(findings, key=lambda f: (not f.blocking, f.resource, f.subject)):
            mark = "**blocking**" if f.blocking else "info"
            lines.append(f"- {mark} — `{f.resource}` {f.subject}: {f.detail}")
    return "\n".join(lines) + "\n"


def load_json(path: Path) -> Mapping[str, Any]:
    """A JSON object from `path`; OSError or ValueError when it cannot be read (callers exit 2)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def load_plan(path: Path) -> Mapping[str, Any]:
    """An offline plan file as a mapping; OSError or ValueError when it cannot be read (callers exit 2)."""
    import yaml  # only the plan mode needs PyYAML (a runtime dependency of the program)

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: expected a mapping with a `resources:` list")
    return data


def main(argv: Sequence[str] | None = None) -> int:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--stack", help="stack name for the report title")
    common.add_argument("--event", type=Path, help="GitHub event payload; its pull-request labels may allow the change")
    common.add_argument("--allow", action="store_true", help=f"allow blocking changes (as the `{ALLOW_LABEL}` label)")
    common.add_argument("--out", type=Path, help="also write the markdown report to this file")
    parser = argparse.ArgumentParser(prog="python -m delivery.guard", description=__doc__.splitlines()[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    preview = modes.add_parser("preview", parents=[common], help="check `pulumi preview --json` output")
    preview.add_argument("preview_json", type=Path)
    plan = modes.add_parser("plan", parents=[common], help="check two offline plans (base, then head)")
    plan.add_argument("old_plan", type=Path)
    plan.add_argument("new_plan", type=Path)
    args = parser.parse_args(argv)

    try:
        if args.mode == "preview":
            findings, source = check_preview(load_json(args.preview_json)), "pulumi preview"
        else:
            findings, source = check_plans(load_plan(args.old_plan), load_plan(args.new_plan)), "offline plan"
        labels = labels_from_event(load_json(args.event)) if args.event else set()
    except (OSError, ValueError) as exc:
        print(f"delivery.guard: cannot read input: {exc}", file=sys.stderr)
        return 2

    allowed = args.allow or ALLOW_LABEL in labels
    report = render_markdown(findings, stack=args.stack, allowed=allowed, source=source)
    print(report, end="")
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 1 if any(f.blocking for f in findings) and not allowed else 0


if __name__ == "__main__":
    sys.exit(main())
