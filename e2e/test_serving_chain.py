"""The serving profile (issue 21) through the real autoscaling chain: vLLM's metrics -> Prometheus -> KEDA -> HPA.

Dev is deployed with its `inference` workload on a serving profile (`workloads[].serving`, vLLM, a P90 TTFT and
TPOT objective; docs/serving-workloads.md#serving-profile) in place of its GPU target. Real here, as in
e2e/test_autoscaling.py (e2e/chain.py): kube-apiserver, the HPA controller, kube-scheduler, KEDA's operator and
adapter, Prometheus scraping with the stack's own settings: the GPU Operator's ServiceMonitor for the guardrail's
DCGM series and, new here, the workload's own PodMonitor for vLLM's series. Stand-ins: kwok (pods Ready after
the model's load time divided by FACTOR), the engines (e2e/vllm_load.py: vLLM's families per Ready pod from
capacity/service.py's model) and dcgm-exporter (e2e/gpu_load.py). cluster-autoscaler runs over the GPU pool as in
the autoscaling suite (e2e/pool_autoscaler.py), idle here: the scenarios stay within dev's one node.

Scenarios, in order on one cluster:
- `rising`: 0.5 -> 2.5 GPUs of work on one replica: latency and queue climb, the triggers ask for more, and while
  a round of pods loads its model the ask stays sized by the pods that serve (the profile's "pods still starting
  count as capacity"), checked on the real HPA's own readings;
- `steady`: the load moved to the middle of the band for the replicas that run: no replica change;
- `removed`: no load: back to minReplicas after the scale-down stabilisation window.
`serving-timeline.json` (in E2E_OUT) holds each scenario's chain and the HPA's readings; the chain is printed.
`E2E_SERVING_BAND=up,down` replaces the band (e.g. `0.3,0.2`, which puts healthy latency above it: `steady` fails).
"""

from __future__ import annotations

import copy
import os
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from capacity.config import read_stack_file
from capacity.service import ServiceModel
from capacity.settings import HPA_TOLERANCE as TOLERANCE
from e2e import serving_checks as checks
from e2e import timescale
from e2e.chain import NAMESPACE, NS, WORKLOAD, Chain, open_chain
from e2e.gpu_load import LoadProfile
from e2e.harness import Kube, Timer, wait_for
from e2e.recorder import is_ready, parse_quantity
from e2e.serving_checks import Reading, thin
from e2e.timeline import Scenario, plot, table, write
from e2e.vllm_load import LiveVllmExporter
from localprom.scrape import pod_monitor_scrape_configs
from realengine.toolchain import Toolchain
from renderers import serving_profile
from stackconfig import load_stack_config
from stackconfig.engines import VLLM
from stackconfig.workloads import WorkloadConfig
from stacknames import MONITORING_NAMESPACE
from tests.vllm_history import PROFILE

CLUSTER_STACK = "dev"
CONTROLLER_MANAGER_ARGS = timescale.controller_manager_args()
#: Model loading of a pod (the what-if's podStartSeconds for this run, as tests/test_serving_whatif.py's 10
#: minutes); kwok makes a pod Ready that long ÷ FACTOR after it is bound (20 s).
MODEL_LOAD_SECONDS = 600
KWOK_STAGES = timescale.stage_delays({WORKLOAD: MODEL_LOAD_SECONDS / timescale.FACTOR})
#: One node's GPUs: the scenarios stay on dev's one node (the node chain is e2e/test_autoscaling.py's).
MAX_REPLICAS = 8
IDLE = 0.5  # GPUs of work on one replica: load 0.5, P90 TPOT 23.5 ms, ratio 0.47 (inside the band)
RISE = 2.5  # beyond one GPU's knee: the backlog grows until replicas serve it
SEED = int(os.environ.get("E2E_SEED", "21"))


def band() -> dict[str, float]:
    text = os.environ.get("E2E_SERVING_BAND")
    if not text:
        return {}
    up, down = (float(x) for x in text.split(","))
    return {"scaleUp": up, "scaleDown": down}


def workload_changes() -> dict[str, Any]:
    """Dev's `inference` on the serving profile of docs/serving-workloads.md (tests/vllm_history.py PROFILE):
    the profile needs `ports` and `metrics` (its PodMonitor) and a grace period above its drain, and refuses
    `targetUtilization`."""
    profile = copy.deepcopy(PROFILE)
    if band():
        profile["band"] = band()
    return {"targetUtilization": None, "ports": [{"name": "http", "port": 8000}], "metrics": {"port": "http"},
            "terminationGracePeriodSeconds": 160, "maxReplicas": MAX_REPLICAS, "serving": profile}


def stack_overrides() -> dict[str, Any]:
    return {**{f"{NS}:workloads.0.{k}": v for k, v in workload_changes().items()},
            f"{NS}:whatIf.podStartSeconds": MODEL_LOAD_SECONDS}


def workload_config() -> WorkloadConfig:
    """The workload as the overridden stack file declares it (what `pulumi up` rendered)."""
    raw = read_stack_file("dev")
    w = raw["workloads"][0]
    for key, value in workload_changes().items():
        if value is None:
            w.pop(key, None)
        else:
            w[key] = value
    return load_stack_config(raw).workloads[0]


def out_dir() -> Path:
    path = Path(os.environ.get("E2E_OUT", "e2e-out"))
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- the HPA's own readings ----------------------------------------------------------------------------------


class HpaTrace:
    """The HPA's status (its `currentMetrics`, per trigger) and the workload's pods, sampled every 0.2 s."""

    def __init__(self, chain: Chain, triggers: Sequence[str]) -> None:
        self.chain, self.triggers = chain, list(triggers)
        self.readings: list[Reading] = []
        self._stop = threading.Event()

    def start(self) -> HpaTrace:
        threading.Thread(target=self._run, name="hpa trace", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            reading = self.read()
            if reading is not None:
                self.readings.append(reading)

    def read(self) -> Reading | None:
        rec = self.chain.recorder
        hpa = rec.hpa
        if hpa is None:
            return None
        status = hpa.get("status", {})
        values = {}
        for m in status.get("currentMetrics") or []:
            ext = m.get("external") or {}
            match = re.match(r"s(\d+)-", ext.get("metric", {}).get("name", ""))
            current = ext.get("current") or {}
            raw = current.get("value", current.get("averageValue"))
            if match and raw is not None and int(match[1]) < len(self.triggers):
                values[self.triggers[int(match[1])]] = parse_quantity(raw)
        pods = rec.of(NAMESPACE, WORKLOAD)
        return Reading(time.time(), int(status.get("desiredReplicas", 0)), int(status.get("currentReplicas", 0)),
                       sum(1 for p in pods if is_ready(p)),
                       sum(1 for p in pods if p["spec"].get("nodeName") and not is_ready(p)), values)

    def since(self, t: float) -> list[Reading]:
        return [r for r in list(self.readings) if r.t >= t]

    def latest(self) -> Reading | None:
        return self.readings[-1] if self.readings else None


# --- the chain -------------------------------------------------------------------------------------------------


@dataclass
class Serving:
    chain: Chain
    exporter: LiveVllmExporter
    trace: HpaTrace
    workload: WorkloadConfig
    triggers: dict[str, dict[str, Any]]
    scenarios: list[Scenario] = field(default_factory=list)

    @property
    def demand(self) -> LoadProfile:
        return self.exporter.demand

    def ratio(self) -> float | None:
        """The unbanded latency ratio `s` as KEDA's Prometheus computes it now (renderers/serving_profile.py)."""
        result = self.chain.prom.query(serving_profile.latency_ratio_query(self.workload))
        return float(result[0]["value"][1]) if result else None

    def record(self, name: str, title: str, start: float, t0: float, end: float,
               extra: Mapping[str, float | None] | None = None, notes: Mapping[str, Any] | None = None) -> Scenario:
        sc = Scenario(name, title, t0, end, 100.0, self.chain.recorder.since(start), extra=dict(extra or {}),
                      notes=dict(notes or {}))
        sc.notes["hpaReadings"] = [asdict(r) for r in thin(self.trace.since(start))]
        sc.notes["model"] = [list(h) for h in self.exporter.history if start <= h[0] <= end][::5]
        self.scenarios.append(sc)
        print("\n" + table_of(sc), file=sys.stderr)
        return sc


def table_of(sc: Scenario) -> str:
    brief = replace(sc, notes={k: v for k, v in sc.notes.items() if k not in ("hpaReadings", "model")})
    lines = [line for line in table(brief).splitlines() if "compared within" not in line]
    lines.append(f"   {'t':>7} {'desired':>7} {'ready':>5} {'starting':>8}  trigger values")
    shown: dict[str, Any] | None = None
    for r in sc.notes["hpaReadings"]:
        # The counts' changes, and the trigger values every 10 s between them.
        if shown is not None and (r["desired"], r["ready"], r["starting"]) == (
                shown["desired"], shown["ready"], shown["starting"]) and r["t"] - shown["t"] < 10:
            continue
        shown = r
        values = ", ".join(f"{k} {v:.3g}" for k, v in r["values"].items())
        lines.append(f"   {r['t'] - sc.t0:+7.1f} {r['desired']:>7} {r['ready']:>5} {r['starting']:>8}  {values}")
    return "\n".join(lines)


def pod_monitor_jobs(kube: Kube, targets_file: Path) -> list[dict[str, Any]]:
    """The scrape configs prometheus-operator makes of the workload's PodMonitor, as `pulumi up` created it."""
    monitor = kube.get("podmonitor", WORKLOAD, "-n", NAMESPACE)
    return pod_monitor_scrape_configs(monitor, targets_file)


@pytest.fixture(scope="module")
def serving(tc: Toolchain, kube: Kube, workdir: Path, timer: Timer) -> Iterator[Serving]:
    w = workload_config()
    assert w.serving is not None and w.metrics is not None
    targets = workdir / "serving" / "vllm-targets.json"
    targets.parent.mkdir(parents=True, exist_ok=True)
    with open_chain(tc, kube, workdir / "serving", timer, SEED, extra_overrides=stack_overrides(),
                    extra_jobs=lambda k: pod_monitor_jobs(k, targets)) as ch:
        spec = ch.kube.get("scaledobject", WORKLOAD, "-n", NAMESPACE)["spec"]
        triggers = {t["name"]: t for t in spec["triggers"]}
        model = ServiceModel.from_config(w.serving, 15)
        assert model is not None
        exporter = LiveVllmExporter(ch.recorder, LoadProfile(), model, VLLM, NAMESPACE, WORKLOAD, w.metrics.port,
                                    targets, ch.exporter.load).start()
        trace = HpaTrace(ch, [t["name"] for t in spec["triggers"]]).start()
        s = Serving(ch, exporter, trace, w, triggers)
        try:
            with timer.phase("warm-up (one replica at load 0.5, inside the band)"):
                s.demand.set(IDLE)
                wait_for("the HPA's reading of every trigger", lambda: (
                    (r := trace.latest()) is not None and len(r.values) == len(triggers)), timeout=150)
                time.sleep(30)  # the rate window and the smoothing fill with the idle load
                ch.settle(timeout=120)
            yield s
        finally:
            exporter.stop()
            trace.stop()
            report(s)


def report(s: Serving) -> None:
    out = out_dir()
    meta = {"factor": timescale.FACTOR, "seed": SEED, "modelLoadSeconds": MODEL_LOAD_SECONDS,
            "band": {"scaleUp": s.workload.serving.band.scale_up if s.workload.serving else None,
                     "scaleDown": s.workload.serving.band.scale_down if s.workload.serving else None}}
    if s.scenarios:
        write(s.scenarios, out, meta, "serving-timeline.json")
        plot(s.scenarios, out / "serving-timeline.png")
    print(f"\n[e2e] serving timeline: {out / 'serving-timeline.json'}", file=sys.stderr)


# --- the stack's objects ---------------------------------------------------------------------------------------


def test_the_profile_is_deployed_and_its_series_scraped_through_the_workloads_podmonitor(serving: Serving) -> None:
    """The ScaledObject `pulumi up` made carries the profile's triggers (Value, target 1; the GPU guardrail at
    100 %), Prometheus selects every PodMonitor (the stack's chart values), and vLLM's series reach Prometheus
    with the PodMonitor's target labels under the names the pinned vLLM exports."""
    t = serving.triggers
    assert list(t) == ["gpu-utilization", *serving_profile.SERVING_TRIGGER_NAMES]
    for name, query in serving_profile.profile_queries(serving.workload):
        assert t[name]["metricType"] == "Value" and t[name]["metadata"]["threshold"] == "1", name
        assert t[name]["metadata"]["query"] == query, name
    assert t["gpu-utilization"]["metadata"]["threshold"] == "100"
    prom = serving.chain.kube.get("prometheus", "-n", MONITORING_NAMESPACE)["items"][0]["spec"]
    assert prom.get("podMonitorSelector") == {} and prom.get("podMonitorNamespaceSelector") == {}, prom
    series = serving.chain.prom.query(f'{VLLM.kv_cache_gauge}{{namespace="{NAMESPACE}"}}')
    assert series, "no vLLM series scraped"
    labels = series[0]["metric"]
    assert labels["job"] == f"{NAMESPACE}/{WORKLOAD}" and labels["endpoint"] == "http"
    assert labels["pod"].startswith(f"{WORKLOAD}-") and labels["container"] and labels["model_name"]
    assert not serving.chain.prom.query("vllm:gpu_cache_usage_perc"), "the name vLLM removed in 0.12"


def replicas_needed(model: ServiceModel, demand: float) -> int:
    """The fewest one-GPU replicas whose latency ratio under `demand` is at most the band's top (the service
    model's, with no backlog): what a profile that never overshot would settle on."""
    n = 1
    while (model.ratio(*model.latency(demand / n, 0.0)) or 0.0) > model.band_up:
        n += 1
    return n


# --- the scenarios ---------------------------------------------------------------------------------------------


def test_rising_load_scales_up_on_latency_and_queue_and_pods_loading_count_as_capacity(
        serving: Serving, timer: Timer) -> None:
    """0.5 -> 2.5 GPUs of work on one replica. The latency and queue triggers (not the GPU guardrail) drive the
    replicas up. While pods load their model the HPA's ask is sized by the pods that serve: every desired count
    during a start-up is at most ceil(value × Ready pods) of the largest trigger, and whenever the HPA orders
    more while pods are still loading, a trigger's value rose first (the starting pods never add to the ask)."""
    ch, trace = serving.chain, serving.trace
    lat, queue = serving_profile.LATENCY_TRIGGER, serving_profile.QUEUE_TRIGGER
    with timer.phase("scenario rising"):
        start = time.time()
        base = ch.recorder.snapshot()
        t0 = serving.demand.set(RISE)
        first = ch.recorder.wait("the HPA to ask for more replicas", lambda o: o.desired > base.desired,
                                 timeout=150)
        wait_for("every replica serving and the latency trigger no longer asking for more", lambda: (
            (r := trace.latest()) is not None and r.starting == 0 and r.ready == r.desired
            and r.values.get(lat, 2) <= 1 + TOLERANCE and ch.recorder.hpa_at_rest()), timeout=300)
        end = ch.settle(timeout=120).t
    readings = trace.since(t0)
    windows = checks.starting_windows(readings)
    ups = checks.scale_ups(readings)
    assert ups, "the HPA trace saw no scale-up"
    first_up = ups[0][1]
    during = checks.rounds_while_loading(readings)
    held = serving.workload.scale_down_stabilization_seconds / timescale.FACTOR + 1.0
    counted = checks.counted_loading_pods(readings, held)
    unexplained = checks.unexplained_rounds(readings)
    sc = serving.record(
        "rising", f"{IDLE:g} -> {RISE:g} GPUs of work on one replica", start, t0, end,
        extra={"first_round": first.t, "first_round_serving": next(
            (r.t for r in readings if r.t > first.t and r.ready >= first.desired), None)},
        notes={"firstRound": first.desired, "peakDesired": max(r.desired for r in readings),
               "replicasTheLoadNeeds": replicas_needed(serving.exporter.model, RISE),
               "roundsOrderedWhilePodsLoaded": [
                   {"t": round(b.t - t0, 1), "from": a.desired, "to": b.desired, "ready": b.ready,
                    "starting": b.starting, "values": b.values} for a, b in during],
               "startupWindows": [[round(w0 - t0, 1), round(w1 - t0, 1)] for w0, w1 in windows]})
    assert first.desired > base.desired
    r0 = first_up
    drivers = {n: r0.ask(n) for n in (lat, queue) if n in r0.values}
    assert max(drivers.values(), default=0) >= r0.desired, f"the first round was not the latency/queue ask: {r0}"
    assert r0.values.get("gpu-utilization", 0) / 100 <= r0.ready, "the guardrail asked for more than runs"
    assert windows, "no pod was seen loading its model"
    assert not counted, f"the HPA counted pods still loading as serving ones: {counted[:3]}"
    assert not unexplained, f"a second round for the same signal while pods loaded: {unexplained}"
    assert sc.real[-1].desired == sc.real[-1].ready > base.desired


def test_steady_load_inside_the_band_changes_no_replica(serving: Serving, timer: Timer) -> None:
    """The load moves to the middle of the band for the replicas that run (load 0.5 per GPU: ratio 0.47 with
    the band 0.35-0.6): over two minutes (the rate window and the smoothing, and some 240 HPA syncs) the latency
    trigger reads exactly 1 and the HPA keeps the count."""
    ch, trace = serving.chain, serving.trace
    lat = serving_profile.LATENCY_TRIGGER
    b = serving.workload.serving.band if serving.workload.serving else None
    assert b is not None
    with timer.phase("scenario steady"):
        start = time.time()
        replicas = ch.recorder.snapshot().desired
        before = serving.ratio()
        t0 = serving.demand.set(0.5 * replicas)
        time.sleep(120)
        after = serving.ratio()
        end = time.time()
    readings = trace.since(t0)
    sc = serving.record("steady", f"{0.5 * replicas:g} GPUs of work on {replicas} replicas (load 0.5)",
                        start, t0, end, notes={"ratioBefore": before, "ratioAfter": after,
                                               "band": [b.scale_down, b.scale_up],
                                               "hpaSyncs": round((end - t0) / timescale.HPA_SYNC_SECONDS)})
    assert after is not None and b.scale_down <= after <= b.scale_up, f"ratio {after} outside the band"
    assert {r.desired for r in readings} == {replicas}, "a replica change inside the band"
    assert not checks.left_the_band(readings, lat), "the latency trigger left the band"
    assert readings[-1].values.get(lat) == 1.0, "the latency trigger does not read the band's 1"
    assert min(o.ready for o in sc.real) == replicas


def test_load_removed_scales_in_to_min_replicas_after_the_stabilisation_window(
        serving: Serving, timer: Timer) -> None:
    """No more requests: no request finishes, so the latency ratio reads 0 (not an error), the queue and KV
    cache empty, and the HPA goes to minReplicas, its first step no sooner than the scale-down stabilisation
    window (the stack's, divided by FACTOR)."""
    ch, trace = serving.chain, serving.trace
    window = serving.workload.scale_down_stabilization_seconds / timescale.FACTOR
    with timer.phase("scenario removed"):
        start = time.time()
        base = ch.recorder.snapshot()
        t0 = serving.demand.set(0.0)
        low = serving.workload.min_replicas
        ch.recorder.wait("minReplicas serving", lambda o: o.desired == o.ready == low and o.starting == 0,
                         timeout=300)
        # minReplicas can come while the latency value is still falling (ceil(0.3 × 2 Ready) = 1): its window
        # empties a minute after the last request finished.
        wait_for("every trigger reading 0", lambda: (r := trace.latest()) is not None and r.values
                 and all(v == 0.0 for v in r.values.values()), timeout=120)
        time.sleep(3)  # and staying there (the HPA reports TooFewReplicas at minReplicas, never at rest)
        end = time.time()
    readings = trace.since(t0)
    lower = checks.first_lower_recommendation(readings)
    sc = serving.record("removed", f"load removed: {serving.demand.changes[-2][1]:g} -> 0 GPUs", start, t0, end,
                        extra={"recommendation_lower": lower},
                        notes={"stabilisationWindow": window})
    ev = sc.real_events()
    assert base.desired > serving.workload.min_replicas
    down = checks.first_scale_down(readings)
    assert lower is not None and down is not None and ev["scale_down"] is not None
    # The HPA scales down to the largest recommendation of the window: the first step comes a window after the
    # first lower recommendation (less the trace's 0.2 s sampling and the 0.5 s sync).
    assert down - lower >= window - 1.0, "scaled down before the stabilisation window"
    final = readings[-1]
    assert all(v == 0.0 for v in final.values.values()), final.values
    assert sc.real[-1].desired == sc.real[-1].ready == serving.workload.min_replicas



def test_the_what_ifs_latency_trigger_follows_the_one_the_hpa_read(serving: Serving) -> None:
    """The what-if's latency trigger (capacity/service.py), fed the run's own model rows, against every reading of
    the real one in the three scenarios: the queue's memory after `rising` (the rate window's span and the
    smoothing), the band in `steady`, the way to 0 in `removed` (tests/test_serving_chain_replay.py does the same
    on the recorded run)."""
    docs = [sc.as_json() for sc in serving.scenarios]
    assert [d["scenario"] for d in docs] == ["rising", "steady", "removed"], "a scenario before this one failed"
    series = checks.trigger_replay(serving.exporter.model, docs, IDLE)
    misfits = [m for d in docs for m in checks.trigger_misfits(series, d, serving_profile.LATENCY_TRIGGER)]
    assert not misfits, "\n".join(misfits)
