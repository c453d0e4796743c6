"""A scenario's timeline: its events read out of a series of `Observation`s (the real run's or the prediction's,
by the same function), the comparison of the two, `timeline.json`, the printed table and the plot.

The events of the chain, each the first moment after the load change at which the series shows it:
load change -> metric seen by Prometheus -> HPA desired -> placeholders preempted / pods Pending -> node ordered ->
the first new replica Ready -> node Ready (its GPUs allocatable) -> pods Ready (every desired replica) ->
utilisation under target (the HPA's own reading) -> headroom restored; and on the way down: scale-down -> node
removed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from capacity.sim import Simulation
from e2e.prediction import Inputs
from e2e.recorder import Observation

CHAIN = ("load", "metric_seen", "hpa_desired", "placeholders_preempted", "pods_pending", "node_ordered",
         "first_new_ready", "node_ready", "pods_ready", "under_target", "headroom_restored", "scale_down",
         "node_removed")


def first(series: Sequence[Observation], after: float, check: Callable[[Observation], bool]) -> float | None:
    return next((o.t for o in series if o.t > after and check(o)), None)


def events(series: Sequence[Observation], t0: float, threshold: float) -> dict[str, float | None]:
    """The chain's events in `series` after the load change at `t0` (None: not seen)."""
    base = next((o for o in reversed(series) if o.t <= t0), series[0])
    out: dict[str, float | None] = {"load": t0}
    out["hpa_desired"] = first(series, t0, lambda o: o.desired != base.desired)
    out["placeholders_preempted"] = first(series, t0, lambda o: o.placeholders_pending > base.placeholders_pending)
    out["pods_pending"] = first(series, t0, lambda o: o.pending > 0)
    out["node_ordered"] = first(series, t0, lambda o: o.nodes > base.nodes)
    out["node_ready"] = first(series, t0, lambda o: o.nodes_ready > base.nodes_ready)
    out["first_new_ready"] = first(series, t0, lambda o: o.ready > base.ready)
    rises = [o.t for a, o in zip(series, series[1:], strict=False) if o.t > t0 and o.desired > a.desired]
    last_rise = rises[-1] if rises else None
    out["pods_ready"] = (first(series, last_rise, lambda o: o.ready >= o.desired and o.pending == 0)
                         if last_rise is not None else None)
    out["under_target"] = (first(series, last_rise, lambda o: o.metric is not None and o.desired > 0
                                 and o.metric / o.desired <= threshold and o.ready >= o.desired)
                           if last_rise is not None else None)
    preempted = out["placeholders_preempted"]
    out["headroom_restored"] = (first(series, preempted, lambda o: o.placeholders_pending == 0
                                      and o.placeholders == base.placeholders) if preempted is not None else None)
    out["scale_down"] = first(series, t0, lambda o: o.desired < base.desired)
    out["node_removed"] = first(series, t0, lambda o: o.nodes_ready < base.nodes_ready)
    return out


def values(series: Sequence[Observation], t0: float) -> dict[str, int]:
    after = [o for o in series if o.t >= t0] or list(series[-1:])
    return {"peakDesired": max(o.desired for o in after), "finalDesired": after[-1].desired,
            "peakNodes": max(o.nodes for o in after), "finalNodes": after[-1].nodes,
            "minNodes": min(o.nodes for o in after)}


@dataclass
class Scenario:
    """One scenario of the suite: what happened, what the what-if predicted, and whether they agree."""

    name: str
    title: str
    t0: float
    end: float
    threshold: float
    real: list[Observation]
    predicted: list[Observation] = field(default_factory=list)
    #: Measured events the series cannot show (the first Prometheus sample of the new load, KEDA's fallback, ...).
    extra: dict[str, float | None] = field(default_factory=dict)
    predicted_extra: dict[str, float | None] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    #: Events (of CHAIN) and values compared with the prediction; the tolerance in seconds.
    compared: tuple[str, ...] = ()
    compared_values: tuple[str, ...] = ("peakDesired", "finalDesired", "peakNodes", "finalNodes")
    tolerance: float = 0.0
    #: What the prediction was made from (kept in timeline.json, so it can be made again without the cluster).
    inputs: Inputs | None = None

    def predict(self, tweak: Callable[[Simulation], None] | None = None) -> list[Observation]:
        """The what-if's prediction from `inputs` (with the simulator changed by `tweak`: a wrong rule), kept as
        `predicted`, with the events the series cannot show in `predicted_extra`."""
        assert self.inputs is not None, f"scenario {self.name}: no prediction inputs"
        self.predicted, self.predicted_extra = self.inputs.predict(tweak)
        return self.predicted

    def real_events(self) -> dict[str, float | None]:
        return {**events(self.real, self.t0, self.threshold), **self.extra}

    def predicted_events(self) -> dict[str, float | None]:
        if not self.predicted:
            return {}
        return {**events(self.predicted, self.t0, self.threshold), **self.predicted_extra}

    def disagreements(self) -> list[str]:
        """Where the prediction is outside the tolerance (or sees an event the run did not, or the reverse)."""
        real, pred = self.real_events(), self.predicted_events()
        out = []
        for name in self.compared:
            a, b = real.get(name), pred.get(name)
            if (a is None) != (b is None):
                out.append(f"{name}: real {fmt(a, self.t0)}, predicted {fmt(b, self.t0)}")
            elif a is not None and b is not None and abs(a - b) > self.tolerance:
                out.append(f"{name}: real {fmt(a, self.t0)}, predicted {fmt(b, self.t0)} "
                           f"(off by {abs(a - b):.1f} s > {self.tolerance:.1f} s)")
        rv, pv = values(self.real, self.t0), values(self.predicted, self.t0)
        for name in self.compared_values:
            if rv[name] != pv[name]:
                out.append(f"{name}: real {rv[name]}, predicted {pv[name]}")
        return out

    def as_json(self) -> dict[str, Any]:
        rel = {k: (None if v is None else round(v - self.t0, 2)) for k, v in self.real_events().items()}
        pred = {k: (None if v is None else round(v - self.t0, 2)) for k, v in self.predicted_events().items()}
        return {
            "scenario": self.name, "title": self.title, "start": self.t0, "end": self.end,
            "events": {k: self.real_events()[k] for k in self.real_events()},
            "secondsAfterLoadChange": rel,
            "predicted": pred, "tolerance": self.tolerance, "compared": list(self.compared),
            "comparedValues": list(self.compared_values), "threshold": self.threshold, "extra": self.extra,
            "values": values(self.real, self.t0),
            "predictedValues": values(self.predicted, self.t0) if self.predicted else {},
            "disagreements": self.disagreements() if self.predicted else [],
            "notes": self.notes,
            "series": [asdict(o) for o in self.real],
            "predictedSeries": [asdict(o) for o in self.predicted],
            "whatIfInputs": self.inputs.as_json() if self.inputs is not None else None,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Scenario:
        """A scenario of timeline.json, its prediction not yet made (`predict()`)."""
        return cls(doc["scenario"], doc["title"], float(doc["start"]), float(doc["end"]), float(doc["threshold"]),
                   [Observation(**o) for o in doc["series"]],
                   extra={k: v for k, v in doc["extra"].items()}, notes=dict(doc["notes"]),
                   compared=tuple(doc["compared"]), compared_values=tuple(doc["comparedValues"]),
                   tolerance=float(doc["tolerance"]),
                   inputs=Inputs.from_json(doc["whatIfInputs"]) if doc.get("whatIfInputs") else None)


def fmt(t: float | None, t0: float) -> str:
    return "—" if t is None else f"{t - t0:+.1f} s"


def table(scenario: Scenario) -> str:
    """The scenario's chain as printed by the suite: each event's time after the load change, real and predicted."""
    real, pred = scenario.real_events(), scenario.predicted_events()
    lines = [f"== {scenario.name}: {scenario.title}", f"   {'event':<26}{'real':>10}{'what-if':>10}"]
    for name in [*CHAIN, *sorted(k for k in real if k not in CHAIN)]:
        if real.get(name) is None and pred.get(name) is None:
            continue
        mark = "  *" if name in scenario.compared else ""
        lines.append(f"   {name:<26}{fmt(real.get(name), scenario.t0):>10}{fmt(pred.get(name), scenario.t0):>10}{mark}")
    rv = values(scenario.real, scenario.t0)
    pv = values(scenario.predicted, scenario.t0) if scenario.predicted else {}
    lines.append("   " + ", ".join(f"{k} {rv[k]}" + (f" (what-if {pv[k]})" if pv else "") for k in rv))
    short = {k: v for k, v in scenario.notes.items() if len(str(v)) <= 200}  # recorded series stay in the JSON
    if short:
        lines.append("   " + "; ".join(f"{k}: {v}" for k, v in short.items()))
    lines.append(f"   * compared within ±{scenario.tolerance:.1f} s")
    return "\n".join(lines)


def write(scenarios: Sequence[Scenario], out: Path, meta: Mapping[str, Any], name: str = "timeline.json") -> Path:
    path = out / name
    path.write_text(json.dumps({**meta, "scenarios": [s.as_json() for s in scenarios]}, indent=1))
    return path


def plot(scenarios: Sequence[Scenario], path: Path) -> Path:
    """One panel per scenario: desired and Ready replicas, Pending pods, Ready nodes (real: lines; what-if: dashed),
    the chain's events as vertical marks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(scenarios), 1, figsize=(11, 3.2 * len(scenarios)), squeeze=False)
    for ax, sc in zip(axes[:, 0], scenarios, strict=True):
        for series, style, label in ((sc.real, "-", "real"), (sc.predicted, "--", "what-if")):
            if not series:
                continue
            ts = [o.t - sc.t0 for o in series]
            ax.step(ts, [o.desired for o in series], style, where="post", color="tab:blue",
                    label=f"desired ({label})")
            ax.step(ts, [o.ready for o in series], style, where="post", color="tab:green", label=f"Ready ({label})")
            ax.step(ts, [o.pending + o.placeholders_pending for o in series], style, where="post",
                    color="tab:red", label=f"Pending incl. placeholders ({label})")
            ax.step(ts, [o.nodes_ready * 4 for o in series], style, where="post", color="tab:gray",
                    label=f"Ready nodes × 4 ({label})")
        for name, t in sc.real_events().items():
            if t is not None and name != "load":
                ax.axvline(t - sc.t0, color="black", alpha=0.15)
                ax.text(t - sc.t0, ax.get_ylim()[1] * 0.98, name, rotation=90, fontsize=6, va="top")
        ax.set_title(f"{sc.name}: {sc.title}", fontsize=9)
        ax.set_xlim(0, sc.end - sc.t0)
        ax.set_xlabel("seconds after the load change (this run's clock)")
        ax.legend(fontsize=6, ncol=4, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
