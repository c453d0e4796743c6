"""The chart cache as the tests use it: a chart missing from it fails the test, on every machine, with the one
message that says where it was looked for and what to run (scripts/test.sh fills the cache: delivery/charts.py,
and stops before the tests when it cannot). Never a skip: a skipped render test would prove nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest

from delivery import charts, render
from offline.engine import Recording
from stackconfig import versions


def missing(err: charts.ChartMissing) -> NoReturn:
    pytest.fail(str(err), pytrace=False)


def require_charts() -> None:
    """For a test that renders in a subprocess (a script, the render check): the pinned charts are cached."""
    try:
        for chart in charts.PINNED:
            charts.chart_archive(chart.name, chart.default_version)
        charts.gpu_operator_assets(versions.GPU_OPERATOR.default_version)
    except charts.ChartMissing as err:
        missing(err)


def rendered_stack(rec: Recording) -> render.StackRender:
    """The stack's releases rendered from the cache (cached per process)."""
    try:
        return render.render_stack(rec)
    except charts.ChartMissing as err:
        missing(err)


def chart_values(chart: versions.Chart) -> dict[str, Any]:
    """The pinned chart's default values (its values.yaml, as Helm reads it from the archive)."""
    try:
        return render.load_chart(chart.name, chart.default_version).values
    except charts.ChartMissing as err:
        missing(err)


def chart_archive(chart: versions.Chart) -> Path:
    """The pinned chart's archive in the cache (what `helm pull` downloads)."""
    try:
        return charts.chart_archive(chart.name, chart.default_version)
    except charts.ChartMissing as err:
        missing(err)


def crd(rec: Recording, chart: str, name: str) -> dict[str, Any]:
    """A CRD as the stack's release of `chart` installs it, e.g. `crd(rec, "keda", "scaledobjects.keda.sh")`."""
    (hit,) = [c for c in rendered_stack(rec).release(chart).crds if c["metadata"]["name"] == name]
    return hit
