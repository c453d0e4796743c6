"""gpu_platform, the component package: its schema, and its GpuWorkload from a workload team's program.

The program below uses the package's GpuWorkload as a Python program can (import it; other languages get the same
component through `pulumi package add`, which generates their SDK from the schema `test_the_schema...` checks).
Its StackReference returns the dev platform's real outputs (`ReferencedStack.of`), and its workload is the dev
platform's own under another name: the objects must be the platform's, name for name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.provider.experimental.analyzer import Analyzer

from gpu_platform import GpuWorkload
from offline.engine import ROOT, RecordedResource, Recording, ReferencedStack, record_program
from stackconfig.stack import KNOWN_KEYS

PLATFORM_STACK = "organization/gpu-autoscaling/dev"
OWN = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]["gpu-autoscaling:workloads"][0]
PROGRAM = f'''
import pulumi
import pulumi_kubernetes as k8s
from pydantic.alias_generators import to_snake

from gpu_platform import GpuWorkload

platform = pulumi.StackReference({PLATFORM_STACK!r})
workload = pulumi.Config().require_object("workload")
cluster = k8s.Provider("platform-cluster", kubeconfig=platform.require_output("kubeconfig"))
GpuWorkload(workload["name"], {{**{{to_snake(k): v for k, v in workload.items()}},
                                "pool": platform.require_output("gpuPool"),
                                "prometheus_url": platform.require_output("prometheusUrl")}},
            opts=pulumi.ResourceOptions(providers={{"kubernetes": cluster}}))
'''
KINDS = ("kubernetes:apps/v1:Deployment", "kubernetes:keda.sh/v1alpha1:ScaledObject",
         "kubernetes:policy/v1:PodDisruptionBudget")


def program(tmp_path: Path, platform: ReferencedStack, workload: dict[str, Any],
            into: Recording | None = None) -> Recording:
    (tmp_path / "Pulumi.yaml").write_text("name: workload-team\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": {"workload-team:workload": workload}}))
    (tmp_path / "__main__.py").write_text(PROGRAM)
    return record_program(tmp_path, "dev", stack_references={PLATFORM_STACK: platform}, into=into)


@pytest.fixture(scope="module")
def platform(recordings: dict[str, Recording]) -> ReferencedStack:
    return ReferencedStack.of(recordings["dev"])


def test_the_schema_takes_the_stack_files_workload_keys_and_the_platforms_outputs_as_inputs() -> None:
    """`pulumi package add` generates every language's SDK from this schema: the workload's keys under the stack
    file's names (which the component hands to the platform's model), the platform's outputs as Inputs."""
    component = Analyzer("gpu-platform").analyze([GpuWorkload])["component_definitions"]["GpuWorkload"]
    platform_args = {"pool", "prometheusUrl", "priorityClassName"}
    assert set(component.inputs) - platform_args <= set(KNOWN_KEYS["workloads[]"])
    assert {k for k, p in component.inputs.items() if not p.plain} == platform_args
    assert all(p.description for p in component.inputs.values())
    assert set(component.outputs) == {"deploymentName", "scaledObjectName", "namespace"}


def test_the_platforms_workload_from_a_teams_program_is_the_platforms_own(
        tmp_path: Path, platform: ReferencedStack, recordings: dict[str, Recording]) -> None:
    workload = {**OWN, "name": "inference-b", "priorityClassName": "gpu-workload"}
    ours = program(tmp_path, platform, workload)
    theirs = recordings["dev"]
    for kind in KINDS:
        mine: RecordedResource = ours.of_type(kind)[0]
        own = theirs.get(f"{OWN['name']}-{kind.rsplit(':', 1)[1].lower()}".replace(
            "poddisruptionbudget", "pdb"), kind)
        assert mine.inputs["spec"] == json.loads(json.dumps(own.inputs["spec"]).replace(OWN["name"], "inference-b"))
        assert mine.provider_name == "platform-cluster"


@pytest.mark.parametrize("bad, said", [
    ({"minReplicas": 3, "maxReplicas": 2}, "minReplicas: 3 is greater than maxReplicas (2)"),
    ({"targetUtilization": 0.6}, "targetUtilization: 0.6 looks like a fraction"),
    ({"gpusPerPod": 16}, "gpusPerPod: 16"),
    ({"namespace": "kube-system"}, "namespace: 'kube-system'"),
])
def test_a_bad_argument_is_refused_naming_it_before_anything_is_registered(
        tmp_path: Path, platform: ReferencedStack, bad: dict[str, Any], said: str) -> None:
    workload = {"name": "refused", "image": "registry.example.com/x:1.0", "maxReplicas": 4, **bad}
    rec = Recording("dev")
    with pytest.raises(Exception, match="invalid GpuWorkload arguments") as err:
        program(tmp_path, platform, workload, into=rec)
    assert said in str(err.value)
    assert not [r for r in rec.resources if r.type in KINDS]
