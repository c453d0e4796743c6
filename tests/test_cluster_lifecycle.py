"""Day-two traps of the cluster (issue 17): its Pulumi names never come from `cluster.name`, so a rename changes an
input, not a URN; the preview guard pairs a cluster renamed with an alias; destroy takes what runs in it along."""

from __future__ import annotations

import copy
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from delivery import guard
from offline.engine import RecordedResource, Recording
from offline.plan import build_plan
from stacknames import CLUSTER_COMPONENT, CLUSTER_TYPE
from tests.conftest import CLUSTER_RESOURCE, PROVIDER_RESOURCE, cluster_name

PROJECT = "gpu-autoscaling"
COMPONENT_TYPE = "gpu-platform:index:GpuCluster"
PROVIDER_TYPE = "pulumi:providers:kubernetes"


def urn(stack: str, parent_type: str | None, type_: str, name: str) -> str:
    chain = f"{parent_type}${type_}" if parent_type else type_
    return f"urn:pulumi:{stack}::{PROJECT}::{chain}::{name}"


def former_urns(stack: str, name: str) -> dict[str, str]:
    """The URNs of the cluster's parts were the component named after the cluster (another Pulumi name)."""
    return {
        "component": urn(stack, None, COMPONENT_TYPE, name),
        "cluster": urn(stack, COMPONENT_TYPE, CLUSTER_TYPE, f"{name}-cluster"),
        "provider": urn(stack, COMPONENT_TYPE, PROVIDER_TYPE, f"{name}-provider"),
    }


def parts(rec: Recording) -> dict[str, RecordedResource]:
    return {"component": rec.get(CLUSTER_COMPONENT, COMPONENT_TYPE), "cluster": rec.get(CLUSTER_RESOURCE, CLUSTER_TYPE),
            "provider": rec.get(PROVIDER_RESOURCE, PROVIDER_TYPE)}


def test_the_logical_names_are_fixed(rec: Recording) -> None:
    assert {k: r.name for k, r in parts(rec).items()} == {
        "component": "gpu", "cluster": "gpu-cluster", "provider": "gpu-provider"}
    assert parts(rec)["cluster"].inputs["name"] == cluster_name(rec)


def test_a_rename_changes_the_name_input_not_the_urns(record: Callable[..., Recording], rec: Recording) -> None:
    """Renaming `cluster.name` is then what Gcore makes of a new name: a replacement of the same resource
    (delete first, since two clusters cannot share a name; refused up front when `protect` is on)."""
    base = copy.deepcopy(dict(rec.get(CLUSTER_RESOURCE).inputs))
    stack_file_cluster = {k: v for k, v in _stack_cluster(rec).items()}
    renamed = record(rec.stack, cluster={**stack_file_cluster, "name": "gpu-renamed"})
    before, after = parts(rec), parts(renamed)
    assert {k: r.urn for k, r in before.items()} == {k: r.urn for k, r in after.items()}
    cluster = after["cluster"]
    assert cluster.inputs["name"] == "gpu-renamed" and base["name"] == cluster_name(rec)
    assert {k: v for k, v in cluster.inputs.items() if k != "name"} == {k: v for k, v in base.items() if k != "name"}
    assert cluster.options["deleteBeforeReplace"]
    # Every in-cluster resource still goes through the same provider: nothing else is replaced.
    in_cluster = [r for r in renamed.resources if r.type.startswith("kubernetes:")]
    assert in_cluster and {r.provider_name for r in in_cluster} == {PROVIDER_RESOURCE}


def _stack_cluster(rec: Recording) -> dict[str, Any]:
    import yaml

    from tests.conftest import ROOT

    text = (ROOT / f"Pulumi.{rec.stack}.yaml").read_text()
    return dict(yaml.safe_load(text)["config"]["gpu-autoscaling:cluster"])


def test_the_guard_pairs_a_cluster_renamed_with_an_alias(rec: Recording) -> None:
    """delivery.guard pairs the cluster of the base branch's plan with a head cluster under another Pulumi name that
    carries an alias to it (name and parent): no 'would delete it'. Without the alias it blocks."""
    head = build_plan(rec)
    base = copy.deepcopy(head)
    old = former_urns(rec.stack, cluster_name(rec))
    (base_cluster,) = [r for r in base["resources"] if r["type"] == CLUSTER_TYPE]
    base_cluster["name"] = old["cluster"].rsplit("::", 1)[1]
    base_cluster["parent"] = f"{COMPONENT_TYPE}::{cluster_name(rec)}"
    (head_cluster,) = [r for r in head["resources"] if r["type"] == CLUSTER_TYPE]
    assert [f.blocking for f in guard.check_plans(base, head)] == [True, False]
    head_cluster.setdefault("options", {})["aliases"] = [{"name": base_cluster["name"],
                                                          "parent": base_cluster["parent"]}]
    assert guard.check_plans(base, head) == []


# --- destroy: what runs in the cluster goes with it ----------------------------------------------------------------


def test_every_in_cluster_resource_is_deleted_with_the_cluster(rec: Recording) -> None:
    """Destroying (or replacing) the cluster skips the one-by-one deletes of releases, namespaces and custom
    resources, which can hang on finalizers against an API server that is going away."""
    cluster = rec.get(CLUSTER_RESOURCE, CLUSTER_TYPE)
    in_cluster = [r for r in rec.resources if r.type.startswith("kubernetes:")]
    assert len(in_cluster) > 15
    assert {r.options["deletedWith"] for r in in_cluster} == {cluster.urn}
    # Not the cluster itself, its provider, the components or the engine's Stash: nothing in the cluster.
    outside = [r for r in rec.resources if not r.type.startswith("kubernetes:")]
    assert outside and all(not r.options["deletedWith"] for r in outside)
    # The order while the cluster lives is untouched: ScaledObjects still go before KEDA.
    keda = rec.get("keda-release")
    assert all(so.depends_on(keda) for so in rec.resources if so.type == "kubernetes:keda.sh/v1alpha1:ScaledObject")


def test_nothing_is_deleted_with_a_cluster_this_stack_did_not_create(record: Callable[..., Recording]) -> None:
    from tests.test_existing_cluster import DEV_EXISTING  # dev deploying into a portal-made cluster

    portal = record("dev", **DEV_EXISTING)
    assert portal.of_type("gpu-platform:index:ExistingCluster") and not portal.of_type(CLUSTER_TYPE)
    assert all(not r.options["deletedWith"] for r in portal.resources)


def test_what_owns_something_outside_the_cluster_is_still_deleted_on_its_own() -> None:
    """A Gcore load balancer behind a Service, a Gcore volume behind a claim: their deletes release them."""
    import pulumi

    from components.kube import deleted_with

    cluster: Any = object()
    transform = deleted_with(cluster)

    def marked(type_: str, props: dict[str, Any]) -> bool:
        args = pulumi.ResourceTransformArgs(True, type_, "x", props, pulumi.ResourceOptions())
        result = transform(args)
        assert not isinstance(result, Awaitable)
        return result is not None and result.opts.deleted_with is cluster

    assert marked("kubernetes:core/v1:Service", {"spec": {"type": "ClusterIP"}})
    assert marked("kubernetes:helm.sh/v3:Release", {})
    assert not marked("kubernetes:core/v1:Service", {"spec": {"type": "LoadBalancer"}})
    assert not marked("kubernetes:core/v1:PersistentVolumeClaim", {})
    assert not marked("gpu-platform:workloads:GpuWorkload", {})


# --- CRDs across chart upgrades and replacements ----------------------------------------------------------------


@pytest.mark.charts
def test_replacing_the_keda_release_keeps_its_crds_and_so_every_scaled_object(rec: Recording) -> None:
    """KEDA ships its CRDs as templates: without the keep policy, uninstalling or replacing the release deletes
    them, and Kubernetes deletes every ScaledObject with the CRD."""
    from tests.chart_cache import rendered_stack

    crds = rendered_stack(rec).release("keda").crds
    assert {c["metadata"]["name"] for c in crds} >= {"scaledobjects.keda.sh", "triggerauthentications.keda.sh"}
    for crd in crds:
        assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep", crd["metadata"]["name"]


@pytest.mark.charts
def test_a_kube_prometheus_stack_bump_upgrades_its_crds(rec: Recording) -> None:
    """Helm never upgrades `crds/`: the chart's own hook job applies the pinned chart's CRDs server-side before each
    install and upgrade, with pinned images (busybox here, kubectl at the cluster's version)."""
    import base64
    import bz2

    from tests.chart_cache import rendered_stack

    stack = rendered_stack(rec)
    kps = stack.release("kube-prometheus-stack")
    jobs = [o for o in kps.objects if o["kind"] == "Job" and o["metadata"]["name"].endswith("crds-upgrade")]
    (job,) = jobs
    assert job["metadata"]["annotations"]["helm.sh/hook"].split(",")[:2] == ["pre-install", "pre-upgrade"]
    pod = job["spec"]["template"]["spec"]
    images = [c["image"] for c in [*pod["initContainers"], *pod["containers"]]]
    assert images == ["docker.io/busybox:1.37.0", f"registry.k8s.io/kubectl:{stack.kube_version}"]
    assert pod["containers"][0]["args"][:3] == ["apply", "--server-side", "--force-conflicts"]
    # What it applies is exactly the CRDs of the pinned chart's crds/ directory.
    (data,) = [o for o in kps.objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("crds-upgrade")]
    text = bz2.decompress(base64.b64decode(data["binaryData"]["crds.bz2"])).decode()
    # The names only (the CRDs hold `- =` enum values that YAML 1.1 readers refuse): each document's metadata.name.
    applied = [m.group(1) for doc in re.split(r"^---", text, flags=re.M) if "kind: CustomResourceDefinition" in doc
               for m in [re.search(r"^metadata:\n(?:  .*\n)*?  name: (\S+)", doc, re.M)] if m]
    assert sorted(applied) == sorted(c["metadata"]["name"] for c in kps.crds)
    assert len(applied) >= 10


def test_every_documented_refresh_of_in_cluster_resources_runs_the_program() -> None:
    """A plain `pulumi refresh` does not re-run the kubeconfig invoke; only `--run-program` does (the CLI's own help,
    v3.274.1). The refreshes that only settle a pending create of the cluster have no in-cluster resources yet."""
    from tests.conftest import ROOT

    docs = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    texts = [doc.read_text().replace("\\\n", " ") for doc in docs]  # a command continued with `\` is one line
    commands = [line.strip() for text in texts for line in text.splitlines() if re.match(r"\s*pulumi refresh\b", line)]
    assert commands
    for command in commands:
        if "pending-creates" in command:
            continue
        assert "--run-program" in command, command
    text = (ROOT / "docs" / "design.md").read_text()
    assert "`pulumi refresh`\n  re-reads it" not in text
