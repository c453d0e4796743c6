"""delivery/charts.py: the chart cache is filled from the mirror when the repositories are unreachable, says where
it came from, and names every place it looked when a chart is missing (a failure in CI)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from delivery import charts
from stackconfig import versions
from tests.chart_cache import chart_archive

pytestmark = pytest.mark.charts


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """An empty cache and a mirror holding the pinned archives (copied from the real cache)."""
    cache, mirror = tmp_path / "cache", tmp_path / "mirror"
    mirror.mkdir()
    for chart in charts.PINNED:
        src = chart_archive(chart)
        shutil.copy(src, mirror / src.name)
    shutil.copy(charts.gpu_operator_assets(versions.GPU_OPERATOR.default_version), mirror)
    monkeypatch.setattr(charts, "CACHE", cache)
    monkeypatch.setattr(charts, "MIRROR", mirror)
    return cache, mirror


def test_offline_fetch_copies_the_pins_from_the_mirror_and_records_the_source(dirs: tuple[Path, Path]) -> None:
    cache, mirror = dirs
    fetched = charts.fetch(offline=True)
    assert {f.file for f in fetched} == {
        "gpu-operator-v26.7.0.tgz", "keda-2.20.2.tgz", "kube-prometheus-stack-88.5.3.tgz",
        "gpu-operator-v26.7.0-assets.tgz",
    }
    assert {f.source for f in fetched} == {f"mirror {mirror}"}  # no PROVENANCE.md in this mirror
    sources = json.loads((cache / charts.SOURCES).read_text())
    assert sources["keda-2.20.2.tgz"]["sha256"] == next(f.sha256 for f in fetched if f.file == "keda-2.20.2.tgz")
    # A second run keeps what is cached and says so.
    assert {f.source for f in charts.fetch(offline=True)} == {f"cache (mirror {mirror})"}


def test_a_mirror_archive_that_differs_from_its_provenance_is_refused(dirs: tuple[Path, Path]) -> None:
    cache, mirror = dirs
    digests = {p.name: charts._sha256(p) for p in mirror.glob("*.tgz")}
    rows = "\n".join(f"| {name} | {sha} | 1 B |" for name, sha in sorted(digests.items()))
    (mirror / "PROVENANCE.md").write_text(f"| archive | sha256 | size |\n|---|---|---|\n{rows}\n")
    assert charts.mirror_digests(mirror) == digests
    fetched = charts.fetch(offline=True)
    assert {f.source for f in fetched} == {f"mirror {mirror} (sha256 as in PROVENANCE.md)"}
    shutil.rmtree(cache)
    (mirror / "keda-2.20.2.tgz").write_bytes(b"tampered")
    with pytest.raises(charts.ChartMissing, match="keda-2.20.2.tgz"):
        charts.fetch(offline=True)


def test_a_chart_found_nowhere_names_where_it_was_looked_for(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache, mirror = dirs
    (mirror / "keda-2.20.2.tgz").unlink()
    with pytest.raises(charts.ChartMissing) as err:
        charts.fetch(offline=True)
    message = str(err.value)
    assert "keda-2.20.2.tgz" in message and str(cache) in message and str(mirror) in message
    assert "CHART_MIRROR" in message and "python -m delivery.charts" in message
    # In CI that is a failure of the fetch step; elsewhere the render tests skip with the same message.
    monkeypatch.setenv("CI", "true")
    assert charts.main(["--offline"]) == 1
    monkeypatch.delenv("CI")
    assert charts.main(["--offline"]) == 0
    assert "keda-2.20.2.tgz is not in the chart cache" in capsys.readouterr().err
