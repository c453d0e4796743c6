"""One failed scrape of the GPU metrics changes nothing KEDA decides: the ScaledObject's query as the program renders
it, on promtool, over per-GPU series at the DCGM ServiceMonitor's interval with one failed scrape in them.

A failed scrape leaves a staleness marker on every series of its target (prometheus docs, "Staleness"), and range
functions skip the marker. The query averages each GPU over its window (renderers/dcgm.py `QUERY_WINDOW`): with
several scrapes in it, a missed one leaves the others, so the value stays within the load's own noise and the
replicas it asks for (`ceil(value / threshold)`, the HPA's proposal) stay the same. A window of one scrape interval
does not survive it: the query is empty (a scaler error for KEDA, then its fallback), as the last test shows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from offline.engine import Recording
from renderers import dcgm
from stackconfig.units import go_duration_seconds
from tests.prometheus_harness import dump_yaml, promtool
from tests.test_alerts import gpu
from tests.test_metrics_path import RenderedWorkload

pytestmark = pytest.mark.subprocess

#: Four pods of dev's `inference` (one GPU each) under a load that wanders around 70 % per GPU, one sample a scrape.
PODS = 4
LOAD = (70, 66, 74, 71, 68, 73, 69, 72)
SCRAPES = 40


def seconds(duration: str) -> int:
    value = go_duration_seconds(duration)
    assert value is not None, duration
    return int(value)


def scrape_interval(rec: Recording) -> int:
    """The DCGM ServiceMonitor's interval, as the program sets it in the GPU Operator's values."""
    values = rec.get("gpu-operator-release").inputs["values"]
    return seconds(values["dcgmExporter"]["serviceMonitor"]["interval"])


def samples(pod: int, failed: int | None) -> list[float | None]:
    """Pod `pod`'s GPU per scrape; None where the scrape failed (the staleness marker)."""
    return [None if n == failed else float(LOAD[(n + 3 * pod) % len(LOAD)]) for n in range(SCRAPES)]


def expected(at: int, step: int, window: int, failed: int | None) -> float | None:
    """The query by hand: per GPU, the mean of its samples in (at - window, at], skipping a stale one; summed."""
    total, any_series = 0.0, False
    for pod in range(PODS):
        kept = [v for n, v in enumerate(samples(pod, failed)) if at - window < n * step <= at and v is not None]
        if kept:
            total, any_series = total + min(100.0, sum(kept) / len(kept)), True
    return total if any_series else None


def run(tmp: Path, w: RenderedWorkload, step: int, query: str, failed: int, times: list[int],
        window: int) -> list[tuple[int, float | None, float | None]]:
    """promtool evaluates `query` at `times` over the series with scrape `failed` missed; each time with the value
    computed by hand without and with the failure (promtool fails the test if it disagrees). `times` are a second
    past a scrape: real scrapes and queries are not aligned to the millisecond, so no sample sits on the window's
    edge (where Prometheus 2 and 3 disagree: [t - window, t] against (t - window, t])."""
    series = {}
    for pod in range(PODS):
        name = gpu(dcgm.GPU_UTIL_METRIC, "gpu-a", pod, pod=w.pod(pod), namespace=w.namespace, container=w.deployment)
        series[name] = " ".join("stale" if v is None else f"{v:g}" for v in samples(pod, failed))
    rows = [(at, expected(at, step, window, None), expected(at, step, window, failed)) for at in times]
    tests: dict[str, Any] = {
        "name": f"scrape {failed} failed",
        "interval": f"{step}s",
        "input_series": [{"series": s, "values": v} for s, v in series.items()],
        "promql_expr_test": [
            # to a thousandth: the sums' last bits depend on the order of the additions
            {"expr": f"round({query}, 0.001)", "eval_time": f"{at}s",
             "exp_samples": [] if value is None else [{"labels": "{}", "value": math.floor(value * 1000 + 0.5) / 1000}]}
            for at, _, value in rows
        ],
    }
    dump_yaml({"rule_files": [], "evaluation_interval": f"{step}s", "tests": [tests]}, tmp / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp)
    assert result.returncode == 0, result.stdout + result.stderr
    return rows


@pytest.fixture(scope="module")
def inference(recordings: dict[str, Recording]) -> tuple[RenderedWorkload, int]:
    rec = recordings["dev"]
    return RenderedWorkload.from_recording(rec, "inference"), scrape_interval(rec)


@pytest.mark.parametrize("failed", [20, 21, 22, 23])
def test_one_failed_scrape_neither_empties_the_query_nor_changes_the_replicas_it_asks_for(
        tmp_path: Path, inference: tuple[RenderedWorkload, int], failed: int) -> None:
    w, step = inference
    window = seconds(dcgm.QUERY_WINDOW)
    # Every HPA sync (a scrape interval apart) from the failed scrape until it has left the window.
    times = list(range(failed * step + 1, failed * step + window, step))
    for at, whole, missed in run(tmp_path, w, step, w.query, failed, times, window):
        assert whole is not None and missed is not None, f"the query is empty at {at}s with scrape {failed} missed"
        assert math.ceil(missed / w.threshold) == math.ceil(whole / w.threshold), (at, whole, missed)
        assert abs(missed - whole) <= 0.02 * whole, (at, whole, missed)


def test_a_window_of_one_scrape_empties_the_query_when_that_scrape_fails(
        tmp_path: Path, inference: tuple[RenderedWorkload, int]) -> None:
    """The reason the window holds several scrapes: with one, the failed scrape leaves the query nothing."""
    w, step = inference
    one = w.query.replace(f"[{dcgm.QUERY_WINDOW}]", f"[{step}s]")
    assert one != w.query
    ((_, whole, missed),) = run(tmp_path, w, step, one, 20, [20 * step + 1], step)
    assert whole is not None and missed is None
