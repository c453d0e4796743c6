"""Stack configuration: what a stack file may say, its defaults and every rule, typed, frozen and free of Pulumi.

Read top-down: `values.py` (one type per kind of value), one module per section (`cluster.py`, `gpu_pool.py`,
`system_pool.py`, `charts.py`, `monitoring.py`, `alerting.py`, `workloads.py`, `teams.py`, `what_if.py`),
`stack.py` (the whole config), `rules/` (rules across keys, by concern), `loader.py` (everything at once into one
`ConfigError`) and `stackfile.py` (the one reader of `Pulumi.<stack>.yaml`). Facts the sections rest on:
`versions.py` (pins and matrices), `flavors.py` (GPUs per node), `packing.py` (pods onto nodes), `units.py`
(durations and quantities).
"""

import toolenv  # noqa: F401  (first: outside .venv, a missing requirement is one line saying how to enter it)
from stackconfig.alerting import AlertingConfig
from stackconfig.charts import ChartsConfig
from stackconfig.cluster import ClusterConfig, ExistingClusterConfig
from stackconfig.errors import ConfigError, Problem
from stackconfig.gpu_pool import GpuPoolConfig, HeadroomConfig, ScheduleConfig
from stackconfig.loader import check_config, check_stack, load_stack_config
from stackconfig.monitoring import MonitoringConfig
from stackconfig.stack import StackConfig, secret_config_keys
from stackconfig.system_pool import SystemPoolConfig
from stackconfig.teams import TeamConfig
from stackconfig.what_if import WhatIfConfig
from stackconfig.workloads import ModelCacheConfig, ProbesConfig, WakeTriggerConfig, WorkloadConfig

__all__ = [
    "AlertingConfig", "ChartsConfig", "ClusterConfig", "ExistingClusterConfig", "ConfigError", "GpuPoolConfig",
    "HeadroomConfig", "ModelCacheConfig", "MonitoringConfig", "Problem", "ProbesConfig", "ScheduleConfig",
    "StackConfig", "SystemPoolConfig", "TeamConfig", "WakeTriggerConfig", "WhatIfConfig", "WorkloadConfig",
    "check_config", "check_stack", "load_stack_config", "secret_config_keys",
]
