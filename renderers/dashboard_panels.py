"""The building blocks of the generated dashboards: panels built with Grafana's grafana-foundation-sdk (its panel
builders and grid placement), laid out in reading order. renderers/dashboards.py composes the dashboards of them."""

from __future__ import annotations

from typing import Any

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus, stat, table, timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

DATASOURCE = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")
#: Grid is 24 columns wide (Grafana's fixed dashboard width).
GRID_WIDTH = 24
TAGS = ["gpu-platform"]
#: Subquery step for GPU-hours: one sample per minute, so `sum_over_time(...) / 60` is hours.
HOURS_STEP = "1m"

Panel = timeseries.Panel | stat.Panel | table.Panel


class Layout:
    """Rows and panels in reading order, numbered (ids must be unique per dashboard).

    Placement (left to right, wrapping at the grid's width, a row header starting a new line) is the
    grafana-foundation-sdk dashboard builder's own; this only gives each panel its size and id.
    """

    def __init__(self) -> None:
        self._items: list[tuple[str, Any]] = []

    def row(self, title: str) -> None:
        self._items.append(("row", db.Row(title).id(len(self._items) + 1)))

    def add(self, panel: Panel, w: int, h: int) -> None:
        self._items.append(("panel", panel.id(len(self._items) + 1).span(w).height(h)))

    def place(self, board: db.Dashboard) -> db.Dashboard:
        for kind, item in self._items:
            board = board.with_row(item) if kind == "row" else board.with_panel(item)
        return board


def targets(panel: Panel, *queries: tuple[str, str], instant: bool = False) -> Panel:
    for i, (expr, legend) in enumerate(queries):
        query = prometheus.Dataquery().ref_id(chr(ord("A") + i)).datasource(DATASOURCE).expr(expr)
        query = query.legend_format(legend)
        if instant:
            query = query.instant().format(PromQueryFormat.TABLE)
        panel = panel.with_target(query)
    return panel


def timeseries_panel(title: str, description: str, *queries: tuple[str, str], unit: str = "short",
                max_: float | None = None, thresholds: list[tuple[str, float | None]] | None = None,
                stack: bool = False) -> Panel:
    panel = (
        timeseries.Panel().title(title).description(description).datasource(DATASOURCE).unit(unit)
        .fill_opacity(10).line_width(2)
        .legend(cb.VizLegendOptions().display_mode(cm.LegendDisplayMode.TABLE)
                .placement(cm.LegendPlacement.RIGHT).show_legend(True).calcs(["lastNotNull", "max"]))
        .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.MULTI).sort(cm.SortOrder.DESCENDING))
    )
    if stack:
        panel = panel.stacking(cb.StackingConfig().mode(cm.StackingMode.NORMAL))
    if max_ is not None:
        panel = panel.min(0).max(max_)
    if thresholds:
        panel = panel.thresholds(
            db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE)
            .steps([dm.Threshold(value=v, color=c) for c, v in thresholds])
        ).thresholds_style(cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.LINE))
    return targets(panel, *queries)


def stat_panel(title: str, description: str, expr: str, unit: str, decimals: int = 1) -> Panel:
    panel = (
        stat.Panel().title(title).description(description).datasource(DATASOURCE).unit(unit).decimals(decimals)
        .reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]).fields("").values(False))
        .color_mode(cm.BigValueColorMode.VALUE).graph_mode(cm.BigValueGraphMode.NONE)
        .text_mode(cm.BigValueTextMode.VALUE)
    )
    return targets(panel, (expr, ""))


def table_panel(title: str, description: str, expr: str) -> Panel:
    panel = table.Panel().title(title).description(description).datasource(DATASOURCE).show_header(True)
    return targets(panel, (expr, ""), instant=True)


def hours(expr: str) -> str:
    """Hours of `expr` (a count of GPUs) over the dashboard's time range."""
    return f"sum_over_time({expr}[$__range:{HOURS_STEP}]) / 60"
