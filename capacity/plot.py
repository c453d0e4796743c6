"""The what-if's picture: demand against serving capacity, replicas, nodes and Pending pods over time."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def title(result: dict[str, Any]) -> str:
    """The figure's headline: the stack's name and workload, and the run's figures."""
    ttc = result["timeToCapacityMinutes"]
    return (f"{result['stack']} / {result['workload']}: ${result['costPerMonth']:,.0f}/month, "
            f"{result['gpuHoursUnserved']:.1f} GPU-h unserved, p95 time to capacity {ttc['p95']:.1f} min, "
            f"peak {result['peakNodes']} nodes")


def bucket_label(t: list[float]) -> str:
    """How long one point of the down-sampled series spans (capacity/tally.py `Downsampler`), e.g. "16 min"."""
    span = t[1] - t[0] if len(t) > 1 else 0.0
    return f"{span / 60:g} min" if span >= 60 else f"{span:g} s"


def plot(series: dict[str, list[float]], result: dict[str, Any], out: Path) -> None:
    """Three stacked panels sharing the time axis (days), written as a PNG with matplotlib's Agg backend. Each
    point spans a bucket of the run: demand and capacity are its means, the counts (whole replicas, nodes, pods)
    steps of its extremes, and the legends say which."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    days = [t / 86400 for t in series["t"]]
    per = bucket_label(series["t"])
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(12, 8), sharex=True,
                                        gridspec_kw={"height_ratios": [3, 2, 1.3]})
    ax1.plot(days, series["demand"], color="tab:red", lw=0.8, label=f"demand (GPUs, mean per {per})")
    ax1.plot(days, series["capacity"], color="tab:blue", lw=0.8,
             label=f"serving capacity (Ready GPUs, mean per {per})")
    ax1.set_ylabel("GPUs")
    ax1.legend(loc="upper left", fontsize=8)
    ax1.grid(alpha=0.3)
    # desired drawn wide beneath Ready: where they agree both show, where Ready lags the wide band stands out
    ax2.step(days, series["desired"], where="post", color="tab:orange", lw=2.5, alpha=0.6,
             label=f"desired replicas (most per {per})")
    ax2.step(days, series["ready"], where="post", color="tab:green", lw=0.8,
             label=f"Ready replicas (fewest per {per})")
    ax2.set_ylabel("replicas")
    ax2.legend(loc="upper left", fontsize=8)
    ax2.grid(alpha=0.3)
    ax3.step(days, series["gpuNodes"], where="post", color="tab:purple", lw=2.0, alpha=0.6,
             label=f"nodes with GPUs (fewest per {per})")
    ax3.step(days, series["nodes"], where="post", color="black", lw=0.8, label=f"nodes billed (most per {per})")
    ax3.step(days, series["pending"], where="post", color="tab:gray", lw=0.8, label=f"Pending pods (most per {per})")
    ax3.set_ylabel("count")
    ax3.set_xlabel("days from the start of the trace")
    ax3.legend(loc="upper left", fontsize=8)
    ax3.grid(alpha=0.3)
    fig.suptitle(title(result), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def tradeoff(outcome: Any, out: Path) -> None:
    """`python -m capacity tune --plot`: cost per month against unserved demand for every setting simulated on
    the tuning part, the trade-off front, the level, and the current, recommended, oracle and static points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = outcome.result
    level = r["serviceLevel"]
    demand = r["current"]["gpuHoursDemand"]

    def pct(entry: dict[str, Any]) -> float:
        return 100 * entry["gpuHoursUnserved"] / demand if demand else 0.0

    fig, ax = plt.subplots(figsize=(10, 6))
    groups = (
        ([p for p in outcome.points if not p.met_trace], 10, "0.7", "misses the level"),
        ([p for p in outcome.points if p.met_trace and not p.met], 12, "tab:olive",
         "meets it on the trace, not (or not checked) on every reordering"),
        ([p for p in outcome.points if p.met], 16, "tab:green", "meets it on every reordering too"),
    )
    for points, size, color, label in groups:
        ax.scatter([p.unserved_pct for p in points], [p.cost for p in points], s=size, color=color,
                   label=f"simulated, {label} ({len(points)})")
    front = sorted(outcome.front, key=lambda p: p.unserved_pct)
    ax.step([p.unserved_pct for p in front], [p.cost for p in front], where="post", color="tab:green", lw=1,
            label="trade-off front (nothing both cheaper and serving more)")
    marks = (("current", "tab:red", "o"), ("recommended", "tab:blue", "*"),
             ("oracle (nodes the minute they are needed: the least unserved)", "black", "x"),
             ("static", "tab:purple", "s"))
    for name, color, marker in marks:
        entry = r[name.split()[0]]
        ax.scatter([pct(entry)], [entry["costPerMonth"]], s=160 if marker == "*" else 70, color=color,
                   marker=marker, zorder=5, label=f"{name}: {entry['costPerMonth']:,.0f} USD/month")
    ax.axvline(level["maxUnservedPercent"], color="tab:blue", ls="--", lw=0.8,
               label=f"level: ≤ {level['maxUnservedPercent']:g} % unserved")
    ax.set_xlabel("unserved demand on the tuning part (% of the demand)")
    ax.set_ylabel("cost per month (USD)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    second = (f"latency objective met for ≥ {level['minObjectiveAttainmentPercent']:g} % of the demand"
              if level.get("minObjectiveAttainmentPercent") is not None
              else f"p95 time to capacity ≤ {level['p95TimeToCapacityMinutes']:g} min")
    ax.set_title(f"{r['stack']} / {r['workload']}: settings simulated by python -m capacity tune\n"
                 f"({second} to meet the level)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
