"""Stack files that validated and then failed at `pulumi up` or in production (issue 17): each is refused now, with
the key, the value and the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stacknames import KUBERNETES_NAMESPACES, RESERVED_NAMESPACES
from tests.conftest import ROOT
from tests.test_config import config, problems
from tests.test_config_checks import GOOD_STACK, cli, project


@pytest.mark.parametrize("namespace", sorted({*KUBERNETES_NAMESPACES, "kube-flannel", *RESERVED_NAMESPACES}))
def test_a_namespace_that_exists_already_is_refused(namespace: str) -> None:
    """`default` and the kube-* namespaces exist in every cluster: the program's Namespace would fail with
    AlreadyExists mid-`up` (and `default` can never be deleted)."""
    message = problems(config(**{"workloads.0.namespace": namespace}))
    assert f"workloads[0].namespace: '{namespace}'" in message, message
    assert "Fix: use a namespace of your own" in message


def test_default_is_named_for_what_it_is() -> None:
    message = problems(config(**{"workloads.0.namespace": "default"}))
    assert "created by Kubernetes itself" in message and "AlreadyExists" in message, message


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("7b-chat", ["'7b-chat'", "DNS-1035", "Fix: start it with a letter, e.g. 'llm-7b-chat'"]),
        ("-chat", ["'-chat'", "DNS-1035"]),
        ("chat-", ["'chat-'", "DNS-1035"]),
        ("chat.v1", ["'chat.v1'", "DNS-1035"]),
        ("x" * 41, ["has 41 characters", "at most 40", "Fix: shorten it to at most 40 characters"]),
    ],
)
def test_a_workload_name_must_be_a_service_name(name: str, expected: list[str]) -> None:
    """The workload's Service is named after it, and a Service name is a DNS-1035 label (a letter first)."""
    message = problems(config(**{"workloads.0.name": name}))
    assert f"workloads[0].name: '{name}'" in message, message
    for fragment in expected:
        assert fragment in message, message
    assert "63" not in message, message


def test_a_forty_character_name_is_accepted() -> None:
    from stackconfig import load_stack_config

    assert load_stack_config(config(**{"workloads.0.name": "a" * 40})).workloads[0].name == "a" * 40




@pytest.mark.parametrize("minutes", [5, 15, 20, 24])
def test_a_provision_time_shorter_than_a_bare_metal_boot_is_refused(minutes: int) -> None:
    """`gpuPool.provisionMinutes` becomes the autoscaler's max-node-provision-time: below Gcore's 20–25 minutes
    until a bare-metal node is Ready, the autoscaler deletes every node that is still booting."""
    message = problems(config(**{"gpuPool.provisionMinutes": minutes}))
    assert f"gpuPool.provisionMinutes: {minutes} is shorter than a bare-metal GPU node takes to boot" in message
    assert "Fix: use at least 25 (default 35)" in message


def test_the_floor_itself_is_accepted_and_reaches_the_autoscaler() -> None:
    from renderers.gcore_cluster import autoscaler_config
    from stackconfig import load_stack_config

    cfg = load_stack_config(config(**{"gpuPool.provisionMinutes": 25}))
    assert autoscaler_config(cfg.pools, cfg.workloads, {})["max-node-provision-time"] == "25m"


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("registry.example.com/gpu app:1.4.2", ["contains whitespace", "Fix: remove the spaces"]),
        ("registry.example.com/app:1.4 .2", ["contains whitespace"]),
        ("registry.example.com/Team/App:1.4.2", ["uppercase letters in its repository path",
                                                 "Fix: write 'registry.example.com/team/app:1.4.2'"]),
        ("VLLM:v0.14.0", ["uppercase letters", "Fix: write 'vllm:v0.14.0'"]),
        ("registry..example.com/app:1", ["is not an image reference the container runtime can parse"]),
        ("registry.example.com/app:", ["is not an image reference"]),
        ("registry.example.com/app:-1", ["is not an image reference"]),
        ("registry.example.com/app:" + "1" * 129, ["is not an image reference"]),
    ],
)
def test_an_image_reference_the_runtime_cannot_parse_is_refused(image: str, expected: list[str]) -> None:
    """distribution/reference's grammar (what the node parses): Kubernetes accepts any string, and the pod would
    only fail on the node with InvalidImageName."""
    message = problems(config(**{"workloads.0.image": image}))
    assert f"workloads[0].image: {image!r}" in message, message
    for fragment in expected:
        assert fragment in message, message


@pytest.mark.parametrize(
    "image",
    ["registry.example.com/app:1.4.2", "Registry.Example.com/app:V1.4-RC", "localhost:5000/app:1",
     "[::1]:5000/app:1", "nginx:1.27", "docker.io/library/nginx:1.27",
     "registry.example.com/a/b/c__d-e.f:1@sha256:" + "0" * 64],
)
def test_references_of_the_grammar_are_accepted(image: str) -> None:
    from stackconfig import load_stack_config

    assert load_stack_config(config(**{"workloads.0.image": image})).workloads[0].image == image


# --- thresholds reach KEDA as the exact decimal configured -------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=1e18))
def test_every_threshold_is_written_as_an_exact_decimal(value: float) -> None:
    """KEDA parses the threshold with Go's strconv.ParseFloat: the text must be a plain decimal that reads back as
    the very number configured (`:g` wrote 1234567 as 1.23457e+06)."""
    from renderers.promql import format_number

    text = format_number(value)
    assert float(text) == value
    assert "e" not in text.lower() and not text.endswith(".")


def test_a_large_threshold_reaches_the_scaled_object_and_the_dashboards_exactly() -> None:
    from renderers.dashboards import dashboards
    from renderers.workload_specs import scaled_object_spec
    from stackconfig import load_stack_config

    wake = {"query": "sum(queue_depth)", "threshold": 1234567, "activationThreshold": 12345.678}
    serving = {"metrics": {"port": "http"}, "ports": [{"name": "http", "port": 8000}],
               "triggers": [{"name": "tokens", "metric": "tokens_waiting", "threshold": 7654321.5}]}
    cfg = load_stack_config(config(**{"workloads.0.wakeTrigger": wake, "workloads.0.targetUtilization": 12.345678,
                                      **{f"workloads.0.{k}": v for k, v in serving.items()}}))
    triggers = {t["name"]: t["metadata"] for t in scaled_object_spec(cfg.workloads[0], "http://p:9090")["triggers"]}
    assert triggers["demand"]["threshold"] == "1234567"
    assert triggers["demand"]["activationThreshold"] == "12345.678"
    assert triggers["tokens"]["threshold"] == "7654321.5"
    assert triggers["gpu-utilization"]["threshold"] == "12.345678"
    text = json.dumps(dashboards(cfg))
    assert "7654321.5" in text and "12.345678" in text
    assert "e+06" not in text and "7.65432e" not in text


# --- a refused value is never judged again through the default that stands in for it ------------------------------


def test_a_refused_max_nodes_is_not_also_a_packing_problem_of_the_default() -> None:
    """24 one-GPU replicas fit 3 nodes, not the default 2: with `maxNodes: abc` only the type is reported."""
    for bad in ("abc", True, 2.5, "3"):
        from stackconfig import ConfigError, load_stack_config

        with pytest.raises(ConfigError) as exc:
            load_stack_config(config(**{"gpuPool.maxNodes": bad, "workloads.0.maxReplicas": 24}))
        assert [p.key for p in exc.value.problems] == ["gpuPool.maxNodes"], exc.value


def test_max_nodes_true_is_refused_not_read_as_one() -> None:
    message = problems(config(**{"gpuPool.maxNodes": True}))
    assert "gpuPool.maxNodes: True is a boolean (true/false), not a whole number" in message
    assert "greater than gpuPool.minNodes" not in message


def test_a_rule_over_the_whole_list_is_silent_while_an_item_is_refused() -> None:
    """whatIf.workload names the second workload, whose image is missing: 'not one of the stack's workloads' would
    be about the list without it, not the stack file."""
    from stackconfig import ConfigError, load_stack_config

    raw = config(**{"workloads.0.minReplicas": 9, "whatIf": {"workload": "batch"}})
    raw["workloads"].append({"name": "batch", "maxReplicas": 2})
    with pytest.raises(ConfigError) as exc:
        load_stack_config(raw)
    assert [p.key for p in exc.value.problems] == ["workloads[1].image"], exc.value


def test_a_workload_that_is_no_mapping_is_refused_with_the_others_problems_not_a_crash() -> None:
    """A workload written as text makes the whole list the bad value; a second workload's missing image was then
    looked up in the list already dropped (KeyError). Nothing is judged from the empty list that stands in:
    whatIf.workload still names a workload of the stack file."""
    from stackconfig import ConfigError, load_stack_config

    raw = config(whatIf={"trace": "t.csv", "column": "c", "perGpu": 1, "workload": "inference"})
    raw["workloads"] = ["inference", {"name": "batch", "maxReplicas": 2}]
    with pytest.raises(ConfigError) as exc:
        load_stack_config(raw)
    assert [p.key for p in exc.value.problems] == ["workloads[0]", "workloads[1].image"], exc.value


def test_a_rule_over_a_list_that_was_refused_whole_is_silent() -> None:
    """`ports: 5` is refused; the probe's port is then not judged against the empty list that stands in."""
    raw = config(**{"workloads.0.ports": 5, "workloads.0.probes": {"port": "http"}})
    message = problems(raw)
    assert "workloads[0].ports: 5 is not a list" in message
    assert "probes.port" not in message


# --- the shape of the stack file: `config:` missing, misspelled, nested, unknown top-level keys -----------------

GOOD = GOOD_STACK


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the keys not indented under `config:`
        (GOOD.replace("config:\n", "").replace("\n  ", "\n").lstrip(),
         ["Pulumi.dev.yaml:1:1: 'gpu-autoscaling:cluster' is at the top level of the stack file",
          "Fix: put a line 'config:' first"]),
        (GOOD.replace("config:", "confg:"), ["Pulumi.dev.yaml:1:1: 'confg'", "Fix: did you mean 'config:'?"]),
        (GOOD.replace("config:", "configs:"), ["'configs'", "did you mean 'config:'?"]),
        ("", ["Pulumi.dev.yaml: (empty file) has no 'config:' section"]),
        ("# only a comment\n", ["(empty file) has no 'config:' section"]),
        ("secretsprovider: passphrase\n", ["(only secretsprovider) has no 'config:' section"]),
        ("config: []\n", ["config: [] is not a mapping of keys"]),
        ("- config\n", ["is not a mapping of top-level keys"]),
        # beside a good config: refused, and the config is still checked in the same run
        ("secretprovider: passphrase\n" + GOOD.replace("maxReplicas: 8", "maxReplicas: 0"),
         ["Pulumi.dev.yaml:1:1: 'secretprovider' is not a top-level key of a Pulumi stack file",
          "did you mean 'secretsprovider:'?", "workloads[0].maxReplicas: 0 must be at least 1"]),
        # the project's keys nested under its namespace
        ("config:\n  gpu-autoscaling:\n    cluster:\n      name: gpu-dev\n",
         ["gpu-autoscaling: (gpu-autoscaling: with keys under it) nests keys under the namespace",
          "Fix: write each key directly under 'config:' as 'gpu-autoscaling:<key>:'"]),
    ],
)
def test_a_stack_file_of_the_wrong_shape_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: list[str]
) -> None:
    """Before: 'cluster: None is required but missing' (or valid), whatever the file's mistake was."""
    status, err = cli(project(tmp_path, text), capsys)
    assert status == 2, err
    for fragment in expected:
        assert fragment in err, err
    assert "Traceback" not in err
    if "nests" in err or "top level" in err or "no 'config:'" in err or "confg" in err:
        assert "cluster: (not set) is required" not in err, err  # not the symptom, the cause


def test_the_program_refuses_an_unknown_top_level_key_too(tmp_path: Path) -> None:
    """`pulumi up` reads the file beside the program with the same reader: same refusal, before any resource."""
    from offline.engine import Recording, record_program
    from stackconfig import ConfigError

    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    project(tmp_path, "secretprovider: passphrase\n" + GOOD)
    rec = Recording("dev")
    with pytest.raises(ConfigError, match="'secretprovider' is not a top-level key"):
        record_program(tmp_path, "dev", into=rec)
    assert rec.resources == []


# --- secrets: "valid" means `pulumi up` accepts the stack, checked by one implementation ---------------------------

SECRET_STACK = GOOD.replace("      maxReplicas: 8\n", "      maxReplicas: 8\n      secretEnv: {HF_TOKEN: hfToken}\n")


@pytest.mark.parametrize(
    ("extra", "status", "expected"),
    [
        ("", 2, ["secrets:hfToken: (not set) is referenced by the stack config",
                 "Fix: run `pulumi config set --secret secrets:hfToken <value>`"]),
        ("  secrets:hfToken: hf_abc\n", 2, ["secrets:hfToken: (plain text, not shown) is stored in plain text"]),
        ("  secrets:hfToken:\n    secure: v1:abc\n", 0, ["valid"]),
        ("  secrets:hfTokn:\n    secure: v1:abc\n", 2, ["secrets:hfToken: (not set)", "secrets:hfTokn is set: a typo"]),
        ("  secrets:hfToken:\n    secure: v1:abc\n  gcore:permanentApiToken: abc123\n", 2,
         ["gcore:permanentApiToken: (plain text, not shown)", "or export GCORE_PERMANENT_TOKEN"]),
        ("  secrets:hfToken:\n    secure: v1:abc\n  gcore:permanentApiToken:\n    secure: v1:abc\n", 0, ["valid"]),
    ],
)
def test_the_checker_reports_what_pulumi_up_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, status: int, expected: list[str]
) -> None:
    """Before: `python -m stackconfig` said valid although `pulumi up` refused unset and plain-text secrets."""
    got, err = cli(project(tmp_path, SECRET_STACK + extra), capsys)
    assert got == status, err
    for fragment in expected:
        assert fragment in err, err
    assert "hf_abc" not in err and "abc123" not in err


def test_secrets_from_an_esc_environment_are_not_called_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got, err = cli(project(tmp_path, "environment:\n  - gpu-platform/dev\n" + SECRET_STACK), capsys)
    assert got == 0, err


def test_the_offline_plan_names_the_secrets_up_would_miss(capsys: pytest.CaptureFixture[str]) -> None:
    from offline import plan

    assert plan.main(["prod", "--out", "/dev/null"]) == 0  # forks have no secrets: the plan is still written
    err = capsys.readouterr().err
    assert "6 secret(s) the stack refers to are not set in Pulumi.prod.yaml" in err, err
    assert "`pulumi up` refuses to run until they are set" in err
    assert "pulumi config set --secret secrets:hfToken <value> --stack prod" in err
    assert plan.main(["dev", "--out", "/dev/null"]) == 0
    assert "not set" not in capsys.readouterr().err


def test_the_offline_plan_refuses_a_plain_text_secret(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from offline import engine, plan

    real = engine.load_config

    def with_plain_token(stack: str, project_dir: Path = ROOT) -> tuple[str, dict[str, str], list[str]]:
        project_name, config, secret = real(stack, project_dir)
        return project_name, {**config, "gcore:permanentApiToken": "abc123"}, secret

    monkeypatch.setattr(engine, "load_config", with_plain_token)
    assert plan.main(["dev", "--out", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "gcore:permanentApiToken: (plain text, not shown)" in err and "abc123" not in err


def test_config_and_secret_problems_come_in_one_run_before_any_resource() -> None:
    """`pulumi up` used to stop at the config, and only a second run named the secrets."""
    from offline.engine import Recording, record_program
    from stackconfig import ConfigError

    rec = Recording("dev")
    with pytest.raises(ConfigError) as exc:
        record_program(ROOT, "dev", overrides={"gpuPool": {"maxNodes": "abc"}}, into=rec,
                       plain={"gcore:permanentApiToken": "abc123", "secrets:leftover": "x"})
    keys = [p.key for p in exc.value.problems]
    assert keys == ["gcore:permanentApiToken", "secrets:leftover", "gpuPool.maxNodes"], exc.value
    assert rec.resources == []



WINDOW = {"start": "0 8 * * *", "end": "0 18 * * *"}


@pytest.mark.parametrize(("key", "value", "said"), [
    ("gpuPool.headroom", {"gpus": 3201}, "headroom.gpus: 3201 must be at most 3200"),
    ("gpuPool.headroom", {"gpus": 0, "podGpus": 17, "schedules": [{**WINDOW, "minReplicas": 1}]},
     "headroom.podGpus: 17 must be at most 16"),
    ("gpuPool.headroom", {"gpus": 0, "schedules": [{**WINDOW, "minReplicas": 3201}]},
     "minReplicas: 3201 must be at most 3200"),
    ("gpuPool.minNodes", 201, "gpuPool.minNodes: 201 must be at most 200"),
    ("systemPool", {"minNodes": 201}, "systemPool.minNodes: 201 must be at most 200"),
    ("workloads.0.minReplicas", 3201, "minReplicas: 3201 must be at most 3200"),
    ("workloads.0.maxReplicas", 3201, "maxReplicas: 3201 must be at most 3200"),
    ("workloads.0.fallbackReplicas", 3201, "fallbackReplicas: 3201 must be at most 3200"),
    ("workloads.0.gpusPerPod", 17, "gpusPerPod: 17 must be at most 16"),
])
def test_a_count_past_what_one_pool_can_hold_is_refused_before_any_check_counts_to_it(key: str, value: object,
                                                                                     said: str) -> None:
    """Every count of nodes, GPUs or pods in a pool is bounded (stackconfig/gpu_pool.py MAX_NODES, MAX_POOL_GPUS),
    so no check is handed a number it cannot count to: `headroom.gpus: 1000000000`, a typo, once made the packing
    check list a billion placeholders and run out of memory."""
    message = problems(config(**{key: value}))
    assert said in message, message
