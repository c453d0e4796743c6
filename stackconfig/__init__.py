"""Stack configuration: typed, validated, and free of Pulumi resources."""

from stackconfig.errors import ConfigError, Problem
from stackconfig.model import (
    ChartsConfig,
    ClusterConfig,
    GpuPoolConfig,
    HeadroomConfig,
    MonitoringConfig,
    ScheduleConfig,
    StackConfig,
    SystemPoolConfig,
    WakeTriggerConfig,
    WhatIfConfig,
    WorkloadConfig,
    load_stack_config,
)

__all__ = [
    "ChartsConfig",
    "ClusterConfig",
    "ConfigError",
    "GpuPoolConfig",
    "HeadroomConfig",
    "MonitoringConfig",
    "Problem",
    "ScheduleConfig",
    "StackConfig",
    "SystemPoolConfig",
    "WakeTriggerConfig",
    "WhatIfConfig",
    "WorkloadConfig",
    "load_stack_config",
]
