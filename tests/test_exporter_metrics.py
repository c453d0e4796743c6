"""The pinned dcgm-exporter exports every DCGM metric the program reads, with the type and unit it assumes.

The names come from what the program really sends for every stack (ScaledObjects, PrometheusRules, dashboards,
chart values), never from a second hand-made list; the pinned exporter's counters list is the vendored upstream file
(delivery/dcgm_exporter/PROVENANCE.md). A renamed metric or a unit that changed in a copy of that list fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from delivery import exporter_metrics
from offline.engine import Recording, Secret
from renderers import chart_values, dcgm
from stackconfig import versions
from tests.chart_cache import chart_values as pinned_chart_values


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, Secret):
        yield from strings(value.value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, str):
        yield value


def read_by(rec: Recording) -> set[str]:
    """Every DCGM metric named in anything the stack registers or exports."""
    texts = [s for r in rec.resources for s in strings(r.inputs)] + list(strings(rec.outputs))
    return exporter_metrics.metrics_read(texts)


def pinned_counters() -> dict[str, exporter_metrics.Counter]:
    return exporter_metrics.parse_counters(exporter_metrics.counters_file().read_text(encoding="utf-8"))


def test_every_dcgm_metric_a_stack_reads_is_exported_by_the_pinned_exporter_as_assumed(rec: Recording) -> None:
    read = read_by(rec)
    assert dcgm.GPU_UTIL_METRIC in read  # the extraction finds the KEDA query's metric, so it is not vacuous
    assert exporter_metrics.problems(read, pinned_counters()) == []


def test_a_metric_renamed_in_a_copy_of_the_pinned_list_fails(recordings: dict[str, Recording], tmp_path: Path) -> None:
    copy = tmp_path / "counters.csv"
    copy.write_text(exporter_metrics.counters_file().read_text().replace(
        "DCGM_FI_DEV_GPU_UTIL,", "DCGM_FI_DEV_GPU_UTILIZATION,"))
    read = set().union(*(read_by(r) for r in recordings.values()))
    (problem,) = exporter_metrics.problems(read, exporter_metrics.parse_counters(copy.read_text()))
    assert problem.startswith(f"{dcgm.GPU_UTIL_METRIC} is read, but dcgm-exporter {versions.DCGM_EXPORTER_RELEASE} "
                              "does not export it")


def test_utilisation_turned_into_a_ratio_fails() -> None:
    text = exporter_metrics.counters_file().read_text().replace(
        "GPU utilization (in %).", "Ratio of time the GPU was busy.")
    (problem,) = exporter_metrics.problems({dcgm.GPU_UTIL_METRIC}, exporter_metrics.parse_counters(text))
    assert "read as a gauge in %, but" in problem and "exports a gauge in ratio" in problem


def test_a_metric_commented_out_in_the_list_is_not_exported() -> None:
    text = exporter_metrics.counters_file().read_text().replace("DCGM_FI_DEV_GPU_TEMP,", "# DCGM_FI_DEV_GPU_TEMP,")
    (problem,) = exporter_metrics.problems({"DCGM_FI_DEV_GPU_TEMP"}, exporter_metrics.parse_counters(text))
    assert "does not export it" in problem


def test_a_metric_read_without_an_assumed_unit_is_refused() -> None:
    (problem,) = exporter_metrics.problems({"DCGM_FI_DEV_FB_USED"}, pinned_counters())
    assert "METRIC_UNITS does not say" in problem


def test_an_exporter_pin_without_its_counters_list_is_refused() -> None:
    with pytest.raises(FileNotFoundError, match="copy etc/dcp-metrics-included.csv from NVIDIA/dcgm-exporter tag 9"):
        exporter_metrics.counters_file("9.0.0-9.1.0")


def test_the_gpu_operator_runs_the_exporter_we_pin() -> None:
    values = chart_values.gpu_operator_values([])["dcgmExporter"]
    assert (values["repository"], values["image"], values["version"]) == (
        "nvcr.io/nvidia/k8s", "dcgm-exporter", f"{versions.DCGM_EXPORTER_RELEASE}-distroless")


@pytest.mark.charts
def test_the_exporter_pin_is_what_the_pinned_gpu_operator_ships() -> None:
    """When the GPU Operator pin moves, this says whether its exporter moved too (docs/operations.md)."""
    shipped = pinned_chart_values(versions.GPU_OPERATOR)["dcgmExporter"]
    assert (shipped["repository"], shipped["image"], shipped["version"]) == (
        versions.DCGM_EXPORTER_REPOSITORY, versions.DCGM_EXPORTER_IMAGE, versions.DCGM_EXPORTER_TAG)
