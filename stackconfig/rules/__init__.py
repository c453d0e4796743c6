"""Rules across keys, one module per concern; `RULES` runs them in the order their problems are reported.

Each rule takes a `StackConfig` whose every value passed its own type's check (stackconfig/values.py) and
returns the problems it finds; stackconfig/loader.py runs them all and reports every problem at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stackconfig.errors import Problem
from stackconfig.rules import cluster, headroom, inert, pool, serving, serving_profile, teams, what_if, workloads
from stackconfig.stack import StackConfig

Rule = Callable[[StackConfig], list[Problem]]

RULES: Sequence[Rule] = (
    cluster.cluster_problems, pool.pool_problems, pool.system_pool_problems, cluster.chart_problems,
    cluster.chart_mirror_problems, workloads.workload_problems,
    pool.flavor_problems, cluster.autoscaler_problems, workloads.packing_problems, headroom.headroom_problems,
    serving.all_serving_problems, serving_profile.all_profile_problems, cluster.provision_time_problems,
    inert.inert_key_problems, what_if.what_if_problems, teams.team_problems,
)
