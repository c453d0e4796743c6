"""`python -m delivery.policy_check`: the policy pack over offline plan files, as the fork review job runs it.

The plans are the real ones (`offline.plan`'s functions over the program for dev and prod), written to files and
read back the way the review job reads the pull request's artifact; broken plans are those documents edited the
way a careless change would break them, then written by `render_yaml`. The stack config refuses a `latest` image
before any plan is written, so that case is an edit of the plan, as a hand-crafted plan from a fork could be.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs, StackValidationPolicy

from delivery.policy_check import PlanGraph, PolicyFailed, main, reconcile_config, run_policies
from offline.engine import ROOT, Recording
from offline.plan import build_plan, render_yaml
from policy import gpu_policies as gp
from tests.chart_cache import require_charts
from tests.conftest import STACKS

CONFIG = ROOT / "policy" / "config"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
CUSTOM_TAINT = "gpu.example.com/dedicated"


@pytest.fixture(scope="module")
def plans(recordings: dict[str, Recording]) -> dict[str, dict[str, Any]]:
    """Each stack's plan document, built once from the session's recordings."""
    return {stack: build_plan(rec) for stack, rec in recordings.items()}


Edit = Callable[[dict[str, Any]], object]


def write_plan(tmp_path: Path, plan: dict[str, Any], edits: dict[str, Edit] | None = None) -> Path:
    """The plan file `offline.plan` writes, after `edits` changed the inputs of the entries they name (`type::name`)."""
    plan = copy.deepcopy(plan)
    for ref, edit in (edits or {}).items():
        (entry,) = [e for e in plan["resources"] if f"{e['type']}::{e['name']}" == ref]
        edit(entry["inputs"])
    path = tmp_path / "plan.yaml"
    path.write_text(render_yaml(plan), encoding="utf-8")
    return path


def check(path: Path, stack: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    """Exit status and report of the command line for the plan at `path` with `stack`'s policy config."""
    status = main([str(path), "--config", str(CONFIG / f"{stack}.json"), *extra])
    return status, capsys.readouterr().out


def pod_spec(inputs: dict[str, Any]) -> dict[str, Any]:
    return inputs["spec"]["template"]["spec"]


def latest_image(inputs: dict[str, Any]) -> None:
    pod_spec(inputs)["containers"][0]["image"] = "registry.example.com/gpu-app:latest"


def no_gpu_limit(inputs: dict[str, Any]) -> None:
    pod_spec(inputs)["containers"][0]["resources"] = {"requests": {"cpu": "8"}}


# ---------------------------------------------------------------------------------------------------------------
# The stacks as they are


@pytest.mark.parametrize("stack", STACKS)
def test_the_real_plans_pass_every_policy(
    plans: dict[str, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str], stack: str
) -> None:
    status, report = check(write_plan(tmp_path, plans[stack]), stack, capsys, "--out", str(tmp_path / "report.md"))

    assert status == 0
    assert f"### Policy pack — `{stack}` (offline plan)" in report
    resources = len(plans[stack]["resources"])
    assert f"**OK**: {len(gp.POLICIES)} policies, {resources} resources, no violation." in report
    assert (tmp_path / "report.md").read_text() == report


@pytest.mark.subprocess
def test_the_command_runs_as_the_workflow_calls_it(plans: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    plan = write_plan(tmp_path, plans["prod"], {f"{DEPLOYMENT}::inference-deployment": latest_image})
    result = subprocess.run(
        [sys.executable, "-m", "delivery.policy_check", str(plan), "--config", str(CONFIG / "prod.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "#### `container-image-pinned` (mandatory)" in result.stdout


def test_resources_are_presented_as_the_analyzer_presents_them(plans: dict[str, dict[str, Any]]) -> None:
    """Engine URNs, numbers as floats, options, explicit providers and links (pulumi_policy `AnalyzeStack`)."""
    by_name = {r.name: r for r in PlanGraph(plans["prod"]).policy_resources()}
    urn = "urn:pulumi:prod::gpu-autoscaling::"

    cluster = by_name["gpu-cluster"]
    assert cluster.urn == f"{urn}gpu-platform:index:GpuCluster$gcore:index/k8sv2:K8sv2::gpu-cluster"
    (gpu_pool,) = [pool for pool in cluster.props["pools"] if pool["name"] == "gpu"]
    assert gpu_pool["maxNodeCount"] == 4 and isinstance(gpu_pool["maxNodeCount"], float)
    assert (cluster.opts.protect, cluster.opts.delete_before_replace) == (True, True)
    assert cluster.provider is None  # the gcore package's default provider
    assert cluster.parent is by_name["gpu"]
    assert cluster.opts.parent == f"{urn}gpu-platform:index:GpuCluster::gpu"
    assert by_name["gpu"].opts.parent == f"{urn}pulumi:pulumi:Stack::gpu-autoscaling-prod"
    assert by_name["gpu"].parent is None  # the root stack is not in the plan

    deployment = by_name["inference-deployment"]
    assert deployment.opts.delete_before_replace is None and deployment.opts.protect is False
    assert deployment.provider is not None
    assert (deployment.provider.resource_type, deployment.provider.name) == (
        "pulumi:providers:kubernetes",
        "gpu-provider",
    )
    assert deployment.provider.urn == by_name["gpu-provider"].urn
    assert deployment.provider.props["kubeconfig"] == "[secret]"
    # The Secret its pods read at start (secretEnv) and their PriorityClass are created before them.
    assert {d.name for d in deployment.dependencies} == {
        "workloads-inference", "gpu-operator-release", "inference-env-secret", "workload-priority-class"
    }
    assert [d.name for d in deployment.property_dependencies["metadata"]] == ["workloads-inference"]


def test_config_is_reconciled_as_the_cli_does() -> None:
    """Schema defaults first, `all`, then the policy's own entry; properties as the engine's floats."""
    settings = reconcile_config({"all": "advisory", "gpu-pool-hourly-budget": {"maxHourlyBudget": 64}})

    assert {s.level for s in settings.values()} == {EnforcementLevel.ADVISORY}
    assert settings["production-cluster-protected"].properties == {"requireProtect": False}  # schema default
    budget = settings["gpu-pool-hourly-budget"].properties
    assert budget == {"maxHourlyBudget": 64.0} and isinstance(budget["maxHourlyBudget"], float)
    assert settings["container-image-pinned"].properties is None
    with pytest.raises(ValueError, match="neither an enforcement level nor an object"):
        reconcile_config({"container-image-pinned": 3})


# ---------------------------------------------------------------------------------------------------------------
# Broken plans


def test_a_latest_image_fails_naming_the_policy_and_the_resource(
    plans: dict[str, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = write_plan(tmp_path, plans["prod"], {f"{DEPLOYMENT}::inference-deployment": latest_image})

    status, report = check(plan, "prod", capsys)

    assert status == 1
    assert "**FAILED**: 1 mandatory violation;" in report
    assert "#### `container-image-pinned` (mandatory)" in report
    assert f"- `{DEPLOYMENT}::inference-deployment`: Container `inference` of " in report
    assert "uses the `latest` tag (`registry.example.com/gpu-app:latest`)" in report


def test_the_report_is_markdown_with_one_section_per_violated_policy(
    plans: dict[str, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edits: dict[str, Edit] = {
        f"{DEPLOYMENT}::inference-deployment": latest_image,
        f"{SCALED_OBJECT}::embeddings-scaledobject": lambda inputs: inputs["spec"].pop("fallback"),
        f"{DEPLOYMENT}::embeddings-deployment": no_gpu_limit,
    }

    status, report = check(write_plan(tmp_path, plans["prod"], edits), "prod", capsys)

    assert status == 1
    assert report.startswith("### Policy pack — `prod` (offline plan)\n\n**FAILED**: 4 mandatory violations;")
    assert [line for line in report.splitlines() if line.startswith("#### ")] == [
        "#### `container-image-pinned` (mandatory)",
        "#### `scaledobject-safe-fallback` (mandatory)",
        "#### `gpu-scaled-workload-has-gpu-limit` (mandatory)",
        "#### `gpu-pool-workload-sets-gpu-limit` (mandatory)",
    ]
    assert (
        f"- `{SCALED_OBJECT}::embeddings-scaledobject`: ScaledObject batch/embeddings has no `spec.fallback`" in report
    )
    # A stack policy's report names the resource it points at, not the stack.
    assert f"- `{DEPLOYMENT}::embeddings-deployment`: ScaledObject batch/embeddings scales Deployment" in report


def test_a_custom_gpu_pool_taint_is_learned_from_the_plan(
    record: Callable[..., Recording], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The workloads tolerate the pool's own taint; one that reaches the pool by it alone needs a GPU limit."""
    pool = {
        "flavor": "bm3-ai-1xlarge-h100-80-8",
        "minNodes": 1,
        "maxNodes": 2,
        "taints": {CUSTOM_TAINT: "true:NoSchedule"},
    }
    plan = build_plan(record("dev", gpuPool=pool))
    assert check(write_plan(tmp_path, plan), "dev", capsys)[0] == 0

    def by_toleration_without_gpu_limit(inputs: dict[str, Any]) -> None:
        no_gpu_limit(inputs)
        spec = pod_spec(inputs)
        assert [t["key"] for t in spec["tolerations"]] == [CUSTOM_TAINT]
        spec["nodeSelector"] = {}

    status, report = check(
        write_plan(tmp_path, plan, {f"{DEPLOYMENT}::inference-deployment": by_toleration_without_gpu_limit}),
        "dev",
        capsys,
    )

    assert status == 1
    assert "#### `gpu-pool-workload-sets-gpu-limit` (mandatory)" in report
    assert (
        f"- `{DEPLOYMENT}::inference-deployment`: gpu-workloads/inference runs on the GPU pool (tolerates its "
        f"taint `{CUSTOM_TAINT}`)" in report
    )


@pytest.mark.subprocess
@pytest.mark.charts
def test_the_fork_review_script_reports_and_flags_a_violation(plans: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    """.github/scripts/offline-plan-review.sh in this checkout (the base), with the pull request's plan as data."""
    require_charts()  # its render check reads the chart cache
    head = tmp_path / "head"
    head.mkdir()
    write_plan(head, plans["dev"], {f"{DEPLOYMENT}::inference-deployment": latest_image}).rename(head / "dev.yaml")
    event, output = tmp_path / "event.json", tmp_path / "github_output"
    event.write_text(json.dumps({"pull_request": {"number": 7, "labels": []}}))
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(output),
        "PR_NUMBER": "7",
    }
    script = ROOT / ".github" / "scripts" / "offline-plan-review.sh"

    result = subprocess.run(
        ["bash", str(script), str(tmp_path / "base"), str(head), str(tmp_path / "comment"), "dev"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr  # the workflow's next step fails the job on the output
    assert output.read_text().splitlines() == ["blocked=false", "policy_violated=true"]
    comment = (tmp_path / "comment" / "comment.md").read_text()
    assert "### Policy pack — `dev` (offline plan)\n\n**FAILED**: 1 mandatory violation;" in comment
    assert f"- `{DEPLOYMENT}::inference-deployment`: Container `inference` of " in comment
    diff = comment.split("````diff\n", 1)[1].split("````", 1)[0].splitlines()
    changed = [line.replace(" ", "") for line in diff if line.startswith(("+ ", "- "))]
    assert changed == ["-image:registry.example.com/gpu-app:1.4.2", "+image:registry.example.com/gpu-app:latest"]


def test_the_fork_review_job_installs_the_pack_and_fails_on_the_output() -> None:
    review = yaml.safe_load((ROOT / ".github" / "workflows" / "preview.yml").read_text())["jobs"]["offline-plan-review"]
    runs = [step.get("run", "") for step in review["steps"]]
    assert any("pip install" in run and "-r policy/requirements.txt" in run for run in runs)  # pulumi-policy
    (fail,) = [step for step in review["steps"] if "outputs.policy_violated == 'true'" in step.get("if", "")]
    assert "!cancelled()" in fail["if"] and "exit 1" in fail["run"]


# ---------------------------------------------------------------------------------------------------------------
# Unreadable input and the config's enforcement levels


@pytest.mark.parametrize(
    "content",
    [
        None,
        "resources: [\n",
        "- just\n- a list\n",
        "stack: dev\nresources:\n- name: no-type\n",
        "stack: dev\nresources:\n- {type: t, name: n, options: 3}\n",
        "stack: dev\nresources:\n- {type: t, name: n, options: {customTimeouts: 90m}}\n",
        "stack: dev\nresources:\n- {type: t, name: n, inputs: {a: 2020-01-01}}\n",
    ],
    ids=[
        "missing",
        "bad-yaml",
        "not-a-mapping",
        "entry-without-type",
        "options-not-a-mapping",
        "timeouts-not-a-mapping",
        "not-engine-values",
    ],
)
def test_an_unreadable_plan_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None) -> None:
    plan = tmp_path / "plan.yaml"
    if content is not None:
        plan.write_text(content)

    status = main([str(plan), "--config", str(CONFIG / "dev.json")])

    assert status == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "delivery.policy_check: cannot read input:" in captured.err


@pytest.mark.parametrize(
    ("config", "status", "level"),
    [
        ({"all": "advisory"}, 0, "advisory"),
        ({"all": "mandatory", "container-image-pinned": {"enforcementLevel": "advisory"}}, 0, "advisory"),
        ({"all": "advisory", "container-image-pinned": "remediate"}, 1, "mandatory"),
        ({"container-image-pinned": "disabled"}, 0, None),
        ({"all": "sometimes"}, 2, None),
    ],
    ids=["all-advisory", "policy-advisory", "remediate-is-mandatory", "disabled", "invalid-level"],
)
def test_the_configs_enforcement_levels_apply_as_in_the_cli(
    plans: dict[str, dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    config: dict[str, Any],
    status: int,
    level: str | None,
) -> None:
    plan = write_plan(tmp_path, plans["dev"], {f"{DEPLOYMENT}::inference-deployment": latest_image})
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(config))

    assert main([str(plan), "--config", str(config_file)]) == status
    report = capsys.readouterr().out
    if level is None:
        assert "container-image-pinned" not in report
    else:
        assert f"#### `container-image-pinned` ({level})" in report


def test_an_async_policy_is_awaited_and_a_crashing_one_is_an_error(plans: dict[str, dict[str, Any]]) -> None:
    plan = plans["dev"]

    async def counts(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        report_violation(f"{len(args.resources)} resources", None)

    def crashes(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        raise KeyError("spec")

    probe = StackValidationPolicy("async-probe", "counts", counts, EnforcementLevel.MANDATORY)
    (violation,) = run_policies(plan, {}, [probe])
    assert (violation.policy, violation.resource, violation.message) == (
        "async-probe",
        None,
        f"{len(plan['resources'])} resources",
    )
    with pytest.raises(PolicyFailed, match="policy `crash-probe` failed on the stack: KeyError"):
        run_policies(plan, {}, [StackValidationPolicy("crash-probe", "raises", crashes, EnforcementLevel.MANDATORY)])
