"""The autoscaling chain of the dev stack on the local control plane, assembled for the scenarios of
e2e/test_autoscaling.py: what is real, what stands in, and how a scenario is started, recorded and predicted.

Real: kube-apiserver, kube-controller-manager (its HPA controller acting on the HPA KEDA made from the stack's
ScaledObject), kube-scheduler (placement and priority preemption of the stack's placeholders), KEDA's operator and
metrics adapter (e2e/keda.py), Prometheus (Debian's, scraping with the stack's scrape settings and evaluating the
stack's rules: e2e/monitoring.py), cluster-autoscaler 1.35.2 given the pool and flags the stack sent Gcore
(e2e/pool_autoscaler.py), every object `pulumi up` created. Stand-ins: kwok for the kubelets, the nodes' boot and
their GPUs' arrival (drawn as the what-if draws them: e2e/pool_autoscaler.py), the GPU load and dcgm-exporter
(e2e/gpu_load.py).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from capacity.settings import CronWindow, SimSettings
from e2e import timescale
from e2e.harness import Kube, Timer, platform, wait_for
from e2e.keda import LocalKeda
from e2e.kubeapi import KubeApi
from e2e.monitoring import exporter_refresh_seconds, keda_errors_prometheus, platform_prometheus, release_values
from e2e.objects import pod_gpus
from e2e.pool_autoscaler import PoolAutoscaler
from e2e.prediction import Inputs, NodeAt, PodAt, RealTimes, Start, run_settings
from e2e.recorder import Observation, Recorder, Subject, is_ready
from e2e.timeline import Scenario
from localprom.server import PrometheusServer, free_port
from realengine.stack import LocalStack
from realengine.toolchain import Toolchain
from renderers import dcgm, promql
from stackconfig.units import go_duration_seconds
from stacknames import GPU_OPERATOR_NAMESPACE, HEADROOM_NAMESPACE, NAME_LABEL, PLACEHOLDER_NAME

STACK = "dev"
WORKLOAD = "inference"
NAMESPACE = "gpu-workloads"
NS = "gpu-autoscaling"
#: The operator's metrics endpoint of the local KEDA (e2e/keda.py operator_args).
KEDA_METRICS = "127.0.0.1:18080"
#: Slack for a loaded two-core machine: API, KEDA and Prometheus latencies on top of the controllers' periods.
LAG = 3.0


def overrides(prometheus_port: int) -> dict[str, Any]:
    """The stack-file changes of the run: KEDA's Prometheus is the local one, and the workload's scale-down
    stabilisation window (a stack key) is divided by the time factor like every other duration that may be."""
    from realengine.stack_view import config

    window = config(STACK).workloads[0].scale_down_stabilization_seconds
    return {f"{NS}:monitoring.queryUrl": f"http://127.0.0.1:{prometheus_port}",
            f"{NS}:workloads.0.scaleDownStabilizationSeconds": round(window / timescale.FACTOR),
            # the prediction's pod start is the run's (kwok's delay, `pod_start_seconds`), on the model's clock
            f"{NS}:whatIf.podStartSeconds": round(pod_start_seconds() * timescale.FACTOR)}


def pod_start_seconds() -> float:
    """kwok's pod-ready delay for the workload's pods, in real seconds: the what-if's podStartSeconds divided, but
    at least the exporter's refresh, a scrape and the query's window, which the factor does not divide. In
    production a pod starts in minutes against a 25 s window, so a new pod's series holds a full window of zeros
    when it turns Ready and the sum of the series' averages keeps the load's total; a 6 s start (180 s divided)
    would put the run where production never is (the new series' one or two samples outweigh the old ones').
    Then half a refresh more than whole refreshes: the HPA decides just after a scrape, so a start of whole
    refreshes puts Ready on a refresh, where the API's fraction of a second decides which refresh publishes it
    (and the model, without latency, takes the earlier: 5 s more per round, seen live)."""
    from realengine.stack_view import config

    what_if = config(STACK).what_if
    refresh = dcgm.EXPORTER_COLLECT_INTERVAL_MS / 1000
    floor = refresh + (go_duration_seconds(dcgm.SCRAPE_INTERVAL) or 0) + (go_duration_seconds(dcgm.QUERY_WINDOW) or 0)
    start = max((what_if.pod_start_seconds if what_if is not None else 180) / timescale.FACTOR, floor)
    return (start // refresh + 0.5) * refresh


@dataclass(frozen=True)
class RealWindow:
    """A workload cron window the run deployed: from `opens` to `closes` (wall clock, whole minutes in
    `timezone`), at least `replicas` replicas."""

    opens: float
    closes: float
    timezone: str
    replicas: int

    def schedule(self) -> dict[str, Any]:
        """The stack file's `workloads[0].schedules` item for it (docs/headroom-and-schedules.md)."""
        tz = ZoneInfo(self.timezone)
        a, b = datetime.fromtimestamp(self.opens, tz), datetime.fromtimestamp(self.closes, tz)
        return {"start": f"{a.minute} {a.hour} * * *", "end": f"{b.minute} {b.hour} * * *",
                "timezone": self.timezone, "minReplicas": self.replicas}

    def stretched(self, s: SimSettings, t0: float, factor: float) -> tuple[SimSettings, float]:
        """The window on the prediction's clock, which runs `factor` times faster than the wall: it opens at the
        same moment as the real one and lasts `factor` times longer (cron windows are wall-clock minutes, which
        the factor cannot shorten). Returns the settings with it as their only replica window and the wall time
        the model's clock 0 stands for (`cron_origin`): the opening minute minus the model's seconds to it."""
        tz = ZoneInfo(self.timezone)
        opens = datetime.fromtimestamp(self.opens, tz)
        closes = opens + timedelta(seconds=(self.closes - self.opens) * factor)

        def cron(d: datetime) -> str:
            return f"{d.minute} {d.hour} {d.day} {d.month} *"

        window = CronWindow(cron(opens), cron(closes), self.timezone, self.replicas)
        return replace(s, replica_windows=(window,)), self.opens - (self.opens - t0) * factor


@dataclass
class Chain:
    kube: Kube
    workdir: Path
    ls: LocalStack
    api: KubeApi
    recorder: Recorder
    exporter: Any  # LiveDcgmExporter
    prom: PrometheusServer
    keda_prom: PrometheusServer
    ca: PoolAutoscaler
    real: RealTimes
    threshold: float
    seed: int
    #: Offset of the first GPU node's scrapes within the scrape interval (Prometheus spreads targets by a hash).
    scrape_phase: float = 0.0
    scenarios: list[Scenario] = field(default_factory=list)
    overrides: dict[str, Any] = field(default_factory=dict)
    #: The workload's cron window while one is deployed (the prediction stretches it: RealWindow.stretched).
    window: RealWindow | None = None
    #: Per load step measured beside the guide's path: seconds to the first change of (the stack's, the guide's) HPA.
    metric_path: list[tuple[float, float]] = field(default_factory=list)

    @property
    def load(self) -> Any:
        return self.exporter.load

    def settings(self) -> SimSettings:
        """The what-if's settings for the stack file as deployed now (e2e/prediction.py)."""
        return run_settings(self.ls.workdir, STACK, timescale.FACTOR, self.real)

    @property
    def grid(self) -> float:
        """The period after which exports and scrapes fall together again (10 s and 15 s: 30 s)."""
        a, b = round(self.real.exporter_refresh * 1000), round(self.real.scrape_interval * 1000)
        while b:
            a, b = b, a % b
        return self.real.exporter_refresh * self.real.scrape_interval * 1000 / a

    @property
    def tolerance(self) -> float:
        """How far an event of the prediction may be from the real one: one scrape interval (the other GPU nodes'
        scrapes are not in phase with the model's), the HPA's and the autoscaler's periods, and LAG."""
        scan = go_duration_seconds(self.ca.flag("scan-interval")) or 10
        return self.real.scrape_interval + timescale.HPA_SYNC_SECONDS + scan / timescale.FACTOR + LAG

    def update(self, changes: Mapping[str, Any], window: RealWindow | None = None) -> float:
        """`pulumi up` of the stack file with `changes` on top of the run's overrides (none: back to the run's
        dev stack), as a platform engineer changes a stack; then the scale-down period divided again if the update
        put the stack's 60 s back (pulumi-kubernetes applies the ScaledObject's whole spec when it changes it).
        Returns how long the update took."""
        began = time.time()
        self.ls.write_stack_file(dict(changes))
        result = self.ls.up(on_output=lambda _: None)
        assert result.summary.result == "succeeded", result.summary
        divide_scale_down_periods(self.kube)
        self.ca.follow()
        self.window = window
        return time.time() - began

    # --- phases ---------------------------------------------------------------------------------------------

    def align(self) -> None:
        """Measure the first GPU node's scrape phase and move the exporter's refreshes half a second before those
        scrapes, so the model's grid (exports then scrapes on one clock) is the real one."""
        series = self.prom.query(f"{dcgm.GPU_UTIL_METRIC}[2m]")
        stamps = sorted(float(t) for s in series for t, _ in s["values"])
        assert stamps, "Prometheus has no DCGM sample yet"
        self.scrape_phase = stamps[-1] % self.real.scrape_interval
        self.exporter.phase = (self.scrape_phase - 0.5) % self.real.exporter_refresh

    def next_grid(self, after: float) -> float:
        phase = self.scrape_phase % self.grid
        return after - ((after - phase) % self.grid) + self.grid

    def settle(self, timeout: float = 300, quiet: float = 3.0) -> Observation:
        """Wait until nothing is Pending or starting, every node has its GPUs, and nothing changed for `quiet`
        seconds."""
        def settled(o: Observation) -> bool:
            return (o.pending == 0 and o.placeholders_pending == 0 and o.starting == 0 and o.ready == o.desired
                    and o.nodes == o.nodes_ready and self.recorder.hpa_at_rest())

        deadline = time.monotonic() + timeout
        while True:
            obs = self.recorder.wait("a settled cluster", settled, max(1.0, deadline - time.monotonic()))
            time.sleep(quiet)
            last = self.recorder.since(time.time() - quiet)
            if len(last) == 1 and settled(last[0]):
                return last[0]
            if time.monotonic() > deadline:
                raise AssertionError(f"the cluster did not settle within {timeout:.0f} s (last: {obs})")

    def snapshot(self, t: float) -> Start:
        """The live state at `t` (now) for the model: nodes with their pods, Pending pods, the query window's
        samples Prometheus holds strictly before `t`, the HPA's recent scale events, the autoscaler's memory."""
        rec = self.recorder
        nodes = []
        pods = [p for p in rec.gpu_pods() if not p["metadata"].get("deletionTimestamp")]
        for name, gpus in sorted(rec.gpu_nodes().items()):
            here = [p for p in pods if p["spec"]["nodeName"] == name]
            nodes.append(NodeAt(name, gpus, tuple(self._pod_at(p) for p in here)))
        pending = tuple(self._pod_at(p) for p in [*rec.of(NAMESPACE, WORKLOAD),
                                                  *rec.of(HEADROOM_NAMESPACE, PLACEHOLDER_NAME)]
                        if not p["spec"].get("nodeName"))
        window = self.real.query_window
        result = self.prom.query(f'{dcgm.GPU_UTIL_METRIC}{{namespace="{NAMESPACE}",pod=~"'
                                 f'{promql.pod_name_regex(WORKLOAD)}"}}[{round(window)}s]', at=t - 0.3)
        samples: dict[str, list[tuple[float, float]]] = {}
        for series in result:
            key = f'{series["metric"]["pod"]}/{series["metric"][dcgm.GPU_ID_LABEL]}'
            samples.setdefault(key, []).extend((float(a), float(b)) for a, b in series["values"])
        longest = max((p.period for p in (*self.settings().scale_up.policies, *self.settings().scale_down.policies)),
                      default=0) / timescale.FACTOR
        history = rec.since(t - longest)
        events = [(o.t, o.desired - a.desired) for a, o in zip(history, history[1:], strict=False)
                  if o.desired != a.desired]
        memory = self.ca.memory(t)
        return Start(t=t, nodes=tuple(nodes), pending=pending, samples=samples, scale_events=events,
                     last_scale_up=memory.last_scale_up, last_delete=memory.last_delete,
                     unneeded_since=dict(memory.unneeded_since))

    def _pod_at(self, pod: Mapping[str, Any]) -> PodAt:
        kind = "workload" if pod["metadata"].get("labels", {}).get(NAME_LABEL) == WORKLOAD else "placeholder"
        return PodAt(pod["metadata"]["name"], kind, pod_gpus(pod), is_ready(pod))

    def begin(self, rng: random.Random) -> Start:
        """A scenario starts on the next point of the export/scrape grid: the snapshot is taken there; the load
        (or whatever the scenario changes) changes at a random moment of the following grid period, as a real
        change would, not in phase with the exporter."""
        ts = self.next_grid(time.time())
        time.sleep(max(0.0, ts - time.time()))
        start = self.snapshot(ts)
        time.sleep(rng.uniform(0, self.grid))
        return start

    def draws_since(self, t: float) -> list[float]:
        """The provisioning draws of the nodes ordered after `t`, in production seconds."""
        out: list[float] = []
        for order in sorted(self.ca.orders_made, key=lambda o: o.ordered):
            if order.ordered > t:
                out += [order.boot * timescale.FACTOR, order.gpus_after * timescale.FACTOR]
        return out

    def record(self, name: str, title: str, start: Start, t0: float, end: float, *,
               compared: tuple[str, ...], extra: Mapping[str, float | None] | None = None,
               notes: Mapping[str, Any] | None = None, cron_origin: float | None = None,
               compared_values: tuple[str, ...] = ("peakDesired", "finalDesired", "peakNodes", "finalNodes"),
               outages: tuple[tuple[float, float], ...] = ()) -> Scenario:
        """The scenario as it ran, with the what-if's prediction beside it."""
        loads = [(t, g) for t, g in self.load.changes if t <= end]
        sc = Scenario(name, title, t0, end, self.threshold, self.recorder.since(start.t),
                      extra=dict(extra or {}), notes=dict(notes or {}), compared=compared,
                      compared_values=compared_values, tolerance=self.tolerance)
        sc.notes["start"] = start.t
        settings = self.settings()
        if self.window is not None and cron_origin is None:
            settings, cron_origin = self.window.stretched(settings, start.t, timescale.FACTOR)
        sc.inputs = Inputs(settings, start, tuple(loads), end, timescale.FACTOR,
                           tuple(self.draws_since(start.t)), cron_origin, outages)
        sc.predict()
        self.scenarios.append(sc)
        return sc


@contextmanager
def open_chain(tc: Toolchain, kube: Kube, workdir: Path, timer: Timer, seed: int, *,
               extra_overrides: Mapping[str, Any] | None = None,
               extra_jobs: Callable[[Kube], list[dict[str, Any]]] | None = None) -> Iterator[Chain]:
    """Deploy dev with the run's overrides (and `extra_overrides`: another suite's stack-file changes) and start
    everything around it; stop it all afterwards. `extra_jobs(kube)`, called after `pulumi up`, gives the platform
    Prometheus more scrape configs made from what the stack deployed."""
    from e2e.gpu_load import LiveDcgmExporter, LoadProfile

    port = free_port()
    settings = {**overrides(port), **(extra_overrides or {})}
    with platform(STACK, tc, kube, workdir / "dev", overrides=settings) as ls:
        with timer.phase("up"):
            assert ls.up(on_output=lambda _: None).summary.result == "succeeded"
        divide_scale_down_periods(kube)
        keda = LocalKeda(kube, workdir / "keda")
        with timer.phase("KEDA started"):
            keda.start()
        api = KubeApi(kube.kubeconfig)
        subject = Subject(NAMESPACE, WORKLOAD, promql.hpa_name(WORKLOAD), HEADROOM_NAMESPACE, PLACEHOLDER_NAME,
                          "gpu")
        recorder = Recorder(api, subject).start()
        state = ls.stack.export_stack().deployment
        refresh = exporter_refresh_seconds(release_values(state, "gpu-operator-release"))
        monitor = release_values(state, "gpu-operator-release")["dcgmExporter"]["serviceMonitor"]
        real = RealTimes(refresh, go_duration_seconds(monitor["interval"]) or 30,
                         go_duration_seconds(dcgm.QUERY_WINDOW) or 60)
        exporter = LiveDcgmExporter(recorder, LoadProfile(), NAMESPACE, WORKLOAD, workdir / "dcgm-targets.json",
                                    GPU_OPERATOR_NAMESPACE, refresh=refresh)
        prom = platform_prometheus(kube, state, workdir / "prometheus", workdir / "dcgm-targets.json", port,
                                   KEDA_METRICS, extra_jobs(kube) if extra_jobs is not None else ())
        keda_prom = keda_errors_prometheus(kube, workdir / "prometheus-keda", KEDA_METRICS, timescale.FACTOR)
        ca = PoolAutoscaler(kube, api, timescale.FACTOR, provisioning_draws(random.Random(seed)),
                            workdir / "dev" / "gcore-api", cluster_name(), workdir / "cluster-autoscaler.log")
        trigger = next(t for t in kube.get("scaledobject", WORKLOAD, "-n", NAMESPACE)["spec"]["triggers"]
                       if t["name"] == "gpu-utilization")
        chain = Chain(kube, workdir, ls, api, recorder, exporter, prom, keda_prom, ca, real,
                      float(trigger["metadata"]["threshold"]), seed, overrides=settings)
        try:
            wait_for("the HPA KEDA makes", lambda: recorder.hpa is not None, timeout=60)
            exporter.start()
            prom.start()
            keda_prom.start()
            prom.wait_ready()
            keda_prom.wait_ready()
            ca.start()
            yield chain
        finally:
            ca.stop()
            exporter.stop()
            prom.stop()
            keda_prom.stop()
            recorder.stop()
            keda.stop()


def divide_scale_down_periods(kube: Kube) -> None:
    """The one change to an object `pulumi up` made: the scale-down policy's period (one pod per 60 s, a constant
    of renderers/workload_specs.py with no stack key) divided by the factor like the stabilisation window, so a
    scale-down from 14 replicas takes 26 s instead of 13 minutes. KEDA's operator copies the ScaledObject's
    behaviour into the HPA; the prediction keeps the stack's 60 s (e2e/prediction.py run_settings)."""
    so = kube.get("scaledobject", WORKLOAD, "-n", NAMESPACE)
    behavior = so["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    if all(p["periodSeconds"] < timescale.FACTOR for p in behavior["scaleDown"]["policies"]):
        return  # divided already: an update that left the ScaledObject alone
    for policy in behavior["scaleDown"]["policies"]:
        period = policy["periodSeconds"] / timescale.FACTOR
        if period != int(period):
            raise ValueError(f"scale-down period {policy['periodSeconds']} s is not a multiple of the factor")
        policy["periodSeconds"] = int(period)
    kube.run("patch", "scaledobject", WORKLOAD, "-n", NAMESPACE, "--type", "merge", "-p",
             json.dumps({"spec": {"advanced": {"horizontalPodAutoscalerConfig": {"behavior": behavior}}}}))


def cluster_name() -> str:
    from realengine.stack_view import config

    return config(STACK).cluster.name


def provisioning_draws(rng: random.Random) -> Any:
    """Boot and GPU times of a node, drawn as the what-if draws them (capacity/state.py `order_node`: uniform over
    `whatIf.nodeReadyMinutes`, then over `gpuReadyMinutes`), in production seconds."""
    from realengine.stack_view import config

    what_if = config(STACK).what_if
    boot = what_if.node_ready_minutes if what_if is not None else (20.0, 25.0)
    gpus = what_if.gpu_ready_minutes if what_if is not None else (5.0, 10.0)

    def draw() -> tuple[float, float]:
        return rng.uniform(boot[0] * 60, boot[1] * 60), rng.uniform(gpus[0] * 60, gpus[1] * 60)

    return draw
