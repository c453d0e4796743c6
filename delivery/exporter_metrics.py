"""The dcgm-exporter metrics the platform reads, checked against the pinned exporter's own counters list.

Every `DCGM_FI_*`/`DCGM_EXP_*` name in what the program sends (KEDA queries, recording and alerting rules,
dashboards) must be exported by the pinned exporter (`stackconfig/versions.py`), with the type and unit the
program assumes (`renderers/dcgm.py` `METRIC_UNITS`). dcgm-exporter 4.9.0 renamed 23 default fields and made GPU
utilisation a 0-1 ratio; 4.10.0 renamed the PCIe/NVLink byte fields: a bump that ships either would leave every
threshold reading a series that no longer exists, or a ratio compared with 60. This check makes that a test failure.
The list is the counters file the GPU Operator runs the exporter with, vendored per release (dcgm_exporter/).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from renderers import dcgm
from stackconfig import versions

COUNTERS_DIR = Path(__file__).resolve().parent / "dcgm_exporter"
#: A DCGM field or exporter-derived metric as it appears in PromQL (dcgm-exporter METRICS.md, "Field families").
METRIC_NAME = re.compile(r"\bDCGM_(?:FI|EXP)_[A-Z0-9_]+\b")
_UNIT = re.compile(r"\(in ([^)]+)\)")


@dataclass(frozen=True)
class Counter:
    """One enabled line of a counters list: `DCGM FIELD, Prometheus metric type, help message`."""

    name: str
    type: str
    help: str

    @property
    def unit(self) -> str | None:
        """The unit the help message states: `(in %)` -> `%`, `Ratio of ...` -> `ratio`, none -> None."""
        found = _UNIT.search(self.help)
        if found:
            return found.group(1).strip()
        return "ratio" if re.search(r"\bratio\b", self.help, re.IGNORECASE) else None


def counters_file(release: str = versions.DCGM_EXPORTER_RELEASE) -> Path:
    path = COUNTERS_DIR / f"dcp-metrics-included-{release}.csv"
    if not path.is_file():
        raise FileNotFoundError(
            f"no counters list for dcgm-exporter {release} ({path.name} in {COUNTERS_DIR}): copy "
            f"etc/dcp-metrics-included.csv from NVIDIA/dcgm-exporter tag {release} there and cite it in PROVENANCE.md")
    return path


def parse_counters(text: str) -> dict[str, Counter]:
    """The enabled lines (a line starting with `#` is off, dcgm-exporter README "Changing Metrics")."""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, type_, help_ = (part.strip() for part in line.split(",", 2))
        out[name] = Counter(name, type_, help_)
    return out


def metrics_read(texts: Iterable[str]) -> set[str]:
    """Every DCGM metric name in these texts (queries, rule expressions, dashboard JSON)."""
    return {name for text in texts for name in METRIC_NAME.findall(text)}


def problems(read: Iterable[str], counters: Mapping[str, Counter],
             assumed: Mapping[str, tuple[str, str | None]] = dcgm.METRIC_UNITS,
             release: str = versions.DCGM_EXPORTER_RELEASE) -> list[str]:
    """What would break: a metric read but not exported, or exported with another type or unit than assumed."""
    out = []
    for name in sorted(set(read)):
        if name not in assumed:
            out.append(f"{name} is read, but renderers/dcgm.py METRIC_UNITS does not say which type and unit the "
                       "program assumes for it: add it, from the pinned exporter's counters list")
            continue
        counter = counters.get(name)
        if counter is None:
            out.append(f"{name} is read, but dcgm-exporter {release} does not export it (not in its counters "
                       "list, or commented out): every query on it reads nothing; see "
                       "docs/operations.md#upgrade-dcgm-exporter")
            continue
        want = assumed[name]
        if (counter.type, counter.unit) != want:
            out.append(f"{name} is read as a {want[0]} in {want[1] or '(no unit)'}, but dcgm-exporter {release} "
                       f"exports a {counter.type} in {counter.unit or '(no unit)'} ({counter.help!r}): change "
                       "every threshold on it, then METRIC_UNITS")
    return out
