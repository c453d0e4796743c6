"""The autoscaling suite's clock: every duration of the chain that a flag or a stack key can shorten is divided by
one factor, so that 25 minutes of bare-metal provisioning take 50 seconds and the suite fits in a CI job.

What is divided by FACTOR (and how):
- kube-controller-manager's HPA sync period, 15 s (`--horizontal-pod-autoscaler-sync-period`);
- the workload's `scaleDownStabilizationSeconds` (a stack-file override of the deployed stack);
- every cluster-autoscaler duration flag that decides when it acts, the stack's (`autoscaler_config` as sent to
  Gcore) or the default (`scan-interval`, `scale-down-unneeded-time`, `scale-down-delay-after-*`, the node-group
  backoffs, ...: e2e/pool_autoscaler.py `run_flags`);
- node start-up: the what-if's `nodeReadyMinutes` (kwok's node-initialize stage, delayed per node) and
  `gpuReadyMinutes` (the device plugin, played in e2e/pool_autoscaler.py), and `podStartSeconds` (kwok's pod-ready
  stage, delayed for the workload's pods; never below the metric path's periods: e2e/chain.py pod_start_seconds).
What is not, because nothing may shorten it without changing the stack's own objects: the metric path (dcgm-exporter
refresh 5 s, scrape 5 s, the query's 25 s window), the HPA behaviour's policy periods (scale-up 15 s, scale-down
one pod per 60 s: constants of the rendered ScaledObject), KEDA's pollingInterval (at least 5 s by the config model;
it only decides activation from zero), cron windows (wall-clock minutes) and Prometheus' rule intervals. The
what-if's prediction runs in production seconds (the real run's seconds times FACTOR) with exactly these settings:
the stack's own for everything divided, the others stretched by FACTOR (e2e/prediction.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from realengine.cluster import StageEdit
from stacknames import NAME_LABEL

FACTOR = 30
#: kwok's node-initialize stage waits until the time in this annotation (`stage_delays`).
BOOT_DELAY = "gpu-autoscaling.e2e/ready-at"
#: kube-controller-manager's default (pkg/controller/podautoscaler/config/v1alpha1/defaults.go), divided.
HPA_SYNC_SECONDS = 15 / FACTOR


def controller_manager_args() -> list[str]:
    return [f"--horizontal-pod-autoscaler-sync-period={round(HPA_SYNC_SECONDS * 1000)}ms"]


def stage_delays(pod_start: Mapping[str, float]) -> StageEdit:
    """kwok's stages with start-up delays: a node becomes Ready at the time in its BOOT_DELAY annotation (an
    RFC 3339 time, which kwok turns into the delay: pkg/utils/lifecycle/value_duration_from.go), a pod whose
    `app.kubernetes.io/name` is a key of `pod_start` becomes Ready that many seconds after kwok sees it bound; all
    else as kwok's defaults."""
    cases = " elif ".join(f'.metadata.labels["{NAME_LABEL}"] == "{name}" then "{seconds:.3f}s"'
                          for name, seconds in pod_start.items())
    pod_delay = f'if {cases} else "" end' if cases else '""'

    def edit(stages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        names = {s["metadata"]["name"] for s in stages}
        missing = {"node-initialize", "pod-ready"} - names
        if missing:
            raise ValueError(f"kwok's generated stages lack {sorted(missing)}; this kwok is not the pinned one")
        for stage in stages:
            if stage["metadata"]["name"] == "node-initialize":
                stage["spec"]["delay"] = {"durationMilliseconds": 0, "durationFrom": {
                    "jq": {"expression": f'.metadata.annotations["{BOOT_DELAY}"] // ""'}}}
            elif stage["metadata"]["name"] == "pod-ready":
                stage["spec"]["delay"] = {"durationMilliseconds": 0,
                                          "durationFrom": {"jq": {"expression": pod_delay}}}
        return stages

    return edit
