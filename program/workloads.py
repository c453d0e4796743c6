"""A stack file's workload as the arguments of the package's GpuWorkload (gpu_platform/workload.py): its keys as
the stack file gives them (what it did not set stays unset, so the component's rules see what the stack checks
saw), its pool's fields, and its secrets' values in place of their config keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pulumi
from pydantic.alias_generators import to_snake

from gpu_platform import GpuWorkloadArgs
from renderers.placement import PoolPlacement
from stackconfig import GpuPoolConfig, WorkloadConfig


def workload_args(w: WorkloadConfig, pool: GpuPoolConfig, secrets: Mapping[str, pulumi.Input[str]],
                  prometheus_url: pulumi.Input[str], priority_class: pulumi.Input[str]) -> GpuWorkloadArgs:
    given = w.model_dump(by_alias=True, exclude_unset=True, exclude={"pool", "secret_env", "image_pull_secret"})
    placement = PoolPlacement.of(pool)
    args: dict[str, Any] = {
        **{to_snake(k): v for k, v in given.items()},
        "name": w.name, "image": w.image, "max_replicas": w.max_replicas,
        "pool": {"labels": placement.labels, "taints": placement.taints, "spot": placement.spot,
                 "gpus_per_node": placement.gpus_per_node, "max_nodes": pool.max_nodes},
        "prometheus_url": prometheus_url, "priority_class_name": priority_class,
        "secret_env": {env: secrets[key] for env, key in w.secret_env.items()},
    }
    if (registry := w.image_pull_secret) is not None:
        args["image_pull_secret"] = {"server": registry.server, "username": registry.username,
                                     "password": secrets[registry.password_secret]}
    return cast(GpuWorkloadArgs, args)
