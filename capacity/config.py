"""From a stack file (plus `--set` overrides) to the simulator's `SimSettings`.

The stack file is read the way `offline.engine.load_config` and the Pulumi CLI read it, validated by
`stackconfig.load_stack_config` (so a bad override fails exactly like a bad stack file), and the numbers
come from the functions the program itself calls: `scaled_object_spec` (renderers/workload_specs.py)
and `autoscaler_config` (renderers/gcore_cluster.py). `settings_from_config` is the only place that maps config
to the simulator.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from capacity.service import ServiceModel
from capacity.settings import (
    CA_DEFAULTS,
    KEDA_COOLDOWN_PERIOD,
    Behavior,
    CronWindow,
    SimSettings,
    go_duration_seconds,
    prom_duration_seconds,
    seconds_range,
)
from offline.engine import ROOT
from renderers import dcgm
from renderers.gcore_cluster import autoscaler_config
from renderers.workload_specs import scaled_object_spec
from stackconfig import (
    ConfigError,
    GpuPoolConfig,
    Problem,
    StackConfig,
    WhatIfConfig,
    WorkloadConfig,
    load_stack_config,
)
from stackconfig.errors import UNSET
from stackconfig.packing import first_fit_decreasing
from stackconfig.stackfile import read_stack
from stacknames import HEADROOM_PRIORITY

#: Any URL: the simulator reads the ScaledObject's numbers, never its server address.
_PROMETHEUS_URL = "http://prometheus.invalid:9090"


def read_stack_file(stack: str, root: Path = ROOT) -> dict[str, Any]:
    """The project's keys of `Pulumi.<stack>.yaml` (without `<project>:`), read as strictly as the program reads
    it (stackconfig.stackfile: positions, duplicate keys, namespaces); `secure:` values are skipped."""
    path = root / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        stacks = sorted(p.name.split(".")[1] for p in root.glob("Pulumi.*.yaml"))
        raise FileNotFoundError(f"no stack file {path.name} in {root}. Fix: name one of its stacks "
                                f"({', '.join(stacks) or 'none'}) or add the stack file")
    source = read_stack(root, stack)
    problems = source.namespace_problems()
    if problems:
        raise ConfigError(problems)
    return source.project_keys()


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` by stack-file path (`gpuPool.maxNodes=4`, `workloads.0.targetUtilization=70`).

    VALUE is a YAML scalar (or flow collection), so `4` is a number and `[20, 30]` a list, as in the file; an
    empty VALUE removes the key (`workloads.0.targetUtilization=`), so it takes its default, as if never written.
    """
    out = copy.deepcopy(raw)
    problems: list[Problem] = []
    for item in overrides:
        path, sep, text = item.partition("=")
        if not sep or not path:
            problems.append(Problem("--set", item, "is not KEY=VALUE", "write it like gpuPool.maxNodes=4"))
            continue
        value = yaml.safe_load(text) if text.strip() else None
        parts = path.split(".")
        node: Any = out
        try:
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                if isinstance(node, list):
                    idx = int(part)
                    if not 0 <= idx < len(node):
                        raise IndexError(part)
                    if last:
                        node[idx] = value
                    else:
                        node = node[idx]
                elif isinstance(node, dict):
                    if last and not text.strip():
                        node.pop(part, None)
                    elif last:
                        node[part] = value
                    else:
                        if not isinstance(node.get(part), dict | list):
                            node[part] = {}
                        node = node[part]
                else:
                    raise TypeError(part)
        except (ValueError, IndexError, TypeError):
            problems.append(Problem(f"--set {path}", text, "does not name a key of the stack file",
                                    "use the stack file's path, list items by index: workloads.0.maxReplicas=8"))
    if problems:
        raise ConfigError(problems)
    return out


def load(stack: str, overrides: list[str] | None = None, root: Path = ROOT) -> StackConfig:
    """Validated config of `stack` with the overrides applied (ConfigError like `pulumi preview`, each problem of
    a key an override set marked with it)."""
    raw = apply_overrides(read_stack_file(stack, root), overrides or [])
    try:
        return load_stack_config(raw)
    except ConfigError as exc:
        if not overrides:
            raise
        raise ConfigError([from_set(p, overrides) for p in exc.problems]) from None


def from_set(problem: Problem, overrides: Sequence[str]) -> Problem:
    """`problem`, its key marked `(from --set KEY=VALUE)` when an override set that key, one inside it or one
    around it (the last such override: it is the one that holds)."""
    key = re.sub(r"\[(\d+)\]", r".\1", problem.key)  # workloads[0].x, as --set writes it: workloads.0.x
    for item in reversed(overrides):
        path = item.partition("=")[0]
        if key == path or key.startswith(f"{path}.") or path.startswith(f"{key}."):
            return dataclasses.replace(problem, key=f"{problem.key} (from --set {item})")
    return problem


def pick_workload(cfg: StackConfig, name: str | None) -> WorkloadConfig:
    if not cfg.workloads:
        raise ConfigError([Problem("workloads", [], "is empty: there is nothing to simulate",
                                   "add a workload to the stack")])
    if name is None:
        return cfg.workloads[0]
    for w in cfg.workloads:
        if w.name == name:
            return w
    raise ConfigError([Problem("--workload", name, "is not one of the stack's workloads",
                               f"use one of: {', '.join(w.name for w in cfg.workloads)}")])


@dataclass(frozen=True)
class Conversion:
    """How the trace becomes demand in GPUs."""

    trace: str | None
    column: str
    per_gpu: float | None


def workload_pool(cfg: StackConfig, workload: WorkloadConfig) -> GpuPoolConfig:
    """The pool the trace's workload runs on: the one the simulator replays (the config guarantees there is one)."""
    pool = cfg.pool_of(workload)
    assert pool is not None, f"workload {workload.name} has no pool of the stack"
    return pool


@dataclass(frozen=True)
class HeldPool:
    """A GPU pool the trace's workload does not run on: its workloads hold their minReplicas there (and its base
    headroom its placeholders), on its minNodes nodes or the few more they need. Not replayed: a fixed bill."""

    name: str
    spot: bool
    nodes: int
    gpus_per_node: int
    price_per_gpu_hour: float
    workloads: tuple[str, ...]

    def cost(self, hours: float) -> float:
        return self.nodes * self.gpus_per_node * self.price_per_gpu_hour * hours

    def as_json(self, hours: float) -> dict[str, Any]:
        cost = self.cost(hours)
        return {"simulated": False, "spot": self.spot, "workloads": list(self.workloads), "nodes": self.nodes,
                "gpusPerNode": self.gpus_per_node, "pricePerGpuHour": self.price_per_gpu_hour,
                "gpuHoursBilled": self.nodes * self.gpus_per_node * hours, "cost": cost,
                "costPerMonth": cost / hours * 730 if hours else 0.0}


def held_pools(cfg: StackConfig, workload: WorkloadConfig) -> list[HeldPool]:
    """Every GPU pool but the workload's, each as its workloads' minimums hold it (first-fit decreasing, as the
    config's own packing rules place pods: stackconfig/packing.py)."""
    own = workload_pool(cfg, workload)
    out = []
    for pool in cfg.pools:
        if pool == own or not pool.gpus:
            continue
        on = cfg.workloads_on(pool)
        pods = [w.gpus_per_pod for w in on for _ in range(w.min_replicas)]
        if pool.headroom is not None:
            pod_gpus = cfg.headroom_pod_gpus(pool)
            pods += [pod_gpus] * (pool.headroom.gpus // pod_gpus)
        bins = first_fit_decreasing(pods, [pool.gpus] * pool.min_nodes, open_size=pool.gpus) or []
        out.append(HeldPool(pool.name, pool.spot, max(pool.min_nodes, len(bins)), pool.gpus,
                            pool.price_per_gpu_hour, tuple(w.name for w in on)))
    return out


def settings_from_config(cfg: StackConfig, workload: WorkloadConfig, whatif: WhatIfConfig) -> SimSettings:
    """The single mapping from the stack's config to the simulator: the workload's own pool, with the other
    workloads of that pool holding their minReplicas on it (the other pools are `held_pools`)."""
    pool = workload_pool(cfg, workload)
    spec = scaled_object_spec(workload, _PROMETHEUS_URL)
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    trigger = next(t for t in spec["triggers"] if t["name"] == "gpu-utilization")
    flags = {**CA_DEFAULTS, **autoscaler_config(cfg.pools, cfg.workloads, cfg.cluster.autoscaler)}
    others = tuple(
        o.gpus_per_pod for o in cfg.workloads_on(pool) if o.name != workload.name for _ in range(o.min_replicas)
    )
    # Workload cron windows of minimum replicas (rendered as KEDA cron triggers by scaled_object_spec).
    replica_windows = tuple(CronWindow(s.start, s.end, s.timezone, s.min_replicas) for s in workload.schedules)
    # Placeholder headroom: a window's minReplicas counts placeholder pods; the simulator counts GPUs.
    headroom = pool.headroom
    headroom_kwargs: dict[str, Any] = {}
    if headroom is not None:
        pod_gpus = cfg.headroom_pod_gpus(pool)
        headroom_kwargs = {
            "headroom_gpus": headroom.gpus,
            "placeholder_gpus": pod_gpus,
            "placeholder_priority": HEADROOM_PRIORITY,
            "headroom_windows": tuple(
                CronWindow(s.start, s.end, s.timezone, s.min_replicas * pod_gpus) for s in headroom.schedules
            ),
        }
    return SimSettings(
        gpus_per_node=pool.gpus,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        gpus_per_pod=workload.gpus_per_pod,
        min_replicas=int(spec["minReplicaCount"]),
        max_replicas=int(spec["maxReplicaCount"]),
        threshold=float(trigger["metadata"]["threshold"]),
        scale_up=Behavior.parse(behavior["scaleUp"]),
        scale_down=Behavior.parse(behavior["scaleDown"]),

        polling_interval=int(spec["pollingInterval"]),
        cooldown_period=int(spec.get("cooldownPeriod", KEDA_COOLDOWN_PERIOD)),
        replica_windows=replica_windows,
        reserved_pods=others,
        exporter_refresh=round(dcgm.EXPORTER_COLLECT_INTERVAL_MS / 1000),
        scrape_interval=round(prom_duration_seconds(dcgm.SCRAPE_INTERVAL)),
        query_window=round(prom_duration_seconds(dcgm.QUERY_WINDOW)),
        scan_interval=round(go_duration_seconds(flags["scan-interval"])),
        max_node_provision=round(go_duration_seconds(flags["max-node-provision-time"])),
        scale_down_unneeded=round(go_duration_seconds(flags["scale-down-unneeded-time"])),
        scale_down_delay_after_add=round(go_duration_seconds(flags["scale-down-delay-after-add"])),
        scale_down_delay_after_delete=round(go_duration_seconds(flags["scale-down-delay-after-delete"])),
        scale_down_delay_after_failure=round(go_duration_seconds(flags["scale-down-delay-after-failure"])),
        scale_down_enabled=flags["scale-down-enabled"].lower() == "true",
        max_empty_bulk_delete=int(flags["max-empty-bulk-delete"]),
        expendable_cutoff=int(flags["expendable-pods-priority-cutoff"]),
        node_ready_range=seconds_range(whatif.node_ready_minutes),
        gpu_ready_range=seconds_range(whatif.gpu_ready_minutes),
        pod_start=whatif.pod_start_seconds,
        price_per_gpu_hour=pool.price_per_gpu_hour,
        # The pool's GPU-ready gate is what makes the autoscaler count a Ready node without allocatable GPUs as
        # coming; without it the replay orders the duplicates an unaware autoscaler orders (SimSettings).
        gpu_aware_autoscaler=pool.gpu_ready_gate,
        start=datetime.fromisoformat(whatif.start),
        **headroom_kwargs,
        **_service_kwargs(workload),
    )


def _service_kwargs(workload: WorkloadConfig) -> dict[str, Any]:
    """A serving profile with `perGpu`: the service model (at the PodMonitor's scrape of the engine's series, not
    the DCGM one), and the HPA on the profile's triggers."""
    if workload.serving is None or workload.metrics is None:
        return {}
    model = ServiceModel.from_config(workload.serving, round(prom_duration_seconds(workload.metrics.interval)))
    if model is None:
        raise ConfigError([Problem(
            f"workloads[{workload.name}].serving.perGpu", UNSET,
            "is what the what-if models the serving profile's latency and KV-cache triggers from; without it the "
            "replay would scale on the GPU guardrail alone, which the profile never does",
            "measure it (`vllm bench serve` at low load and at the knee) and set serving.perGpu: "
            "{ttftP90, tpotP90, tpotP90AtKnee}")])
    return {"service": model, "scale_on_service": True}
