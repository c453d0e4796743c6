"""Rules across the teams' keys: one namespace each, none Kubernetes' or the platform's, and a GPU quota that holds
this stack's own workloads in it at their peak."""

from __future__ import annotations

from stackconfig.errors import Problem
from stackconfig.rules.workloads import namespace_problem
from stackconfig.stack import StackConfig


def team_problems(cfg: StackConfig) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, team in enumerate(cfg.teams):
        key = f"teams[{i}]"
        if team.name in seen:
            out.append(Problem(f"{key}.name", team.name, f"is already used by teams[{seen[team.name]}]",
                               "give every team a name (and so a namespace) of its own"))
        seen.setdefault(team.name, i)
        if (reserved := namespace_problem(f"{key}.name", team.name)) is not None:
            out.append(reserved)
        privileged = [w.name for w in cfg.workloads if w.namespace == team.name and w.model_cache is not None
                      and w.model_cache.type == "hostPath"]
        if privileged:
            out.append(Problem(f"{key}.name", team.name,
                               f"is the namespace of this stack's hostPath model cache ({', '.join(privileged)}), "
                               "which puts it at Pod Security 'privileged': the team's credential could then run "
                               "privileged pods, root on the GPU nodes",
                               "move those workloads to a namespace of their own, or give them an nfs or pvc cache"))
        # The quota counts every pod of the namespace: this stack's own workloads there, at maxReplicas (their
        # rollouts add no pod: maxSurge 0, renderers/workload_specs.py), must fit it, or KEDA scales them into
        # pods the API server refuses.
        own = [w for w in cfg.workloads if w.namespace == team.name]
        peak = sum(w.max_replicas * w.gpus_per_pod for w in own)
        if peak > team.gpus:
            detail = " + ".join(f"{w.max_replicas}×{w.gpus_per_pod} ({w.name})" for w in own)
            out.append(Problem(f"{key}.gpus", team.gpus,
                               f"is below the GPUs this stack's own workloads in namespace '{team.name}' request at "
                               f"maxReplicas ({detail} = {peak}): the quota would refuse the pods KEDA scales to",
                               f"raise {key}.gpus to at least {peak}, or lower those workloads' maxReplicas"))
    return out
