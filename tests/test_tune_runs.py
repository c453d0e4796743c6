"""`python -m capacity tune` run as a user runs it: on traces of the three kinds it meets (a daily peak, bursts, flat
demand) and on the repository's own trace for prod, whose numbers docs/capacity-what-if.md reports.

Each run takes seconds (the synthetic traces, written by the tests) to a minute (prod's 14 days); they are
`subprocess` tests, in the full suite and CI only.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from capacity import config as stackfile
from stackconfig import load_stack_config

ROOT = Path(__file__).resolve().parents[1]
#: The object the issue asks --json for (tests that every key is there and nothing is renamed).
REQUIRED = {"current", "recommended", "oracle", "static", "heldOut", "met"}
FIGURES = {"costPerMonth", "gpuHoursUnserved", "gpuHoursDemand", "timeToCapacityMinutes", "peakNodes", "serviceLevel"}

pytestmark = pytest.mark.subprocess


def write_trace(path: Path, days: int, gpus: Any) -> Path:
    path.write_text("minute,requests\n" + "".join(f"{m},{gpus(m):g}\n" for m in range(0, days * 1440, 10)))
    return path


def tune(tmp: Path, *args: str, stack: str = "dev", name: str = "t") -> tuple[subprocess.CompletedProcess[str],
                                                                               dict[str, Any] | None]:
    out = tmp / f"{name}.json"
    result = subprocess.run([sys.executable, "-m", "capacity", "tune", stack, "--quiet", "--json", str(out), *args],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert "Traceback" not in result.stderr, result.stderr
    return result, json.loads(out.read_text()) if out.exists() else None


def synthetic(tmp: Path, kind: str) -> list[str]:
    rng = random.Random(7)
    if kind == "daily":
        trace = write_trace(tmp / "daily.csv", 3, lambda m: 9 if 600 <= m % 1440 < 720 else 2)
    elif kind == "bursts":
        bursts = set(rng.sample(range(3 * 144), 6))
        trace = write_trace(tmp / "bursts.csv", 3, lambda m: 12 if m // 10 in bursts else 2)
    else:
        trace = write_trace(tmp / "flat.csv", 3, lambda m: 3 + rng.random() * 0.2)
    return ["--trace", str(trace), "--column", "requests", "--per-gpu", "1", "--reorderings", "2"]


@dataclass(frozen=True)
class DailyRuns:
    """The daily-peak trace tuned twice, as a user would: in two processes with the patch and the plot in files, and in
    one process with the patch on stdout (a pipe). Each run takes about 13 s of CPU, so the tests below share them
    (`xdist_group`: one worker runs them all; the fixture is session-scoped because xdist may hand that worker
    another module's tests in between, and a module fixture would then be torn down and made again)."""

    tmp: Path
    two: subprocess.CompletedProcess[str]
    one: subprocess.CompletedProcess[str]
    out: dict[str, Any] | None


@pytest.fixture(scope="session")
def daily(tmp_path_factory: pytest.TempPathFactory) -> DailyRuns:
    tmp = tmp_path_factory.mktemp("daily")
    args = synthetic(tmp, "daily")
    two, out = tune(tmp, *args, "--jobs", "2", "--patch", str(tmp / "dev.patch"), "--plot", str(tmp / "dev.png"),
                    name="two")
    one, _ = tune(tmp, *args, "--jobs", "1", "--patch", "-", name="one")
    return DailyRuns(tmp, two, one, out)


DAILY = pytest.mark.xdist_group("daily-tune")


@DAILY
def test_a_daily_peak_is_met_with_a_learned_window_that_also_holds_on_the_held_out_day(daily: DailyRuns) -> None:
    result, out, tmp_path = daily.two, daily.out, daily.tmp
    patch, plot = tmp_path / "dev.patch", tmp_path / "dev.png"
    assert result.returncode == 0 and out is not None, result.stderr
    assert set(out) >= REQUIRED and set(out["current"]) >= FIGURES and set(out["recommended"]) >= FIGURES
    assert REQUIRED - {"heldOut", "met"} <= set(out["heldOut"])
    assert out["met"] and out["heldOut"]["met"] and not out["current"]["serviceLevel"]["met"]
    assert out["recommended"]["settings"]["workloads.0.schedules"] == [
        {"start": "15 9 * * *", "end": "0 12 * * *", "timezone": "UTC", "minReplicas": 9}]
    # the window buys what reactive scaling alone cannot do cheaply: hold a second node all day
    assert out["reactive"]["costPerMonth"] > 1.5 * out["recommended"]["costPerMonth"]
    assert out["recommended"]["costPerMonth"] <= 1.15 * out["oracle"]["costPerMonth"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the patch applies to the stack file and gives exactly the recommended settings, comments and all
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy(ROOT / "Pulumi.dev.yaml", work / "Pulumi.dev.yaml")
    subprocess.run(["git", "apply", str(patch)], cwd=work, check=True, capture_output=True)
    edited = yaml.safe_load((work / "Pulumi.dev.yaml").read_text())["config"]
    mine = {k.split(":", 1)[1]: v for k, v in edited.items() if k.startswith("gpu-autoscaling:")}
    sets = [f"{p}={json.dumps(v)}" for p, v in out["recommended"]["settings"].items()]
    assert load_stack_config(mine) == stackfile.load("dev", sets)
    assert "# Development: smallest useful GPU pool" in (work / "Pulumi.dev.yaml").read_text()


def test_bursts_with_no_daily_shape_get_capacity_held_not_a_window(tmp_path: Path) -> None:
    result, out = tune(tmp_path, *synthetic(tmp_path, "bursts"))
    assert result.returncode == 0 and out is not None, result.stderr
    assert out["met"] and out["heldOut"]["met"]
    assert "workloads.0.schedules" not in out["recommended"]["settings"]
    assert out["recommended"]["peakNodes"] == 2 and out["recommended"]["settings"]["workloads.0.minReplicas"] > 8
    assert "reactive scaling alone was cheapest" in result.stdout


def test_flat_demand_keeps_the_stack_as_it_is(tmp_path: Path) -> None:
    result, out = tune(tmp_path, *synthetic(tmp_path, "flat"))
    assert result.returncode == 0 and out is not None, result.stderr
    assert out["met"] and out["heldOut"]["met"] and out["recommended"]["settings"] == {}
    assert "nothing to change" in result.stdout and "no daily shape" in result.stdout


@DAILY
def test_the_same_seed_gives_the_same_json_with_one_process_or_two(daily: DailyRuns, request: pytest.FixtureRequest
                                                                   ) -> None:
    if getattr(request.config.option, "loadgroup", False):  # a worker of `--dist loadgroup` (scripts/test.sh)
        assert request.node.nodeid.endswith("@daily-tune"), (
            "pytest-xdist ignored the xdist_group mark, so every worker would tune the daily trace: see the pytest "
            "pin in requirements-dev.in")
    assert daily.one.returncode == 0, daily.one.stderr
    assert (daily.tmp / "one.json").read_bytes() == (daily.tmp / "two.json").read_bytes()
    assert daily.out is not None and daily.out["seed"] == 1


def test_demand_above_the_quota_is_refused_with_the_quota_that_would_serve_it(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "huge.csv", 2, lambda m: 30 if 600 <= m % 1440 < 660 else 2)
    result, out = tune(tmp_path, "--trace", str(trace), "--column", "requests", "--per-gpu", "1")
    assert result.returncode == 2 and out is None
    assert "--max-unserved: '1%' cannot be met by any setting within the bounds" in result.stderr
    assert "demand reaches 30.0 GPUs" in result.stderr and "at most 2 nodes of 8 GPUs" in result.stderr
    assert "--max-nodes 4" in result.stderr
    result, out = tune(tmp_path, "--trace", str(trace), "--column", "requests", "--per-gpu", "1", "--max-nodes", "4",
                       "--reorderings", "2")
    assert result.returncode == 0 and out is not None and out["met"], result.stderr


#: Prod on its own trace, default level (≤ 1 % unserved, p95 ≤ 5 min within reach): docs/capacity-what-if.md,
#: "tune", reports these (USD per month, tuning part / held-out part).
PROD = {"recommended": (46_720, 46_720), "oracle": (46_834, 46_720), "current": (63_526, 61_834)}


def test_prods_recommendation_meets_the_level_on_the_held_out_days_near_the_oracles_cost(tmp_path: Path) -> None:
    """Prod's `inference` has a serving profile: the level is ≤ 1 % unserved and the latency objective met for
    ≥ 97 % of the demand (issue 21's aim, with ≤ 0.70× the static pool's GPU-hours), on both parts."""
    result, out = tune(tmp_path, "--jobs", "2", stack="prod")
    assert result.returncode == 0 and out is not None, result.stderr
    assert out["met"] and out["recommended"]["serviceLevel"]["met"] and out["heldOut"]["met"]
    assert out["heldOut"]["fromHour"] == 240 and out["tuningPart"]["toHour"] == 240
    assert out["serviceLevel"]["minObjectiveAttainmentPercent"] == 97
    assert out["serviceLevel"]["p95TimeToCapacityMinutes"] is None
    for part, i in ((out, 0), (out["heldOut"], 1)):
        for name, costs in PROD.items():
            assert round(part[name]["costPerMonth"]) == costs[i], (name, i)
        assert part["recommended"]["costPerMonth"] <= 1.15 * part["oracle"]["costPerMonth"]
        for name in ("current", "recommended"):  # prod as configured meets the aim too
            assert part[name]["serviceLevel"]["unservedPercent"] <= 1.0
            assert part[name]["serviceLevel"]["objectiveAttainmentPercent"] >= 97, (name, i)
            assert part[name]["gpuHoursBilled"] <= 0.70 * part["static"]["gpuHoursBilled"], (name, i)
    assert len(out["recommended"]["serviceLevel"]["reorderings"]) == 8
    assert all(r["objectiveAttainmentPercent"] >= 97 for r in out["recommended"]["serviceLevel"]["reorderings"])
    # the workload's own values are the tuner's (maxReplicas 14, the default band); what is left is the pool's
    # headroom, which the stack keeps (docs/capacity-what-if.md)
    assert out["recommended"]["settings"] == {"gpuPool.headroom": None}
    assert out["current"]["dominatedBy"]["savingPerMonth"] > 0


@DAILY
def test_the_patch_goes_to_stdout_for_a_pipe(daily: DailyRuns) -> None:
    """`--patch -` writes the patch, and only it, to stdout: the same patch as `--patch FILE`."""
    assert daily.one.returncode == 0, daily.one.stderr
    assert daily.one.stdout.startswith("--- a/Pulumi.dev.yaml\n+++ b/Pulumi.dev.yaml\n")
    assert '+        - start: "15 9 * * *"' in daily.one.stdout and "tuning part" not in daily.one.stdout
    assert daily.one.stdout == (daily.tmp / "dev.patch").read_text()
