"""Rules across the teams' keys: one namespace each, none that Kubernetes, the platform or this stack's own
workloads already use."""

from __future__ import annotations

from stackconfig.errors import Problem
from stackconfig.rules.workloads import namespace_problem
from stackconfig.stack import StackConfig
from stacknames import HEADROOM_NAMESPACE

_FIX = "give the team a namespace of its own"


def team_namespace_problem(key: str, name: str) -> Problem | None:
    """A team namespace Kubernetes or the platform has already (TeamAccess checks its argument with it too)."""
    if name == HEADROOM_NAMESPACE:
        return Problem(key, name, "is the platform's headroom namespace: the team would control the placeholders",
                       _FIX)
    return namespace_problem(key, name)


def team_problems(cfg: StackConfig) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, team in enumerate(cfg.teams):
        key = f"teams[{i}].name"
        if team.name in seen:
            out.append(Problem(key, team.name, f"is already used by teams[{seen[team.name]}]", _FIX))
        seen.setdefault(team.name, i)
        if (reserved := team_namespace_problem(key, team.name)) is not None:
            out.append(reserved)
        # The team's credential may read every Secret and change every Deployment of its namespace.
        if own := [w.name for w in cfg.workloads if w.namespace == team.name]:
            out.append(Problem(key, team.name, f"is the namespace of this stack's own workload(s) {', '.join(own)}: "
                               "the team's credential could read their secrets and change or delete them",
                               f"{_FIX}, or move those workloads to another namespace"))
    return out

