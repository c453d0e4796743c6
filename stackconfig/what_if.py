"""`whatIf`: the demand trace `python -m capacity` replays through the stack (the program never reads it)."""

from __future__ import annotations

from pydantic import Field

from stackconfig.values import Model


class WhatIfConfig(Model):
    """How `python -m capacity` and the pull-request what-if read this stack's demand trace.

    `trace` is a CSV path relative to the repository root; demand in GPUs = `column` / `perGpu` (units of
    the column one GPU serves per minute at 100 % utilisation). The ranges are uniform draws per node
    (Gcore bare metal 20-25 min to Ready, GPU Operator 5-10 min more); the price is `gpuPool.pricePerGpuHour`.
    """

    trace: str | None = None
    column: str = "requests"
    per_gpu: float | None = Field(default=None, gt=0)
    workload: str | None = None
    #: Wall-clock time of the trace's first row, for cron windows (ISO 8601 with offset).
    start: str = "2026-01-05T00:00:00+00:00"
    pod_start_seconds: int = Field(default=180, ge=0, le=7200)
    # A YAML list is what a stack file can write: not strict about the tuple type.
    node_ready_minutes: tuple[float, float] = Field(default=(20, 25), strict=False)
    gpu_ready_minutes: tuple[float, float] = Field(default=(5, 10), strict=False)
    seed: int = 1
