"""Workloads that can serve: every serving key's rules, and what the dev and prod graphs carry for them.

Config: each key of issue 10 with a bad value, refused with the key, the value and the fix. Graph: the real
program under mocks (offline/engine.py) with distinctive secret config values, so that a leak of any of
them into a plain recorded input or output is found by searching for the value itself.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from offline.engine import ROOT, Recording, record_program, record_stack
from renderers.workload_specs import startup_failure_threshold
from stackconfig import ConfigError, ProbesConfig, load_stack_config, secret_config_keys
from tests.secret_scan import plain_strings, secrets_in
from tests.test_config import BASE, apply_changes, config, problems

#: Distinctive values for every secret key prod refers to (what `pulumi config set --secret` would hold).
PROD_SECRETS = {
    "secrets:hfToken": "hf_TESTTOKEN_9c1d7e",
    "secrets:registryPassword": "reg-pass-TEST-51f0",
    "secrets:alertWebhookUrl": "https://hooks.example.test/alerts/TEST-77aa",
    "secrets:slackWebhookUrl": "https://hooks.slack.com/services/T0/B0/TESTSLACK88bb",
    "secrets:pagerdutyRoutingKey": "pdkeyTEST0123456789abcdef01234567",
    "secrets:heartbeatUrl": "https://hc-ping.example.test/TEST-heartbeat-99cc",
}

SERVING = {
    "name": "llm", "namespace": "serving", "image": "registry.example.com/vllm:0.14.0", "maxReplicas": 4,
    "requests": {"memory": "64Gi"},
    "ports": [{"name": "http", "port": 8000}],
    "probes": {"port": "http"},
    "metrics": {"port": "http"},
    "triggers": [{"name": "waiting-requests", "metric": "vllm:num_requests_waiting", "threshold": 5}],
    "secretEnv": {"HF_TOKEN": "hfToken"},
    "shmSize": "8Gi",
    "modelCache": {"type": "hostPath"},
    "imagePullSecret": {"server": "registry.example.com", "username": "puller", "passwordSecret": "regPass"},
}


#: A workload's own trigger on the engine's queue, beside the GPU target: how prod's `inference` scaled before it
#: moved to its serving profile (docs/serving-workloads.md#own-metrics-and-extra-triggers).
QUEUE_TRIGGER = {"name": "waiting-requests", "metric": "vllm:num_requests_waiting", "threshold": 5}


def record_prod_on_its_queue() -> Recording:
    """The whole program for prod with `inference` on GPU utilisation (60 %) and its own queue trigger instead of
    its serving profile: the graph the own-trigger tests read."""
    from capacity.config import read_stack_file

    workloads = read_stack_file("prod")["workloads"]
    w = {k: v for k, v in workloads[0].items() if k not in ("serving", "terminationGracePeriodSeconds")}
    workloads[0] = {**w, "targetUtilization": 60, "triggers": [QUEUE_TRIGGER]}
    return record_stack("prod", overrides={"workloads": workloads}, secrets=PROD_SECRETS)


@pytest.fixture(scope="module")
def queued() -> Recording:
    return record_prod_on_its_queue()


def serving(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    raw["workloads"] = [copy.deepcopy(SERVING)]
    return apply_changes(raw, changes)


# --- config -----------------------------------------------------------------------------------------


def test_a_full_serving_workload_is_valid() -> None:
    cfg = load_stack_config(serving())
    w = cfg.workloads[0]
    assert w.probes is not None and w.model_cache is not None
    assert (w.ports[0].port, w.probes.startup_minutes, w.shm_size, w.model_cache.type) == (8000, 30, "8Gi", "hostPath")
    assert secret_config_keys(cfg) == ["hfToken", "regPass"]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"workloads.0.ports": [{"name": "HTTP", "port": 8000}]}, ["workloads[0].ports[0].name", "'HTTP'", "'http'"]),
        ({"workloads.0.ports": [{"name": "http", "port": 70000}]}, ["workloads[0].ports[0].port", "70000"]),
        ({"workloads.0.ports": [{"name": "http", "port": 8000}, {"name": "http", "port": 8001}]},
         ["workloads[0].ports", "repeats a port name"]),
        ({"workloads.0.ports": [{"name": "http", "port": 8000}, {"name": "grpc", "port": 8000}]},
         ["workloads[0].ports", "repeats a port port"]),
        ({"workloads.0.probes": {"port": "web"}}, ["workloads[0].probes.port", "'web'", "add {name: web"]),
        ({"workloads.0.terminationGracePeriodSeconds": 10}, ["workloads[0].terminationGracePeriodSeconds", "above 10"]),
        ({"workloads.0.probes": {"port": "http", "startupMinutes": 0}}, ["workloads[0].probes.startupMinutes"]),
        ({"workloads.0.probes": {"port": "http", "path": "health"}}, ["workloads[0].probes.path"]),
        ({"workloads.0.probes": {"port": "http", "periodSeconds": 0}}, ["workloads[0].probes.periodSeconds"]),
        ({"workloads.0.probes": {"port": "http", "failureThreshold": 50}}, ["workloads[0].probes.failureThreshold"]),
        ({"workloads.0.imagePullSecret.username": ""}, ["workloads[0].imagePullSecret.username"]),
        ({"workloads.0.metrics": {"port": "http", "path": "metrics"}}, ["workloads[0].metrics.path"]),
        ({"workloads.0.triggers.0.window": "1h"}, ["workloads[0].triggers[0].window"]),
        ({"workloads.0.modelCache": {"type": "pvc", "claimName": "m", "readOnly": "maybe"}},
         ["workloads[0].modelCache.readOnly"]),
        ({"workloads.0.modelCache": {"type": "pvc", "claimName": "Models"}}, ["workloads[0].modelCache.claimName"]),
        ({"alerting": {"slack": {"webhookUrlSecret": "", "channel": "#a"}}}, ["alerting.slack.webhookUrlSecret"]),
        ({"workloads.0.secretEnv": {"1TOKEN": "hfToken"}}, ["workloads[0].secretEnv.1TOKEN"]),
        ({"workloads.0.secretEnv": {"HF_TOKEN": "secrets:hf token"}}, ["workloads[0].secretEnv.HF_TOKEN",
                                                                       "pulumi config set --secret secrets:<key>"]),
        ({"workloads.0.env": {"HF_TOKEN": "hf_plain"}}, ["workloads[0].secretEnv", "HF_TOKEN", "secretEnv only"]),
        ({"workloads.0.imagePullSecret.server": "https://registry.example.com"},
         ["workloads[0].imagePullSecret.server"]),
        ({"workloads.0.imagePullSecret.passwordSecret": ...}, ["workloads[0].imagePullSecret.passwordSecret",
                                                               "required"]),
        ({"workloads.0.shmSize": "8GB"}, ["workloads[0].shmSize", "'8GB'"]),
        ({"workloads.0.requests": {}}, ["workloads[0].shmSize", "'8Gi'", "requests.memory (unset)"]),
        ({"workloads.0.requests": {"memory": "8192Mi"}}, ["workloads[0].shmSize", "does not cover it"]),
        ({"workloads.0.modelCache": {"type": "nfs"}},
         ["workloads[0].modelCache.server", "workloads[0].modelCache.path"]),
        ({"workloads.0.modelCache": {"type": "pvc"}}, ["workloads[0].modelCache.claimName", "required"]),
        ({"workloads.0.modelCache": {"type": "hostPath", "claimName": "x"}},
         ["workloads[0].modelCache.claimName", "no meaning for modelCache.type hostPath"]),
        ({"workloads.0.modelCache": {"type": "hostPath", "mountPath": "/dev/shm"}},
         ["workloads[0].modelCache.mountPath", "hides a system directory"]),
        ({"workloads.0.modelCache": {"type": "s3"}}, ["workloads[0].modelCache.type", "'s3'"]),
        ({"workloads.0.modelCache": {"type": "hostPath", "hostPath": "var/cache"}},
         ["workloads[0].modelCache.hostPath", "absolute path"]),
        ({"workloads.0.metrics": {"port": "prom"}}, ["workloads[0].metrics.port", "'prom'"]),
        ({"workloads.0.metrics": {"port": "http", "interval": "fast"}}, ["workloads[0].metrics.interval"]),
        ({"workloads.0.metrics": ...}, ["workloads[0].triggers", "nothing scrapes"]),
        ({"workloads.0.triggers.0.metric": "vllm num waiting"}, ["workloads[0].triggers[0].metric"]),
        ({"workloads.0.triggers.0.name": "gpu-utilization"}, ["workloads[0].triggers[0].name", "built-in"]),
        ({"workloads.0.triggers.0.threshold": 0}, ["workloads[0].triggers[0].threshold"]),
        ({"alerting": {"slack": {"webhookUrlSecret": "slackUrl", "channel": "alerts"}}}, ["alerting.slack.channel"]),
        ({"alerting": {"pagerduty": {"routingKey": "x"}}}, ["alerting.pagerduty.routingKey",
                                                             "did you mean 'routingKeySecret'"]),
        ({"alerting": {"heartbeat": {"urlSecret": "hb", "interval": "1h"}}}, ["alerting.heartbeat.interval"]),
        ({"alerting": {"webhook": {"urlSecret": "https://x"}}}, ["alerting.webhook.urlSecret"]),
    ],
)
def test_bad_serving_value_is_refused_with_key_value_and_fix(changes: dict[str, Any], expected: list[str]) -> None:
    message = problems(serving(**changes))
    for part in expected:
        assert part in message, f"{part!r} not in:\n{message}"


def test_shm_counts_against_the_pods_memory() -> None:
    # 8Gi of /dev/shm with 9Gi of memory leaves room for the server; with exactly 8Gi it would not.
    assert load_stack_config(serving(**{"workloads.0.requests": {"memory": "9Gi"}}))
    assert "does not cover it" in problems(serving(**{"workloads.0.requests": {"memory": "8Gi"}}))
    # A memory without a unit is refused itself; the shm rule does not also judge the default that stands in for it.
    refused = problems(serving(**{"workloads.0.requests": {"memory": "8589934592"}}))
    assert "has no unit" in refused and "does not cover it" not in refused


def test_startup_budget_is_minutes_of_probes() -> None:
    probes = ProbesConfig(port="http", startup_minutes=30, period_seconds=10)
    assert startup_failure_threshold(probes) == 180
    assert startup_failure_threshold(ProbesConfig(port="http", startup_minutes=1, period_seconds=7)) == 9


def test_base_config_still_needs_no_serving_keys() -> None:
    assert load_stack_config(config()).workloads[0].ports == []


# --- secrets end to end -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prod() -> Recording:
    return record_stack("prod", secrets=PROD_SECRETS)


def test_no_secret_value_is_ever_plain(prod: Recording) -> None:
    for res in prod.resources:
        for text in plain_strings(dict(res.inputs)):
            for key, value in PROD_SECRETS.items():
                assert value not in text, f"{key} in plain text in {res.name}"
    for name, output in prod.outputs.items():
        for text in plain_strings(output) if name not in prod.secret_outputs else []:
            for value in PROD_SECRETS.values():
                assert value not in text, f"secret in output {name}"


def test_every_secret_value_reaches_the_cluster_as_a_secret(prod: Recording) -> None:
    env = prod.get("inference-env-secret").inputs
    assert env["type"] == "Opaque" and env["metadata"]["namespace"] == "inference"
    assert secrets_in(env["stringData"]) == [{"HF_TOKEN": PROD_SECRETS["secrets:hfToken"]}]

    registry = prod.get("embeddings-registry-secret").inputs
    assert registry["type"] == "kubernetes.io/dockerconfigjson"
    ((docker_config,),) = [list(s.values()) for s in secrets_in(registry["stringData"])]
    auth = json.loads(docker_config)["auths"]["registry.example.com"]
    assert auth["password"] == PROD_SECRETS["secrets:registryPassword"]
    assert base64.b64decode(auth["auth"]).decode() == f"gpu-prod-puller:{PROD_SECRETS['secrets:registryPassword']}"

    am = prod.get("monitoring-alertmanager-config").inputs
    ((rendered,),) = [list(s.values()) for s in secrets_in(am["stringData"])]
    for key in ("alertWebhookUrl", "slackWebhookUrl", "pagerdutyRoutingKey", "heartbeatUrl"):
        assert PROD_SECRETS[f"secrets:{key}"] in rendered


def test_pods_read_the_secrets_by_reference(prod: Recording) -> None:
    pod = prod.get("inference-deployment").inputs["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    ref = {e["name"]: e for e in container["env"]}["HF_TOKEN"]
    assert ref == {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "inference-env", "key": "HF_TOKEN"}}}
    embeddings = prod.get("embeddings-deployment")
    assert embeddings.inputs["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "embeddings-registry"}]
    assert embeddings.depends_on(prod.get("embeddings-registry-secret")), "pods would start before their secret"


@pytest.mark.parametrize("key", ["hfToken", "pagerdutyRoutingKey"])
def test_a_plain_value_for_a_secret_key_is_refused_with_the_secret_command(key: str) -> None:
    secrets = {k: v for k, v in PROD_SECRETS.items() if k != f"secrets:{key}"}
    into = Recording("prod")
    with pytest.raises(ConfigError) as exc:
        record_program(ROOT, "prod", secrets=secrets, plain={f"secrets:{key}": "typed-without-secret"}, into=into)
    message = str(exc.value)
    assert f"secrets:{key}" in message and f"pulumi config set --secret secrets:{key} <value>" in message
    assert "plain text" in message and "typed-without-secret" not in message
    assert into.resources == [], "a refused config registers nothing"


def test_a_missing_secret_key_is_refused_before_anything_is_registered() -> None:
    into = Recording("prod")
    with pytest.raises(ConfigError, match=r"secrets:hfToken.*not set.*pulumi config set --secret secrets:hfToken"):
        record_stack("prod", secrets={k: v for k, v in PROD_SECRETS.items() if k != "secrets:hfToken"}, into=into)
    assert into.resources == []


# --- the pod spec -----------------------------------------------------------------------------------


def test_the_service_selects_exactly_the_workloads_pods(rec: Recording) -> None:
    deployments = {r.inputs["metadata"]["name"]: r.inputs for r in rec.of_type("kubernetes:apps/v1:Deployment")}
    services = rec.of_type("kubernetes:core/v1:Service")
    assert {s.inputs["metadata"]["name"] for s in services} == {
        n for n, d in deployments.items() if d["spec"]["template"]["spec"]["containers"][0].get("ports")}
    for svc in services:
        spec, name = svc.inputs["spec"], svc.inputs["metadata"]["name"]
        assert spec["type"] == "ClusterIP"
        matched = [n for n, d in deployments.items()
                   if d["metadata"]["namespace"] == svc.inputs["metadata"]["namespace"]
                   and spec["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items()]
        assert matched == [name]
        assert spec["selector"] == deployments[name]["spec"]["selector"]["matchLabels"]
        (container,) = deployments[name]["spec"]["template"]["spec"]["containers"]
        assert {p["targetPort"] for p in spec["ports"]} <= {p["name"] for p in container["ports"]}
    if rec.stack == "prod":
        assert rec.outputs["workloads"]["inference"]["service"] == "http://inference.inference.svc.cluster.local:8000"


def test_probes_shared_memory_and_cache_in_prods_vllm_pod(recordings: dict[str, Recording]) -> None:
    pod = recordings["prod"].get("inference-deployment").inputs["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["startupProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert c["startupProbe"]["failureThreshold"] * c["startupProbe"]["periodSeconds"] >= 30 * 60
    assert c["readinessProbe"]["failureThreshold"] == 3 and "livenessProbe" in c
    # Stopping pods keep answering while they leave the Service (no shell needed: the kubelet sleeps): 10 s, then
    # the serving profile's longestRequest (120 s) to drain; the grace period covers both and vLLM's shutdown.
    assert c["lifecycle"] == {"preStop": {"sleep": {"seconds": 130}}}
    assert pod["terminationGracePeriodSeconds"] == 160
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["dshm"] == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}
    assert {"name": "dshm", "mountPath": "/dev/shm"} in c["volumeMounts"]
    assert volumes["model-cache"]["hostPath"] == {"path": "/var/lib/model-cache", "type": "DirectoryOrCreate"}


def test_what_the_model_cache_changes_in_the_pod_spec(record: Callable[..., Recording]) -> None:
    """Exactly one volume, its mount, and HF_HOME pointing downloads into it; nothing else."""
    base = {**SERVING, "secretEnv": {}, "imagePullSecret": None}
    base = {k: v for k, v in base.items() if v is not None}
    without = {k: v for k, v in base.items() if k != "modelCache"}
    pods = {}
    for label, w in (("with", base), ("without", without)):
        pods[label] = record("dev", workloads=[w]).get("llm-deployment").inputs["spec"]["template"]["spec"]
    a, b = copy.deepcopy(pods["with"]), copy.deepcopy(pods["without"])
    def added(with_: list[Any], without_: list[Any]) -> list[Any]:
        return [x for x in with_ if x not in without_]

    assert added(a.pop("volumes"), b.pop("volumes")) == [
        {"name": "model-cache", "hostPath": {"path": "/var/lib/model-cache", "type": "DirectoryOrCreate"}}]
    (ca,), (cb,) = a.pop("containers"), b.pop("containers")
    assert added(ca.pop("volumeMounts"), cb.pop("volumeMounts")) == [
        {"name": "model-cache", "mountPath": "/models", "readOnly": False}]
    assert added(ca.pop("env", []), cb.pop("env", [])) == [{"name": "HF_HOME", "value": "/models/huggingface"}]
    assert (a, ca) == (b, cb)


@pytest.mark.parametrize(
    ("cache", "volume"),
    [
        ({"type": "nfs", "server": "10.0.0.5", "path": "/shares/models"},
         {"nfs": {"server": "10.0.0.5", "path": "/shares/models", "readOnly": False}}),
        ({"type": "pvc", "claimName": "models", "readOnly": True},
         {"persistentVolumeClaim": {"claimName": "models", "readOnly": True}}),
    ],
)
def test_shared_caches_need_no_privileged_namespace(
    record: Callable[..., Recording], cache: dict[str, Any], volume: dict[str, Any]
) -> None:
    w = {k: v for k, v in SERVING.items() if k not in ("secretEnv", "imagePullSecret")}
    rec = record("dev", workloads=[{**w, "modelCache": cache}])
    (vol,) = [v for v in rec.get("llm-deployment").inputs["spec"]["template"]["spec"]["volumes"]
              if v["name"] == "model-cache"]
    assert vol == {"name": "model-cache", **volume}
    labels = rec.get("workloads-serving").inputs["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"


def test_pod_security_admits_hostpath_caches_only_in_their_namespace(recordings: dict[str, Recording]) -> None:
    """Pod Security `baseline` forbids hostPath volumes (kubernetes.io/docs/concepts/security/pod-security-standards,
    "HostPath Volumes"): a namespace holding a hostPath cache is `privileged`, every other one stays baseline."""
    levels = {}
    for rec in recordings.values():
        for ns in rec.of_type("kubernetes:core/v1:Namespace"):
            levels[(rec.stack, ns.inputs["metadata"]["name"])] = (
                ns.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"])
        for d in rec.of_type("kubernetes:apps/v1:Deployment"):
            volumes = d.inputs["spec"]["template"]["spec"].get("volumes", [])
            level = levels[(rec.stack, d.inputs["metadata"]["namespace"])]
            if any("hostPath" in v for v in volumes):
                assert level == "privileged", d.name
            else:
                assert level in ("baseline", "restricted"), d.name
    assert levels[("prod", "inference")] == "privileged" and levels[("prod", "batch")] == "baseline"
    assert levels[("dev", "gpu-workloads")] == "baseline"


def test_extra_triggers_keep_the_gpu_triggers_safety(queued: Recording) -> None:
    spec = queued.get("inference-scaledobject").inputs["spec"]
    metric_triggers = [t for t in spec["triggers"] if t["type"] == "prometheus"]
    assert [t["name"] for t in metric_triggers] == ["gpu-utilization", "waiting-requests"]
    for t in metric_triggers:
        assert t["metricType"] == "AverageValue" and t["metadata"]["ignoreNullValues"] == "false"
    assert spec["fallback"]["behavior"] == "currentReplicasIfHigher"
    waiting = spec["triggers"][1]["metadata"]
    assert waiting["query"] == ('sum(avg_over_time(vllm:num_requests_waiting{namespace="inference",'
                                'pod=~"inference-[a-z0-9]{1,10}-[a-z0-9]{5}"}[1m]))')
    assert waiting["threshold"] == "5"


def test_dashboards_show_the_serving_trigger_next_to_the_gpu_panels(queued: Recording) -> None:
    rec = queued
    board = json.loads(rec.get("monitoring-dashboard-gpu-autoscaling").inputs["data"]["gpu-autoscaling.json"])
    trigger = {t["name"]: t for t in rec.get("inference-scaledobject").inputs["spec"]["triggers"]}["waiting-requests"]
    titles = [p["title"] for p in board["panels"]]
    row = titles.index(next(t for t in titles if t.startswith("Workload inference/inference")))
    end = next((i for i in range(row + 1, len(titles)) if board["panels"][i]["type"] == "row"), len(titles))
    section = board["panels"][row + 1:end]
    assert any("utilisation" in p["title"].lower() for p in section)
    (serving,) = [p for p in section if p["title"].startswith("Trigger waiting-requests")]
    assert serving["targets"][0]["expr"] == trigger["metadata"]["query"]


@pytest.mark.charts
def test_pod_monitors_validate_against_the_charts_crd(rec: Recording) -> None:
    """PodMonitor against prometheus-operator's CRD as kube-prometheus-stack 88.5.3 ships it (charts/crds)."""
    import tarfile

    import jsonschema
    import yaml

    from delivery.render import unwrap
    from delivery.schema_check import strict_schema as _strict
    from stackconfig import versions
    from tests.chart_cache import chart_archive

    with tarfile.open(chart_archive(versions.KUBE_PROMETHEUS_STACK)) as tgz:
        member = tgz.extractfile("kube-prometheus-stack/charts/crds/crds/crd-podmonitors.yaml")
        assert member is not None
        crd = yaml.safe_load(member.read())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = _strict(version["schema"]["openAPIV3Schema"])
    monitors = [unwrap(dict(r.inputs)) for r in rec.of_type("kubernetes:monitoring.coreos.com/v1:PodMonitor")]
    assert len(monitors) == (1 if rec.stack == "prod" else 0)
    for monitor in monitors:
        jsonschema.validate(monitor, schema)
    if monitors:
        bad = copy.deepcopy(monitors[0])
        bad["spec"]["podMetricsEndpoints"][0]["portName"] = "http"
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
