"""The generated Grafana dashboards: loadable JSON, a sane layout, and queries Prometheus accepts.

Every panel query (Grafana variables replaced by sample values) goes through `promtool check rules` as
a recording rule, so a query Prometheus would reject fails here rather than as an empty panel; every
recorded series a panel reads must be one renderers/rule_groups.py records.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from offline.engine import Recording
from renderers import chart_values as cv
from renderers import dashboards
from renderers import rule_groups as alerts
from stackconfig import StackConfig, load_stack_config, versions
from tests.chart_cache import chart_values
from tests.conftest import STACKS
from tests.prometheus_harness import dump_yaml, promtool, stack_config
from tests.test_pools import stack_file, two_pools


def recorded_names(groups: list[dict[str, Any]]) -> set[str]:
    """Every recording rule name in `groups` (dashboards may only read these)."""
    return {rule["record"] for group in groups for rule in group["rules"] if "record" in rule}


#: Grafana's built-in and our own variables, with a value each query must also parse with.
SAMPLE_VALUES = {"$__rate_interval": "1m", "$__interval": "30s", "$__range": "6h",
                 "$pool": "gpu|spot"}
RECORDED = re.compile(r"\b[a-z_]+:[a-z0-9_:]+\b")


#: Each stack, and prod with two GPU pools (tests/test_pools.py): the pool variable and per-pool series.
TWO_POOLS = "prod-two-pools"


def two_pool_config() -> StackConfig:
    raw = {**stack_file("prod"), **two_pools()}
    return load_stack_config({k: v for k, v in raw.items() if v is not None})


@pytest.fixture(scope="module", params=[*STACKS, TWO_POOLS])
def cfg(request: pytest.FixtureRequest) -> StackConfig:
    return two_pool_config() if request.param == TWO_POOLS else stack_config(request.param)


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])


def exprs(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for panel in panels(dashboard):
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]


def substitute(expr: str) -> str:
    for variable, value in sorted(SAMPLE_VALUES.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(variable, value)
    assert "$" not in expr, f"unknown Grafana variable in {expr}"
    return expr


def test_json_round_trip_and_identity(cfg: StackConfig) -> None:
    boards = dashboards.dashboards(cfg)
    assert all(name.endswith(".json") for name in boards)
    for board in boards.values():
        assert json.loads(json.dumps(board)) == board
    uids = [b["uid"] for b in boards.values()]
    assert len(set(uids)) == len(uids) and all(len(uid) <= 40 for uid in uids)


def test_panel_ids_unique_and_layout_fits(cfg: StackConfig) -> None:
    for name, board in dashboards.dashboards(cfg).items():
        ids = [p["id"] for p in panels(board)]
        assert len(set(ids)) == len(ids), f"{name}: duplicate panel ids"
        cells: set[tuple[int, int]] = set()
        for panel in panels(board):
            pos = panel["gridPos"]
            assert pos["x"] >= 0 and pos["x"] + pos["w"] <= dashboards.GRID_WIDTH, (name, panel["title"])
            mine = {(x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"])}
            assert not cells & mine, f"{name}: panel {panel['title']!r} overlaps another"
            cells |= mine


def test_every_workload_has_its_row(cfg: StackConfig) -> None:
    board = dashboards.dashboards(cfg)["gpu-autoscaling.json"]
    rows = [p["title"] for p in board["panels"] if p["type"] == "row"]
    for w in cfg.workloads:
        assert any(f"{w.namespace}/{w.name}" in row for row in rows), w.name


def test_panels_use_the_datasource_variable(cfg: StackConfig) -> None:
    for board in dashboards.dashboards(cfg).values():
        variables = {v["name"] for v in board["templating"]["list"]}
        assert "datasource" in variables
        for panel in panels(board):
            if panel["type"] != "row":
                assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        for _, expr in exprs(board):
            for used in re.findall(r"\$([a-z_]+)", expr):
                assert used.startswith("__") or used in variables, f"{used} is not a dashboard variable"


@pytest.mark.subprocess
def test_every_query_parses(tmp_path: Path, cfg: StackConfig) -> None:
    rules = [
        {"record": f"dashboard:query_{i}:check", "expr": substitute(expr)}
        for i, (_, expr) in enumerate(e for board in dashboards.dashboards(cfg).values() for e in exprs(board))
    ]
    assert rules
    path = dump_yaml({"groups": [{"name": "dashboard-queries", "rules": rules}]}, tmp_path / "queries.yaml")
    result = promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.subprocess
def test_a_broken_query_is_caught(tmp_path: Path) -> None:
    """The parse check itself can fail: promtool rejects an expression with a dangling operator."""
    path = dump_yaml({"groups": [{"name": "g", "rules": [{"record": "x:y:z", "expr": "sum(up) /"}]}]},
                     tmp_path / "bad.yaml")
    assert promtool("check", "rules", str(path)).returncode != 0


def test_panels_read_only_recorded_series(cfg: StackConfig) -> None:
    recorded = recorded_names(alerts.rule_groups(cfg))
    for board in dashboards.dashboards(cfg).values():
        for title, expr in exprs(board):
            # A workload's own series its triggers scale on (vllm:num_requests_waiting) are scraped, not recorded.
            own = {t.metric for w in cfg.workloads for t in w.triggers}
            missing = set(RECORDED.findall(substitute(expr))) - recorded - own
            assert not missing, f"panel {title!r} reads series no rule records: {missing}"


def test_alert_table_lists_every_alert(cfg: StackConfig) -> None:
    board = dashboards.dashboards(cfg)["gpu-health.json"]
    (table,) = [p for p in panels(board) if p["type"] == "table"]
    match = re.search(r'alertname=~"([^"]+)"', table["targets"][0]["expr"])
    assert match is not None
    listed = set(match.group(1).split("|"))
    assert listed == alerts.alert_names(alerts.rule_groups(cfg))


@pytest.mark.charts
def test_sidecar_label_is_the_charts_default() -> None:
    """The ConfigMap label the Monitoring component uses is the one kube-prometheus-stack's sidecar watches."""
    values = chart_values(versions.KUBE_PROMETHEUS_STACK)
    sidecar = values["grafana"]["sidecar"]["dashboards"]
    assert sidecar["enabled"] is True
    assert (sidecar["label"], sidecar["labelValue"]) == cv.DASHBOARD_LABEL


def test_program_ships_these_dashboards(rec: Recording) -> None:
    """One ConfigMap per dashboard, labelled for the sidecar, holding exactly the generated JSON."""
    label, value = cv.DASHBOARD_LABEL
    maps = [r for r in rec.of_type("kubernetes:core/v1:ConfigMap")
            if r.inputs.get("metadata", {}).get("labels", {}).get(label) == value]
    shipped = {name: json.loads(body) for m in maps for name, body in m.inputs["data"].items()}
    assert shipped == dashboards.dashboards(stack_config(rec.stack))


@pytest.mark.parametrize("stack", STACKS)
def test_the_cost_panels_price_each_pool_at_its_own_price(stack: str) -> None:
    """One pool or several: a `pool` variable over the pools, and the cost priced per pool from the recorded
    `gpu_pool:price_per_gpu_hour:value`, which follows gpuPool.pricePerGpuHour (the one price estimate)."""
    cfg = stack_config(stack)
    cheaper = cfg.model_copy(update={"gpu_pool": cfg.pools[0].model_copy(update={"price_per_gpu_hour": 2.75})})
    board = dashboards.dashboards(cheaper)["gpu-autoscaling.json"]
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["pool"]["query"] == "gpu" and set(variables) == {"datasource", "pool"}
    prices = {r["labels"]["pool"]: r["expr"] for g in alerts.rule_groups(cheaper) for r in g["rules"]
              if r.get("record") == "gpu_pool:price_per_gpu_hour:value"}
    assert prices == {"gpu": "vector(2.75)"}
    (cost,) = [e for title, e in exprs(board) if title == "Cost of provisioned GPU-hours"]
    assert "* on (pool) gpu_pool:price_per_gpu_hour:value" in cost


def test_several_pools_get_a_pool_variable_and_each_pool_its_own_price() -> None:
    """With two pools: a `pool` variable over their names (all selected), the pool panels filtered by it, and the
    cost priced per pool from the recorded `gpu_pool:price_per_gpu_hour:value` (on-demand and spot differ)."""
    cfg = two_pool_config()
    board = dashboards.dashboards(cfg)["gpu-autoscaling.json"]
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["pool"]["query"] == "gpu,spot" and variables["pool"]["current"]["value"] == "$__all"
    (cost,) = [e for title, e in exprs(board) if title == "Cost of provisioned GPU-hours"]
    assert "* on (pool) gpu_pool:price_per_gpu_hour:value" in cost and 'pool=~"$pool"' in cost
    prices = {r["labels"]["pool"]: r["expr"] for g in alerts.rule_groups(cfg) for r in g["rules"]
              if r.get("record") == "gpu_pool:price_per_gpu_hour:value"}
    assert prices == {"gpu": "vector(4)", "spot": "vector(1.6)"}
    rows = [p["title"] for p in board["panels"] if p["type"] == "row"]
    assert any("embeddings on pool 'spot'" in r for r in rows) and any("inference on pool 'gpu'" in r for r in rows)
