"""Stack configuration: typed, validated, and free of Pulumi resources."""

from stackconfig.errors import ConfigError, Problem
from stackconfig.model import (
    ChartsConfig,
    ClusterConfig,
    GpuPoolConfig,
    MonitoringConfig,
    StackConfig,
    WakeTriggerConfig,
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
    "WakeTriggerConfig",
    "WorkloadConfig",
    "load_stack_config",
]
