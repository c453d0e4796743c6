"""gpu_platform's GpuCluster (and ExistingCluster): its schema, and the cluster a program gets from it stating only
what differs from the defaults: the dev platform's own cluster, and bad arguments refused before anything is
registered.

The program below uses the component as a Python program can; other languages get it through `pulumi package add`,
from the schema `test_the_schema...` checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.provider.experimental.analyzer import Analyzer

from gpu_platform import ExistingCluster, GpuCluster
from offline.components import record_components
from offline.engine import MOCK_KUBECONFIG, ROOT, Recording, record_program
from stackconfig.stack import KNOWN_KEYS

PROGRAM = '''
import pulumi
from pydantic.alias_generators import to_snake

from gpu_platform import GpuCluster

def snake(o):
    return {to_snake(k): v for k, v in o.items()}

args = pulumi.Config().require_object("args")
cluster = GpuCluster("gpu", {"cluster": snake(args["cluster"]), "gpu_pools": [snake(p) for p in args["gpuPools"]],
                             **({"system_pool": snake(args["systemPool"])} if "systemPool" in args else {})})
pulumi.export("kubeconfig", cluster.kubeconfig)
'''
DEV = {k.removeprefix("gpu-autoscaling:"): v
       for k, v in yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"].items()}
#: The dev stack's cluster as a program states it: its one pool named, as `gpuPools` requires (the stack file's
#: single `gpuPool` is named `gpu` by default).
DEV_ARGS = {"cluster": DEV["cluster"], "gpuPools": [{**DEV["gpuPool"], "name": "gpu"}], "systemPool": DEV["systemPool"]}
CREATED = ("gcore:index/k8sv2:K8sv2", "pulumi:providers:kubernetes")


def program(tmp_path: Path, args: dict[str, Any], into: Recording | None = None) -> Recording:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text("name: platform-team\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": {"platform-team:args": args}}))
    (tmp_path / "__main__.py").write_text(PROGRAM)
    return record_program(tmp_path, "dev", into=into)


def test_the_schema_takes_the_stack_files_cluster_and_pool_keys() -> None:
    schema = Analyzer("gpu-platform").analyze([GpuCluster])
    component = schema["component_definitions"]["GpuCluster"]
    assert set(component.inputs) == {"cluster", "gpuPools", "systemPool", "protect"}
    types = schema["type_definitions"]
    # A pool's headroom and price are the platform's, not the cluster's; a cluster made elsewhere is not created.
    assert set(types["GpuPool"].properties) == set(KNOWN_KEYS["gpuPools[]"]) - {"headroom", "pricePerGpuHour"}
    assert set(types["Cluster"].properties) == set(KNOWN_KEYS["cluster"]) - {"existing"}
    assert set(types["SystemPool"].properties) == set(KNOWN_KEYS["systemPool"])
    assert all(p.description for t in ("GpuPool", "Cluster", "SystemPool") for p in types[t].properties.values())
    assert {n for n, p in types["GpuPool"].properties.items() if not p.optional} == {"name"}
    assert set(component.outputs) == {"clusterName", "clusterId", "kubernetesVersion", "kubeconfig"}


def test_a_program_stating_only_what_differs_gets_the_dev_platforms_cluster(
        tmp_path: Path, recordings: dict[str, Recording]) -> None:
    """The defaults of the typed pool spec are the platform's: the same Gcore cluster, pools, autoscaler flags and
    timeouts, and the kubeconfig a secret."""
    ours = program(tmp_path, DEV_ARGS)
    for kind in CREATED:
        assert ours.of_type(kind)[0].inputs == recordings["dev"].of_type(kind)[0].inputs
    assert "kubeconfig" in ours.secret_outputs


@pytest.mark.parametrize("bad, said", [
    ({"gpuPools": [{"name": "gpu", "minNodes": 2, "maxNodes": 2}]}, "gpuPools[0].maxNodes: 2 must be greater than"),
    ({"gpuPools": [{"name": "gpu", "flavor": "bm3-ai-1xlarge-h100-80"}]}, "gpuPools[0].flavor: 'bm3-ai-1xlarge-h100-80'"
                                                                         " is not in the table"),
    ({"gpuPools": [{"name": "gpu", "provisionMinutes": 10}]}, "gpuPools[0].provisionMinutes: 10 is shorter than"),
    ({"gpuPools": [{"name": "h100"}, {"name": "h100"}]}, "gpuPools[1].name: 'h100' is already the name of gpuPools[0]"),
    ({"gpuPools": []}, "gpuPools: [] holds no pool"),
    ({"cluster": {"name": "gpu-dev", "projectName": "Default", "regionName": "Luxembourg-2"}},
     "cluster.keypair: (not set) is required"),
    ({"cluster": {**DEV["cluster"], "autoscaler": {"max-node-provision-time": "20m"}}},
     "cluster.autoscaler.max-node-provision-time: '20m' is shorter than gpuPools[0].provisionMinutes (35)"),
    ({"systemPool": {"flavor": "bm3-ai-1xlarge-h100-80-8"}}, "systemPool.flavor: 'bm3-ai-1xlarge-h100-80-8' is not a "
                                                             "VM flavor"),
])
def test_a_bad_argument_is_refused_naming_it_before_anything_is_registered(
        tmp_path: Path, bad: dict[str, Any], said: str) -> None:
    rec = Recording("dev")
    with pytest.raises(Exception, match="invalid GpuCluster arguments") as err:
        program(tmp_path, {**DEV_ARGS, **bad}, into=rec)
    assert said in str(err.value), str(err.value)
    assert not [r for r in rec.resources if r.type in CREATED]


def test_an_existing_clusters_schema_takes_its_kubeconfig_as_an_input() -> None:
    component = Analyzer("gpu-platform").analyze([ExistingCluster])["component_definitions"]["ExistingCluster"]
    assert set(component.inputs) == {"kubeconfig", "clusterName", "kubernetesVersion", "autoscaler"}
    assert {k for k, p in component.inputs.items() if not p.plain} == {"kubeconfig"}  # another stack's output
    assert set(component.outputs) == {"clusterName", "kubernetesVersion", "kubeconfig"}


def test_an_existing_clusters_bad_version_is_refused_before_its_provider() -> None:
    rec = Recording("components")
    with pytest.raises(Exception, match="invalid ExistingCluster arguments") as err:
        record_components(lambda: ExistingCluster("gpu", {"kubeconfig": MOCK_KUBECONFIG, "cluster_name": "c",
                                                          "kubernetes_version": "1.35.3"}), into=rec)
    assert "kubernetesVersion: '1.35.3' is not a Kubernetes version" in str(err.value)
    assert not rec.of_type("pulumi:providers:kubernetes")
