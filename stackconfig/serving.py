"""`workloads[].serving`: scale a model server on what its users feel, from the engine's own metrics.

`engine` names the server whose series the triggers read (stackconfig/engines.py). `latencyObjective` is the P90
time to first token and time per output token the workload is scaled to hold; `perGpu` is what one GPU delivers
for this model (measured, e.g. with `vllm bench serve`): the P90s at low load, below which no number of replicas
can bring an objective, and the TPOT at the knee, the throughput `whatIf.perGpu` counts as 100 %. `band` is the
hysteresis on the latency ratio P90 / objective: above `scaleUp` replicas are added, below `scaleDown` removed,
in between the count holds. `longestRequest` sizes the drain of a pod that is removed.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from stackconfig.units import go_duration_seconds
from stackconfig.values import Fraction, Model, invalid


def _latency(value: str) -> str:
    seconds = go_duration_seconds(value)
    if seconds is None or value == "0":
        raise invalid("is not a duration with a unit", "write it like '500ms' or '2s'")
    if seconds <= 0:
        raise invalid("is not a positive duration", "write a duration above zero, e.g. '500ms'")
    if seconds > 3600:
        raise invalid("is longer than an hour", "write the P90 of one request, e.g. '500ms' or '2s'")
    return value


#: A latency or a request's length as a Go duration ('500ms', '2s', '1m30s'), positive, at most an hour.
Latency = Annotated[str, AfterValidator(_latency)]


def seconds(value: str) -> float:
    """Seconds of a `Latency` the config model accepted."""
    parsed = go_duration_seconds(value)
    assert parsed is not None, value
    return parsed


class LatencyObjectiveConfig(Model):
    """The P90s the workload is scaled to hold; either or both."""

    ttft_p90: Latency | None = None
    tpot_p90: Latency | None = None


class PerGpuLatencyConfig(Model):
    """What one GPU delivers for this model and request mix, measured: P90 TTFT and TPOT at low load (a request
    alone on the GPU), and P90 TPOT at the knee (the throughput `whatIf.perGpu` counts as 100 %)."""

    ttft_p90: Latency
    tpot_p90: Latency
    tpot_p90_at_knee: Latency


class BandConfig(Model):
    """Hysteresis on the latency ratio (P90 / objective, 1 = at the objective)."""

    scale_up: float = Field(default=0.6, gt=0, lt=2)
    scale_down: float = Field(default=0.35, gt=0, lt=2)


class ServingConfig(Model):
    """A serving profile: the engine, the latency objective, and the saturation levels of its queue and KV cache."""

    engine: str | None = None
    latency_objective: LatencyObjectiveConfig | None = None
    per_gpu: PerGpuLatencyConfig | None = None
    band: BandConfig = Field(default_factory=BandConfig)
    #: Waiting requests per ready replica that count as saturated (llm-d's saturation rule uses 5).
    queue_per_replica: float = Field(default=5, gt=0)
    #: KV-cache usage per ready replica (0-1) that counts as saturated (llm-d's saturation rule uses 0.8).
    kv_cache_usage: Fraction = Field(default=0.8, gt=0)
    #: The longest request the engine serves (max tokens × TPOT): a removed pod keeps serving this long.
    longest_request: Latency = "120s"
