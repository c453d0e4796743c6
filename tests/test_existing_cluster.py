"""Deploying into a cluster this stack does not create (`cluster.existing`), charts from a mirror (`charts.mirror`)
and a Prometheus of the cluster's own (`monitoring.queryUrl`): each rule with its message, and the recorded graph."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from offline.engine import MOCK_KUBECONFIG, Recording, ReferencedStack, Secret, record_stack
from stackconfig import ConfigError, load_stack_config, secret_config_keys, versions

POOL = {"flavor": "bm3-ai-1xlarge-h100-80-8", "minNodes": 1, "maxNodes": 2,
        "labels": {"platform.gcore-gpu/pool": "gpu"}, "taints": {"nvidia.com/gpu": "present:NoSchedule"}}
EXISTING: dict[str, Any] = {
    "cluster": {"name": "gpu-portal", "version": "v1.34.6", "existing": {"kubeconfigSecret": "portalKubeconfig"}},
    "gpuPool": POOL,
    "workloads": [{"name": "inference", "image": "registry.example.com/app:1.4.2", "maxReplicas": 8}],
}
#: The same as project-key overrides of the dev stack (offline/engine.record_stack): systemPool deleted.
DEV_EXISTING = {"cluster": EXISTING["cluster"], "gpuPool": POOL, "systemPool": None}


def problems_of(raw: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigError) as err:
        load_stack_config(raw)
    return {p.key: f"{p.value!r} {p.message}. Fix: {p.fix}" for p in err.value.problems}


def existing(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(EXISTING)
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        node = raw
        for part in parents:
            node = node.setdefault(part, {})
        if value is ...:
            node.pop(leaf)
        else:
            node[leaf] = value
    return raw


# --- config -------------------------------------------------------------------------------------------------------


def test_an_existing_cluster_needs_no_keypair_project_or_region() -> None:
    cfg = load_stack_config(EXISTING)
    assert cfg.cluster.existing is not None and cfg.cluster.keypair is None
    assert secret_config_keys(cfg) == ["portalKubeconfig"]


def test_a_created_cluster_still_needs_its_keypair() -> None:
    raw = {"cluster": {"name": "gpu-dev", "projectName": "Default", "regionName": "Luxembourg-2"}}
    found = problems_of(raw)
    assert "cluster.keypair" in found and "cluster.existing" in found["cluster.keypair"]


@pytest.mark.parametrize(("existing_block", "fragment"), [
    ({}, "needs exactly one way"),
    ({"kubeconfigSecret": "a", "stackReference": "acme/cluster/prod"}, "needs exactly one way"),
])
def test_the_kubeconfig_is_given_exactly_one_way(existing_block: dict[str, Any], fragment: str) -> None:
    found = problems_of(existing(**{"cluster.existing": existing_block}))
    assert fragment in found["cluster.existing"]


@pytest.mark.parametrize("ref", ["prod", "acme/prod", "acme/gpu cluster/prod", "a/b/c/d"])
def test_a_stack_reference_is_fully_qualified(ref: str) -> None:
    found = problems_of(existing(**{"cluster.existing": {"stackReference": ref}}))
    assert "<organization>/<project>/<stack>" in found["cluster.existing.stackReference"]


@pytest.mark.parametrize(("key", "value"), [
    ("keypair", "team"), ("projectName", "Default"), ("regionId", 76), ("network", "net-1"), ("cni", "cilium"),
    ("autoscaler", {"scan-interval": "20s"}),
])
def test_keys_of_a_created_cluster_are_refused_with_an_existing_one(key: str, value: Any) -> None:
    found = problems_of(existing(**{f"cluster.{key}": value}))
    assert "has no effect with cluster.existing" in found[f"cluster.{key}"]


@pytest.mark.parametrize("key", ["flavor", "minNodes", "maxNodes", "labels", "taints"])
def test_the_existing_gpu_pool_must_be_stated(key: str) -> None:
    found = problems_of(existing(**{f"gpuPool.{key}": ...}))
    assert "must be stated with cluster.existing" in found[f"gpuPool.{key}"]


def test_the_version_must_be_stated_and_may_be_one_gcore_no_longer_offers() -> None:
    assert "must be stated" in problems_of(existing(**{"cluster.version": ...}))["cluster.version"]
    # An older cluster made in the portal is fine as long as the charts support it (v1.33 is in every matrix).
    assert load_stack_config(existing(**{"cluster.version": "v1.33.2"})).cluster.minor == 33
    found = problems_of(existing(**{"cluster.version": "v1.29.4"}))
    assert "supports Kubernetes" in found["charts.gpuOperator"]


@pytest.mark.parametrize(("changes", "key"), [
    ({"systemPool": {"maxNodes": 3}}, "systemPool"),
    ({"protect": True}, "protect"),
    ({"gpuPool.publicIpv4": True}, "gpuPool.publicIpv4"),
])
def test_what_only_a_created_cluster_reads_is_refused(changes: dict[str, Any], key: str) -> None:
    assert "has no effect with cluster.existing" in problems_of(existing(**changes))[key]


# --- graph ------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def portal() -> Recording:
    return record_stack("dev", DEV_EXISTING)


def test_nothing_of_the_cluster_is_created(portal: Recording) -> None:
    assert not [r for r in portal.resources if r.type.startswith("gcore:")]
    assert not portal.invokes
    assert portal.get("gpu", "gpu-platform:index:ExistingCluster")


def test_the_provider_takes_the_secret_kubeconfig_and_everything_else_uses_it(portal: Recording) -> None:
    provider = portal.get("gpu-provider", "pulumi:providers:kubernetes")
    assert isinstance(provider.inputs["kubeconfig"], Secret)
    assert provider.inputs["enableServerSideApply"] == "true"
    in_cluster = [r for r in portal.resources if r.type.startswith("kubernetes:")]
    assert in_cluster and {r.provider_name for r in in_cluster} == {"gpu-provider"}


def test_the_outputs_describe_the_existing_cluster(portal: Recording) -> None:
    out = portal.outputs
    assert (out["clusterName"], out["clusterId"], out["kubernetesVersion"]) == ("gpu-portal", None, "v1.34.6")
    assert "kubeconfig" in portal.secret_outputs
    assert out["gpuPool"]["labels"] == POOL["labels"] and out["gpuPool"]["gpusPerNode"] == 8


def test_a_stack_reference_gives_the_kubeconfig_and_it_stays_secret() -> None:
    ref = "acme/gpu-cluster/prod"
    overrides = {**DEV_EXISTING, "cluster": {**EXISTING["cluster"], "existing": {"stackReference": ref}}}
    rec = record_stack("dev", overrides, stack_references={
        ref: ReferencedStack({"kubeconfig": MOCK_KUBECONFIG}, frozenset({"kubeconfig"}))})
    provider = rec.get("gpu-provider", "pulumi:providers:kubernetes")
    assert isinstance(provider.inputs["kubeconfig"], Secret) and provider.inputs["kubeconfig"].value == MOCK_KUBECONFIG
    # A StackReference is read, not registered: the provider's kubeconfig depends on it.
    (dependency,) = provider.property_dependencies["kubeconfig"]
    assert dependency.endswith(f"pulumi:pulumi:StackReference::{ref}")


# --- charts.mirror ---------------------------------------------------------------------------------------------------


def archives(directory: Path) -> Path:
    for chart in (versions.GPU_OPERATOR, versions.KEDA, versions.KUBE_PROMETHEUS_STACK):
        (directory / chart.archive(chart.default_version)).write_bytes(b"")
    return directory


def test_a_directory_mirror_installs_each_release_from_its_archive(tmp_path: Path,
                                                                    record: Callable[..., Recording]) -> None:
    rec = record("dev", charts={"mirror": str(archives(tmp_path))})
    for name, chart in (("gpu-operator-release", versions.GPU_OPERATOR), ("keda-release", versions.KEDA),
                        ("monitoring-release", versions.KUBE_PROMETHEUS_STACK)):
        inputs = rec.get(name).inputs
        assert inputs["chart"] == str(tmp_path / chart.archive(chart.default_version))
        assert "repositoryOpts" not in inputs and "version" not in inputs  # the file is the version


def test_a_repository_or_oci_mirror_keeps_the_version_pin(record: Callable[..., Recording]) -> None:
    rec = record("dev", charts={"mirror": "https://charts.example.com/gpu"})
    keda = rec.get("keda-release").inputs
    assert (keda["chart"], keda["version"], keda["repositoryOpts"]["repo"]) == (
        "keda", "2.20.2", "https://charts.example.com/gpu")
    rec = record("dev", charts={"mirror": "oci://registry.example.com/charts/"})
    keda = rec.get("keda-release").inputs
    assert (keda["chart"], keda["version"]) == ("oci://registry.example.com/charts/keda", "2.20.2")
    assert "repositoryOpts" not in keda


def test_a_mirror_missing_an_archive_names_it_and_the_command_that_fetches_it(tmp_path: Path) -> None:
    archives(tmp_path)
    (tmp_path / versions.KEDA.archive("2.20.2")).unlink()
    found = problems_of({**EXISTING, "charts": {"mirror": str(tmp_path)}})
    assert "keda-2.20.2.tgz" in found["charts.mirror"]
    assert "helm pull keda --repo https://kedacore.github.io/charts --version 2.20.2" in found["charts.mirror"]


@pytest.mark.parametrize(("mirror", "fragment"), [
    ("charts", "relative path"), ("/no/such/dir", "not a directory"), ("s3://bucket/charts", "cannot pull"),
])
def test_a_mirror_helm_cannot_use_is_refused(mirror: str, fragment: str) -> None:
    assert fragment in problems_of({**EXISTING, "charts": {"mirror": mirror}})["charts.mirror"]


# --- monitoring.queryUrl --------------------------------------------------------------------------------------------


def test_keda_queries_the_given_prometheus(record: Callable[..., Recording]) -> None:
    url = "http://thanos-query.observability:9090"
    rec = record("dev", monitoring={"queryUrl": url + "/"})
    (so,) = rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert {t["metadata"]["serverAddress"] for t in so.inputs["spec"]["triggers"]} == {url}
    assert rec.outputs["prometheusUrl"] == url


@pytest.mark.parametrize("url", ["thanos:9090", "ftp://x", "http://"])
def test_a_query_url_that_is_not_http_is_refused(url: str) -> None:
    assert "http(s) URL" in problems_of({**EXISTING, "monitoring": {"queryUrl": url}})["monitoring.queryUrl"]
