"""Stack configuration: typed, validated, and free of Pulumi resources."""

from stackconfig.errors import ConfigError, Problem
from stackconfig.model import (
    ChartsConfig,
    ClusterConfig,
    GpuPoolConfig,
    MonitoringConfig,
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
    "MonitoringConfig",
    "Problem",
    "StackConfig",
    "SystemPoolConfig",
    "WakeTriggerConfig",
    "WhatIfConfig",
    "WorkloadConfig",
    "load_stack_config",
]
