"""The pull-request guard: recorded `pulumi preview --json` documents and offline plans in, verdict out.

The fixtures under tests/fixtures/preview/ have the shape of the CLI's preview digest (pulumi/pulumi
pkg/backend/display/json.go: `steps[].op/urn/oldState/newState/diffReasons/replaceReasons/detailedDiff`,
with the bridge's `__defaults` bookkeeping in the inputs); tests/fixtures/plan/dev.yaml has the shape
assumed for `python -m offline.plan`.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from delivery import guard  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
PREVIEW = FIXTURES / "preview"
LABELED_EVENT = FIXTURES / "github" / "pull_request_labeled.json"


def load_preview(name: str) -> dict[str, Any]:
    return json.loads((PREVIEW / f"{name}.json").read_text())


def cluster_step(preview: dict[str, Any]) -> dict[str, Any]:
    (step,) = [s for s in preview["steps"] if s["urn"].endswith("K8sv2::cluster")]
    return step


def new_pool(preview: dict[str, Any], name: str) -> dict[str, Any]:
    (pool,) = [p for p in cluster_step(preview)["newState"]["inputs"]["pools"] if p["name"] == name]
    return pool


def run_cli(*args: str | Path) -> tuple[int, str]:
    """`python -m delivery.guard ...` in-process; returns (exit status, markdown)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = guard.main([str(a) for a in args])
    return status, buffer.getvalue()


def write_json(tmp_path: Path, doc: dict[str, Any], name: str = "preview.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def blocking(findings: list[guard.Finding]) -> list[guard.Finding]:
    return [f for f in findings if f.blocking]


# ---------------------------------------------------------------------------------------------------------------
# Recorded previews: the five cases the pull-request workflow depends on


def test_gpu_flavor_change_fails_the_pull_request() -> None:
    status, report = run_cli("preview", PREVIEW / "gpu_flavor_change.json", "--stack", "dev")

    assert status == 1
    assert "**BLOCKED**" in report
    assert "pool `gpu`" in report
    assert "`flavorId` bm3-ai-1xlarge-h100-80-8 → bm3-ai-ndp2-1xlarge-h100-80-8" in report
    assert "GPU pool would be recreated: 20–25 min outage, billed per hour" in report
    assert guard.ALLOW_LABEL in report  # tells the author how to proceed deliberately


def test_gpu_flavor_change_passes_with_the_opt_in_label_from_the_event_payload() -> None:
    status, report = run_cli("preview", PREVIEW / "gpu_flavor_change.json", "--event", LABELED_EVENT)

    assert status == 0
    assert f"**ALLOWED by the `{guard.ALLOW_LABEL}` label**" in report
    assert "**blocking**" in report  # the change is still spelled out for the reviewer


def test_other_labels_do_not_allow_a_replacement(tmp_path: Path) -> None:
    event = json.loads(LABELED_EVENT.read_text())
    event["pull_request"]["labels"] = [
        lbl for lbl in event["pull_request"]["labels"] if lbl["name"] != guard.ALLOW_LABEL
    ]
    # The triggering `label` of a labeled event is not a label the PR still carries.
    status, _ = run_cli(
        "preview", PREVIEW / "gpu_flavor_change.json", "--event", write_json(tmp_path, event, "ev.json")
    )
    assert status == 1


def test_max_node_count_change_passes_with_an_info_line() -> None:
    status, report = run_cli("preview", PREVIEW / "gpu_max_nodes_change.json")

    assert status == 0
    assert "**OK**" in report
    assert "- info — `cluster` pool `gpu`: `maxNodeCount` 2 → 4 (in place)" in report
    assert "**blocking**" not in report


def test_cluster_replacement_by_keypair_change_fails() -> None:
    findings = guard.check_preview(load_preview("cluster_replace_keypair"))

    # The k8s provider and Helm release are replaced too, but only the cluster step is the guard's business.
    assert [(f.blocking, f.resource, f.subject) for f in findings] == [(True, "cluster", "cluster")]
    assert "would be replaced (because of `keypair`)" in findings[0].detail
    status, _ = run_cli("preview", PREVIEW / "cluster_replace_keypair.json")
    assert status == 1


def test_no_change_passes() -> None:
    assert guard.check_preview(load_preview("no_change")) == []
    status, report = run_cli("preview", PREVIEW / "no_change.json")
    assert status == 0
    assert "no change to the Gcore cluster or its node pools" in report


# ---------------------------------------------------------------------------------------------------------------
# Rules behind the verdicts


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("flavorId", "bm3-ai-1xlarge-a100-80-8"),
        ("isPublicIpv4", True),
        ("servergroupPolicy", "anti-affinity"),
        ("bootVolumeSize", 100),
        ("bootVolumeType", "ssd_hiiops"),
        ("crioConfig", {"default-ulimits": "nofile=1024:2048"}),
        ("kubeletConfig", {"podMaxPids": "4096"}),
    ],
)
def test_every_pool_recreating_field_blocks(field: str, value: Any) -> None:
    preview = load_preview("gpu_max_nodes_change")
    new_pool(preview, "gpu")["maxNodeCount"] = 2  # back to the recorded state, then change one field
    new_pool(preview, "gpu")[field] = value

    findings = guard.check_preview(preview)

    assert [(f.subject, f.blocking) for f in findings] == [("pool `gpu`", True)]
    assert f"`{field}`" in findings[0].detail


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("minNodeCount", 2),
        ("maxNodeCount", 8),
        ("autoHealingEnabled", True),
        ("labels", {"platform.gcore-gpu/pool": "gpu", "team": "ml"}),
        ("taints", {}),
    ],
)
def test_in_place_pool_fields_never_block(field: str, value: Any) -> None:
    preview = load_preview("gpu_max_nodes_change")
    new_pool(preview, "gpu")["maxNodeCount"] = 2
    new_pool(preview, "gpu")[field] = value

    findings = guard.check_preview(preview)

    assert findings and not blocking(findings)
    assert f"`{field}`" in findings[0].detail


def test_pools_are_matched_by_name_not_position() -> None:
    # Dropping the system pool shifts the GPU pool from index 1 to 0: the engine's positional detailedDiff
    # then lists pools[0].flavorId, but the provider matches pools by name and recreates nothing else.
    preview = load_preview("gpu_max_nodes_change")
    step = cluster_step(preview)
    step["newState"]["inputs"]["pools"] = [new_pool(preview, "gpu")]
    step["detailedDiff"] = {p: {"kind": "update", "inputDiff": False} for p in ("pools[0].flavorId", "pools[1]")}

    findings = guard.check_preview(preview)

    assert [(f.subject, f.blocking) for f in findings] == [("pool `system`", True), ("pool `gpu`", False)]
    assert "would be deleted" in findings[0].detail
    assert "pool would be recreated: its nodes are deleted and created again" in findings[0].detail


def test_renaming_the_gpu_pool_blocks_as_a_deletion() -> None:
    preview = load_preview("gpu_max_nodes_change")
    new_pool(preview, "gpu")["name"] = "gpu-h100"

    findings = guard.check_preview(preview)

    assert blocking(findings) == [
        guard.Finding(
            True,
            "cluster",
            "pool `gpu`",
            "would be deleted (removed or renamed; flavor bm3-ai-1xlarge-h100-80-8): " + guard.GPU_POOL_IMPACT,
        )
    ]
    assert any(f.subject == "pool `gpu-h100`" and "would be created" in f.detail for f in findings)


def test_explicit_defaults_are_not_changes() -> None:
    # `isPublicIpv4: false` dropped, `crioConfig: {}` added: the provider sees the same pool.
    preview = load_preview("gpu_max_nodes_change")
    pool = new_pool(preview, "gpu")
    pool["maxNodeCount"] = 2
    del pool["isPublicIpv4"]
    pool["crioConfig"] = {"__defaults": []}

    assert not blocking(guard.check_preview(preview))


def test_kubernetes_upgrade_is_reported_but_not_blocking() -> None:
    preview = load_preview("gpu_max_nodes_change")
    step = cluster_step(preview)
    step["newState"]["inputs"]["version"] = "v1.36.1"

    findings = guard.check_preview(preview)

    assert not blocking(findings)
    assert any("`version` v1.35.3 → v1.36.1: Kubernetes upgrade" in f.detail for f in findings)


def test_deleting_the_cluster_blocks() -> None:
    preview = load_preview("cluster_replace_keypair")
    step = cluster_step(preview)
    step["op"] = "delete"
    del step["newState"]

    assert [f.detail.split(":")[0] for f in guard.check_preview(preview)] == ["would be deleted"]


def test_replacement_steps_are_reported_once() -> None:
    # `--show-replacement-steps` shows create-replacement and delete-replaced instead of one `replace`.
    preview = load_preview("cluster_replace_keypair")
    step = cluster_step(preview)
    preview["steps"] = [dict(step, op="create-replacement"), dict(step, op="delete-replaced")]

    assert len(guard.check_preview(preview)) == 1


def test_detailed_diff_is_used_when_a_step_carries_no_inputs() -> None:
    preview = load_preview("gpu_flavor_change")
    step = cluster_step(preview)
    del step["oldState"]["inputs"]

    (finding,) = guard.check_preview(preview)
    assert finding.blocking
    assert "`pools[1].flavorId`" in finding.detail


def test_a_failed_preview_does_not_pass(tmp_path: Path) -> None:
    empty = tmp_path / "preview.json"
    empty.write_text("")  # `pulumi preview --json` crashed before printing its digest

    status, _ = run_cli("preview", empty)

    assert status == 2


@pytest.mark.subprocess
def test_module_entry_point_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "guard.md"
    result = subprocess.run(
        [sys.executable, "-m", "delivery.guard", "preview", str(PREVIEW / "gpu_flavor_change.json"), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert out.read_text() == result.stdout
    assert "**BLOCKED**" in result.stdout


# ---------------------------------------------------------------------------------------------------------------
# Offline plans (forks): the same rules on two desired states


@pytest.fixture
def base_plan() -> dict[str, Any]:
    return yaml.safe_load((FIXTURES / "plan" / "dev.yaml").read_text())


def plan_cluster(plan: dict[str, Any]) -> dict[str, Any]:
    (cluster,) = [r for r in plan["resources"] if r["type"] == guard.CLUSTER_TYPE]
    return cluster


def write_plans(tmp_path: Path, base: dict[str, Any], head: dict[str, Any]) -> tuple[Path, Path]:
    paths = tmp_path / "base.yaml", tmp_path / "head.yaml"
    for path, plan in zip(paths, (base, head), strict=True):
        path.write_text(yaml.safe_dump(plan, sort_keys=True))
    return paths


def test_plan_gpu_flavor_change_fails(tmp_path: Path, base_plan: dict[str, Any]) -> None:
    head = copy.deepcopy(base_plan)
    plan_cluster(head)["inputs"]["pools"][1]["flavorId"] = "bm3-ai-ndp2-1xlarge-h100-80-8"

    status, report = run_cli("plan", *write_plans(tmp_path, base_plan, head), "--stack", "dev")

    assert status == 1
    assert "(offline plan)" in report
    assert "GPU pool would be recreated" in report


def test_plan_gpu_flavor_change_passes_with_the_label(tmp_path: Path, base_plan: dict[str, Any]) -> None:
    head = copy.deepcopy(base_plan)
    plan_cluster(head)["inputs"]["pools"][1]["flavorId"] = "bm3-ai-ndp2-1xlarge-h100-80-8"

    status, _ = run_cli("plan", *write_plans(tmp_path, base_plan, head), "--event", LABELED_EVENT)

    assert status == 0


def test_plan_unchanged_and_max_nodes_pass(tmp_path: Path, base_plan: dict[str, Any]) -> None:
    assert guard.check_plans(base_plan, copy.deepcopy(base_plan)) == []
    head = copy.deepcopy(base_plan)
    plan_cluster(head)["inputs"]["pools"][1]["maxNodeCount"] = 4

    status, report = run_cli("plan", *write_plans(tmp_path, base_plan, head))

    assert status == 0
    assert "`maxNodeCount` 2 → 4 (in place)" in report


def test_plan_keypair_change_is_a_cluster_replacement(base_plan: dict[str, Any]) -> None:
    head = copy.deepcopy(base_plan)
    plan_cluster(head)["inputs"]["keypair"] = "gpu-platform-dev-2026"

    (finding,) = guard.check_plans(base_plan, head)

    assert finding.blocking and finding.subject == "cluster"
    assert "`keypair` gpu-platform-dev → gpu-platform-dev-2026" in finding.detail


def test_plan_renamed_cluster_resource_blocks_as_a_deletion(base_plan: dict[str, Any]) -> None:
    # Renaming the Pulumi resource without an alias makes `pulumi up` delete the old cluster.
    head = copy.deepcopy(base_plan)
    plan_cluster(head)["name"] = "gpu-cluster"

    findings = guard.check_plans(base_plan, head)

    assert [(f.resource, f.blocking) for f in findings] == [("cluster", True), ("gpu-cluster", False)]
    assert "`pulumi up` would delete it" in findings[0].detail


def test_unreadable_plan_exits_2(tmp_path: Path, base_plan: dict[str, Any]) -> None:
    base, head = write_plans(tmp_path, base_plan, base_plan)
    head.write_text("resources: [unclosed")

    status, _ = run_cli("plan", base, head)

    assert status == 2
