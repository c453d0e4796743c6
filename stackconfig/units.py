"""Units as the upstream programs read them: Go durations, Kubernetes quantities, "a number without a unit".

No pydantic and no Pulumi: the config rules, the what-if (capacity/) and the policy check all parse the same
strings the same way, so a duration the config accepts is one the simulator can run.
"""

from __future__ import annotations

import re
from typing import Any

#: Kubernetes quantities (k8s.io/apimachinery resource.Quantity): a bare number of memory is bytes, `m` is 1/1000.
MEMORY_QUANTITY = re.compile(r"^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)$")
CPU_QUANTITY = re.compile(r"^(\d+(\.\d+)?|\d+m)$")
PROMETHEUS_DURATION = re.compile(r"^\d+(ms|s|m|h|d|w|y)$")
#: Go's time.ParseDuration units (pkg.go.dev/time#ParseDuration), longest first so "ms" is not read as "m" "s".
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|h|m|s)")
_GO_DURATION_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
QUANTITY_MIB = {"Mi": 1, "Gi": 1024, "Ti": 1024 * 1024}
_BYTES = {"": 1, "k": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4,
          "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4}


def go_duration_seconds(value: str) -> float | None:
    """Seconds of a Go duration as the Cluster Autoscaler parses its flags ('35m', '1h5m', '2100s'); None if not one."""
    if value == "0":  # the one duration Go accepts without a unit
        return 0.0
    parts = _GO_DURATION_PART.findall(value)
    if not value or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _GO_DURATION_SECONDS[u] for n, u in parts)


def is_number(value: Any) -> bool:
    """A YAML number or a string of digits: a quantity whose unit was left out."""
    return (isinstance(value, int | float) and not isinstance(value, bool)) or (
        isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?", value.strip()) is not None
    )


def memory_bytes(quantity: str) -> int | None:
    """A Kubernetes memory quantity in bytes (plain, decimal or binary suffix); None if it is not one."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(|k|M|G|T|Ki|Mi|Gi|Ti)", quantity)
    return int(float(match.group(1)) * _BYTES[match.group(2)]) if match else None


def mebibytes(quantity: str) -> int:
    """A `<n>Mi|Gi|Ti` quantity in MiB (the only forms the serving keys accept)."""
    match = re.fullmatch(r"(\d+)(Mi|Gi|Ti)", quantity)
    if not match:
        raise ValueError(f"not a Mi/Gi/Ti quantity: {quantity!r}")
    return int(match.group(1)) * QUANTITY_MIB[match.group(2)]
