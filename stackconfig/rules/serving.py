"""Rules across a serving workload's keys (issue 10): ports the probes and metrics name, secrets, memory."""

from __future__ import annotations

from pydantic.alias_generators import to_camel

from stackconfig.errors import Problem
from stackconfig.stack import StackConfig
from stackconfig.units import mebibytes, memory_bytes
from stackconfig.workloads import WorkloadConfig
from stacknames import SERVING_DRAIN_SECONDS


def all_serving_problems(cfg: StackConfig) -> list[Problem]:
    return [p for i, w in enumerate(cfg.workloads) for p in serving_problems(f"workloads[{i}]", w)]


def serving_problems(key: str, w: WorkloadConfig) -> list[Problem]:
    """One workload's serving rules across keys; shared with stacks that deploy onto this platform."""
    out: list[Problem] = []
    reserved_triggers = ("gpu-utilization", "demand")
    names = [p.name for p in w.ports]
    if w.ports and w.termination_grace_period_seconds <= SERVING_DRAIN_SECONDS:
        out.append(Problem(f"{key}.terminationGracePeriodSeconds", w.termination_grace_period_seconds,
                           f"leaves no time after the {SERVING_DRAIN_SECONDS} s a serving pod keeps answering while "
                           "it leaves the Service", f"set it above {SERVING_DRAIN_SECONDS}, e.g. 60"))
    columns: tuple[tuple[str, list[str] | list[int]], ...] = (("name", names), ("port", [p.port for p in w.ports]))
    for field_, values in columns:
        dupes = sorted({str(v) for v in values if values.count(v) > 1})  # type: ignore[arg-type]
        if dupes:
            out.append(Problem(f"{key}.ports", ", ".join(dupes), f"repeats a port {field_}",
                               f"give every port its own {field_}"))
    for sub, ref in (("probes", w.probes), ("metrics", w.metrics)):
        if ref is not None and ref.port not in names:
            out.append(Problem(f"{key}.{sub}.port", ref.port, "is not the name of one of the workload's ports",
                               f"add {{name: {ref.port}, port: <number>}} to {key}.ports or use one of: "
                               f"{', '.join(names) or '(no ports declared)'}"))
    if w.triggers and w.metrics is None:
        out.append(Problem(f"{key}.triggers", [t.name for t in w.triggers],
                           "query series that nothing scrapes (no metrics endpoint declared)",
                           f"set {key}.metrics to the port name and path of the workload's /metrics"))
    trigger_names = [t.name for t in w.triggers]
    for j, t in enumerate(w.triggers):
        if t.name in reserved_triggers or trigger_names.count(t.name) > 1:
            out.append(Problem(f"{key}.triggers[{j}].name", t.name,
                               "is used twice or by a built-in trigger (gpu-utilization, demand)",
                               "give each trigger its own name, e.g. 'waiting-requests'"))
    clash = sorted(set(w.secret_env) & set(w.env))
    if clash:
        out.append(Problem(f"{key}.secretEnv", ", ".join(clash), "is also set in env (one would hide the other)",
                           "keep the variable in secretEnv only"))
    if w.shm_size is not None:
        memory = memory_bytes(w.requests.memory) if w.requests.memory else None
        shm = mebibytes(w.shm_size) * 1024**2
        if memory is None or memory <= shm:
            out.append(Problem(f"{key}.shmSize", w.shm_size,
                               "is memory the pod uses (a memory-backed /dev/shm counts against it), but "
                               f"requests.memory ({w.requests.memory or 'unset'}) does not cover it plus the "
                               "server itself", f"set {key}.requests.memory above {w.shm_size}, e.g. "
                               f"{mebibytes(w.shm_size) // 1024 * 4 or 4}Gi"))
    c = w.model_cache
    if c is not None:
        needs = {"hostPath": (), "nfs": ("server", "path"), "pvc": ("claim_name",)}[c.type]
        for attr in needs:
            if getattr(c, attr) is None:
                out.append(Problem(f"{key}.modelCache.{to_camel(attr)}", None,
                                   f"is required for modelCache.type {c.type}",
                                   f"set {key}.modelCache.{to_camel(attr)}"))
        for attr in sorted({"server", "path", "claim_name"} - set(needs)):
            if getattr(c, attr) is not None:
                out.append(Problem(f"{key}.modelCache.{to_camel(attr)}", getattr(c, attr),
                                   f"has no meaning for modelCache.type {c.type}", "remove the key"))
        if c.mount_path in ("/dev/shm", "/") or c.mount_path.startswith("/dev/"):
            out.append(Problem(f"{key}.modelCache.mountPath", c.mount_path, "hides a system directory",
                               "mount the cache at a path of its own, e.g. '/models'"))
    return out
