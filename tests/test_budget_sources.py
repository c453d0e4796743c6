"""The budget policies price with the stack's own facts: `gpuPool.pricePerGpuHour` and the GPUs per node of the
flavor table (stackconfig/flavors.py) or of `gpuPool.gpusPerNode`, generated into policy/config/<stack>.json by
delivery/policy_config.py; never a price of their own, never a count read off the flavor's name."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from capacity.config import read_stack_file
from delivery import policy_config
from delivery.policy_check import reconcile_config, run_policies
from offline.engine import ROOT, Recording
from offline.plan import build_plan
from policy import gpu_policies as gp
from stackconfig import StackConfig, load_stack_config
from stackconfig.flavors import GPU_FLAVORS
from tests.conftest import STACKS
from tests.test_policies import CLUSTER, H100_BM, check, cluster

POOL, HEADROOM = "gpu-pool-hourly-budget", "gpu-headroom-hourly-budget"
#: A flavor newer than the table, taken with its explicit count: its name ends in 180, its nodes have 8 GPUs.
UNLISTED = {"flavor": "bm4-ai-1xlarge-b200-180", "gpusPerNode": 8, "acceptUnlistedFlavor": True}


def committed(stack: str) -> dict[str, Any]:
    return json.loads(policy_config.config_path(stack).read_text())


def prod_with(**pool: Any) -> tuple[StackConfig, dict[str, Any]]:
    """prod's validated config with `gpuPool` keys replaced, and that gpuPool (for `record`)."""
    raw = read_stack_file("prod")
    raw["gpuPool"] = {**raw["gpuPool"], **pool}
    return load_stack_config(raw), raw["gpuPool"]


def violations(rec: Recording, config: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for violation in run_policies(build_plan(rec), reconcile_config(config)):
        out.setdefault(violation.policy, []).append(violation.message)
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_each_policy_config_holds_what_its_stack_gives(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert policy_config.main([stack]) == 0, capsys.readouterr().err
    config = committed(stack)
    for policy in (POOL, HEADROOM):
        assert "pricePerNodeHour" not in config[policy]
        assert config[policy]["gpusPerNode"] == {f.id: f.gpus for f in GPU_FLAVORS.values()}


def test_the_headroom_of_an_unlisted_flavor_is_priced_at_the_stacks_gpus_per_node(
    record: Callable[..., Recording],
) -> None:
    # Floor 3 nodes × 8 GPUs × 4.00 = 96.00, plus 11 placeholders × 2 GPUs × 4.00 = 88.00: 184.00 > 160.00.
    # Read off the name (…-180), a GPU would have cost 32.00 / 180 and the headroom passed.
    schedules = [{"start": "0 8 * * 1-5", "end": "0 20 * * 1-5", "minReplicas": 11}]
    cfg, pool = prod_with(**UNLISTED, minNodes=3, maxNodes=4, headroom={"gpus": 4, "schedules": schedules})
    config = policy_config.generated(cfg, committed("prod"))
    assert config[HEADROOM]["gpusPerNode"]["bm4-ai-1xlarge-b200-180"] == 8
    reported = violations(record("prod", gpuPool=pool), config)
    assert set(reported) == {HEADROOM}, reported
    (message,) = reported[HEADROOM]
    assert "holds up to 22 idle GPUs × 4.00/GPU-hour = 88.00/hour" in message
    assert "(`gpu` 3 nodes × 32.00 = 96.00/hour) that is 184.00/hour" in message


def test_the_stacks_price_reaches_both_budgets(record: Callable[..., Recording]) -> None:
    cfg, pool = prod_with(pricePerGpuHour=6.0)
    assert "gpu-pool-hourly-budget.pricePerGpuHour: has 4.0, the stack gives 6.0" in policy_config.differences(
        cfg, committed("prod"))
    reported = violations(record("prod", gpuPool=pool), policy_config.generated(cfg, committed("prod")))
    assert "pool `gpu` up to 4 nodes × 8 GPUs × 6.00/GPU-hour = 192.00/hour" in reported[POOL][0]
    cheaper, pool = prod_with(pricePerGpuHour=2.5)
    assert violations(record("prod", gpuPool=pool), policy_config.generated(cheaper, committed("prod"))) == {}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param({"pricePerNodeHour": 32.0, "maxHourlyBudget": 160.0}, "the retired `pricePerNodeHour`",
                     id="old-config"),
        pytest.param({"maxHourlyBudget": 160.0}, "not the stack's `pricePerGpuHour` and `gpusPerNode`",
                     id="no-facts"),
        pytest.param({"maxHourlyBudget": 160.0, "pricePerGpuHour": 4.0, "gpusPerNode": {"bm3-other": 8}},
                     f"flavor `{H100_BM}`, which the policy config's `gpusPerNode` does not list", id="unlisted"),
    ],
)
def test_a_budget_that_cannot_be_priced_is_reported_not_skipped(config: dict[str, Any], expected: str) -> None:
    (message,) = check(gp.gpu_pool_budget, CLUSTER, cluster(), config=config)
    assert expected in message and "python -m delivery.policy_config <stack> --write" in message


def test_the_generator_reports_a_stale_config_and_writes_it_keeping_the_decisions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("Pulumi.yaml", "Pulumi.prod.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "policy" / "config").mkdir(parents=True)
    shutil.copy(policy_config.config_path("prod"), tmp_path / "policy" / "config" / "prod.json")
    stack = tmp_path / "Pulumi.prod.yaml"
    pool = "  gpu-autoscaling:gpuPool:\n"
    assert stack.read_text().count(pool) == 1
    stack.write_text(stack.read_text().replace(pool, pool + "    pricePerGpuHour: 5.5\n"))

    assert policy_config.main(["prod", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "gpu-headroom-hourly-budget.pricePerGpuHour: has 4.0, the stack gives 5.5" in err
    assert "Fix: python -m delivery.policy_config prod --write" in err
    assert policy_config.main(["prod", "--root", str(tmp_path), "--write"]) == 0
    written = json.loads((tmp_path / "policy" / "config" / "prod.json").read_text())
    assert written[POOL]["pricePerGpuHour"] == written[HEADROOM]["pricePerGpuHour"] == 5.5
    assert written[POOL]["maxHourlyBudget"] == committed("prod")[POOL]["maxHourlyBudget"]
    assert written["production-cluster-protected"] == {"requireProtect": True}
    assert policy_config.main(["prod", "--root", str(tmp_path)]) == 0
    assert policy_config.main(["staging", "--root", str(tmp_path)]) == 2


def test_a_missing_policy_config_is_said_to_be_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("Pulumi.yaml", "Pulumi.prod.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    assert policy_config.main(["prod", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'policy' / 'config' / 'prod.json'} does not exist. Fix: python -m delivery.policy_config " \
           "prod --write" in err
    assert "out of date" not in err and "null" not in err
    assert policy_config.main(["prod", "--root", str(tmp_path), "--write"]) == 0
    assert policy_config.main(["prod", "--root", str(tmp_path)]) == 0
