"""The model servers a serving profile can scale on, and the metric families each exports, by name.

A serving profile (`workloads[].serving`) turns into KEDA triggers on the engine's own series, so each name here
must be what the pinned engine exports: a renamed series matches nothing, the query is empty, and with
`ignoreNullValues: "false"` the trigger errors into its fallback instead of scaling. Checked against vLLM's
`vllm/v1/metrics/loggers.py` (`PrometheusStatLogger`), at v0.12.0 and again at later tags (the names below are
unchanged through v0.30.0), for the pinned image `vllm/vllm-openai:v0.14.0` (Pulumi.prod.yaml):

- `vllm:kv_cache_usage_perc` (gauge, a 0-1 fraction despite the name) replaced `vllm:gpu_cache_usage_perc`,
  deprecated in 0.9.2, hidden in 0.11 and gone in 0.12 (vLLM's deprecation policy, docs/usage/metrics.md:
  deprecated in X.Y, hidden in X.Y+1, removed in X.Y+2). A query on the old name returns nothing on v0.14.0.
- `vllm:request_time_per_output_token_seconds` (histogram, one observation per finished request: its mean time
  per output token) is the per-request TPOT that a P90 objective is written in; `vllm:inter_token_latency_seconds`
  (one observation per token) replaced `vllm:time_per_output_token_seconds`, deprecated in 0.11 and removed in
  0.13.
- `vllm:time_to_first_token_seconds` (histogram, from the request's arrival at the frontend).
- `vllm:num_requests_waiting`, `vllm:num_requests_running` (gauges, per engine).

Every series carries `model_name` and `engine` labels; the PodMonitor adds `namespace` and `pod`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineMetrics:
    """The series of one engine that the serving triggers read (histograms by their base name)."""

    engine: str
    #: The versions the names were checked against (for messages and docs).
    checked: str
    ttft_histogram: str
    tpot_histogram: str
    queue_gauge: str
    kv_cache_gauge: str
    running_gauge: str
    #: Names an older release of the engine used; a trigger on one of them finds nothing on the checked versions.
    retired: tuple[tuple[str, str], ...] = ()


VLLM = EngineMetrics(
    engine="vllm",
    checked="vLLM v0.12.0 to v0.30.0 (the pinned image is v0.14.0)",
    ttft_histogram="vllm:time_to_first_token_seconds",
    tpot_histogram="vllm:request_time_per_output_token_seconds",
    queue_gauge="vllm:num_requests_waiting",
    kv_cache_gauge="vllm:kv_cache_usage_perc",
    running_gauge="vllm:num_requests_running",
    retired=(
        ("vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"),
        ("vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds"),
    ),
)

#: Engines whose metrics a serving profile knows, by the `serving.engine` value.
ENGINES: dict[str, EngineMetrics] = {VLLM.engine: VLLM}


def retired_metric(metric: str) -> tuple[str, str, str] | None:
    """(engine, the retired name, its replacement) when `metric` is a name an engine no longer exports."""
    for e in ENGINES.values():
        for old, new in e.retired:
            if metric == old:
                return e.engine, old, new
    return None
