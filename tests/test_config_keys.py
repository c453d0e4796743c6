"""No config key that does nothing: every key of the config model changes the recorded plan.

The keys are walked from the pydantic models (stackconfig/stack.py), so a new key without an entry here fails
`test_every_config_key_is_covered`. Each entry gives a context (project keys set on top of the dev stack, to
reach the case where the key matters) and the change of that one key to another valid value; the plan of the
changed stack (offline/plan.py `build_plan`, what a reviewer diffs) must differ from the plan of the context in
its resources, not only in its outputs. Keys that by design change only what validation accepts are listed in
VALIDATION_ONLY with the reason.
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

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

HOURS = {"start": "0 8 * * 1-5", "end": "0 20 * * 1-5", "timezone": "Europe/Luxembourg", "minReplicas": 2}
HEADROOM_WINDOW = {"gpuPool.headroom": {"gpus": 0, "schedules": [HOURS]}}
WORKLOAD_WINDOW = {"workloads.0.schedules": [HOURS]}
HTTP = {"workloads.0.ports": [{"name": "http", "port": 8000}]}
TWO_PORTS = {"workloads.0.ports": [{"name": "http", "port": 8000}, {"name": "admin", "port": 8001}]}
PROBES = {"workloads.0.probes": {"port": "http"}}
METRICS = {"workloads.0.metrics": {"port": "http"}}
WAITING = {"name": "waiting", "metric": "vllm:num_requests_waiting", "threshold": 5}
TRIGGER = {**HTTP, **METRICS, "workloads.0.triggers": [WAITING]}
PULL = {"server": "registry.example.com", "username": "ci", "passwordSecret": "registryPassword"}
NFS = {"type": "nfs", "server": "10.0.0.5", "path": "/models"}
RECEIVERS = {"alerting": {"webhook": {"urlSecret": "hookUrl"}, "slack": {"webhookUrlSecret": "slackUrl",
                                                                        "channel": "#gpu"},
                          "pagerduty": {"routingKeySecret": "pdKey"}, "heartbeat": {"urlSecret": "beatUrl"}}}

CHANGES: dict[str, Change] = {
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
    "systemPool.enabled": Change({"systemPool.enabled": False}, {"gpuPool.taints": {}, "systemPool.maxNodes": None}),
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
    "monitoring.storageSize": Change({"monitoring.storageSize": "100Gi"}),
    "monitoring.storageClass": Change({"monitoring.storageClass": "ssd"}, {"monitoring.storageSize": "100Gi"}),
    "workloads[].name": Change({"workloads.0.name": "chat"}),
    "workloads[].namespace": Change({"workloads.0.namespace": "ml"}),
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
    "workloads[].scaleDownStabilizationSeconds": Change({"workloads.0.scaleDownStabilizationSeconds": 600}),
    "workloads[].cooldownPeriod": Change({"workloads.0.cooldownPeriod": 600}, SCALE_TO_ZERO),
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

#: Keys whose whole effect is inside a secret (the Alertmanager configuration, a registry credential): the plan
#: redacts secrets, so for these the engine's unredacted inputs are compared, with a distinct value per secret key.
INSIDE_SECRETS = {
    "alerting.webhook.urlSecret", "alerting.slack", "alerting.slack.webhookUrlSecret", "alerting.slack.channel",
    "alerting.pagerduty", "alerting.pagerduty.routingKeySecret", "alerting.heartbeat",
    "alerting.heartbeat.urlSecret", "alerting.heartbeat.interval", "workloads[].imagePullSecret.server",
    "workloads[].imagePullSecret.username", "workloads[].imagePullSecret.passwordSecret",
}

#: Keys that by design change only what validation accepts, with the reason.
VALIDATION_ONLY: dict[str, str] = {
    **{f"whatIf.{key}": "read only by `python -m capacity` (the what-if), never by the Pulumi program"
       for key in ("trace", "column", "perGpu", "workload", "start", "podStartSeconds", "nodeReadyMinutes",
                   "gpuReadyMinutes", "seed")},
    "whatIf": "read only by `python -m capacity` (the what-if), never by the Pulumi program",
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
        if value is None:
            node.pop(leaf, None)
        else:
            node[leaf] = copy.deepcopy(value)
    return config


def plan_resources(paths: dict[str, Any]) -> list[dict[str, Any]]:
    overrides = project_keys(paths)
    load_stack_config(overrides)  # the change itself must be valid: a refused value proves nothing
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


@pytest.mark.parametrize("key", sorted(CHANGES))
def test_changing_a_key_changes_the_plan(key: str) -> None:
    change = CHANGES[key]
    if key in INSIDE_SECRETS:
        before, after = engine_inputs(change.context), engine_inputs({**change.context, **change.change})
        assert after != before, f"{key}: {change.change} changed nothing the engine receives, secrets included"
        return
    before = base_resources(change.context)
    after = plan_resources({**change.context, **change.change})
    assert after != before, f"{key}: {change.change} left every resource of the plan unchanged"


def engine_inputs(paths: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Every resource's inputs as the engine receives them, secret values included (each its own value)."""
    overrides = project_keys(paths)
    load_stack_config(overrides)
    secrets = {key: f"value-of-{key}" for key in placeholder_secrets("dev", overrides)}
    return [(r.type, r.name, r.inputs) for r in record_stack("dev", overrides, secrets=secrets).resources]


def test_the_removed_autohealing_key_is_refused_with_the_reason() -> None:
    with pytest.raises(ConfigError) as err:
        load_stack_config(project_keys({"gpuPool.autohealing": False, "gpuPool.minNodes": 0}))
    keys = [p.key for p in err.value.problems]
    assert keys == ["gpuPool.autohealing", "gpuPool.minNodes"], "reported together with the other problems"
    removed = err.value.problems[0]
    assert "was removed" in removed.message and "Disable the Autohealing nodes toggle" in removed.message
    assert removed.fix.startswith("delete gpuPool.autohealing")


@pytest.mark.parametrize(
    ("paths", "key", "fragment"),
    [
        ({"systemPool.enabled": False, "systemPool.flavor": "g1-standard-8-16", "systemPool.maxNodes": None,
          "gpuPool.taints": {}},
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
