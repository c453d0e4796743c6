"""The offline plan: complete, byte-stable, secret-free, and a diff that shows exactly what a config change does.

Pull requests from forks are reviewed on this file alone (preview.yml, offline-plan-review.sh), so a plan that
changed between two runs of the same commit, leaked a secret into a pull-request comment, or hid a change in
noise would mislead the reviewer; and the guard must block a GPU pool recreation seen only through it.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from delivery import guard
from offline import plan as offline_plan
from offline.engine import MOCK_KUBECONFIG, ROOT, Recording
from offline.plan import REDACTED, build_plan, plan_stack, render_mermaid, render_yaml
from stacknames import CLUSTER_COMPONENT
from tests.conftest import CLUSTER_RESOURCE, PROVIDER_RESOURCE, cluster_name

DASHBOARD = "kubernetes:core/v1:ConfigMap::monitoring-dashboard-gpu-autoscaling"
RULES = "kubernetes:monitoring.coreos.com/v1:PrometheusRule::monitoring-gpu-rules"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject::inference-scaledobject"


@pytest.fixture(scope="module")
def plans(recordings: dict[str, Recording]) -> dict[str, str]:
    """Each stack's plan text as the command writes it, from the session's recordings."""
    return {stack: render_yaml(build_plan(rec)) for stack, rec in recordings.items()}


def stack_config(stack: str, key: str, default: Any = None) -> Any:
    return yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"].get(f"gpu-autoscaling:{key}", default)


def cluster_ref(rec: Recording) -> str:
    return f"gcore:index/k8sv2:K8sv2::{CLUSTER_RESOURCE}"


def provider_ref(rec: Recording) -> str:
    return f"pulumi:providers:kubernetes::{PROVIDER_RESOURCE}"


def owners(text: str) -> list[str]:
    """For each line of a plan: `type::name` of the resource block it belongs to, `outputs`, or `` (header)."""
    out, owner, lines = [], "", text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("- type: "):
            owner = f"{line.removeprefix('- type: ')}::{lines[i + 1].removeprefix('  name: ')}"
        elif line == "outputs:":
            owner = "outputs"
        out.append(owner)
    return out


def changed_lines(base: str, head: str) -> dict[str, list[tuple[str, str]]]:
    """(old line, new line) per owner; fails if a change adds or removes lines instead of editing them."""
    old, new = base.splitlines(), head.splitlines()
    diff = "\n".join(difflib.unified_diff(old, new, "base", "head", lineterm="", n=0))
    where, changes = owners(base), defaultdict(list)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        assert tag == "replace" and i2 - i1 == j2 - j1, f"lines added or removed:\n{diff}"
        for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
            changes[where[i]].append((old[i], new[j]))
    return dict(changes)


def only_numbers_changed(old: str, new: str, allowed: set[tuple[str, str]]) -> bool:
    """The two lines differ only in numbers, and each differing number is one of the `allowed` (old, new) pairs."""
    split = re.compile(r"(\d+)")
    a, b = split.split(old), split.split(new)
    return len(a) == len(b) and all(x == y or (x, y) in allowed for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------------------------------------------------------
# Content


def test_plan_lists_every_resource_sorted_with_stable_references(rec: Recording) -> None:
    plan = build_plan(rec)
    resources = plan["resources"]
    refs = {f"{r['type']}::{r['name']}" for r in resources}
    root = f"pulumi:pulumi:Stack::gpu-autoscaling-{rec.stack}"

    assert plan["stack"] == rec.stack
    assert len(resources) == len(rec.resources) == len(refs)
    assert [(r["type"], r["name"]) for r in resources] == sorted((r.type, r.name) for r in rec.resources)
    for r in resources:
        # No mock URN survives: they name the first stack this process evaluated.
        assert r["parent"] in refs | {root}, r["name"]
        assert set(r["dependencies"]) <= refs and r["dependencies"] == sorted(r["dependencies"]), r["name"]
        assert "urn:pulumi" not in yaml.safe_dump(r)
    provider = provider_ref(rec)
    k8s = [r for r in resources if r["type"].startswith("kubernetes:")]
    assert k8s and {r["provider"] for r in k8s} == {provider}
    by_ref = {f"{r['type']}::{r['name']}": r for r in resources}
    assert by_ref[cluster_ref(rec)]["provider"] == "default"
    assert by_ref[provider]["propertyDependencies"]["kubeconfig"] == [cluster_ref(rec)]
    scaled_objects = [r for r in resources if r["type"] == "kubernetes:keda.sh/v1alpha1:ScaledObject"]
    assert all("kubernetes:helm.sh/v3:Release::keda-release" in r["dependencies"] for r in scaled_objects)


def test_plan_records_the_options_that_matter(rec: Recording) -> None:
    by_ref = {f"{r['type']}::{r['name']}": r for r in build_plan(rec)["resources"]}
    cluster = by_ref[cluster_ref(rec)]["options"]
    assert cluster["deleteBeforeReplace"] is True
    assert "customTimeouts" not in cluster  # ignored by the bridge for this provider: `timeouts` is an input
    assert by_ref[cluster_ref(rec)]["inputs"]["timeouts"] == {"create": "70m", "update": "105m"}
    workloads = rec.outputs["workloads"]
    deployments = [r for r in by_ref.values() if r["type"] == "kubernetes:apps/v1:Deployment"
                   and r["inputs"]["metadata"]["name"] in workloads]
    assert len(deployments) == len(workloads)
    # create: a node and one round; update: every round of the rollout (tests/test_timeouts.py has the numbers)
    assert all(int(d["options"]["customTimeouts"]["update"][:-1]) > int(d["options"]["customTimeouts"]["create"][:-1])
               > 45 for d in deployments)
    assert cluster.get("protect", False) is stack_config(rec.stack, "protect", False)
    secret = by_ref["kubernetes:core/v1:Secret::monitoring-grafana-admin"]["options"]
    assert secret["additionalSecretOutputs"] == ["data", "stringData"]
    # defaults are left out; what runs in the cluster is deleted with it
    assert by_ref["kubernetes:core/v1:Namespace::keda-ns"]["options"] == {"deletedWith": cluster_ref(rec)}
    assert "deletedWith" not in by_ref["pulumi:index:Stash::monitoring-grafana-password"]["options"]


def test_plan_yaml_round_trips_and_keeps_multiline_strings_as_blocks(rec: Recording) -> None:
    plan = build_plan(rec)
    text = render_yaml(plan)

    assert yaml.safe_load(text) == plan
    assert "gpu-autoscaling.json: |-\n        {\n" in text  # a dashboard diff shows the line that changed
    assert max(len(line) for line in text.splitlines()) < 2000  # no dashboard on one line
    query = next(iter(plan["outputs"]["workloads"].values()))["triggers"][0]["query"]
    assert f"query: {query}\n" in text  # long lines are not folded, so a changed word changes one line


def test_no_secret_value_reaches_the_plan_or_the_diagram(rec: Recording) -> None:
    plan = build_plan(rec)
    text = render_yaml(plan) + render_mermaid(plan)

    drawn = rec.get("monitoring-grafana-password", "pulumi:index:Stash").inputs["input"].value
    assert len(drawn) == 32 and drawn not in text
    assert "mock-token" not in text
    assert MOCK_KUBECONFIG.splitlines()[-1] not in text  # current-context: mock
    by_ref = {f"{r['type']}::{r['name']}": r for r in plan["resources"]}
    assert by_ref[provider_ref(rec)]["inputs"]["kubeconfig"] == REDACTED
    assert by_ref["kubernetes:core/v1:Secret::monitoring-grafana-admin"]["inputs"]["stringData"] == REDACTED
    assert plan["outputs"]["kubeconfig"] == plan["outputs"]["grafanaAdminPassword"] == REDACTED
    assert plan["outputs"]["clusterName"] == cluster_name(rec)  # only secrets are redacted


# ---------------------------------------------------------------------------------------------------------------
# Stable bytes


@pytest.mark.subprocess
def test_same_program_and_config_give_identical_bytes_in_any_process(
    recordings: dict[str, Recording], plans: dict[str, str], tmp_path: Path
) -> None:
    # Mock URNs carry the stack this process evaluated first: plan the other one in a fresh process, where
    # they differ, through the command the workflow runs.
    top = next(r for r in recordings["dev"].resources if r.type == "gpu-platform:index:GpuCluster")
    first = top.parent.rsplit("-", 1)[-1]
    stack = "prod" if first == "dev" else "dev"
    out = tmp_path / "plan" / f"{stack}.yaml"  # the folder does not exist yet

    result = subprocess.run(
        [sys.executable, "-m", "offline.plan", stack, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    text, diagram = plan_stack(stack)
    assert text == plans[stack]  # twice in this process
    assert out.read_text() == text
    assert out.with_suffix(".mmd").read_text() == diagram
    assert f"offline.plan: {stack}: {len(recordings[stack].resources)} resources" in result.stderr


def test_unknown_stack_and_invalid_config_exit_non_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert offline_plan.main(["staging", "--out", "-"]) == 2
    assert "Pulumi.staging.yaml" in err.getvalue()

    def invalid(stack: str, overrides: Any = None) -> Recording:
        from stackconfig import load_stack_config

        load_stack_config({})  # cluster missing
        raise AssertionError("unreachable")

    monkeypatch.setattr(offline_plan, "record_stack", invalid)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert offline_plan.main(["dev", "--out", "-"]) == 2
    assert "cluster: (not set) is required" in err.getvalue()


# ---------------------------------------------------------------------------------------------------------------
# One config value → exactly the expected lines


def test_raising_max_nodes_changes_the_pool_limit_its_outputs_and_what_is_derived_from_it(
    plans: dict[str, str],
) -> None:
    base = plans["dev"]
    head, _ = plan_stack("dev", {"gpuPool": {**stack_config("dev", "gpuPool"), "maxNodes": 3}})

    changes = changed_lines(base, head)

    cluster = "gcore:index/k8sv2:K8sv2::gpu-cluster"
    assert set(changes) == {cluster, DASHBOARD, RULES, "outputs"}
    assert changes[cluster] == [("      maxNodeCount: 2", "      maxNodeCount: 3")]
    pools = {p["name"]: p for p in next(r for r in yaml.safe_load(head)["resources"])["inputs"]["pools"]}
    assert (pools["gpu"]["maxNodeCount"], pools["system"]["maxNodeCount"]) == (3, 2)  # the GPU pool's line
    # `gpuPool` and its entry in `gpuPools` (whose hourly cost at maxNodes moves with it): 8 GPUs × 4.00 more.
    assert changes["outputs"] == [
        ("    maxGpus: 16", "    maxGpus: 24"), ("    maxNodes: 2", "    maxNodes: 3"),
        ("        max: 64", "        max: 96"), ("      maxGpus: 16", "      maxGpus: 24"),
        ("      maxNodes: 2", "      maxNodes: 3"),
    ]
    # The dashboard's pool row and the pool-at-maxNodes alert quote the limit; nothing else in them moves.
    for owner in (DASHBOARD, RULES):
        assert all(only_numbers_changed(old, new, {("2", "3")}) for old, new in changes[owner]), changes[owner]
    assert len(changes[RULES]) == 5


def test_changing_a_target_changes_the_threshold_its_outputs_and_the_views_of_it(plans: dict[str, str]) -> None:
    base = plans["dev"]
    (workload,) = stack_config("dev", "workloads")
    head, _ = plan_stack("dev", {"workloads": [{**workload, "targetUtilization": 70}]})

    changes = changed_lines(base, head)

    assert set(changes) == {SCALED_OBJECT, DASHBOARD, RULES, "outputs"}
    assert changes[SCALED_OBJECT] == [("          threshold: '60'", "          threshold: '70'")]
    assert changes["outputs"] == [("        threshold: '60'", "        threshold: '70'")]  # workloads.*.triggers
    for owner in (DASHBOARD, RULES):
        assert all(only_numbers_changed(old, new, {("60", "70")}) for old, new in changes[owner]), changes[owner]


# ---------------------------------------------------------------------------------------------------------------
# The guard reads these files


def guard_plans(tmp_path: Path, base: str, head: str) -> tuple[int, str]:
    (tmp_path / "base.yaml").write_text(base)
    (tmp_path / "head.yaml").write_text(head)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = guard.main(["plan", str(tmp_path / "base.yaml"), str(tmp_path / "head.yaml"), "--stack", "prod"])
    return status, out.getvalue()


def test_guard_blocks_a_gpu_flavor_change_seen_through_two_real_plans(tmp_path: Path, plans: dict[str, str]) -> None:
    base = plans["prod"]
    head, _ = plan_stack("prod", {"gpuPool": {**stack_config("prod", "gpuPool"), "flavor": "bm3-ai-1xlarge-a100-80-8"}})

    status, report = guard_plans(tmp_path, base, head)

    assert status == 1
    assert "**BLOCKED**" in report
    assert "`gpu-cluster` pool `gpu`: `flavorId` bm3-ai-1xlarge-h100-80-8 → bm3-ai-1xlarge-a100-80-8" in report


def test_guard_passes_a_max_nodes_change_seen_through_two_real_plans(tmp_path: Path, plans: dict[str, str]) -> None:
    base = plans["prod"]
    head, _ = plan_stack("prod", {"gpuPool": {**stack_config("prod", "gpuPool"), "maxNodes": 5}})

    status, report = guard_plans(tmp_path, base, head)

    assert status == 0
    assert "- info — `gpu-cluster` pool `gpu`: `maxNodeCount` 4 → 5 (in place)" in report


# ---------------------------------------------------------------------------------------------------------------
# Diagram


def test_diagram_has_components_as_subgraphs_and_dependencies_as_edges(rec: Recording) -> None:
    diagram = render_mermaid(build_plan(rec)).splitlines()
    declared = [m.group(1) for line in diagram if (m := re.match(r"\s+(?:subgraph )?(\w+)\[", line))]
    edges = [tuple(line.split()) for line in diagram if "-->" in line or "-.->" in line]
    name = CLUSTER_COMPONENT

    assert diagram[0] == "flowchart LR"
    assert len(declared) == len(set(declared)) == len(rec.resources)
    assert sum(line.strip().startswith("subgraph ") for line in diagram) == sum(
        line.strip() == "end" for line in diagram
    )
    assert {a for a, _, _ in edges} | {b for _, _, b in edges} <= set(declared)
    assert f"gpu_platform_index_GpuCluster_{name}" in {
        m.group(1) for line in diagram if (m := re.match(r"\s+subgraph (\w+)\[", line))
    }
    scaled_objects = [d for d in declared if d.startswith("kubernetes_keda_sh_v1alpha1_ScaledObject_")]
    assert scaled_objects
    for scaled_object in scaled_objects:  # destroyed before KEDA, which clears their finalizers
        assert ("kubernetes_helm_sh_v3_Release_keda_release", "-->", scaled_object) in edges
    assert (f"gcore_index_k8sv2_K8sv2_{name}_cluster", "-->", f"pulumi_providers_kubernetes_{name}_provider") in edges
    provider_edges = [b for a, arrow, b in edges if arrow == "-.->"]
    assert provider_edges and all(b.startswith("gpu_platform_") for b in provider_edges)  # via the components
    protected = [line for line in diagram if line.strip().startswith("class ")]
    protect = stack_config(rec.stack, "protect", False)
    assert protected == ([f"  class gcore_index_k8sv2_K8sv2_{name}_cluster protected"] if protect else [])
