"""Rules across a serving profile's keys (issue 21): an engine whose metrics the triggers read, the endpoints that
scrape them, an objective one GPU can reach, a band that is one, and a pod that drains before it is killed."""

from __future__ import annotations

from stackconfig.engines import ENGINES, retired_metric
from stackconfig.errors import UNSET, Problem
from stackconfig.serving import seconds
from stackconfig.stack import StackConfig
from stackconfig.workloads import WorkloadConfig
from stacknames import ENGINE_SHUTDOWN_SECONDS, SERVING_TRIGGER_NAMES


def all_profile_problems(cfg: StackConfig) -> list[Problem]:
    return [p for i, w in enumerate(cfg.workloads) for p in profile_problems(f"workloads[{i}]", w)]


def _engine_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    s = w.serving
    assert s is not None
    known = ", ".join(sorted(ENGINES))
    if s.engine is None:
        wants = ("the TTFT and TPOT histograms the latency objective is computed from, and the queue and KV-cache "
                 "gauges" if s.latency_objective is not None else "the queue and KV-cache gauges its triggers read")
        return [Problem(f"{key}.serving.engine", UNSET, f"is not set, so nothing names the engine that exports {wants}",
                        f"set {key}.serving.engine to the model server the image runs ({known}), or remove "
                        f"{key}.serving and scale on your own series with {key}.triggers")]
    if s.engine not in ENGINES:
        return [Problem(f"{key}.serving.engine", s.engine,
                        "is not an engine whose metrics a serving profile knows (it reads the engine's TTFT and TPOT "
                        f"histograms, queue and KV-cache gauges by name; known: {known})",
                        f"use one of: {known}; for another server, remove {key}.serving and scale on its own series "
                        f"with {key}.triggers (name, metric, threshold)")]
    return []


def _retired_metric_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    """A workload's own trigger on a series its engine no longer exports: the query would match nothing."""
    out = []
    for j, t in enumerate(w.triggers):
        retired = retired_metric(t.metric)
        if retired is not None:
            engine, old, new = retired
            out.append(Problem(f"{key}.triggers[{j}].metric", old,
                               f"is a {engine} series that {ENGINES[engine].checked} no longer exports (renamed "
                               f"{new}): the query would find nothing, and the trigger would error into its fallback",
                               f"use {new}"))
    return out


def _endpoint_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    out = []
    if not w.ports:
        out.append(Problem(f"{key}.ports", [], "is empty, but a serving profile drains requests from the workload's "
                           "Service and reads the engine's /metrics, both on a port",
                           f"declare the engine's port, e.g. {key}.ports: [{{name: http, port: 8000}}]"))
    if w.metrics is None:
        out.append(Problem(f"{key}.metrics", UNSET, "is not set, so nothing scrapes the engine's series the serving "
                           "profile's triggers read: every query would be empty (an error, then the fallback)",
                           f"set {key}.metrics to the port name and path of the engine's /metrics, e.g. "
                           f"{{port: http, path: /metrics}}"))
    return out


def _objective_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    s = w.serving
    assert s is not None
    o, g = s.latency_objective, s.per_gpu
    base = f"{key}.serving"
    if o is None:
        return []
    if o.ttft_p90 is None and o.tpot_p90 is None:
        return [Problem(f"{base}.latencyObjective", {}, "names no objective", "set ttftP90, tpotP90 or both, e.g. "
                        "{ttftP90: 500ms, tpotP90: 50ms}, or remove the key")]
    if g is None:
        return [Problem(f"{base}.perGpu", UNSET, "is not set, but a latency objective needs what one GPU delivers for "
                        "this model: an objective at or below its low-load latency can never be met, and its trigger "
                        "would hold the workload at maxReplicas",
                        f"measure it (e.g. `vllm bench serve` at low load and at the knee) and set {base}.perGpu: "
                        "{ttftP90: 40ms, tpotP90: 7ms, tpotP90AtKnee: 40ms}")]
    out = []
    for name, objective, floor, floor_key in (("ttftP90", o.ttft_p90, g.ttft_p90, "perGpu.ttftP90"),
                                              ("tpotP90", o.tpot_p90, g.tpot_p90, "perGpu.tpotP90")):
        if objective is not None and seconds(objective) <= seconds(floor):
            out.append(Problem(f"{base}.latencyObjective.{name}", objective,
                               f"is not above what one GPU delivers for this model at low load ({floor_key} = "
                               f"{floor}): no number of replicas reaches it, so the latency trigger would ask for more "
                               "replicas for ever",
                               f"raise it above {floor} (a few times the low-load P90 leaves room for batching), or "
                               f"measure {base}.perGpu again"))
    if seconds(g.tpot_p90_at_knee) < seconds(g.tpot_p90):
        out.append(Problem(f"{base}.perGpu.tpotP90AtKnee", g.tpot_p90_at_knee,
                           f"is below the low-load TPOT ({g.tpot_p90}), but a fuller batch decodes each token slower",
                           "measure both at the same request mix; tpotP90AtKnee is at least tpotP90"))
    return out


def profile_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    """One workload's serving-profile rules; shared with stacks that deploy onto this platform."""
    out = _retired_metric_problems(key, w)
    s = w.serving
    if s is None:
        return out
    out += _engine_problems(key, w) + _endpoint_problems(key, w) + _objective_problems(key, w)
    if s.band.scale_down >= s.band.scale_up:
        out.append(Problem(f"{key}.serving.band.scaleDown", s.band.scale_down,
                           f"is not below band.scaleUp ({s.band.scale_up:g}): there is no band in which the replica "
                           "count holds, so healthy latency flaps it",
                           "keep scaleDown below scaleUp, e.g. {scaleUp: 0.6, scaleDown: 0.35}"))
    if "target_utilization" in w.model_fields_set:
        out.append(Problem(f"{key}.targetUtilization", w.target_utilization,
                           "drives GPU-utilisation scaling, but with a serving profile the engine's latency, queue and "
                           "KV cache drive it and GPU utilisation is a guardrail at 100 % (it never asks for more "
                           "replicas than run)", f"remove {key}.targetUtilization, or remove {key}.serving"))
    needed = w.prestop_seconds + ENGINE_SHUTDOWN_SECONDS
    if w.termination_grace_period_seconds < needed:
        out.append(Problem(f"{key}.terminationGracePeriodSeconds", w.termination_grace_period_seconds,
                           f"ends the pod before its drain does: preStop waits {w.prestop_seconds} s (the Service "
                           f"forgets the pod, then serving.longestRequest {s.longest_request} finishes), and the "
                           f"engine needs {ENGINE_SHUTDOWN_SECONDS} s to shut down after it",
                           f"set it to at least {needed}, or shorten serving.longestRequest"))
    for j, t in enumerate(w.triggers):
        if t.name in SERVING_TRIGGER_NAMES:
            out.append(Problem(f"{key}.triggers[{j}].name", t.name,
                               f"is a trigger the serving profile adds ({', '.join(SERVING_TRIGGER_NAMES)})",
                               "give the trigger another name, or drop it if the profile's trigger covers it"))
    return out
