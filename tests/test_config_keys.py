"""No config key that does nothing, and none that lands in the wrong place: each key changes what it is for.

The keys are walked from the pydantic models (stackconfig/stack.py), so a new key without an entry here fails
`test_every_config_key_is_covered`. Each entry gives a context (project keys set on top of the dev stack, to
reach the case where the key matters) and the change of that one key to another valid value; WHERE names the
paths of the plan (offline/plan.py `build_plan`, what a reviewer diffs) that change must reach, e.g.
`gpu-cluster.inputs.pools[gpu].maxNodeCount` for `gpuPool.maxNodes`: a key wired to the wrong input, or to
none, fails. Keys whose effect is inside a secret are compared on what the engine receives. Keys that by design
change only what validation accepts are listed in VALIDATION_ONLY with the reason.
"""

from __future__ import annotations

import copy
import json
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from delivery.render import unwrap
from offline.engine import ROOT, placeholder_secrets, record_stack
from offline.plan import build_plan
from stackconfig import ConfigError, StackConfig, load_stack_config

DEV = yaml.safe_load(Path(ROOT / "Pulumi.dev.yaml").read_text())["config"]
PROJECT = "gpu-autoscaling"


def walk(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every key a stack file can set, as `section.key`, `workloads[].key`; optional sub-objects and their keys."""
    for name, info in model.model_fields.items():
        key = f"{prefix}{info.alias or name}"
        annotation = info.annotation
        args = typing.get_args(annotation)
        if typing.get_origin(annotation) is list and args and isinstance(args[0], type) and issubclass(
            args[0], BaseModel
        ):
            yield from walk(args[0], f"{key}[].")
            continue
        sub = next((a for a in (annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if sub is None:
            yield key
            continue
        if isinstance(annotation, types.UnionType) or type(None) in args:
            yield key  # an optional block: setting it at all is a key too
        yield from walk(sub, f"{key}.")


@dataclass(frozen=True)
class Change:
    """`context` and `change` map dotted paths (`gpuPool.maxNodes`, `workloads.0.env`) to values; None deletes."""

    change: dict[str, Any]
    context: dict[str, Any] = field(default_factory=dict)


CLUSTER_BY_ID = {
    "cluster.projectName": None, "cluster.regionName": None, "cluster.projectId": 1, "cluster.regionId": 76,
}
WAKE = {"query": "sum(queue_length)", "threshold": 5}
SCALE_TO_ZERO = {"workloads.0.minReplicas": 0, "workloads.0.wakeTrigger": WAKE}

#: Two GPU pools instead of dev's one; the workload on the first.
TWO_POOLS = {"gpuPool": None, "gpuPools": [{"name": "h100"}, {"name": "h200", "flavor": "bm3-ai-1xlarge-h200-141-8"}],
             "workloads.0.pool": "h100"}
#: A spot flavor newer than the flavor table (so that `spot` is the stack's to state), the workload interruptible.
SPOT_UNLISTED = {"gpuPool.flavor": "bm3-ai-ndp3-spot-1xlarge-h200-141-8", "gpuPool.acceptUnlistedFlavor": True,
                 "gpuPool.gpusPerNode": 8, "gpuPool.spot": False, "workloads.0.interruptible": True}
HOURS = {"start": "0 8 * * 1-5", "end": "0 20 * * 1-5", "timezone": "Europe/Luxembourg", "minReplicas": 2}
HEADROOM_WINDOW = {"gpuPool.headroom": {"gpus": 0, "schedules": [HOURS]}}
WORKLOAD_WINDOW = {"workloads.0.schedules": [HOURS]}
HTTP = {"workloads.0.ports": [{"name": "http", "port": 8000}]}
TWO_PORTS = {"workloads.0.ports": [{"name": "http", "port": 8000}, {"name": "admin", "port": 8001}]}
PROBES = {"workloads.0.probes": {"port": "http"}}
METRICS = {"workloads.0.metrics": {"port": "http"}}
WAITING = {"name": "waiting", "metric": "vllm:num_requests_waiting", "threshold": 5}
TRIGGER = {**HTTP, **METRICS, "workloads.0.triggers": [WAITING]}
PER_GPU = {"ttftP90": "40ms", "tpotP90": "7ms", "tpotP90AtKnee": "40ms"}
OBJECTIVE = {"ttftP90": "500ms", "tpotP90": "50ms"}
PROFILE = {"engine": "vllm", "latencyObjective": OBJECTIVE, "perGpu": PER_GPU}
#: A serving profile needs ports and metrics, drains for longer than dev's 60 s and replaces targetUtilization.
SERVING_BASE = {**HTTP, **METRICS, "workloads.0.targetUtilization": None,
                "workloads.0.terminationGracePeriodSeconds": 180}
SERVING = {**SERVING_BASE, "workloads.0.serving": PROFILE}
PULL = {"server": "registry.example.com", "username": "ci", "passwordSecret": "registryPassword"}
NFS = {"type": "nfs", "server": "10.0.0.5", "path": "/models"}
RECEIVERS = {"alerting": {"webhook": {"urlSecret": "hookUrl"}, "slack": {"webhookUrlSecret": "slackUrl",
                                                                        "channel": "#gpu"},
                          "pagerduty": {"routingKeySecret": "pdKey"}, "heartbeat": {"urlSecret": "beatUrl"}}}

#: The dev stack deployed into a cluster made elsewhere: the creating keys go, the GPU pool is stated in full.
EXISTING = {
    "cluster.projectName": None, "cluster.regionName": None, "cluster.keypair": None, "cluster.version": "v1.35.3",
    "gpuPool.labels": {"platform.gcore-gpu/pool": "gpu"}, "gpuPool.taints": {"nvidia.com/gpu": "present:NoSchedule"},
    "systemPool": None, "cluster.existing": {"kubeconfigSecret": "kubeconfig"},
}

CHANGES: dict[str, Change] = {
    "cluster.existing": Change(EXISTING),
    "cluster.existing.kubeconfigSecret": Change({"cluster.existing": {"kubeconfigSecret": "portalKubeconfig"}},
                                                EXISTING),
    "cluster.existing.stackReference": Change({"cluster.existing": {"stackReference": "acme/gpu-cluster/prod"}},
                                              EXISTING),
    "cluster.name": Change({"cluster.name": "gpu-dev2"}),
    "cluster.version": Change({"cluster.version": "v1.34.6"}),
    "cluster.projectId": Change({"cluster.projectId": 2}, CLUSTER_BY_ID),
    "cluster.projectName": Change({"cluster.projectName": "Research"}),
    "cluster.regionId": Change({"cluster.regionId": 148}, CLUSTER_BY_ID),
    "cluster.regionName": Change({"cluster.regionName": "Luxembourg-3"}),
    "cluster.keypair": Change({"cluster.keypair": "other-team"}),
    "cluster.network": Change({"cluster.network": "net-0001"}),
    "cluster.subnet": Change({"cluster.subnet": "subnet-0001"}, {"cluster.network": "net-0001"}),
    "cluster.cni": Change({"cluster.cni": "cilium"}),
    "cluster.autoscaler": Change({"cluster.autoscaler": {"scan-interval": "20s"}}),
    "gpuPool": Change({"gpuPool": {"maxNodes": 3}}),
    # The same pool in the list form: only what is set differently (maxNodes) changes, nothing is renamed.
    "gpuPools": Change({"gpuPool": None, "gpuPools": [{"name": "gpu", "maxNodes": 3}]}),
    "gpuPool.spot": Change({"gpuPool.spot": True}, SPOT_UNLISTED),
    "workloads[].pool": Change({"workloads.0.pool": "h200"}, TWO_POOLS),
    "gpuPool.name": Change({"gpuPool.name": "gpu2"}),
    "gpuPool.flavor": Change({"gpuPool.flavor": "bm3-ai-1xlarge-a100-80-8"}),
    "gpuPool.gpusPerNode": Change({"gpuPool.gpusPerNode": 16}, {"gpuPool.flavor": "bm4-ai-1xlarge-b200-180-8",
                                                                "gpuPool.acceptUnlistedFlavor": True,
                                                                "gpuPool.gpusPerNode": 8}),
    "gpuPool.minNodes": Change({"gpuPool.minNodes": 2}, {"gpuPool.maxNodes": 3}),
    "gpuPool.maxNodes": Change({"gpuPool.maxNodes": 3}),
    "gpuPool.publicIpv4": Change({"gpuPool.publicIpv4": True}),
    "gpuPool.labels": Change({"gpuPool.labels": {"platform.gcore-gpu/pool": "gpu", "team": "ml"}}),
    "gpuPool.taints": Change({"gpuPool.taints": {"nvidia.com/gpu": "present:NoExecute"}}),
    "gpuPool.provisionMinutes": Change({"gpuPool.provisionMinutes": 50}),
    "gpuPool.gpuReadyGate": Change({"gpuPool.gpuReadyGate": False}),
    "systemPool.enabled": Change({"systemPool.enabled": False},
                                 {"gpuPool.taints": {}, "gpuPool.gpuReadyGate": False, "systemPool.maxNodes": None}),
    "systemPool.name": Change({"systemPool.name": "sys"}),
    "systemPool.flavor": Change({"systemPool.flavor": "g1-standard-8-16"}),
    "systemPool.minNodes": Change({"systemPool.minNodes": 2}),
    "systemPool.maxNodes": Change({"systemPool.maxNodes": 3}),
    "systemPool.servergroupPolicy": Change({"systemPool.servergroupPolicy": "anti-affinity"}),
    "systemPool.bootVolumeSize": Change({"systemPool.bootVolumeSize": 100}),
    "systemPool.bootVolumeType": Change({"systemPool.bootVolumeType": "ssd_hiiops"}),
    "charts.gpuOperator": Change({"charts.gpuOperator": "v26.3.1"}),
    "charts.keda": Change({"charts.keda": "2.20.1"}),
    "charts.kubePrometheusStack": Change({"charts.kubePrometheusStack": "88.5.2"}),
    "monitoring.retention": Change({"monitoring.retention": "30d"}),
    "monitoring.queryUrl": Change({"monitoring.queryUrl": "http://thanos-query.monitoring:9090"}),
    "charts.mirror": Change({"charts.mirror": "https://charts.example.com/gpu-platform"}),
    "monitoring.storageSize": Change({"monitoring.storageSize": "100Gi"}),
    "monitoring.storageClass": Change({"monitoring.storageClass": "ssd"}, {"monitoring.storageSize": "100Gi"}),
    "workloads[].name": Change({"workloads.0.name": "chat"}),
    "workloads[].namespace": Change({"workloads.0.namespace": "ml"}),
    "teams[].name": Change({"teams.0.name": "ranking"}, {"teams": [{"name": "search", "gpus": 8}]}),
    "teams[].gpus": Change({"teams.0.gpus": 16}, {"teams": [{"name": "search", "gpus": 8}]}),
    "workloads[].image": Change({"workloads.0.image": "registry.example.com/gpu-app:1.4.3"}),
    "workloads[].command": Change({"workloads.0.command": ["/usr/bin/other"]}),
    "workloads[].args": Change({"workloads.0.args": ["--other"]}),
    "workloads[].env": Change({"workloads.0.env": {"LOG_LEVEL": "debug"}}),
    "workloads[].requests.cpu": Change({"workloads.0.requests": {"cpu": "4"}}),
    "workloads[].requests.memory": Change({"workloads.0.requests": {"memory": "16Gi"}}),
    "workloads[].gpusPerPod": Change({"workloads.0.gpusPerPod": 2}, {"workloads.0.maxReplicas": 8}),
    "workloads[].minReplicas": Change({"workloads.0.minReplicas": 2}),
    "workloads[].maxReplicas": Change({"workloads.0.maxReplicas": 8}),
    "workloads[].targetUtilization": Change({"workloads.0.targetUtilization": 70}),
    "workloads[].pollingInterval": Change({"workloads.0.pollingInterval": 30}),
    "workloads[].scaleDownStabilizationSeconds": Change({"workloads.0.scaleDownStabilizationSeconds": 2400}),
    "workloads[].cooldownPeriod": Change({"workloads.0.cooldownPeriod": 2400}, SCALE_TO_ZERO),
    "workloads[].fallbackReplicas": Change({"workloads.0.fallbackReplicas": 2}),
    "workloads[].fallbackFailureThreshold": Change({"workloads.0.fallbackFailureThreshold": 5}),
    "workloads[].terminationGracePeriodSeconds": Change({"workloads.0.terminationGracePeriodSeconds": 120}),
    "workloads[].wakeTrigger": Change({"workloads.0.wakeTrigger": WAKE}),
    "workloads[].wakeTrigger.query": Change({"workloads.0.wakeTrigger.query": "sum(requests)"}, SCALE_TO_ZERO),
    "workloads[].wakeTrigger.threshold": Change({"workloads.0.wakeTrigger.threshold": 10}, SCALE_TO_ZERO),
    "workloads[].wakeTrigger.activationThreshold": Change(
        {"workloads.0.wakeTrigger.activationThreshold": 1}, SCALE_TO_ZERO
    ),
    "protect": Change({"protect": True}),
    # --- headroom and schedules (docs/headroom-and-schedules.md) ---
    "gpuPool.pricePerGpuHour": Change({"gpuPool.pricePerGpuHour": 3.5}),
    "gpuPool.headroom": Change({"gpuPool.headroom": {"gpus": 1}}),
    "gpuPool.headroom.gpus": Change({"gpuPool.headroom.gpus": 2}, {"gpuPool.headroom": {"gpus": 1}}),
    "gpuPool.headroom.podGpus": Change({"gpuPool.headroom.podGpus": 2}, {"gpuPool.headroom": {"gpus": 2}}),
    "gpuPool.headroom.schedules[].start": Change(
        {"gpuPool.headroom.schedules": [{**HOURS, "start": "0 7 * * 1-5"}]}, HEADROOM_WINDOW),
    "gpuPool.headroom.schedules[].end": Change(
        {"gpuPool.headroom.schedules": [{**HOURS, "end": "0 19 * * 1-5"}]}, HEADROOM_WINDOW),
    "gpuPool.headroom.schedules[].timezone": Change(
        {"gpuPool.headroom.schedules": [{**HOURS, "timezone": "Europe/Berlin"}]}, HEADROOM_WINDOW),
    "gpuPool.headroom.schedules[].minReplicas": Change(
        {"gpuPool.headroom.schedules": [{**HOURS, "minReplicas": 3}]}, HEADROOM_WINDOW),
    "workloads[].schedules[].start": Change(
        {"workloads.0.schedules": [{**HOURS, "start": "0 7 * * 1-5"}]}, WORKLOAD_WINDOW),
    "workloads[].schedules[].end": Change(
        {"workloads.0.schedules": [{**HOURS, "end": "0 19 * * 1-5"}]}, WORKLOAD_WINDOW),
    "workloads[].schedules[].timezone": Change(
        {"workloads.0.schedules": [{**HOURS, "timezone": "Europe/Berlin"}]}, WORKLOAD_WINDOW),
    "workloads[].schedules[].minReplicas": Change(
        {"workloads.0.schedules": [{**HOURS, "minReplicas": 3}]}, WORKLOAD_WINDOW),
    # --- serving (docs/serving-workloads.md) ---
    "workloads[].ports[].name": Change({"workloads.0.ports": [{"name": "web", "port": 8000}]}, HTTP),
    "workloads[].ports[].port": Change({"workloads.0.ports": [{"name": "http", "port": 8080}]}, HTTP),
    "workloads[].probes": Change({"workloads.0.probes": {"port": "http"}}, HTTP),
    "workloads[].probes.port": Change({"workloads.0.probes.port": "admin"}, {**TWO_PORTS, **PROBES}),
    "workloads[].probes.path": Change({"workloads.0.probes.path": "/ready"}, {**HTTP, **PROBES}),
    "workloads[].probes.startupMinutes": Change({"workloads.0.probes.startupMinutes": 45}, {**HTTP, **PROBES}),
    "workloads[].probes.periodSeconds": Change({"workloads.0.probes.periodSeconds": 20}, {**HTTP, **PROBES}),
    "workloads[].probes.failureThreshold": Change({"workloads.0.probes.failureThreshold": 5}, {**HTTP, **PROBES}),
    "workloads[].secretEnv": Change({"workloads.0.secretEnv": {"HF_TOKEN": "hfToken"}}),
    "workloads[].imagePullSecret": Change({"workloads.0.imagePullSecret": PULL}),
    "workloads[].imagePullSecret.server": Change(
        {"workloads.0.imagePullSecret.server": "registry.example.org"}, {"workloads.0.imagePullSecret": PULL}),
    "workloads[].imagePullSecret.username": Change(
        {"workloads.0.imagePullSecret.username": "other"}, {"workloads.0.imagePullSecret": PULL}),
    "workloads[].imagePullSecret.passwordSecret": Change(
        {"workloads.0.imagePullSecret.passwordSecret": "otherPassword"}, {"workloads.0.imagePullSecret": PULL}),
    "workloads[].shmSize": Change({"workloads.0.shmSize": "16Gi"}, {"workloads.0.requests": {"memory": "64Gi"}}),
    "workloads[].modelCache": Change({"workloads.0.modelCache": {"type": "hostPath"}}),
    "workloads[].modelCache.type": Change(
        {"workloads.0.modelCache": {"type": "pvc", "claimName": "models"}}, {"workloads.0.modelCache": NFS}),
    "workloads[].modelCache.mountPath": Change(
        {"workloads.0.modelCache.mountPath": "/cache"}, {"workloads.0.modelCache": NFS}),
    "workloads[].modelCache.hostPath": Change(
        {"workloads.0.modelCache.hostPath": "/mnt/nvme/models"}, {"workloads.0.modelCache": {"type": "hostPath"}}),
    "workloads[].modelCache.server": Change(
        {"workloads.0.modelCache.server": "10.0.0.6"}, {"workloads.0.modelCache": NFS}),
    "workloads[].modelCache.path": Change(
        {"workloads.0.modelCache.path": "/other"}, {"workloads.0.modelCache": NFS}),
    "workloads[].modelCache.claimName": Change(
        {"workloads.0.modelCache.claimName": "weights"},
        {"workloads.0.modelCache": {"type": "pvc", "claimName": "models"}}),
    "workloads[].modelCache.readOnly": Change(
        {"workloads.0.modelCache.readOnly": True}, {"workloads.0.modelCache": NFS}),
    "workloads[].metrics": Change({"workloads.0.metrics": {"port": "http"}}, HTTP),
    "workloads[].metrics.port": Change({"workloads.0.metrics.port": "admin"}, {**TWO_PORTS, **METRICS}),
    "workloads[].metrics.path": Change({"workloads.0.metrics.path": "/stats"}, {**HTTP, **METRICS}),
    "workloads[].metrics.interval": Change({"workloads.0.metrics.interval": "30s"}, {**HTTP, **METRICS}),
    "workloads[].triggers[].name": Change({"workloads.0.triggers": [{**WAITING, "name": "queue"}]}, TRIGGER),
    "workloads[].triggers[].metric": Change(
        {"workloads.0.triggers": [{**WAITING, "metric": "vllm:num_requests_running"}]}, TRIGGER),
    "workloads[].triggers[].threshold": Change({"workloads.0.triggers": [{**WAITING, "threshold": 8}]}, TRIGGER),
    "workloads[].triggers[].window": Change({"workloads.0.triggers": [{**WAITING, "window": "2m"}]}, TRIGGER),
    # --- serving profile (docs/serving-workloads.md, issue 21) ---
    "workloads[].serving": Change({"workloads.0.serving": PROFILE}, SERVING_BASE),
    "workloads[].serving.latencyObjective": Change(
        {"workloads.0.serving.latencyObjective": OBJECTIVE},
        {**SERVING_BASE, "workloads.0.serving": {"engine": "vllm", "perGpu": PER_GPU}}),
    "workloads[].serving.latencyObjective.ttftP90": Change(
        {"workloads.0.serving.latencyObjective.ttftP90": "400ms"}, SERVING),
    "workloads[].serving.latencyObjective.tpotP90": Change(
        {"workloads.0.serving.latencyObjective.tpotP90": "40ms"}, SERVING),
    "workloads[].serving.band.scaleUp": Change({"workloads.0.serving.band": {"scaleUp": 0.7}}, SERVING),
    "workloads[].serving.band.scaleDown": Change({"workloads.0.serving.band": {"scaleDown": 0.3}}, SERVING),
    "workloads[].serving.queuePerReplica": Change({"workloads.0.serving.queuePerReplica": 8}, SERVING),
    "workloads[].serving.kvCacheUsage": Change({"workloads.0.serving.kvCacheUsage": 0.9}, SERVING),
    "workloads[].serving.longestRequest": Change({"workloads.0.serving.longestRequest": "60s"}, SERVING),
    # --- alerting (docs/alerting.md) ---
    "alerting.webhook": Change({"alerting": {"webhook": {"urlSecret": "hookUrl"}}}),
    "alerting.webhook.urlSecret": Change({"alerting.webhook.urlSecret": "otherUrl"}, RECEIVERS),
    "alerting.slack": Change({"alerting.slack": {"webhookUrlSecret": "slackUrl", "channel": "#gpu"}},
                             {"alerting": {"webhook": {"urlSecret": "hookUrl"}}}),
    "alerting.slack.webhookUrlSecret": Change({"alerting.slack.webhookUrlSecret": "otherSlack"}, RECEIVERS),
    "alerting.slack.channel": Change({"alerting.slack.channel": "#oncall"}, RECEIVERS),
    "alerting.pagerduty": Change({"alerting.pagerduty": {"routingKeySecret": "pdKey"}},
                                 {"alerting": {"webhook": {"urlSecret": "hookUrl"}}}),
    "alerting.pagerduty.routingKeySecret": Change({"alerting.pagerduty.routingKeySecret": "otherKey"}, RECEIVERS),
    "alerting.heartbeat": Change({"alerting.heartbeat": {"urlSecret": "beatUrl"}},
                                 {"alerting": {"webhook": {"urlSecret": "hookUrl"}}}),
    "alerting.heartbeat.urlSecret": Change({"alerting.heartbeat.urlSecret": "otherBeat"}, RECEIVERS),
    "alerting.heartbeat.interval": Change({"alerting.heartbeat.interval": "5m"}, RECEIVERS),
}

#: Where each key must reach: `<resource>.inputs.<path>` in the plan (secrets included, for the keys in
#: INSIDE_SECRETS); list items by name where they have one, `:` into a document held in a string.
CLUSTER = "gpu-cluster.inputs"
POD = "inference-deployment.inputs.spec.template.spec"
CONTAINER = f"{POD}.containers[inference]"
SCALED = "inference-scaledobject.inputs.spec"
ALERTMANAGER = "monitoring-alertmanager-config.inputs.stringData.alertmanager.yaml:"
RULES = "monitoring-gpu-rules.inputs.spec.groups[gpu-platform.rules].rules"
ALERTS = "monitoring-gpu-rules.inputs.spec.groups[gpu-platform.alerts].rules"
DASHBOARD = "monitoring-dashboard-gpu-autoscaling.inputs.data.gpu-autoscaling.json:"
HEADROOM = "headroom-scaledobject.inputs.spec"
REGISTRY = "inference-registry-secret.inputs.stringData..dockerconfigjson:auths"
WHERE: dict[str, tuple[str, ...]] = {
    "alerting.heartbeat": (f"{ALERTMANAGER}receivers[heartbeat]", f"{ALERTMANAGER}route.routes[0].receiver",),
    "alerting.heartbeat.interval": (f"{ALERTMANAGER}route.routes[0].repeat_interval",),
    "alerting.heartbeat.urlSecret": (f"{ALERTMANAGER}receivers[heartbeat].webhook_configs[0].url",),
    "alerting.pagerduty": (f"{ALERTMANAGER}receivers[critical].pagerduty_configs",),
    "alerting.pagerduty.routingKeySecret": (f"{ALERTMANAGER}receivers[critical].pagerduty_configs[0].routing_key",),
    "alerting.slack": (
        f"{ALERTMANAGER}receivers[critical].slack_configs",
        f"{ALERTMANAGER}receivers[warning].slack_configs",
    ),
    "alerting.slack.channel": (f"{ALERTMANAGER}receivers[warning].slack_configs[0].channel",),
    "alerting.slack.webhookUrlSecret": (f"{ALERTMANAGER}receivers[warning].slack_configs[0].api_url",),
    "alerting.webhook": (
        "monitoring-alertmanager-config",
        "monitoring-release.inputs.values.alertmanager.alertmanagerSpec",
    ),
    "alerting.webhook.urlSecret": (f"{ALERTMANAGER}receivers[warning].webhook_configs[0].url",),
    "charts.gpuOperator": ("gpu-operator-release.inputs.version",),
    "charts.keda": ("keda-release.inputs.version",),
    "charts.kubePrometheusStack": ("monitoring-release.inputs.version",),
    "cluster.autoscaler": (f"{CLUSTER}.autoscalerConfig.scan-interval",),
    "cluster.cni": (f"{CLUSTER}.cni.provider",),
    "cluster.keypair": (f"{CLUSTER}.keypair",),
    "cluster.name": (f"{CLUSTER}.name",),
    "cluster.network": (f"{CLUSTER}.fixedNetwork",),
    "cluster.projectId": (f"{CLUSTER}.projectId",),
    "cluster.projectName": (f"{CLUSTER}.projectName",),
    "cluster.regionId": (f"{CLUSTER}.regionId",),
    "cluster.regionName": (f"{CLUSTER}.regionName",),
    "cluster.subnet": (f"{CLUSTER}.fixedSubnet",),
    "cluster.version": (f"{CLUSTER}.version",),
    "gpuPool.flavor": (f"{CLUSTER}.pools[gpu].flavorId",),
    "gpuPool.gpusPerNode": (f"{RULES}[gpu_pool:gpus_provisioned:sum].expr",),
    "gpuPool.headroom": ("headroom-deployment", f"{CLUSTER}.autoscalerConfig.expendable-pods-priority-cutoff",),
    "gpuPool.headroom.gpus": ("headroom-deployment.inputs.spec.replicas",),
    "gpuPool.headroom.podGpus": (
        "headroom-deployment.inputs.spec.template.spec.containers[pause].resources.limits.nvidia.com/gpu",
    ),
    "gpuPool.headroom.schedules[].end": (f"{HEADROOM}.triggers[schedule-0].metadata.end",),
    "gpuPool.headroom.schedules[].minReplicas": (
        f"{HEADROOM}.triggers[schedule-0].metadata.desiredReplicas",
        f"{HEADROOM}.maxReplicaCount",
    ),
    "gpuPool.headroom.schedules[].start": (f"{HEADROOM}.triggers[schedule-0].metadata.start",),
    "gpuPool.headroom.schedules[].timezone": (f"{HEADROOM}.triggers[schedule-0].metadata.timezone",),
    "gpuPool.labels": (
        f"{CLUSTER}.pools[gpu].labels.team",
        f"{POD}.nodeSelector.team",
        "monitoring-release.inputs.values.kube-state-metrics.metricLabelsAllowlist[0]",
    ),
    "gpuPool.maxNodes": (f"{CLUSTER}.pools[gpu].maxNodeCount", f"{RULES}[gpu_pool:nodes_max:value].expr",),
    "gpuPool.minNodes": (f"{CLUSTER}.pools[gpu].minNodeCount", f"{RULES}[gpu_pool:nodes_min:value].expr",),
    "gpuPool.name": (f"{CLUSTER}.pools[gpu2]",),
    "gpuPool": (f"{CLUSTER}.pools[gpu].maxNodeCount",),
    "gpuPools": (f"{CLUSTER}.pools[gpu].maxNodeCount",),
    "gpuPool.spot": (
        f"{CLUSTER}.pools[gpu].taints.platform.gcore-gpu/spot",
        f"{POD}.tolerations",
        "inference-pdb.inputs.spec.maxUnavailable",
        "inference-pdb.inputs.spec.unhealthyPodEvictionPolicy",
        "gpu-operator-release.inputs.values.daemonsets.tolerations",
    ),
    "workloads[].pool": (f"{POD}.nodeSelector.platform.gcore-gpu/pool",),
    "gpuPool.pricePerGpuHour": (f"{RULES}[gpu_pool:price_per_gpu_hour:value].expr",),
    "gpuPool.provisionMinutes": (
        f"{CLUSTER}.autoscalerConfig.max-node-provision-time",
        f"{CLUSTER}.timeouts.update",
        "inference-deployment.options.customTimeouts.create",
        f"{ALERTS}[GpuPodPendingTooLong].for",
    ),
    "gpuPool.publicIpv4": (f"{CLUSTER}.pools[gpu].isPublicIpv4",),
    # Off: no start-up taint sent to Gcore, none tolerated by the operands, and no gate DaemonSet (nor its RBAC).
    "gpuPool.gpuReadyGate": (
        f"{CLUSTER}.pools[gpu].taints.startup-taint.cluster-autoscaler.kubernetes.io/gpu-not-ready",
        "gpu-operator-release.inputs.values.daemonsets.tolerations",
        "gpu-operator-gate-gpu", "gpu-operator-gate-role", "gpu-operator-gate-account", "gpu-operator-gate-binding",
    ),
    "gpuPool.taints": (
        f"{CLUSTER}.pools[gpu].taints.nvidia.com/gpu",
        f"{POD}.tolerations[0].effect",
        "gpu-operator-release.inputs.values.daemonsets.tolerations[1].effect",
    ),
    "monitoring.retention": ("monitoring-release.inputs.values.prometheus.prometheusSpec.retention",),
    "monitoring.queryUrl": (f"{SCALED}.triggers[gpu-utilization].metadata.serverAddress",),
    "charts.mirror": tuple(f"{r}-release.inputs.repositoryOpts.repo" for r in ("gpu-operator", "keda", "monitoring")),
    # Into a cluster made elsewhere: no Gcore cluster (the plan redacts the kubeconfig, which is secret either way).
    "cluster.existing": ("gpu-cluster", "gpu.type"),
    "cluster.existing.kubeconfigSecret": ("gpu-provider.inputs.kubeconfig",),
    # The kubeconfig then comes from the referenced stack's output: the provider depends on the reference.
    "cluster.existing.stackReference": ("gpu-provider.propertyDependencies",),
    "monitoring.storageClass": (
        "monitoring-release.inputs.values.prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec.storageClassName",
    ),
    "monitoring.storageSize": ("monitoring-release.inputs.values.prometheus.prometheusSpec.storageSpec",),
    "protect": ("gpu-cluster.options.protect",),
    "systemPool.bootVolumeSize": (f"{CLUSTER}.pools[system].bootVolumeSize",),
    "systemPool.bootVolumeType": (f"{CLUSTER}.pools[system].bootVolumeType",),
    "systemPool.enabled": (f"{CLUSTER}.pools[system]",),
    "systemPool.flavor": (f"{CLUSTER}.pools[system].flavorId",),
    "systemPool.maxNodes": (f"{CLUSTER}.pools[system].maxNodeCount",),
    "systemPool.minNodes": (f"{CLUSTER}.pools[system].minNodeCount",),
    "systemPool.name": (f"{CLUSTER}.pools[sys]",),
    "systemPool.servergroupPolicy": (f"{CLUSTER}.pools[system].servergroupPolicy",),
    "workloads[].args": (f"{CONTAINER}.args",),
    "workloads[].command": (f"{CONTAINER}.command[0]",),
    "workloads[].cooldownPeriod": (f"{SCALED}.cooldownPeriod", f"{CLUSTER}.autoscalerConfig.scale-down-unneeded-time",),
    "workloads[].env": (f"{CONTAINER}.env",),
    "workloads[].fallbackFailureThreshold": (f"{SCALED}.fallback.failureThreshold",),
    "workloads[].fallbackReplicas": (f"{SCALED}.fallback.replicas",),
    "workloads[].gpusPerPod": (
        f"{CONTAINER}.resources.limits.nvidia.com/gpu",
        f"{SCALED}.triggers[gpu-utilization].metadata.threshold",
    ),
    "workloads[].image": (f"{CONTAINER}.image",),
    "workloads[].imagePullSecret": ("inference-registry-secret", f"{POD}.imagePullSecrets",),
    "workloads[].imagePullSecret.passwordSecret": (f"{REGISTRY}.registry.example.com.password",),
    "workloads[].imagePullSecret.server": (f"{REGISTRY}.registry.example.org",),
    "workloads[].imagePullSecret.username": (f"{REGISTRY}.registry.example.com.username",),
    "workloads[].maxReplicas": (f"{SCALED}.maxReplicaCount",),
    "workloads[].metrics": ("inference-podmonitor",),
    "workloads[].metrics.interval": ("inference-podmonitor.inputs.spec.podMetricsEndpoints[0].interval",),
    "workloads[].metrics.path": ("inference-podmonitor.inputs.spec.podMetricsEndpoints[0].path",),
    "workloads[].metrics.port": ("inference-podmonitor.inputs.spec.podMetricsEndpoints[0].port",),
    "workloads[].minReplicas": (f"{SCALED}.minReplicaCount",),
    "workloads[].modelCache": (
        f"{POD}.volumes",
        f"{CONTAINER}.volumeMounts",
        "workloads-gpu-workloads.inputs.metadata.labels.pod-security.kubernetes.io/enforce",
    ),
    "workloads[].modelCache.claimName": (f"{POD}.volumes[model-cache].persistentVolumeClaim.claimName",),
    "workloads[].modelCache.hostPath": (f"{POD}.volumes[model-cache].hostPath.path",),
    "workloads[].modelCache.mountPath": (
        f"{CONTAINER}.volumeMounts[model-cache].mountPath",
        f"{CONTAINER}.env[HF_HOME].value",
    ),
    "workloads[].modelCache.path": (f"{POD}.volumes[model-cache].nfs.path",),
    "workloads[].modelCache.readOnly": (
        f"{CONTAINER}.volumeMounts[model-cache].readOnly",
        f"{POD}.volumes[model-cache].nfs.readOnly",
    ),
    "workloads[].modelCache.server": (f"{POD}.volumes[model-cache].nfs.server",),
    "workloads[].modelCache.type": (f"{POD}.volumes[model-cache].persistentVolumeClaim",),
    "workloads[].name": ("chat-deployment", "chat-scaledobject",),
    "teams[].name": ("workloads-ranking", "team-ranking-quota", "team-ranking-binding"),
    "teams[].gpus": ("team-search-quota.inputs.spec.hard.requests.nvidia.com/gpu",),
    "workloads[].namespace": (
        "inference-deployment.inputs.metadata.namespace",
        f"{SCALED}.triggers[gpu-utilization].metadata.query",
    ),
    "workloads[].pollingInterval": (f"{SCALED}.pollingInterval",),
    "workloads[].ports[].name": (f"{CONTAINER}.ports[web]", "inference-service.inputs.spec.ports[web]",),
    "workloads[].ports[].port": (
        f"{CONTAINER}.ports[http].containerPort",
        "inference-service.inputs.spec.ports[http].port",
    ),
    "workloads[].probes": (f"{CONTAINER}.startupProbe", f"{CONTAINER}.readinessProbe", f"{CONTAINER}.livenessProbe",),
    "workloads[].probes.failureThreshold": (
        f"{CONTAINER}.readinessProbe.failureThreshold",
        f"{CONTAINER}.livenessProbe.failureThreshold",
    ),
    "workloads[].probes.path": (f"{CONTAINER}.readinessProbe.httpGet.path", f"{CONTAINER}.livenessProbe.httpGet.path",),
    "workloads[].probes.periodSeconds": (
        f"{CONTAINER}.readinessProbe.periodSeconds",
        f"{CONTAINER}.startupProbe.periodSeconds",
    ),
    "workloads[].probes.port": (f"{CONTAINER}.startupProbe.httpGet.port", f"{CONTAINER}.readinessProbe.httpGet.port",),
    "workloads[].probes.startupMinutes": (f"{CONTAINER}.startupProbe.failureThreshold",),
    "workloads[].requests.cpu": (f"{CONTAINER}.resources.requests.cpu",),
    "workloads[].requests.memory": (f"{CONTAINER}.resources.requests.memory",),
    "workloads[].scaleDownStabilizationSeconds": (
        f"{SCALED}.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds",
        f"{CLUSTER}.autoscalerConfig.scale-down-unneeded-time",
    ),
    "workloads[].schedules[].end": (f"{SCALED}.triggers[schedule-0].metadata.end",),
    "workloads[].schedules[].minReplicas": (f"{SCALED}.triggers[schedule-0].metadata.desiredReplicas",),
    "workloads[].schedules[].start": (f"{SCALED}.triggers[schedule-0].metadata.start",),
    "workloads[].schedules[].timezone": (f"{SCALED}.triggers[schedule-0].metadata.timezone",),
    "workloads[].secretEnv": ("inference-env-secret", f"{CONTAINER}.env",),
    "workloads[].shmSize": (f"{POD}.volumes", f"{CONTAINER}.volumeMounts",),
    "workloads[].targetUtilization": (
        f"{SCALED}.triggers[gpu-utilization].metadata.threshold",
        f"{RULES}[workload:gpu_utilization_target:percent].expr",
    ),
    "workloads[].terminationGracePeriodSeconds": (f"{POD}.terminationGracePeriodSeconds",),
    "workloads[].triggers[].metric": (f"{SCALED}.triggers[waiting].metadata.query",),
    "workloads[].triggers[].name": (f"{SCALED}.triggers[queue]",),
    "workloads[].triggers[].threshold": (f"{SCALED}.triggers[waiting].metadata.threshold",),
    "workloads[].triggers[].window": (f"{SCALED}.triggers[waiting].metadata.query",),
    "workloads[].serving": (
        f"{SCALED}.triggers[queue-depth]", f"{SCALED}.triggers[kv-cache]", f"{SCALED}.triggers[latency-objective]",
        f"{SCALED}.triggers[gpu-utilization].metadata.threshold",
        f"{CONTAINER}.lifecycle.preStop.sleep.seconds",
    ),
    "workloads[].serving.band.scaleDown": (f"{SCALED}.triggers[latency-objective].metadata.query",),
    "workloads[].serving.band.scaleUp": (f"{SCALED}.triggers[latency-objective].metadata.query",),
    "workloads[].serving.kvCacheUsage": (f"{SCALED}.triggers[kv-cache].metadata.query",),
    "workloads[].serving.latencyObjective": (f"{SCALED}.triggers[latency-objective]",),
    "workloads[].serving.latencyObjective.tpotP90": (f"{SCALED}.triggers[latency-objective].metadata.query",),
    "workloads[].serving.latencyObjective.ttftP90": (f"{SCALED}.triggers[latency-objective].metadata.query",),
    "workloads[].serving.longestRequest": (f"{CONTAINER}.lifecycle.preStop.sleep.seconds",),
    "workloads[].serving.queuePerReplica": (f"{SCALED}.triggers[queue-depth].metadata.query",),
    "workloads[].wakeTrigger": (f"{SCALED}.triggers[demand]",),
    "workloads[].wakeTrigger.activationThreshold": (f"{SCALED}.triggers[demand].metadata.activationThreshold",),
    "workloads[].wakeTrigger.query": (f"{SCALED}.triggers[demand].metadata.query",),
    "workloads[].wakeTrigger.threshold": (f"{SCALED}.triggers[demand].metadata.threshold",),
}


#: Keys whose whole effect is inside a secret (the Alertmanager configuration, a registry credential): the plan
#: redacts secrets, so for these the engine's unredacted inputs are compared, with a distinct value per secret key.
INSIDE_SECRETS = {
    "alerting.webhook.urlSecret", "alerting.slack", "alerting.slack.webhookUrlSecret", "alerting.slack.channel",
    "alerting.pagerduty", "alerting.pagerduty.routingKeySecret", "alerting.heartbeat",
    "alerting.heartbeat.urlSecret", "alerting.heartbeat.interval", "workloads[].imagePullSecret.server",
    "cluster.existing.kubeconfigSecret",
    "workloads[].imagePullSecret.username", "workloads[].imagePullSecret.passwordSecret",
}

#: Keys that by design change only what validation accepts, with the reason.
VALIDATION_ONLY: dict[str, str] = {
    **{f"whatIf.{key}": "read only by `python -m capacity` (the what-if), never by the Pulumi program"
       for key in ("trace", "column", "perGpu", "workload", "start", "podStartSeconds", "nodeReadyMinutes",
                   "gpuReadyMinutes", "seed")},
    "whatIf": "read only by `python -m capacity` (the what-if), never by the Pulumi program",
    "workloads[].interruptible": "permits a spot pool (refused without it); what running on spot capacity changes "
    "(tolerations, the PodDisruptionBudget) follows the pool the workload names, not this key",
    "workloads[].serving.engine": "one engine is known (vllm, stackconfig/engines.py), so there is no other valid "
    "value to change it to; the metric names it selects are in every serving trigger's query "
    "(tests/test_serving_profile.py)",
    **{f"workloads[].serving.perGpu{key}": "what one GPU delivers for the model: checked against the latency "
       "objective (an objective below it is refused) and read by the what-if's service model, never by the program"
       for key in ("", ".ttftP90", ".tpotP90", ".tpotP90AtKnee")},
    "gpuPool.acceptUnlistedFlavor": "acknowledges a flavor missing from stackconfig/flavors.py; it can only be true, "
    "and the flavor and gpusPerNode it goes with are what reach the plan",
}


def project_keys(paths: dict[str, Any]) -> dict[str, Any]:
    """The dev stack's project keys with `paths` applied (`section.key`, `workloads.0.key`, nested)."""
    config = {key.removeprefix(f"{PROJECT}:"): copy.deepcopy(value) for key, value in DEV.items()}
    for path, value in paths.items():
        *parents, leaf = path.split(".")
        node: Any = config
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        if value is None and parents:
            node.pop(leaf, None)
        else:
            node[leaf] = copy.deepcopy(value)  # a whole section set to None is deleted from the stack file
    return config


def loadable(config: dict[str, Any]) -> dict[str, Any]:
    """The project keys as the config model reads them (a deleted section is absent)."""
    return {k: v for k, v in config.items() if v is not None}


def plan_resources(paths: dict[str, Any]) -> list[dict[str, Any]]:
    overrides = project_keys(paths)
    load_stack_config(loadable(overrides))  # the change itself must be valid: a refused value proves nothing
    return build_plan(record_stack("dev", overrides))["resources"]


_BASES: dict[str, list[dict[str, Any]]] = {}


def base_resources(context: dict[str, Any]) -> list[dict[str, Any]]:
    key = repr(sorted(context.items()))
    if key not in _BASES:
        _BASES[key] = plan_resources(context)
    return _BASES[key]


def test_every_config_key_is_covered() -> None:
    keys = list(walk(StackConfig))
    assert len(keys) == len(set(keys)) > 50
    assert set(keys) == set(CHANGES) | set(VALIDATION_ONLY), (
        "a config key without an entry in CHANGES (or VALIDATION_ONLY with a reason): "
        f"{sorted(set(keys) ^ (set(CHANGES) | set(VALIDATION_ONLY)))}"
    )
    assert set(WHERE) == set(CHANGES), "every key in CHANGES says in WHERE what it must change"


#: Keys that name the items of a list (a container, a trigger, a rule, a Grafana panel): paths use them.
ITEM_NAMES = ("name", "alert", "record", "title")


def _named(items: list[Any]) -> dict[str, Any] | None:
    """The list's items by their name, if every item has one and no two share it (a title names panels only)."""
    for key in ITEM_NAMES:
        if items and all(isinstance(i, dict) and isinstance(i.get(key), str) and (key != "title" or "gridPos" in i)
                         for i in items):
            names = [i[key] for i in items]
            if len(set(names)) == len(names):
                return dict(zip(names, items, strict=True))
    return None


def _document(text: str) -> Any:
    """A JSON or YAML document inside a string value (a dashboard, an Alertmanager configuration), else None."""
    if text.startswith(("{", "[")):
        return json.loads(text)
    if "\n" in text:
        return yaml.safe_load(text)
    return None


def changed_paths(before: Any, after: Any, prefix: str = "") -> set[str]:
    """Where two plans (or two sets of engine inputs) differ: `<resource>.inputs.<key>[<item>]...` of every
    changed leaf. List items are named by ITEM_NAMES where they have them, else by index; a document inside a
    string is entered after a `:`; a value that appears or disappears is one path."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: set[str] = set()
        for key in before.keys() | after.keys():
            where = f"{prefix}.{key}" if prefix and not prefix.endswith(":") else f"{prefix}{key}"
            if key not in before or key not in after:
                out.add(where)
            else:
                out |= changed_paths(before[key], after[key], where)
        return out
    if isinstance(before, list) and isinstance(after, list):
        named_before, named_after = _named(before), _named(after)
        if named_before is not None and named_after is not None:
            return {
                path for name in named_before.keys() | named_after.keys()
                for path in (changed_paths(named_before[name], named_after[name], f"{prefix}[{name}]")
                             if name in named_before and name in named_after else {f"{prefix}[{name}]"})
            }
        if len(before) == len(after):
            return {p for i, (b, a) in enumerate(zip(before, after, strict=True))
                    for p in changed_paths(b, a, f"{prefix}[{i}]")}
    if isinstance(before, str) and isinstance(after, str) and before != after:
        inner_before, inner_after = _document(before), _document(after)
        if isinstance(inner_before, dict | list) and isinstance(inner_after, dict | list):
            return changed_paths(inner_before, inner_after, f"{prefix}:")
    return set() if before == after else {prefix}


def by_name(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in resources}


def paths_changed_by(key: str) -> set[str]:
    change = CHANGES[key]
    if key in INSIDE_SECRETS:
        return changed_paths(engine_inputs(change.context), engine_inputs({**change.context, **change.change}))
    before = base_resources(change.context)
    after = plan_resources({**change.context, **change.change})
    return changed_paths(by_name(before), by_name(after))


@pytest.mark.parametrize("key", sorted(CHANGES))
def test_changing_a_key_changes_the_plan_where_it_should(key: str) -> None:
    """Each key reaches the resource input it is for: a key routed to the wrong field, or to none, fails here."""
    changed = paths_changed_by(key)
    assert changed, f"{key}: {CHANGES[key].change} changed nothing the engine receives"
    missing = [p for p in WHERE[key] if p not in changed]
    assert not missing, f"{key}: {missing} did not change; what changed: {sorted(changed)[:12]}"


def engine_inputs(paths: dict[str, Any]) -> dict[str, Any]:
    """Every resource's inputs as the engine receives them, secret values included (each its own value)."""
    overrides = project_keys(paths)
    load_stack_config(loadable(overrides))
    secrets = {key: f"value-of-{key}" for key in placeholder_secrets("dev", overrides)}
    return {r.name: {"inputs": unwrap(r.inputs)} for r in record_stack("dev", overrides, secrets=secrets).resources}


@pytest.mark.parametrize(
    ("paths", "key", "fragment"),
    [
        ({"systemPool.enabled": False, "systemPool.flavor": "g1-standard-8-16", "systemPool.maxNodes": None,
          "gpuPool.taints": {}, "gpuPool.gpuReadyGate": False},
         "systemPool.flavor", "systemPool.enabled is false"),
        ({"monitoring.storageClass": "ssd"}, "monitoring.storageClass", "without monitoring.storageSize"),
        ({"workloads.0.cooldownPeriod": 600}, "workloads[0].cooldownPeriod", "only applies when scaling to zero"),
    ],
)
def test_a_key_set_where_it_cannot_take_effect_is_refused(paths: dict[str, Any], key: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_stack_config(project_keys(paths))
    (problem,) = err.value.problems
    assert problem.key == key and fragment in problem.message and problem.fix
