"""The GitHub Actions delivery: valid workflow files, and the properties a reviewer relies on.

Validation uses GitHub's workflow and action JSON schemas bundled with check-jsonschema (offline,
`--builtin-schema vendor.github-workflows` / `vendor.github-actions`). The assertions below pin what the
schema cannot know: which command the tests run, that both stacks are previewed with the policy pack and a
guard, that prod deploys only after dev and through a protected environment, and that no secret is in the
repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from delivery import charts
from tests import conftest
from tests.chart_cache import require_charts

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
ACTIONS = sorted((GITHUB / "actions").glob("*/action.yml"))
ALLOWED_SECRETS = {"PULUMI_ACCESS_TOKEN", "GCORE_PERMANENT_TOKEN"}
STACKS = list(conftest.STACKS)


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((GITHUB / "workflows" / name).read_text())


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    """The `on:` block (YAML 1.1 reads the bare key `on` as True)."""
    on = workflow["on"] if "on" in workflow else workflow[True]  # type: ignore[index]
    return {on: None} if isinstance(on, str) else dict(on)


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job.get("steps") or []


def uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in steps(job) if str(s.get("uses", "")).split("@")[0] == action]


def all_uses() -> Iterator[tuple[Path, str]]:
    for path in [*WORKFLOWS, *ACTIONS]:
        doc = yaml.safe_load(path.read_text())
        jobs = doc["jobs"].values() if "jobs" in doc else [doc["runs"]]
        for job in jobs:
            for step in steps(job):
                if "uses" in step:
                    yield path, step["uses"]


def test_the_expected_workflows_exist() -> None:
    assert [p.name for p in WORKFLOWS] == ["deploy.yml", "plan-comment.yml", "preview.yml", "test.yml"]


# ---------------------------------------------------------------------------------------------------------------
# Schema validation (offline)


@pytest.mark.parametrize(
    ("schema", "files"),
    [("vendor.github-workflows", WORKFLOWS), ("vendor.github-actions", ACTIONS)],
    ids=["workflows", "actions"],
)
@pytest.mark.subprocess
def test_files_validate_against_githubs_schema(schema: str, files: list[Path]) -> None:
    assert files
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.subprocess
def test_the_validator_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz:\n      - run: echo\n")
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "'stepz' was unexpected" in result.stdout


# ---------------------------------------------------------------------------------------------------------------
# test.yml: the project's test command and nothing else


def test_tests_run_exactly_the_project_test_command_on_every_pull_request_and_push() -> None:
    workflow = load("test.yml")
    assert {"pull_request", "push"} <= triggers(workflow).keys()
    assert triggers(workflow)["push"] is None  # every branch
    (job,) = workflow["jobs"].values()
    assert [s["run"] for s in steps(job) if "run" in s] == ["bash scripts/test.sh"]
    (setup,) = uses(job, "actions/setup-python")
    assert setup["with"]["python-version"] == "3.11"


# ---------------------------------------------------------------------------------------------------------------
# preview.yml: every stack previewed on every pull request, with policies, comment and guard


def test_preview_runs_for_both_stacks_with_diff_comment_and_policy_pack() -> None:
    workflow = load("preview.yml")
    job = workflow["jobs"]["preview"]
    assert "pull_request" in triggers(workflow)
    assert job["strategy"]["matrix"]["stack"] == STACKS
    (preview,) = [s for s in uses(job, "pulumi/actions") if s.get("with", {}).get("command") == "preview"]
    inputs = preview["with"]
    assert inputs["stack-name"] == "${{ env.STACK }}"
    assert job["env"]["STACK"] == "${{ vars.PULUMI_ORG }}/${{ matrix.stack }}"
    assert inputs["diff"] is True and inputs["comment-on-pr"] is True
    assert inputs["policyPacks"] == "policy"
    assert inputs["policyPackConfigs"] == "policy/config/${{ matrix.stack }}.json"
    for stack in STACKS:
        assert (ROOT / "policy" / "config" / f"{stack}.json").is_file()
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}


def test_every_pull_request_gets_the_real_engines_preview_against_its_base() -> None:
    """The comment is the real engine's output (scripts/preview.sh --base), for forks too (no secrets needed);
    the toolchain comes from a cache keyed by its pins, and the same guard reads the real engine's JSON."""
    job = load("preview.yml")["jobs"]["local-preview"]
    assert "if" not in job  # every pull request, forks and Dependabot included
    assert job["strategy"]["matrix"]["stack"] == STACKS
    run = "\n".join(st.get("run", "") for st in steps(job))
    assert 'bash scripts/preview.sh "$STACK" --base "origin/$BASE_REF" --json preview.json > preview.txt' in run
    assert "python -m delivery.guard preview preview.json" in run
    assert "bash scripts/toolchain.sh" in run
    (cache,) = uses(job, "actions/cache")
    assert "toolchain/**" in cache["with"]["key"] and "~/.cache/gpu-autoscaling-toolchain" in cache["with"]["path"]
    (post,) = uses(job, "actions/github-script")
    assert "fs.readFileSync('preview.txt'" in post["with"]["script"]
    assert "head.repo.full_name == github.repository" in post["if"]  # a fork's token cannot comment
    assert job["timeout-minutes"] >= 60  # a cold toolchain build on a cache miss takes about 25 minutes


def test_preview_guard_reads_the_json_preview_and_the_pull_request_labels() -> None:
    job = load("preview.yml")["jobs"]["preview"]
    all_steps = steps(job)
    preview_at = next(i for i, s in enumerate(all_steps) if s.get("with", {}).get("command") == "preview")
    guard_at = next(i for i, s in enumerate(all_steps) if "delivery.guard" in s.get("run", ""))
    assert guard_at > preview_at
    script = all_steps[guard_at]["run"]
    assert 'pulumi preview --stack "$STACK" --json' in script
    assert "python -m delivery.guard preview preview.json" in script
    assert '--event "$GITHUB_EVENT_PATH"' in script  # the opt-in label comes from the event payload
    assert "--allow" not in script
    # Adding or removing the opt-in label re-runs the preview.
    types = triggers(load("preview.yml"))["pull_request"]["types"]
    assert {"labeled", "unlabeled", "synchronize", "opened"} <= set(types)
    # The report is posted even when the guard fails the job.
    post = next(s for s in steps(job) if "upsert-comment.js" in s.get("with", {}).get("script", ""))
    assert "!cancelled()" in post["if"]


def test_pull_requests_without_secrets_get_the_offline_plan_instead() -> None:
    jobs = load("preview.yml")["jobs"]
    same_repo = "github.event.pull_request.head.repo.full_name == github.repository"
    assert same_repo in jobs["preview"]["if"]
    assert "github.event.pull_request.head.repo.full_name != github.repository" in jobs["offline-plan-head"]["if"]
    head, review = jobs["offline-plan-head"], jobs["offline-plan-review"]
    assert review["needs"] == "offline-plan-head"
    # The pull request's code runs in the head job only; the review job checks out the base.
    assert 'python -m offline.plan "$stack" --out "plan/$stack.yaml"' in "\n".join(
        s.get("run", "") for s in steps(head)
    )
    assert f"for stack in {' '.join(STACKS)}; do" in "\n".join(s.get("run", "") for s in steps(head))
    (checkout,) = uses(review, "actions/checkout")
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    review_run = "\n".join(s.get("run", "") for s in steps(review))
    assert f"offline-plan-review.sh plan-base plan-head comment {' '.join(STACKS)}" in review_run
    assert "python -m delivery.charts" in review_run  # the render check's charts, pulled by the base's code
    assert any("steps.review.outputs.render_violated == 'true'" in str(s.get("if")) and "exit 1" in s.get("run", "")
               for s in steps(review))
    for job in (head, review):
        assert job["permissions"] == {"contents": "read"}
        assert "secrets." not in json.dumps(job)


def test_offline_plan_comment_is_posted_without_running_pull_request_code() -> None:
    workflow = load("plan-comment.yml")
    on = triggers(workflow)["workflow_run"]
    assert on == {"workflows": [load("preview.yml")["name"]], "types": ["completed"]}
    (job,) = workflow["jobs"].values()
    assert job["permissions"]["pull-requests"] == "write"
    (checkout,) = uses(job, "actions/checkout")
    assert "ref" not in checkout.get("with", {})  # default branch, never the pull request
    assert all("run" not in s for s in steps(job))  # nothing from the artifact is executed
    script = uses(job, "actions/github-script")[0]["with"]["script"]
    assert "pr.head.sha !== context.payload.workflow_run.head_sha" in script


@pytest.mark.subprocess
@pytest.mark.charts
def test_offline_plan_review_script_diffs_guards_and_writes_the_comment(tmp_path: Path) -> None:
    """Run the review script with a stand-in `offline.plan` (the real one plans the program)."""
    work = tmp_path / "work"
    _repo_copy(work)  # the base checkout: its program, tools, policy pack and their config
    (work / "offline" / "plan.py").write_text(
        textwrap.dedent(
            f"""
            REDACTED = "[secret]"  # as offline/plan.py
            import pathlib, shutil, sys
            out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1])
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy({str(ROOT / "tests" / "fixtures" / "plan" / "dev.yaml")!r}, out)
            """
        )
    )
    head = yaml.safe_load((ROOT / "tests" / "fixtures" / "plan" / "dev.yaml").read_text())
    head["resources"][0]["inputs"]["pools"][1]["flavorId"] = "bm3-ai-ndp2-1xlarge-h100-80-8"
    (work / "plan-head").mkdir()
    (work / "plan-head" / "dev.yaml").write_text(yaml.safe_dump(head, sort_keys=True))
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "labels": []}}))
    output = tmp_path / "github_output"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(output),
        "PR_NUMBER": "7",
        "CHART_CACHE": str(charts.CACHE),  # filled by scripts/test.sh (delivery/charts.py)
    }
    require_charts()

    result = subprocess.run(
        ["bash", str(GITHUB / "scripts" / "offline-plan-review.sh"), "plan-base", "plan-head", "comment", "dev"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    comment = (work / "comment" / "comment.md").read_text()
    assert "**BLOCKED**" in comment
    assert "### Policy pack — `dev` (offline plan)\n\n**OK**: " in comment  # the fork review runs the policy pack
    # and the render check over the same plan: the fixture is a partial plan (no Prometheus, no Grafana, ...)
    assert "### Render check — `dev`: **8 violation(s)**" in comment
    assert "0 Prometheus objects, want 1" in comment
    assert "-      flavorId: bm3-ai-1xlarge-h100-80-8" in comment
    assert "+      flavorId: bm3-ai-ndp2-1xlarge-h100-80-8" in comment
    assert (work / "comment" / "pr-number").read_text().strip() == "7"
    assert output.read_text().split() == ["blocked=true", "render_violated=true"]


@pytest.mark.parametrize(
    ("org", "token", "status", "named"),
    [
        ("", "", 1, ["PULUMI_ORG", "PULUMI_ACCESS_TOKEN"]),
        ("acme", "", 1, ["PULUMI_ACCESS_TOKEN"]),
        ("acme", "t", 0, []),
    ],
)
@pytest.mark.subprocess
def test_settings_check_names_what_is_missing(org: str, token: str, status: int, named: list[str]) -> None:
    env = {**os.environ, "PULUMI_ORG": org, "PULUMI_ACCESS_TOKEN": token}
    result = subprocess.run(
        ["bash", str(GITHUB / "scripts" / "check-settings.sh")], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == status
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error::")]
    assert [name for name in ("PULUMI_ORG", "PULUMI_ACCESS_TOKEN") if any(f" {name} " in e for e in errors)] == named


# ---------------------------------------------------------------------------------------------------------------
# deploy.yml: dev on merge, prod after dev through a protected environment


def test_deploy_runs_on_merge_to_main_dev_first_then_prod_through_its_environment() -> None:
    workflow = load("deploy.yml")
    assert triggers(workflow) == {"push": {"branches": ["main"]}}
    dev, prod = workflow["jobs"]["dev"], workflow["jobs"]["prod"]
    # Nothing is deployed from a commit whose tests fail: the test workflow runs first, on this commit.
    assert workflow["jobs"]["test"] == {"uses": "./.github/workflows/test.yml"}
    assert "workflow_call" in triggers(load("test.yml"))
    assert dev["environment"] == "dev" and dev["needs"] == "test"
    assert prod["environment"] == "prod"
    assert prod["needs"] == "dev"
    for stack, job in (("dev", dev), ("prod", prod)):
        assert job["concurrency"] == {"group": f"pulumi-up-{stack}", "cancel-in-progress": False}
        (up,) = uses(job, "pulumi/actions")[-1:]
        assert up["with"]["command"] == "up"
        assert job["env"]["STACK"] == f"${{{{ vars.PULUMI_ORG }}}}/{stack}"
        assert up["with"]["policyPacks"] == "policy"
        assert up["with"]["policyPackConfigs"] == f"policy/config/{stack}.json"
    assert "Required reviewers" in (GITHUB / "workflows" / "deploy.yml").read_text()  # how to protect `prod`


# ---------------------------------------------------------------------------------------------------------------
# Secrets, permissions, pinning


def test_no_literal_token_anywhere_in_the_delivery_files() -> None:
    pulumi_token = re.compile(r"pul-[0-9a-f]{40}")
    github_token = re.compile(r"gh[pousr]_[A-Za-z0-9]{36}")
    assigned = re.compile(r"(?i)(token|password|secret|api[_-]?key)\w*\s*[:=]\s*['\"]?(?!\$\{\{)[A-Za-z0-9_\-]{20,}")
    for path in GITHUB.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert not pulumi_token.search(text), path
            assert not github_token.search(text), path
            assert not assigned.search(text), path


def test_secrets_come_only_from_the_two_repository_secrets() -> None:
    for path in WORKFLOWS:
        text = path.read_text()
        assert set(re.findall(r"secrets\.([A-Za-z_]+)", text)) <= ALLOWED_SECRETS, path
        # Token-like env vars are always expressions, never values.
        for name, value in re.findall(r"^\s*([A-Z_]*TOKEN[A-Z_]*):\s*(.+)$", text, re.MULTILINE):
            assert value.strip() in {f"${{{{ secrets.{name} }}}}", "${{ github.token }}"}, (path, name)
        if "GCORE_PERMANENT_TOKEN" in text:
            assert "${{ secrets.GCORE_PERMANENT_TOKEN }}" in text


def test_permissions_are_declared_and_minimal() -> None:
    for path in WORKFLOWS:
        workflow = yaml.safe_load(path.read_text())
        assert workflow.get("permissions") == {"contents": "read"}, f"{path.name}: workflow-level permissions"
        for name, job in workflow["jobs"].items():
            granted = job.get("permissions", {})  # a called workflow declares its own
            assert granted != "write-all", (path.name, name)
            writes = {scope for scope, level in granted.items() if level == "write"}
            assert writes <= {"pull-requests"}, (path.name, name, writes)


def test_actions_are_pinned_to_a_major_version_or_commit() -> None:
    pinned = re.compile(r"^[\w.-]+/[\w./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$")
    seen = set()
    for path, ref in all_uses():
        if ref.startswith("./"):
            assert (ROOT / ref / "action.yml").is_file(), (path, ref)
            continue
        assert pinned.match(ref), (path.name, ref)
        seen.add(ref.split("@")[0])
        if ref.startswith("pulumi/actions@"):
            assert ref == "pulumi/actions@v7", (path.name, ref)
    assert {"actions/checkout", "actions/setup-python", "pulumi/actions"} <= seen


# ---------------------------------------------------------------------------------------------------------------
# The comment helper shared by preview.yml and plan-comment.yml


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.subprocess
def test_upsert_comment_creates_then_edits_its_own_comment() -> None:
    script = textwrap.dedent(
        """
        const upsert = require(process.argv[1]);
        const calls = [];
        const existing = JSON.parse(process.argv[2]);
        const github = {
          paginate: async (fn, args) => { calls.push(['list', args.issue_number]); return existing; },
          rest: { issues: {
            listComments: {},
            updateComment: async (a) => { calls.push(['update', a.comment_id, a.body.length]); },
            createComment: async (a) => {
              calls.push(['create', a.issue_number, a.body]);
              return { data: { id: 99 } };
            },
          } },
        };
        const context = { repo: { owner: 'o', repo: 'r' } };
        upsert({ github, context, issueNumber: 5, marker: '<!-- m -->', body: process.argv[3] })
          .then((id) => console.log(JSON.stringify({ id, calls })));
        """
    )

    def run(existing: list[dict[str, Any]], body: str) -> dict[str, Any]:
        result = subprocess.run(
            ["node", "-e", script, str(GITHUB / "scripts" / "upsert-comment.js"), json.dumps(existing), body],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(result.stdout)

    human = {"id": 1, "user": {"type": "User"}, "body": "<!-- m -->\nquoted by a person"}
    created = run([human], "report")
    assert created == {"id": 99, "calls": [["list", 5], ["create", 5, "<!-- m -->\nreport"]]}

    ours = {"id": 2, "user": {"type": "Bot"}, "body": "<!-- m -->\nold report"}
    edited = run([human, ours], "x" * 70000)
    assert edited["id"] == 2
    assert edited["calls"][1][:2] == ["update", 2]
    assert edited["calls"][1][2] <= 65536  # GitHub's comment size limit


# ---------------------------------------------------------------------------------------------------------------
# What-if (python -m capacity) beside the preview


def test_what_if_runs_for_base_and_head_and_posts_its_own_comment() -> None:
    jobs = load("preview.yml")["jobs"]
    job = jobs["what-if"]
    assert job["if"] == jobs["preview"]["if"]  # same-repo pull requests; forks get it in the offline review
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert "secrets." not in json.dumps(job)
    (checkout,) = uses(job, "actions/checkout")
    assert checkout["with"]["fetch-depth"] == 0  # the base commit must be there for the worktree
    run = "\n".join(s.get("run", "") for s in steps(job))
    assert 'what-if.sh "$BASE_SHA" what-if dev prod' in run
    assert next(s for s in steps(job) if "what-if.sh" in s.get("run", ""))["env"]["BASE_SHA"] == (
        "${{ github.event.pull_request.base.sha }}"
    )
    (post,) = uses(job, "actions/github-script")
    assert "marker: '<!-- what-if -->'" in post["with"]["script"]
    assert "what-if/comment.md" in post["with"]["script"] and "!cancelled()" in post["if"]
    # The fork path: the head job computes the pull request's what-if as data, the review (base code) compares.
    head_run = "\n".join(s.get("run", "") for s in steps(jobs["offline-plan-head"]))
    assert 'python -m capacity "$stack" --if-configured --json "plan/$stack.whatif.json"' in head_run
    review = (GITHUB / "scripts" / "offline-plan-review.sh").read_text()
    assert 'python -m capacity.compare "$out_dir/what-if.md" "$base_dir/what-if" "$@"' in review
    # The tuner on the head, for the "dominated" line: a level the stack cannot meet (exit 2) leaves it out,
    # a crash (exit 1) fails the step.
    script = (GITHUB / "scripts" / "what-if.sh").read_text()
    tune = 'python -m capacity tune "$stack" --if-configured --quiet --json'
    assert f'{tune} "$out/$stack.tune.json"' in script and "|| [ $? -eq 2 ]" in script
    assert f'{tune} "plan/$stack.tune.json"' in head_run and "|| [ $? -eq 2 ]" in head_run
    assert 'cp "$head_dir/$stack.tune.json" "$base_dir/what-if/$stack.tune.json"' in review


def _repo_copy(dest: Path) -> None:
    """A checkout of the repository's program and tools (every file git tracks or would add), without its tests,
    docs and workflows: what a CI job's checkout runs."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout.splitlines()
    for name in listed:
        if name.split("/", 1)[0] in ("tests", "docs", ".github", "examples") or not (ROOT / name).is_file():
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, dest / name)


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.mark.subprocess
def test_what_if_script_shows_a_min_nodes_change_with_the_right_sign(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _repo_copy(repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base_sha = _git(repo, "rev-parse", "HEAD").strip()
    stack = repo / "Pulumi.prod.yaml"
    text = stack.read_text()
    assert "    minNodes: 2\n    maxNodes: 4\n" in text
    stack.write_text(text.replace("    minNodes: 2\n    maxNodes: 4\n", "    minNodes: 3\n    maxNodes: 4\n"))
    _git(repo, "commit", "-qam", "head: one more GPU node always on")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "WHAT_IF_ARGS": "--days 1"}

    result = subprocess.run(["bash", str(GITHUB / "scripts" / "what-if.sh"), base_sha, "out", "prod"],
                            cwd=repo, env=env, capture_output=True, text=True, check=False)

    assert result.returncode == 0, result.stderr
    comment = (repo / "out" / "comment.md").read_text()
    base = json.loads((repo / "out" / "prod.base.json").read_text())
    head = json.loads((repo / "out" / "prod.head.json").read_text())
    assert (base["settings"]["minNodes"], head["settings"]["minNodes"]) == (2, 3)
    row = next(line for line in comment.splitlines() if line.startswith("| cost per month"))
    assert row.split("|")[4].strip().startswith("+")  # one more node always on costs more
    assert head["costPerMonth"] > base["costPerMonth"]
    assert comment.startswith("<!-- what-if -->")
    assert not (repo / "out" / "base-src").exists()
    # On its first day prod's trace peaks above what maxNodes 4 can serve: the tuner refuses the level (exit 2),
    # which leaves the dominated line out and the comment whole.
    assert not (repo / "out" / "prod.tune.json").exists() and "cannot be met" in result.stderr


@pytest.mark.subprocess
def test_offline_review_appends_the_what_if_of_base_and_fork(tmp_path: Path) -> None:
    """The fork path: the head job's what-if JSON (data) against the base's own run, in the plan comment."""
    work = tmp_path / "work"
    work.mkdir()
    _repo_copy(work)
    (work / "offline" / "plan.py").write_text(  # stand-in planner, as in the test above
        "import pathlib, shutil, sys\n"
        "out = pathlib.Path(sys.argv[sys.argv.index('--out') + 1])\n"
        "out.parent.mkdir(parents=True, exist_ok=True)\n"
        f"shutil.copy({str(ROOT / 'tests' / 'fixtures' / 'plan' / 'dev.yaml')!r}, out)\n"
    )
    (work / "plan-head").mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "plan" / "dev.yaml", work / "plan-head" / "dev.yaml")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PR_NUMBER": "7",
        "WHAT_IF_ARGS": "--days 1",
    }
    # The fork's what-if: a lower target utilisation (more replicas, so more nodes and cost).
    subprocess.run([sys.executable, "-m", "capacity", "dev", "--days", "1", "--set", "workloads.0.targetUtilization=20",
                    "--json", str(work / "plan-head" / "dev.whatif.json")], cwd=work, env=env, check=True,
                   capture_output=True)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "labels": []}}))
    env["GITHUB_EVENT_PATH"] = str(event)

    result = subprocess.run(
        ["bash", str(GITHUB / "scripts" / "offline-plan-review.sh"), "plan-base", "plan-head", "comment", "dev"],
        cwd=work, env=env, capture_output=True, text=True, check=False,
    )

    assert result.returncode == 0, result.stderr
    comment = (work / "comment" / "comment.md").read_text()
    assert "#### What-if `dev`" in comment
    row = next(line for line in comment.splitlines() if line.startswith("| peak nodes"))
    assert row.split("|")[4].strip().startswith("+")
