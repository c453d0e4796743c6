"""Minutes of vLLM's metric families as Prometheus would have scraped them, written into a real TSDB.

The serving triggers read rates over 1-minute windows and smooth them over another minute, so a live stand-in
exporter would need minutes per case. Instead the history is written as OpenMetrics with timestamps and turned
into TSDB blocks by the Debian package's own `promtool tsdb create-blocks-from openmetrics`; a real `prometheus`
then serves it, and the tests query it at chosen instants, exactly as KEDA's Prometheus scaler sends a query.

The families and buckets are vLLM's (vllm/v1/metrics/loggers.py, `PrometheusStatLogger`, v0.12.0 onward):
histograms `vllm:time_to_first_token_seconds` and `vllm:request_time_per_output_token_seconds`, gauges
`vllm:num_requests_waiting`, `vllm:num_requests_running`, `vllm:kv_cache_usage_perc`, each with `model_name` and
`engine`; the series carry the target labels a PodMonitor scrape adds (`namespace`, `pod`, `container`, `job`,
`endpoint`; prometheus-operator pkg/prometheus/promcfg.go). dcgm-exporter's `DCGM_FI_DEV_GPU_UTIL` comes with
the labels the GPU Operator's ServiceMonitor keeps (honorLabels: the workload's `namespace` and `pod`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from capacity.config import read_stack_file
from stackconfig import StackConfig, load_stack_config
from tests.prometheus_harness import promtool

TTFT = "vllm:time_to_first_token_seconds"
TPOT = "vllm:request_time_per_output_token_seconds"
WAITING = "vllm:num_requests_waiting"
RUNNING = "vllm:num_requests_running"
KV_CACHE = "vllm:kv_cache_usage_perc"
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                40.0, 80.0, 160.0, 640.0, 2560.0)
TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
                80.0)
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
STEP = 15  # seconds between scrapes (the PodMonitor's interval)
#: Prod's `inference` with the serving profile of docs/serving-workloads.md#serving-profile in place of its
#: GPU-utilisation target and its own queue trigger.
PROFILE = {
    "engine": "vllm",
    "latencyObjective": {"ttftP90": "500ms", "tpotP90": "50ms"},
    "perGpu": {"ttftP90": "40ms", "tpotP90": "7ms", "tpotP90AtKnee": "40ms"},
    "longestRequest": "120s",
}


def prod_with_profile(**changes: object) -> StackConfig:
    """Prod's stack file with its `inference` workload on the serving profile (plus `changes` to that workload)."""
    raw = read_stack_file("prod")
    w = raw["workloads"][0]
    assert w["name"] == "inference"
    for key in ("targetUtilization", "triggers"):
        w.pop(key, None)
    w.update({"serving": PROFILE, "terminationGracePeriodSeconds": 160, **changes})
    return load_stack_config(raw)


@dataclass(frozen=True)
class Phase:
    """`seconds` of one load level on every pod: per scrape, `ttft` and `tpot` map a bucket's upper bound to the
    requests observed in it; the gauges hold their values; `gpu_util` is each pod's GPU."""

    seconds: int
    ttft: dict[float, int] = field(default_factory=dict)
    tpot: dict[float, int] = field(default_factory=dict)
    waiting: float = 0.0
    running: float = 0.0
    kv_cache: float = 0.0
    gpu_util: float = 0.0


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    #: The pod's load levels, one after the other from the history's start.
    phases: tuple[Phase, ...]


def _labels(pod: Pod, **extra: str) -> str:
    labels = {"namespace": pod.namespace, "pod": pod.name, "container": pod.name.rsplit("-", 2)[0],
              "job": f"{pod.namespace}/{pod.name.rsplit('-', 2)[0]}", "endpoint": "http", **extra}
    return ",".join(f'{k}="{v}"' for k, v in labels.items())


def _histogram(name: str, buckets: Sequence[float], pods: Sequence[Pod], start: float, per_phase: str) -> list[str]:
    lines = [f"# TYPE {name} histogram"]
    for pod in pods:
        counts = dict.fromkeys(buckets, 0.0)
        total, total_sum = 0.0, 0.0
        rows: list[tuple[float, dict[float, float], float, float]] = []
        t = start
        for phase in pod.phases:
            observed: dict[float, int] = getattr(phase, per_phase)
            for _ in range(phase.seconds // STEP):
                for upper, n in observed.items():
                    for b in buckets:
                        if b >= upper:
                            counts[b] += n
                    total += n
                    total_sum += n * upper
                rows.append((t, dict(counts), total, total_sum))
                t += STEP
        for le in (*buckets, float("inf")):
            text = "+Inf" if le == float("inf") else repr(le)
            for ts, c, count, _ in rows:
                value = count if le == float("inf") else c[le]
                lines.append(f'{name}_bucket{{{_labels(pod, engine="0", model_name=MODEL, le=text)}}} {value} {ts}')
        for ts, _, count, _ in rows:
            lines.append(f'{name}_count{{{_labels(pod, engine="0", model_name=MODEL)}}} {count} {ts}')
        for ts, _, _, s in rows:
            lines.append(f'{name}_sum{{{_labels(pod, engine="0", model_name=MODEL)}}} {s} {ts}')
    return lines


def _gauge(name: str, attr: str, pods: Sequence[Pod], start: float) -> list[str]:
    lines = [f"# TYPE {name} gauge"]
    for pod in pods:
        t = start
        for phase in pod.phases:
            for _ in range(phase.seconds // STEP):
                value = getattr(phase, attr)
                lines.append(f'{name}{{{_labels(pod, engine="0", model_name=MODEL)}}} {value} {t}')
                t += STEP
    return lines


def _gpu(pods: Sequence[Pod], start: float) -> list[str]:
    lines = ["# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    for i, pod in enumerate(pods):
        t = start
        labels = (f'gpu="{i}",UUID="GPU-{i:04d}",Hostname="gpu-node-{i // 8}",namespace="{pod.namespace}",'
                  f'pod="{pod.name}",container="{pod.name.rsplit("-", 2)[0]}"')
        for phase in pod.phases:
            for _ in range(phase.seconds // STEP):
                lines.append(f"DCGM_FI_DEV_GPU_UTIL{{{labels}}} {phase.gpu_util} {t}")
                t += STEP
    return lines


@dataclass(frozen=True)
class Available:
    """kube-state-metrics' `kube_deployment_status_replicas_available` for one Deployment: (seconds, value) pieces
    one after the other from the history's start, with the labels its scrape job keeps (`job`, `namespace`,
    `deployment`; renderers/promql.py `zero_without_available_pods` reads it)."""

    namespace: str
    deployment: str
    pieces: tuple[tuple[int, float], ...]


def _available(deployments: Sequence[Available], start: float) -> list[str]:
    name = "kube_deployment_status_replicas_available"
    lines = [f"# TYPE {name} gauge"]
    for d in deployments:
        t = start
        for seconds, value in d.pieces:
            for _ in range(seconds // STEP):
                lines.append(f'{name}{{job="kube-state-metrics",namespace="{d.namespace}",'
                             f'deployment="{d.deployment}"}} {value} {t}')
                t += STEP
    return lines


def write_blocks(pods: Sequence[Pod], start: float, tsdb: Path, deployments: Sequence[Available] = ()) -> None:
    """The history from `start` (unix seconds) on, as TSDB blocks in `tsdb` (promtool's backfill)."""
    lines = [
        *_histogram(TTFT, TTFT_BUCKETS, pods, start, "ttft"),
        *_histogram(TPOT, TPOT_BUCKETS, pods, start, "tpot"),
        *_gauge(WAITING, "waiting", pods, start),
        *_gauge(RUNNING, "running", pods, start),
        *_gauge(KV_CACHE, "kv_cache", pods, start),
        *_gpu(pods, start),
        *(_available(deployments, start) if deployments else []),
        "# EOF",
    ]
    tsdb.mkdir(parents=True, exist_ok=True)
    source = tsdb.parent / "history.om"
    source.write_text("\n".join(lines) + "\n")
    result = promtool("tsdb", "create-blocks-from", "openmetrics", str(source), str(tsdb))
    assert result.returncode == 0, result.stderr + result.stdout
