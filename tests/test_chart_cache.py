"""delivery/charts.py: the chart cache is filled from the mirror when the repositories are unreachable, says where
it came from, and names every place it looked when a chart is missing: one failure, on every machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from delivery import charts
from stackconfig import versions
from tests.chart_cache import chart_archive

ROOT = Path(__file__).resolve().parents[1]
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
    # A failure of the fetch step in CI and on a developer's machine alike (scripts/test.sh stops there).
    monkeypatch.setenv("CI", "true")
    assert charts.main(["--offline"]) == 2
    monkeypatch.delenv("CI")
    assert charts.main(["--offline"]) == 2
    assert "1 pinned chart archive(s) found nowhere: keda-2.20.2.tgz" in capsys.readouterr().err


def test_a_chart_missing_from_the_cache_fails_a_test_on_every_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never a skip (a skipped render test proves nothing), with or without CI, with the one message."""
    monkeypatch.setattr(charts, "CACHE", tmp_path / "empty")
    monkeypatch.setattr(charts, "MIRROR", tmp_path / "no-mirror")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(BaseException) as outcome:  # noqa: B017 (a skip is a BaseException too: it must not be one)
        chart_archive(versions.KEDA)
    assert outcome.type is pytest.fail.Exception, f"{outcome.type.__name__}: {outcome.value}"
    message = str(outcome.value)
    assert f"keda-2.20.2.tgz is not in the chart cache {tmp_path / 'empty'}" in message
    assert f"mirror {tmp_path / 'no-mirror'} (no such directory)" in message
    assert versions.KEDA.repo in message and "CHART_MIRROR=/path/to/charts bash scripts/test.sh" in message


@pytest.mark.subprocess
def test_the_test_command_stops_with_one_message_when_the_charts_are_nowhere(tmp_path: Path) -> None:
    """A clone without the mirror and without the charts' repositories: scripts/test.sh stops before pytest."""
    env = {**os.environ, "CHART_CACHE": str(tmp_path / "cache"), "CHART_MIRROR": str(tmp_path / "no-mirror"),
           "CHART_OFFLINE": "1"}
    env.pop("CI", None)
    # `--co` keeps it quick should the script go on to pytest (the old behaviour outside CI).
    run = subprocess.run(["bash", str(ROOT / "scripts" / "test.sh"), "--co", "-q", "tests/test_chart_cache.py"],
                         env=env, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stderr.count("error:") == 1, run.stderr
    assert "4 pinned chart archive(s) found nowhere" in run.stderr
    assert f"chart cache {tmp_path / 'cache'}" in run.stderr and "(no such directory)" in run.stderr
    assert "CHART_MIRROR=" in run.stderr and "test_chart_cache.py" not in run.stdout, "pytest must not run"
    assert "All checks passed" not in run.stdout and "no issues found" not in run.stdout, "before ruff and mypy"
    # Run again, nothing changed: the Gcore SDK (a local directory requirement, which pip reinstalls whenever it is
    # asked to install it) stays as it is, so a program running in this .venv meanwhile keeps it (CI's lifecycle e2e).
    installed = gcore_sdk_install()
    again = subprocess.run(["bash", str(ROOT / "scripts" / "test.sh"), "--setup"], env=env, capture_output=True,
                           text=True, timeout=600, check=False)
    assert again.returncode == 2, again.stdout[-2000:] + again.stderr[-2000:]
    assert gcore_sdk_install() == installed, "scripts/test.sh reinstalled the Gcore SDK although nothing changed"


def gcore_sdk_install() -> tuple[int, int]:
    """The installed Gcore SDK's metadata directory (inode, mtime): a reinstall makes a new one."""
    (info,) = Path(sysconfig.get_paths()["purelib"]).glob("pulumi_gcore-*.dist-info")
    return info.stat().st_ino, info.stat().st_mtime_ns
