"""Every key of a stack file, given a value of every wrong kind: refused in our words (key, value, fix), never in
pydantic's, never with a traceback, and never converted (`maxNodes: true` is not 1) (issue 17).

The keys are walked from the config models themselves (stackconfig/stack.py SECTIONS), so a key added later is swept
too; the stack files are a full one (every section set) and the existing-cluster variant for `cluster.existing`.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from stackconfig import ConfigError, load_stack_config
from stackconfig.errors import Problem
from stackconfig.stack import SECTIONS, model_fields_within

SCHEDULE = {"start": "0 8 * * 1-5", "end": "0 20 * * 1-5", "timezone": "Europe/Luxembourg", "minReplicas": 2}
FULL: dict[str, Any] = {
    "protect": False,
    "teams": [{"name": "search", "gpus": 8}],
    "cluster": {"name": "gpu-dev", "version": "v1.35.3", "projectId": 1, "regionId": 76, "keypair": "team",
                "network": "net-1", "subnet": "subnet-1", "cni": "calico",
                "autoscaler": {"scan-interval": "10s"}},
    "gpuPool": {"name": "gpu", "flavor": "bm3-ai-1xlarge-h100-80-8", "minNodes": 1, "maxNodes": 4,
                "publicIpv4": False, "labels": {"platform.gcore-gpu/pool": "gpu"},
                "taints": {"nvidia.com/gpu": "present:NoSchedule"}, "provisionMinutes": 35,
                "acceptUnlistedFlavor": False, "pricePerGpuHour": 4.0,
                "headroom": {"gpus": 2, "podGpus": 1, "schedules": [dict(SCHEDULE)]}},
    "systemPool": {"enabled": True, "name": "system", "flavor": "g1-standard-4-8", "minNodes": 1, "maxNodes": 3,
                   "servergroupPolicy": "anti-affinity", "bootVolumeSize": 50, "bootVolumeType": "standard"},
    "charts": {"gpuOperator": "v26.7.0", "keda": "2.20.2", "kubePrometheusStack": "88.5.3"},
    "monitoring": {"retention": "15d", "storageSize": "100Gi", "storageClass": "standard"},
    "alerting": {"webhook": {"urlSecret": "hook"}, "slack": {"webhookUrlSecret": "slack", "channel": "#gpu"},
                 "pagerduty": {"routingKeySecret": "pd"}, "heartbeat": {"urlSecret": "beat", "interval": "1m"}},
    "workloads": [{
        "name": "inference", "namespace": "inference", "image": "registry.example.com/app:1.4.2",
        "command": ["serve"], "args": ["--port", "8000"], "env": {"LOG": "info"},
        "requests": {"cpu": "8", "memory": "64Gi"}, "gpusPerPod": 1, "minReplicas": 0, "maxReplicas": 8,
        "targetUtilization": 60, "pollingInterval": 15, "scaleDownStabilizationSeconds": 300,
        "cooldownPeriod": 300, "fallbackReplicas": 1, "fallbackFailureThreshold": 3,
        "terminationGracePeriodSeconds": 60,
        "wakeTrigger": {"query": "sum(queue)", "threshold": 10, "activationThreshold": 1},
        "schedules": [dict(SCHEDULE)], "ports": [{"name": "http", "port": 8000}],
        "probes": {"port": "http", "path": "/health", "startupMinutes": 30, "periodSeconds": 10,
                   "failureThreshold": 3},
        "secretEnv": {"HF_TOKEN": "hfToken"},
        "imagePullSecret": {"server": "registry.example.com", "username": "puller", "passwordSecret": "reg"},
        "shmSize": "16Gi",
        "modelCache": {"type": "nfs", "mountPath": "/models", "server": "10.0.0.2", "path": "/export",
                       "readOnly": True},
        "metrics": {"port": "http", "path": "/metrics", "interval": "15s"},
        "triggers": [{"name": "waiting", "metric": "vllm:num_requests_waiting", "threshold": 5, "window": "1m"}],
    }],
    "whatIf": {"trace": "traces/alibaba_servegen_m_small_14d.csv", "column": "output_tokens", "perGpu": 1000.0,
               "workload": "inference", "start": "2026-01-05T00:00:00+00:00", "podStartSeconds": 180,
               "nodeReadyMinutes": [20, 25], "gpuReadyMinutes": [5, 10], "seed": 1},
}
EXISTING: dict[str, Any] = {
    "cluster": {"name": "gpu-portal", "version": "v1.34.6",
                "existing": {"kubeconfigSecret": "portalKubeconfig", "stackReference": "org/platform/prod"}},
    "gpuPool": {"flavor": "bm3-ai-1xlarge-h100-80-8", "minNodes": 1, "maxNodes": 2,
                "labels": {"platform.gcore-gpu/pool": "gpu"}, "taints": {"nvidia.com/gpu": "present:NoSchedule"}},
}
#: A value of each kind YAML can give.
WRONG_KINDS: list[Any] = [True, 12345, 2.5, "abc", "", ["x"], {"k": "v"}, None, float("nan")]
#: pydantic's own phrasing, which no message may carry.
PYDANTIC = re.compile(
    r"Input should|Value should|Field required|Extra inputs|required but missing|validation error|after "
    r"validation|type=|pydantic|errors\.pydantic|String should|Dictionary should|List should|Tuple should|"
    r"unable to parse|Value error|Assertion failed|is invalid:"
)


def leaf_paths() -> list[str]:
    """Every key that holds a value (not a section), as a path into FULL/EXISTING (list items as [0])."""
    out = []
    for section, model in SECTIONS.items():
        for name, info in model.model_fields.items():
            alias = info.alias or name
            if any(True for _ in model_fields_within(info.annotation)):
                continue  # a section (or a list of them): its own keys are swept
            path = f"{section}.{alias}" if section else alias
            out.append(path.replace("[]", "[0]"))
    return sorted(out)


def base_for(path: str) -> dict[str, Any]:
    base = copy.deepcopy(EXISTING if path.startswith("cluster.existing") else FULL)
    if path.startswith("gpuPools"):  # the same pool, in the list form of several pools
        base["gpuPools"] = [{"name": "gpu", **base.pop("gpuPool")}]
    return base


def set_path(raw: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    parts: list[str | int] = []
    for part in path.split("."):
        name, _, index = part.partition("[")
        parts.append(name)
        if index:
            parts.append(int(index.rstrip("]")))
    node: Any = raw
    for step in parts[:-1]:
        if isinstance(step, str) and step not in node:
            node[step] = {}
        node = node[step]
    node[parts[-1]] = value
    return raw


def test_the_full_stack_files_are_valid_apart_from_their_cross_key_rules() -> None:
    """The sweep's bases must type-check, or each case would only report the base's own type errors."""
    for base in (FULL, EXISTING):
        try:
            load_stack_config(base)
        except ConfigError as exc:
            assert all(not PYDANTIC.search(str(p)) for p in exc.problems)
            typed = [p for p in exc.problems if "is not" in p.message and "mapping" in p.message]
            assert not typed, exc


def test_every_key_is_swept() -> None:
    paths = leaf_paths()
    assert len(paths) > 100
    for path in ("gpuPool.maxNodes", "workloads[0].probes.port", "alerting.slack.channel",
                 "cluster.existing.kubeconfigSecret", "whatIf.nodeReadyMinutes", "protect"):
        assert path in paths


def _check(problem: Problem) -> None:
    text = str(problem)
    assert not PYDANTIC.search(text), text
    assert problem.fix.strip() and problem.message.strip(), text
    assert "Fix: " in text and ". Fix:" in text, text


@pytest.mark.parametrize("path", leaf_paths())
def test_a_wrong_value_is_refused_in_our_words(path: str) -> None:
    for value in WRONG_KINDS:
        raw = set_path(base_for(path), path, value)
        try:
            load_stack_config(raw)
        except ConfigError as exc:
            for problem in exc.problems:
                _check(problem)
            mine = [p for p in exc.problems if p.key == path or p.key.startswith((f"{path}.", f"{path}["))]
            if isinstance(value, bool) or (value is not None and not isinstance(value, str | list | dict)):
                # a YAML boolean or number is never converted into another kind without a word
                assert mine or _accepts(path, value), f"{path}: {value!r} accepted without a word: {exc}"


def _accepts(path: str, value: Any) -> bool:
    """A value of this kind that the key takes as it is (a number for a number, a boolean for a boolean)."""
    from stackconfig.stack import SECTIONS

    section, _, key = path.replace("[0]", "[]").rpartition(".")
    model = SECTIONS[section]
    info = next(f for n, f in model.model_fields.items() if (f.alias or n) == key)
    text = str(info.annotation)
    if isinstance(value, bool):
        return "bool" in text
    if isinstance(value, float):
        return "float" in text and value == value  # NaN is never taken
    return "int" in text or "float" in text or path.endswith("cpu")  # cores may be a YAML number


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("gpuPool.maxNodes", True, "gpuPool.maxNodes: True is a boolean (true/false), not a whole number"),
        ("gpuPool.maxNodes", "4", "gpuPool.maxNodes: '4' is text, not a whole number. Fix: write 4 without quotes"),
        ("gpuPool.maxNodes", 2.5, "gpuPool.maxNodes: 2.5 is not a whole number"),
        ("workloads[0].targetUtilization", True, "is a boolean (true/false), not a number"),
        ("protect", "yes", "protect: 'yes' is text: the Pulumi CLI reads YAML 1.2"),
        ("systemPool.enabled", 1, "systemPool.enabled: 1 is not a boolean"),
        ("workloads[0].wakeTrigger.threshold", float("inf"), "is not a finite number"),
        ("gpuPool.headroom", 4, "gpuPool.headroom: 4 is not a mapping of keys. Fix: write the keys of "
                                "gpuPool.headroom indented under it: gpus, podGpus, schedules"),
        ("workloads", {"name": "x"}, "workloads: {'name': 'x'} is not a list"),
        ("cluster.cni", "flannel", "cluster.cni: 'flannel' is not one of the values this key takes. Fix: use one "
                                   "of: calico, cilium"),
    ],
)
def test_the_message_names_the_kind_and_the_fix(path: str, value: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_stack_config(set_path(base_for(path), path, value))
    assert expected in str(exc.value), exc.value


def test_a_missing_section_names_what_it_needs() -> None:
    raw = base_for("cluster")
    del raw["cluster"]
    with pytest.raises(ConfigError) as exc:
        load_stack_config(raw)
    assert "cluster: (not set) is required. Fix: set cluster (with at least name) in the stack file" in str(exc.value)
    raw = base_for("workloads")
    del raw["workloads"][0]["maxReplicas"]
    with pytest.raises(ConfigError) as exc:
        load_stack_config(raw)
    assert "workloads[0].maxReplicas: (not set) is required" in str(exc.value)
