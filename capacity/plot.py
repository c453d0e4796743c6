"""The what-if's picture: demand against serving capacity, replicas, nodes and Pending pods over time."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot(series: dict[str, list[float]], result: dict[str, Any], out: Path) -> None:
    """Three stacked panels sharing the time axis (days), written as a PNG with matplotlib's Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    days = [t / 86400 for t in series["t"]]
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(12, 8), sharex=True,
                                        gridspec_kw={"height_ratios": [3, 2, 1.3]})
    ax1.plot(days, series["demand"], color="tab:red", lw=0.8, label="demand (GPUs)")
    ax1.plot(days, series["capacity"], color="tab:blue", lw=0.8, label="serving capacity (Ready GPUs)")
    ax1.set_ylabel("GPUs")
    ax1.legend(loc="upper left", fontsize=8)
    ax1.grid(alpha=0.3)
    ax2.plot(days, series["desired"], color="tab:orange", lw=0.8, label="desired replicas")
    ax2.plot(days, series["ready"], color="tab:green", lw=0.8, label="Ready replicas")
    ax2.set_ylabel("replicas")
    ax2.legend(loc="upper left", fontsize=8)
    ax2.grid(alpha=0.3)
    ax3.step(days, series["gpuNodes"], where="post", color="tab:purple", lw=2.0, alpha=0.6, label="nodes with GPUs")
    ax3.step(days, series["nodes"], where="post", color="black", lw=0.8, label="nodes billed (max)")
    ax3.step(days, series["pending"], where="post", color="tab:gray", lw=0.8, label="Pending pods (max)")
    ax3.set_ylabel("count")
    ax3.set_xlabel("days from the start of the trace")
    ax3.legend(loc="upper left", fontsize=8)
    ax3.grid(alpha=0.3)
    ttc = result["timeToCapacityMinutes"]
    fig.suptitle(
        f"{result['stack']} / {result['workload']}: ${result['costPerMonth']:,.0f}/month, "
        f"{result['gpuHoursUnserved']:.1f} GPU-h unserved, p95 time to capacity {ttc['p95']:.1f} min, "
        f"peak {result['peakNodes']} nodes",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
