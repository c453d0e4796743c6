"""The chart cache: the pinned chart archives the render checks use, filled without a cluster.

    python -m delivery.charts            # fill .cache/charts/ for the pins in stackconfig/versions.py

Why a cache inside the repository tree (git-ignored): the render checks (delivery/render.py) must read the
exact archives `pulumi up` would install, on a developer's machine, in CI and in a fork's pull-request
review alike, and never files outside the checkout. Each archive comes from the chart's own repository when
it is reachable (`helm pull` through helm-python-sdk), otherwise from a local mirror of `helm package`d
archives (`CHART_MIRROR`, default `../shared/reference/charts/packaged/` beside the checkout). The GPU
Operator's `assets/` (the manifests the operator creates at run time: dcgm-exporter's DaemonSet, Service and
ServiceMonitor) are not in its chart; they come from the operator's source archive at the same tag
(https://github.com/NVIDIA/gpu-operator/tree/<tag>/assets) or the mirror.

The cache records where each archive came from in `.cache/charts/SOURCES.json`; a cached archive is reused.
An archive that cannot be obtained is an error (exit 2, on every machine: the render tests and the render check
cannot run without it) naming every place that was tried and what to do; `scripts/test.sh` stops there, so the test
command reports one failure for that one cause. `CHART_OFFLINE=1` (or `--offline`) skips the repositories.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import socket
import sys
import tarfile
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from stackconfig import versions

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("CHART_CACHE", ROOT / ".cache" / "charts"))
MIRROR = Path(os.environ.get("CHART_MIRROR", ROOT.parent / "shared" / "reference" / "charts" / "packaged"))
SOURCES = "SOURCES.json"
#: Source archive of the GPU Operator at a tag (GitHub's tarball endpoint); only `assets/` is kept.
GPU_OPERATOR_SOURCE = "https://codeload.github.com/NVIDIA/gpu-operator/tar.gz/refs/tags/{version}"
#: Seconds to wait for a chart repository before falling back to the mirror (offline machines fail fast).
CONNECT_TIMEOUT = 3.0

PINNED: tuple[versions.Chart, ...] = (versions.GPU_OPERATOR, versions.KEDA, versions.KUBE_PROMETHEUS_STACK)


class ChartMissing(FileNotFoundError):
    """A chart archive is not in the cache; the message says where it was looked for and how to fill it."""


@dataclass(frozen=True)
class Fetched:
    file: str
    source: str
    sha256: str


def archive_name(chart: str, version: str) -> str:
    return f"{chart}-{version}.tgz"


def assets_name(version: str) -> str:
    return f"gpu-operator-{version}-assets.tgz"


#: What to do when an archive is missing, in every message that says so.
FIX = (
    "run `python -m delivery.charts` (scripts/test.sh does) where the charts' repositories are reachable, or point "
    "CHART_MIRROR at a directory of the `helm package`d archives (`CHART_MIRROR=/path/to/charts bash "
    "scripts/test.sh`); docs/charts-and-pod-security.md#where-the-charts-come-from"
)


def _repositories() -> str:
    assets = GPU_OPERATOR_SOURCE.format(version=versions.GPU_OPERATOR.default_version)
    return ", ".join(f"{c.name} {c.repo}" for c in PINNED) + f", GPU Operator assets {assets}"


def _mirror_state() -> str:
    return "" if MIRROR.is_dir() else " (no such directory)"


def _missing(file: str) -> ChartMissing:
    return ChartMissing(
        f"chart archive {file} is not in the chart cache {CACHE}. The render tests and the render check read the "
        f"pinned charts from there; `python -m delivery.charts` fills it from the charts' repositories "
        f"({_repositories()}) or from the mirror {MIRROR}{_mirror_state()}. Fix: {FIX}"
    )


def _found_nowhere(files: list[str], offline: bool) -> ChartMissing:
    repositories = "not tried (offline)" if offline else "unreachable or without the pinned version"
    return ChartMissing(
        f"{len(files)} pinned chart archive(s) found nowhere: {', '.join(files)}. Looked in the chart cache {CACHE}, "
        f"in the charts' repositories ({_repositories()}: {repositories}) and in the mirror "
        f"{MIRROR}{_mirror_state()}. The render tests and the render check cannot run without them. Fix: {FIX}"
    )


def cached(file: str) -> Path:
    """Path of `file` in the cache, or ChartMissing that says where it was looked for."""
    path = CACHE / file
    if not path.is_file():
        raise _missing(file)
    return path


def chart_archive(chart: str, version: str) -> Path:
    return cached(archive_name(chart, version))


def gpu_operator_assets(version: str) -> Path:
    return cached(assets_name(version))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _reachable(url: str) -> bool:
    """A TCP connection to the repository's host within CONNECT_TIMEOUT (no DNS/TLS hang when offline)."""
    parsed = urllib.parse.urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "", parsed.port or 443), timeout=CONNECT_TIMEOUT):
            return True
    except OSError:
        return False


def _pull(chart: versions.Chart, version: str, dest: Path) -> str | None:
    """`helm pull <name> --repo <repo> --version <version>` into dest; the source on success, else None."""
    if not _reachable(chart.repo):
        return None
    import helm_python

    try:
        helm_python.pull(chart.name, repo_url=chart.repo, version=version, destination=dest)
    except helm_python.HelmError as err:
        print(f"  pull of {chart.name} {version} from {chart.repo} failed: {err}", file=sys.stderr)
        return None
    return f"{chart.repo} (helm pull)" if (dest / archive_name(chart.name, version)).is_file() else None


def _download_assets(version: str, dest: Path) -> str | None:
    """`assets/` of the GPU Operator source at tag `version`, repacked as `<dest>/gpu-operator-<v>-assets.tgz`."""
    url = GPU_OPERATOR_SOURCE.format(version=version)
    if not _reachable(url):
        return None
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 (fixed https URL)
            data = response.read()
    except OSError as err:
        print(f"  download of {url} failed: {err}", file=sys.stderr)
        return None
    prefix = f"gpu-operator-{version}-assets"
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(data)) as src, tarfile.open(fileobj=out, mode="w:gz") as dst:
        for member in src.getmembers():
            top, _, rest = member.name.partition("/")
            if not rest.startswith("assets/") or not member.isfile():
                continue
            extracted = src.extractfile(member)
            if extracted is None:
                continue
            member.name = f"{prefix}/{rest.removeprefix('assets/')}"
            dst.addfile(member, extracted)
    (dest / assets_name(version)).write_bytes(out.getvalue())
    return f"{url} (assets/)"


#: `| <archive> | <sha256> |` rows of the mirror's PROVENANCE.md.
_PROVENANCE_ROW = re.compile(r"^\|\s*(?P<file>[^|\s]+\.tgz)\s*\|\s*(?P<sha>[0-9a-f]{64})\s*\|", re.MULTILINE)


def mirror_digests(mirror: Path) -> dict[str, str]:
    """sha256 per archive as the mirror's PROVENANCE.md records it ({} without one)."""
    provenance = mirror / "PROVENANCE.md"
    if not provenance.is_file():
        return {}
    return {m["file"]: m["sha"] for m in _PROVENANCE_ROW.finditer(provenance.read_text())}


def _from_mirror(file: str, dest: Path) -> str | None:
    """Copy `file` from the mirror; an archive whose sha256 differs from its recorded one is refused."""
    src = MIRROR / file
    if not src.is_file():
        return None
    recorded = mirror_digests(MIRROR).get(file)
    if recorded and _sha256(src) != recorded:
        print(f"  {src}: sha256 {_sha256(src)} differs from PROVENANCE.md ({recorded}); not used", file=sys.stderr)
        return None
    shutil.copyfile(src, dest / file)
    return f"mirror {MIRROR}" + (" (sha256 as in PROVENANCE.md)" if recorded else "")


def fetch(pins: tuple[tuple[versions.Chart, str], ...] | None = None, offline: bool = False) -> list[Fetched]:
    """Fill the cache for `pins` (default: every chart at its pinned version) and the GPU Operator assets.

    Raises ChartMissing when an archive is in neither the chart's repository nor the mirror.
    """
    pins = pins or tuple((chart, chart.default_version) for chart in PINNED)
    CACHE.mkdir(parents=True, exist_ok=True)
    sources_file = CACHE / SOURCES
    sources: dict[str, dict[str, str]] = json.loads(sources_file.read_text()) if sources_file.is_file() else {}
    fetched, missing = [], []
    wanted: list[tuple[str, versions.Chart | None, str]] = [
        (archive_name(chart.name, version), chart, version) for chart, version in pins
    ]
    wanted += [(assets_name(v), None, v) for chart, v in pins if chart.name == versions.GPU_OPERATOR.name]
    for file, chart, version in wanted:
        path = CACHE / file
        if path.is_file() and file in sources:
            fetched.append(Fetched(file, f"cache ({sources[file]['source']})", _sha256(path)))
            continue
        source = None
        if not offline:
            source = _pull(chart, version, CACHE) if chart else _download_assets(version, CACHE)
        source = source or _from_mirror(file, CACHE)
        if source is None:
            missing.append(file)
            continue
        sources[file] = {"source": source, "sha256": _sha256(path)}
        fetched.append(Fetched(file, source, sources[file]["sha256"]))
    sources_file.write_text(json.dumps(sources, indent=2, sort_keys=True) + "\n")
    if missing:
        raise _found_nowhere(missing, offline)
    return fetched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delivery.charts", description=__doc__.split("\n")[0])
    parser.add_argument("--offline", action="store_true",
                        help="do not try the chart repositories (also CHART_OFFLINE=1)")
    args = parser.parse_args(argv)
    print(f"chart cache {CACHE}:")
    try:
        for item in fetch(offline=args.offline or os.environ.get("CHART_OFFLINE") == "1"):
            print(f"  {item.file}: {item.source} sha256:{item.sha256[:16]}")
    except ChartMissing as err:
        # A failure everywhere, not only in CI: without the charts the render tests cannot prove anything, and
        # scripts/test.sh stops here with this one message instead of a failure or skip per render test.
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # the cache directory cannot be created or written
        print(f"error: chart cache {CACHE}: {err.strerror or err}. Fix: set CHART_CACHE to a directory you can "
              "write", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
