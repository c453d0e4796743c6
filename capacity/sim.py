"""The what-if simulator: demand in GPUs, step by step, through the metric path, KEDA/HPA, the scheduler and
the Cluster Autoscaler, with the delays each of them really has.

One tick is `SimSettings.tick` seconds (5 s); every control loop runs on its own period, a multiple of the
tick, over one `ClusterState` (capacity/state.py): the HPA (capacity/hpa.py), KEDA and the headroom
placeholders (capacity/keda.py), the scheduler (capacity/scheduler.py) and the Cluster Autoscaler
(capacity/autoscaler.py), each module with the upstream sources of its rules. The state is a handful of nodes and
pods, and everything the result needs is summed on the fly (capacity/tally.py), so a 14-day trace runs in seconds
and memory does not grow with its length.

The metric path, here: dcgm-exporter refreshes every `EXPORTER_COLLECT_INTERVAL_MS` (NVIDIA/dcgm-exporter
`pkg/cmd/app.go` --collect-interval), Prometheus scrapes every `SCRAPE_INTERVAL`, the query averages `QUERY_WINDOW`
(renderers/dcgm.py); a GPU reports demand spread over the Ready GPUs, capped at 100 %.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from capacity.autoscaler import Autoscaler
from capacity.hpa import Hpa
from capacity.keda import Headroom, Keda
from capacity.scheduler import schedule
from capacity.service import Service
from capacity.settings import SimSettings
from capacity.state import EPS, ClusterState, Node, Pod
from capacity.tally import Downsampler, Tally, percentile
from capacity.trace import Segment
from stacknames import WORKLOAD_PRIORITY


class Simulation:
    """One run of the stack's scaling settings over a demand trace."""

    def __init__(self, s: SimSettings, seed: int = 1) -> None:
        for name, period in (("hpa_sync", s.hpa_sync), ("scan_interval", s.scan_interval),
                             ("exporter_refresh", s.exporter_refresh), ("scrape_interval", s.scrape_interval),
                             ("polling_interval", s.polling_interval)):
            if period <= 0 or period % s.tick:
                raise ValueError(f"{name}={period}s is not a positive multiple of the {s.tick}s tick")
        self.s = s
        self.state = ClusterState(s, seed)
        self.keda = Keda(self.state)
        window = max(1, s.query_window // s.scrape_interval)
        self.service = Service(s.service, window) if s.service is not None else None
        serving = self.service.values if self.service is not None and s.scale_on_service else None
        self.hpa = Hpa(self.state, self.keda.cron_min, serving)
        self.headroom = Headroom(self.state)
        self.autoscaler = Autoscaler(self.state)

    def _warm_start(self, demand: float) -> None:
        """Start in the steady state of the first demand: the replicas the HPA would hold, on enough nodes."""
        st, s = self.state, self.s
        util_sum = 100 * demand
        replicas = max(max(s.min_replicas, 1), math.ceil(util_sum / s.threshold - EPS), self.keda.cron_min(0.0))
        replicas = min(replicas, s.max_replicas)
        st.others = [Pod("other", g, WORKLOAD_PRIORITY) for g in s.reserved_pods]
        gpus = replicas * s.gpus_per_pod + sum(s.reserved_pods) + s.headroom_gpus
        nodes = min(s.max_nodes, max(s.min_nodes, math.ceil(gpus / s.gpus_per_node)))
        for _ in range(nodes):
            st.nodes.append(Node(0.0, 0.0, 0.0, None, s.gpus_per_node))
        st.scale_to(replicas)
        self.headroom.sync(0.0)
        schedule(st, 0.0)
        for pod in st.workload:
            if pod.ready_at is not None:
                pod.ready_at = 0.0
        st.recount(0.0)
        scrapes = max(1, s.query_window // s.scrape_interval)
        st.window.reset(exported(st, demand, 0.0), [-i * s.scrape_interval for i in range(scrapes)])

    def run(self, trace: Iterable[Segment], plot: bool = False,
            start: Callable[[Simulation, float], None] | None = None,
            observe: Callable[[float, ClusterState], None] | None = None) -> dict[str, Any]:
        """Replay `trace`. `start(sim, demand)` sets up the first moment instead of the steady state of the first
        demand (the end-to-end calibration starts from a live cluster's state, e2e/prediction.py); `observe(t,
        state)` sees the state after every tick."""
        st, s = self.state, self.s
        tick = s.tick
        sim, oracle, static = Tally(), Tally(), Tally()
        episodes: list[float] = []
        episode_start: float | None = None
        reserved_gpus = sum(s.reserved_pods)
        reserved_gpu_s = 0.0
        demand_gpu_s = 0.0
        reserved_version, reserved_now = -1, 0
        # the plot's counts are whole numbers: the most asked for, billed or Pending, the fewest Ready or with GPUs
        sampler = Downsampler(
            ("demand", "capacity", "desired", "ready", "nodes", "gpuNodes", "pending"), ("desired", "nodes", "pending"),
            minned=("ready", "gpuNodes"),
        ) if plot else None
        per_node = s.gpus_per_node
        cap_replicas = s.max_replicas * s.gpus_per_pod
        static_cap = max(0, min(cap_replicas, s.max_nodes * per_node - reserved_gpus))
        started = False
        t = 0.0
        step = 0
        k = s.gpus_per_pod
        every_export, every_scrape = s.exporter_refresh // tick, s.scrape_interval // tick
        every_poll, every_hpa, every_scan = s.polling_interval // tick, s.hpa_sync // tick, s.scan_interval // tick
        keda_owns_zero = s.min_replicas == 0
        export_key: tuple[int, float, int] | None = None
        headroom_check = bool(self.headroom.windows)
        service = self.service
        for seg in trace:
            demand = seg.gpus
            if not started:
                if start is None:
                    self._warm_start(demand)
                else:
                    start(self, demand)
                started = True
            seg_ticks = 0
            while t < seg.end - EPS:
                if t >= st.next_event:
                    st.recount(t)
                if step % every_export == 0 and (st.version, demand, st.ready_pods) != export_key:
                    # The exporter's values change only with the pods (version), the demand and the Ready pods.
                    export_key = (st.version, demand, st.ready_pods)
                    st.window.export(exported(st, demand, t))
                if step % every_scrape == 0:
                    st.window.scrape(t)
                    if service is not None:
                        service.scrape(st.ready_pods)
                if keda_owns_zero and step % every_poll == 0:
                    self.keda.poll(t, demand)
                if step % every_hpa == 0:
                    self.hpa.sync(t)
                    if headroom_check:
                        self.headroom.sync(t)
                if st.sched_dirty:
                    schedule(st, t)
                    if t >= st.next_event:
                        st.recount(t)
                if step % every_scan == 0:
                    self.autoscaler.run(t)
                if t >= st.next_event:
                    st.recount(t)
                if sampler is not None and step % every_hpa == 0:
                    sampler.add(t, (demand, st.ready_pods * k, len(st.workload), st.ready_pods,
                                    len(st.nodes),
                                    sum(1 for n in st.nodes if n.gpus_at <= t and n.fails_at is None),
                                    sum(1 for p in (*st.workload, *st.placeholders) if p.node is None)))
                if observe is not None:
                    observe(t, st)
                # --- tallies of this tick
                capacity = st.ready_pods * k
                sim.add(tick, len(st.nodes), per_node, demand, capacity)
                if service is not None:
                    service.step(demand, capacity, tick)
                if st.version != reserved_version:
                    reserved_version = st.version
                    reserved_now = sum(p.gpus for p in st.others if p.node is not None)
                reserved_gpu_s += reserved_now * tick
                if demand > capacity + EPS:
                    if episode_start is None:
                        episode_start = t
                elif episode_start is not None:
                    episodes.append(t - episode_start)
                    episode_start = None
                t += tick
                step += 1
                seg_ticks += 1
            # the yardsticks depend on demand only: once per segment
            dt = seg_ticks * tick
            demand_gpu_s += demand * dt
            pods = min(math.ceil(demand / k - EPS), s.max_replicas)
            o_nodes = min(s.max_nodes, max(s.min_nodes, math.ceil((pods * k + reserved_gpus) / per_node - EPS)))
            oracle.add(dt, o_nodes, per_node, demand,
                       max(0, min(cap_replicas, o_nodes * per_node - reserved_gpus)))
            static.add(dt, s.max_nodes, per_node, demand, static_cap)
        if not started:
            raise ValueError("the trace is empty")
        open_episode = episode_start is not None
        if episode_start is not None:
            episodes.append(t - episode_start)
        hours = t / 3600
        price = s.price_per_gpu_hour
        result = sim.result(price, hours, reserved_gpu_s)
        result.update({
            "hours": hours,
            "gpuHoursDemand": demand_gpu_s / 3600,
            "gpuHoursOtherWorkloads": reserved_gpu_s / 3600,
            "timeToCapacityMinutes": {
                "p50": percentile(episodes, 50) / 60,
                "p95": percentile(episodes, 95) / 60,
                "max": max(episodes, default=0.0) / 60,
                "episodes": len(episodes),
                "openAtEnd": open_episode,
            },
            "nodesOrdered": st.nodes_ordered,
            "nodesGivenUp": st.nodes_failed,
            "oracle": oracle.result(price, hours, reserved_gpus * t),
            "static": static.result(price, hours, reserved_gpus * t),
        })
        if service is not None:
            result["serving"] = service.result()
        if sampler is not None:
            result["series"] = sampler.series()
        return result


def exported(st: ClusterState, demand: float, t: float) -> dict[Hashable, float]:
    """What dcgm-exporter serves at `t`, per workload pod bound to a node (the sum over its GPUs): demand spread
    over the Ready GPUs, each capped at 100 %; the GPUs of a pod still starting read 0."""
    k = st.s.gpus_per_pod
    bound = [p for p in st.workload if p.node is not None]
    ready = [p for p in bound if p.ready_at is not None and p.ready_at <= t]
    each = min(100.0, 100.0 * demand / (len(ready) * k)) if ready else 0.0
    return {p: (each * k if p.ready_at is not None and p.ready_at <= t else 0.0) for p in bound}


def simulate(settings: SimSettings, trace: Iterable[Segment], seed: int = 1, plot: bool = False) -> dict[str, Any]:
    """Run the settings over the trace; the result's keys are the JSON keys of `python -m capacity`."""
    return Simulation(settings, seed).run(trace, plot)

