"""Issue 11's config mistakes: each refused with key, value and fix; several at once all reported in one run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from offline.engine import Recording
from stackconfig import ConfigError, GpuPoolConfig, check_config, load_stack_config
from stackconfig.__main__ import main as stackconfig_main
from stackconfig.flavors import GPU_FLAVORS, gpus_of
from stackconfig.packing import pack
from stackconfig.stackfile import StackFileError, read_stack_file
from tests.conftest import ROOT
from tests.test_config import BASE, config, problems

GOOD_STACK = """\
config:
  gpu-autoscaling:cluster:
    name: gpu-dev
    projectName: Default
    regionName: Luxembourg-2
    keypair: team
  gpu-autoscaling:workloads:
    - name: inference
      image: registry.example.com/app:1.4.2
      maxReplicas: 8
"""


def project(tmp_path: Path, stack_text: str, stack: str = "dev") -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(stack_text)
    return tmp_path


def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], stack: str = "dev") -> tuple[int, str]:
    status = stackconfig_main([stack, "--dir", str(tmp_path)])
    return status, capsys.readouterr().err


# --- YAML: syntax, tabs, duplicate keys: file:line:column, no traceback, exit 2 ---------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD_STACK.replace("    keypair: team\n", "    keypair: team\n    name: gpu-other\n"),
         ["Pulumi.dev.yaml:7:5", "'name: gpu-other' gives the key \"name\" a second time", "keep one of the two"]),
        (GOOD_STACK + "  gpu-autoscaling:cluster:\n    name: again\n",
         ["Pulumi.dev.yaml:11:3", "the key \"gpu-autoscaling:cluster\" a second time"]),
        (GOOD_STACK.replace("    projectName", "\tprojectName"),
         ["Pulumi.dev.yaml:4:1", "'\\t'", "indent with spaces"]),
        (GOOD_STACK.replace("maxReplicas: 8", "maxReplicas: [8"), ["Pulumi.dev.yaml:", "correct the YAML syntax"]),
        # Indentation: the line that is wrong, whichever line the parser stopped at (issue 29).
        (GOOD_STACK.replace("    projectName", "     projectName"),  # one space too many
         ["Pulumi.dev.yaml:4:6: 'projectName: Default' has the wrong indentation (5 spaces)", "two spaces right"]),
        (GOOD_STACK.replace("    name: gpu-dev", "   name: gpu-dev"),  # the parser stops at the next, right line
         ["Pulumi.dev.yaml:3:4: 'name: gpu-dev' has the wrong indentation (3 spaces)"]),
        (GOOD_STACK.replace("  gpu-autoscaling:cluster:", " gpu-autoscaling:cluster:"),  # stops 6 lines below
         ["Pulumi.dev.yaml:2:2: 'gpu-autoscaling:cluster:' has the wrong indentation (1 space)"]),
        (GOOD_STACK.replace("      image:", "    image:"),  # out of its list item
         ["Pulumi.dev.yaml:9:5: 'image: registry.example.com/app:1.4.2' has the wrong indentation (4 spaces)"]),
        (GOOD_STACK.replace("app:1.4.2", "app:1.4.2: latest"),  # a value to quote, not an indentation
         ["Pulumi.dev.yaml:9:", "mapping values are not allowed here", "quote values that contain ': '"]),
    ],
)
def test_yaml_mistakes_name_file_line_and_column_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: list[str]
) -> None:
    status, err = cli(project(tmp_path, text), capsys)
    assert status == 2
    for fragment in expected:
        assert fragment in err, err
    assert "Traceback" not in err and "Fix:" in err


def test_valid_stack_files_of_the_repository_exit_0_once_their_secrets_are_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Valid means `pulumi up` accepts it: a stack whose `secrets:` keys are not set in its file is not (issue 17)."""
    from offline.engine import placeholder_secrets
    from tests.conftest import STACKS

    for stack in STACKS:
        unset = sorted(placeholder_secrets(stack))
        status = stackconfig_main([stack, "--dir", str(ROOT)])
        err = capsys.readouterr().err
        assert status == (2 if unset else 0), err
        for key in unset:
            assert f"{key}: (not set) is referenced by the stack config" in err, err
        # The same file with the secrets set as `pulumi config set --secret` writes them: valid.
        text = (ROOT / f"Pulumi.{stack}.yaml").read_text()
        text += "".join(f"  {key}:\n    secure: v1:placeholder\n" for key in unset)
        project(tmp_path, text, stack)
        assert stackconfig_main([stack, "--dir", str(tmp_path)]) == 0, capsys.readouterr().err


@pytest.mark.subprocess
def test_cli_runs_as_a_module_without_traceback(tmp_path: Path) -> None:
    project(tmp_path, GOOD_STACK + "  gpu-autoscaling:cluster:\n    name: again\n")
    result = subprocess.run([sys.executable, "-m", "stackconfig", "dev", "--dir", str(tmp_path)], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "Pulumi.dev.yaml:11:3" in result.stderr and "Traceback" not in result.stderr


def test_the_engine_and_the_program_read_stack_files_strictly(tmp_path: Path) -> None:
    from offline.engine import load_config

    project(tmp_path, GOOD_STACK + "  gpu-autoscaling:cluster:\n    name: again\n")
    with pytest.raises(StackFileError, match="Pulumi.dev.yaml:11:3"):
        load_config("dev", tmp_path)
    good = project(tmp_path, GOOD_STACK) / "Pulumi.dev.yaml"
    assert read_stack_file(good).config["gpu-autoscaling:cluster"]["name"] == "gpu-dev"


def test_a_bad_stack_file_reaches_pulumi_as_a_run_error(record: Callable[..., Recording]) -> None:
    """The language host prints a RunError's message without a traceback; tests still see a ConfigError."""
    import pulumi

    with pytest.raises(ConfigError) as exc:
        record("dev", workload=[])
    assert isinstance(exc.value, pulumi.RunError)


# --- namespaces -------------------------------------------------------------------------------------------------


def test_a_misspelled_project_namespace_is_refused_with_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = GOOD_STACK + "  gpu-autoscalling:gpuPool:\n    maxNodes: 4\n  gcore:permanentApiToken:\n    secure: x\n"
    status, err = cli(project(tmp_path, text), capsys)
    assert status == 2
    assert "gpu-autoscalling:gpuPool: 'gpu-autoscalling' is not a config namespace this program reads" in err
    assert "(Pulumi.dev.yaml:11:3)" in err and "did you mean 'gpu-autoscaling:gpuPool'?" in err
    assert "gcore:" not in err.split("Fix:")[0].split("gpu-autoscalling:gpuPool")[0]


def test_provider_namespaces_are_fine_and_the_engine_config_is_checked_too(record: Callable[..., Recording]) -> None:
    check_config({"gpu-autoscaling:cluster": BASE["cluster"], "gcore:apiEndpoint": "https://api.gcore.com",
                  "kubernetes:enableServerSideApply": "true", "pulumi:tags": "{}"}, "gpu-autoscaling")
    with pytest.raises(ConfigError, match="did you mean 'gpu-autoscaling:gpuPool'"):
        record("dev", **{"gpu-autoscalling:gpuPool": {"maxNodes": 4}})


def test_a_misspelled_gcore_provider_key_is_refused_with_a_suggestion() -> None:
    with pytest.raises(ConfigError) as exc:
        check_config({"gpu-autoscaling:cluster": BASE["cluster"], "gcore:permanentApiTokn": "x", "gcore:apiKey": "y"},
                     "gpu-autoscaling")
    message = str(exc.value)
    assert "gcore:permanentApiTokn: 'permanentApiTokn' is not a config key of the Gcore provider v0" in message
    assert "did you mean 'gcore:permanentApiToken'?" in message
    assert "gcore:apiKey: 'apiKey'" in message


def test_an_unknown_project_key_is_refused_with_a_suggestion() -> None:
    with pytest.raises(ConfigError, match="gpuPol: .* not a known key .*did you mean 'gpuPool'"):
        check_config({"gpu-autoscaling:cluster": BASE["cluster"], "gpu-autoscaling:gpuPol": {}}, "gpu-autoscaling")


# --- flavors ----------------------------------------------------------------------------------------------------


def test_gpu_count_comes_only_from_the_flavor_table() -> None:
    assert gpus_of("bm3-ai-1xlarge-h100-80-8") == 8
    assert gpus_of("bm3-ai-1xlarge-h100-80") is None  # not 80
    assert all(f.gpus == 8 for f in GPU_FLAVORS.values())
    assert GpuPoolConfig(flavor="bm3-ai-1xlarge-h100-80").gpus == 0  # unknown, refused by the rules
    assert GpuPoolConfig(flavor="bm3-ai-1xlarge-h200-141-8").gpus == 8


def test_a_flavor_with_its_count_dropped_gets_did_you_mean() -> None:
    message = problems(config(**{"gpuPool.flavor": "bm3-ai-1xlarge-h100-80"}))
    assert "gpuPool.flavor: 'bm3-ai-1xlarge-h100-80' is not in the table" in message
    assert "did you mean 'bm3-ai-1xlarge-h100-80-8'?" in message
    assert "80" not in message.split("Fix:")[0].replace("h100-80", "")  # no capacity computed from 80 GPUs


def test_a_misspelled_flavor_gets_did_you_mean() -> None:
    message = problems(config(**{"gpuPool.flavor": "bm3-ai-1xlagre-h100-80-8"}))
    assert "did you mean 'bm3-ai-1xlarge-h100-80-8'?" in message


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"gpuPool.flavor": "bm4-ai-1xlarge-b200-180-8", "gpuPool.acceptUnlistedFlavor": True},
         ["gpuPool.gpusPerNode", "required with gpuPool.acceptUnlistedFlavor"]),
        ({"gpuPool.flavor": "bm4-ai-1xlarge-b200-180-8", "gpuPool.gpusPerNode": 8},
         ["gpuPool.flavor", "not in the table", "gpuPool.acceptUnlistedFlavor: true"]),
        ({"gpuPool.acceptUnlistedFlavor": True}, ["gpuPool.acceptUnlistedFlavor", "is in the table"]),
        ({"gpuPool.gpusPerNode": 4}, ["gpuPool.gpusPerNode", "4", "has 8 GPUs per node", "remove gpuPool.gpusPerNode"]),
    ],
)
def test_the_unlisted_flavor_override_needs_count_and_acknowledgement(
    changes: dict[str, Any], expected: list[str]
) -> None:
    message = problems(config(**changes))
    for fragment in expected:
        assert fragment in message, message


# --- units ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"workloads.0.targetUtilization": 0.6},
         ["workloads[0].targetUtilization: 0.6", "looks like a fraction", "maxReplicas under any load", "write 60"]),
        ({"workloads.0.requests": {"memory": 64}},
         ["workloads[0].requests.memory: 64", "no unit", "as bytes", "write '64Gi'"]),
        ({"workloads.0.requests": {"memory": "64"}}, ["workloads[0].requests.memory: '64'", "write '64Gi'"]),
        ({"workloads.0.requests": {"memory": "512m"}}, ["requests.memory: '512m'", "millibytes", "write '512Mi'"]),
        ({"workloads.0.requests": {"cpu": "eight"}}, ["requests.cpu: 'eight'", "CPU quantity"]),
        ({"monitoring": {"storageSize": 200}}, ["monitoring.storageSize: 200", "no unit", "write '200Gi'"]),
        ({"monitoring": {"retention": 30}}, ["monitoring.retention: 30", "no unit", "write '30d'"]),
        ({"cluster.autoscaler": {"scale-down-unneeded-time": 20}},
         ["cluster.autoscaler.scale-down-unneeded-time: '20'", "not a duration with a unit", "write '20m'"]),
        ({"cluster.autoscaler": {"scale-down-utilization-threshold": 50}},
         ["scale-down-utilization-threshold: '50'", "between 0 and 1", "0.5"]),
        ({"cluster.autoscaler": {"max-empty-bulk-delete": "ten"}}, ["max-empty-bulk-delete: 'ten'", "whole number"]),
        ({"cluster.autoscaler": {"scale-down-enabled": "yes"}}, ["scale-down-enabled: 'yes'", "not a boolean"]),
    ],
)
def test_values_in_the_wrong_unit_are_refused(changes: dict[str, Any], expected: list[str]) -> None:
    message = problems(config(**changes))
    for fragment in expected:
        assert fragment in message, message
    assert "Fix:" in message


def test_values_with_units_pass() -> None:
    cfg = load_stack_config(config(**{
        "workloads.0.requests": {"cpu": 8, "memory": "64Gi"}, "workloads.0.targetUtilization": 75,
        "monitoring": {"storageSize": "200Gi", "retention": "30d"},
        "cluster.autoscaler": {"scale-down-unneeded-time": "20m", "scan-interval": "10s",
                               "scale-down-utilization-threshold": 0.5},
    }))
    assert cfg.workloads[0].requests.cpu == "8"
    assert cfg.cluster.autoscaler["scale-down-unneeded-time"] == "20m"


# --- bin-packing ------------------------------------------------------------------------------------------------


def test_ffd_packs_whole_pods() -> None:
    assert pack([3, 3, 3, 3, 4], 8, 2) is None  # 16 GPUs on 16, but no node takes a third 3-GPU pod
    assert pack([4, 4, 3, 3, 2], 8, 2) == [[4, 4], [3, 3, 2]]
    assert pack([], 8, 0) == []
    assert pack([1], 8, 0) is None


def test_ffd_may_refuse_a_packing_that_exists() -> None:
    """Documented limit: 3+3+2 / 4+4 fits two 8-GPU nodes, FFD puts 4+4 | 3+3 and has no room for the 2."""
    assert pack([4, 4, 3, 3, 2], 8, 2) is not None
    assert pack([5, 4, 3, 2, 2], 8, 2) == [[5, 3], [4, 2, 2]]
    assert pack([3, 3, 2, 4, 4], 7, 2) is None  # 3+4 / 3+4 leaves the 2 out; no packing of 16 on 14 exists anyway


def test_workloads_whose_pods_cannot_be_packed_are_refused_although_the_gpu_sum_fits() -> None:
    workloads = [
        {"name": "triple", "image": "registry.example.com/app:1", "gpusPerPod": 3, "maxReplicas": 4},
        {"name": "quad", "image": "registry.example.com/app:1", "gpusPerPod": 4, "maxReplicas": 1},
    ]
    message = problems(config(workloads=workloads))
    assert "workloads[*].maxReplicas: 16" in message
    assert "4×3 GPU (triple) + 1×4 GPU (quad)" in message and "2 node(s) of 8 GPUs" in message
    assert "raise gpuPool.maxNodes" in message
    assert load_stack_config(config(workloads=workloads, **{"gpuPool.maxNodes": 3}))


# --- all at once ------------------------------------------------------------------------------------------------


def test_type_errors_come_all_at_once_then_the_rules_across_keys() -> None:
    """Every value of a wrong type or unit at once, alone: a rule run on the default standing in for one would
    report a problem the stack file does not have. Once they are fixed, every rule's problem at once."""
    rules = {
        "gpuPool.flavor": "bm3-ai-1xlarge-h100-80",          # flavor not in the table
        "systemPool": {"name": "gpu"},                      # cross-key rule
        "cluster.version": "1.35.3",                        # cross-key rule
        "workloads.0.minReplicas": 9,                       # cross-key rule on the same workload
        "cluster.autoscaler": {"scan-interval": 10},        # duration without unit
    }
    types = {
        "gpuPool.minNodes": "two",                          # type error
        "workloads.0.targetUtilization": 0.6,               # fraction (a type-level error)
    }
    twice = {"name": "inference", "image": "registry.example.com/app:1", "maxReplicas": 1}
    raw = config(**rules, **types)
    raw["workloads"] += [{"name": "broken", "maxReplicas": "many"}, twice]  # required image missing, bad type
    message = problems(raw)
    for fragment in ["gpuPool.minNodes: 'two'", "workloads[0].targetUtilization: 0.6",
                     "workloads[1].image: (not set) is required", "workloads[1].maxReplicas: 'many'"]:
        assert fragment in message, message
    assert message.count("gpuPool.minNodes") == 1 and "minReplicas: 9" not in message  # no rule ran
    raw = config(**rules)
    raw["workloads"] += [{"name": "batch", "image": "registry.example.com/b:1", "maxReplicas": 2}, twice]
    message = problems(raw)
    for fragment in ["gpuPool.flavor: 'bm3-ai-1xlarge-h100-80'", "did you mean", "systemPool.name: 'gpu'",
                     "cluster.version: '1.35.3'", "workloads[0].minReplicas: 9",
                     "cluster.autoscaler.scan-interval: '10'",
                     "workloads[2].name: 'inference' is already used by workloads[0]"]:
        assert fragment in message, message


def test_the_program_reads_its_stack_file_strictly_before_its_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pulumi up` hands the program config, not the file: __main__.py checks the file beside it itself.

    The engine's own strict reader is replaced by a lenient one here, so only the program can catch the duplicate.
    """
    import json

    import pulumi
    import yaml

    from offline import engine

    (tmp_path / "__main__.py").symlink_to(ROOT / "__main__.py")
    twice = "  gpu-autoscaling:protect: false\n  gpu-autoscaling:protect: true\n"
    stack = (ROOT / "Pulumi.dev.yaml").read_text() + twice
    project(tmp_path, stack)

    def lenient(stack: str, project_dir: Path) -> tuple[str, dict[str, str], list[str]]:
        config = yaml.safe_load((project_dir / f"Pulumi.{stack}.yaml").read_text())["config"]  # last one wins
        return "gpu-autoscaling", {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}, []

    monkeypatch.setattr(engine, "load_config", lenient)
    seen = engine.Recording("dev")
    with pytest.raises(pulumi.RunError) as exc:
        engine.record_program(tmp_path, "dev", into=seen)
    assert "Pulumi.dev.yaml:" in str(exc.value) and 'the key "gpu-autoscaling:protect" a second time' in str(exc.value)
    assert seen.resources == []
