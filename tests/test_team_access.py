"""Teams (`teams:` in a stack file; gpu_platform's TeamAccess): each team's namespace gets a GPU quota and a
deployer allowed what GpuWorkload creates there and nothing else, and the team a kubeconfig of its own, secret.
That the API server enforces them is e2e/test_lifecycle.py's (a team's program deploys with it; what it may not do
is refused)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from pulumi.provider.experimental.analyzer import Analyzer

from gpu_platform import TeamAccess, TeamAccessArgs
from gpu_platform.team import RULES, team_kubeconfig
from offline.components import record_components
from offline.engine import MOCK_KUBECONFIG, Recording, Secret, placeholder_secrets, record_stack
from stackconfig import ConfigError, load_stack_config
from tests.secret_scan import plain_strings

TEAMS = [{"name": "search", "gpus": 16}, {"name": "ranking", "gpus": 32}]
DEV_CLUSTER = {"name": "gpu-dev", "keypair": "k", "projectName": "Default", "regionName": "Luxembourg-2"}


@pytest.fixture(scope="module")
def with_teams() -> Recording:
    return record_stack("dev", {"teams": TEAMS})


def test_the_schema_takes_the_namespace_and_the_kubeconfig_as_inputs() -> None:
    component = Analyzer("gpu-platform").analyze([TeamAccess])["component_definitions"]["TeamAccess"]
    assert set(component.inputs) == {"namespace", "gpus", "clusterKubeconfig"}
    # Both may be another stack's outputs (a namespace made there, a cluster's kubeconfig).
    assert {k for k, p in component.inputs.items() if not p.plain} == {"namespace", "clusterKubeconfig"}
    assert all(p.description for p in component.inputs.values())
    assert set(component.outputs) == {"namespace", "gpus", "kubeconfig"}


def test_each_team_gets_its_namespace_with_a_gpu_quota_and_no_load_balancer_or_system_priority(
        with_teams: Recording) -> None:
    for team in TEAMS:
        quota = with_teams.get(f"team-{team['name']}-quota").inputs
        assert quota["metadata"]["namespace"] == team["name"]
        assert quota["spec"]["hard"] == {"requests.nvidia.com/gpu": str(team["gpus"]), "services.loadbalancers": "0",
                                         "services.nodeports": "0"}
        system = with_teams.get(f"team-{team['name']}-system-priority").inputs["spec"]
        assert system["hard"] == {"pods": "0"}
        assert system["scopeSelector"]["matchExpressions"][0]["values"] == ["system-node-critical",
                                                                          "system-cluster-critical"]
        namespace = with_teams.get(f"workloads-{team['name']}")
        assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
        # Removing the team revokes its access; what its own stack runs in the namespace stays.
        assert namespace.options["retainOnDelete"] is True
    assert with_teams.get("workloads-gpu-workloads").options["retainOnDelete"] is False
    assert with_teams.outputs["teams"] == {t["name"]: {"namespace": t["name"], "gpus": t["gpus"]} for t in TEAMS}


def test_the_deployer_may_edit_what_a_gpu_workload_creates_and_nothing_cluster_wide(
        with_teams: Recording) -> None:
    """Every kind the platform's own workload is made of (Deployment, PDB, ScaledObject, ...) is in the Role, and
    a workload with a Service, PodMonitor and secrets adds no kind it lacks."""
    role = with_teams.get("team-search-role").inputs
    assert role["metadata"]["namespace"] == "search"
    editable = {(g, r) for rule in role["rules"] if "create" in rule["verbs"]
                for g in rule["apiGroups"] for r in rule["resources"]}
    overrides = {"workloads": [{
        "name": "chat", "namespace": "search", "image": "registry.example.com/chat:1.0", "maxReplicas": 2,
        "ports": [{"name": "http", "port": 8000}], "metrics": {"port": "http"}, "secretEnv": {"TOKEN": "hf-token"},
        "imagePullSecret": {"server": "registry.example.com", "username": "u", "passwordSecret": "registry"}}]}
    serving = record_stack("dev", overrides, secrets={k: "x" for k in placeholder_secrets("dev", overrides)})
    kinds = {r.type for r in serving.resources if r.parent.endswith("::chat")}
    assert len(kinds) == 6, kinds  # Deployment, PDB, ScaledObject, Service, PodMonitor, Secret
    for kind in kinds:
        group_version, resource_kind = kind.removeprefix("kubernetes:").split(":")
        group = group_version.rsplit("/", 1)[0]
        assert ("" if group == "core" else group, resource_kind.lower() + "s") in editable, kind
    binding = with_teams.get("team-search-binding").inputs
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "deployer", "namespace": "search"}]
    assert not [r.name for r in with_teams.resources if r.name.startswith("team-") and r.type.split(":")[-1] in (
        "ClusterRole", "ClusterRoleBinding")]
    # No RBAC, no exec, no namespaces, no nodes: a team cannot widen its own rights or reach outside.
    granted = {r for rule in RULES for r in rule["resources"]}
    assert not granted & {"roles", "rolebindings", "pods/exec", "namespaces", "nodes", "serviceaccounts"}


def test_each_team_gets_a_kubeconfig_of_its_own_secret(with_teams: Recording) -> None:
    assert "teamKubeconfigs" in with_teams.secret_outputs
    admin = yaml.safe_load(MOCK_KUBECONFIG)
    for team in TEAMS:
        config = yaml.safe_load(with_teams.outputs["teamKubeconfigs"][team["name"]])
        assert config["clusters"] == admin["clusters"]  # the server and CA the admin reaches
        (context,) = config["contexts"]
        assert context["context"]["namespace"] == team["name"] and context["name"] == config["current-context"]
        token = with_teams.get(f"team-{team['name']}-token")
        assert token.inputs["type"] == "kubernetes.io/service-account-token"
        assert token.inputs["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "deployer"}
        # The mock token controller's token: base64 in the Secret, plain in the kubeconfig.
        assert config["users"][0]["user"] == {"token": f"token-of-team-{team['name']}-token"}
    assert not [r.name for r in with_teams.resources for text in plain_strings(dict(r.inputs))
                if "token-of-team" in text]


def test_the_token_waits_for_its_account_and_the_kubeconfig_for_the_rights(with_teams: Recording) -> None:
    """Kubernetes' token controller deletes a token Secret whose ServiceAccount does not exist yet."""
    account = with_teams.get("team-search-account")
    assert account.urn in with_teams.get("team-search-token").dependencies
    assert with_teams.get("team-search-role").urn in with_teams.get("team-search-binding").dependencies


def record_team(args: dict[str, Any], into: Recording | None = None) -> Recording:
    arguments = cast(TeamAccessArgs, {"cluster_kubeconfig": MOCK_KUBECONFIG, **args})
    return record_components(lambda: TeamAccess("team", arguments), into=into)[0]


@pytest.mark.parametrize("args, said", [
    ({"namespace": "gpu-headroom", "gpus": 4}, "namespace: 'gpu-headroom' is the platform's headroom namespace"),
    ({"namespace": "search", "gpus": -1}, "gpus: -1"),
    ({"namespace": "search", "gpus": 1.5}, "gpus: 1.5"),
    ({"namespace": "kube-system", "gpus": 4}, "namespace: 'kube-system' is created by Kubernetes itself"),
    ({"namespace": "Search", "gpus": 4}, "namespace: 'Search' is not a DNS-1123 label"),
])
def test_a_bad_argument_is_refused_naming_it_before_anything_is_registered(args: dict[str, Any], said: str) -> None:
    rec = Recording("components")
    with pytest.raises(Exception, match="invalid TeamAccess arguments") as err:
        record_team(args, into=rec)
    assert said in str(err.value), str(err.value)
    assert not [r for r in rec.resources if r.type.startswith("kubernetes:")]


def test_a_namespace_given_as_an_output_is_taken_and_the_kubeconfig_is_secret_from_a_plain_one() -> None:
    import pulumi

    def build() -> dict[str, Any]:
        team = TeamAccess("team", {"namespace": pulumi.Output.from_input("search"), "gpus": 4,
                                   "cluster_kubeconfig": MOCK_KUBECONFIG})
        return {"namespace": team.namespace, "gpus": team.gpus, "kubeconfig": team.kubeconfig}

    rec, out = record_components(build)
    assert rec.get("team-quota").inputs["metadata"]["namespace"] == "search"
    assert out["namespace"] == "search" and out["gpus"] == 4
    assert isinstance(out["kubeconfig"], Secret)
    assert yaml.safe_load(out["kubeconfig"].value)["users"][0]["user"] == {"token": "token-of-team-token"}


@pytest.mark.parametrize("teams, workloads, said", [
    ([{"name": "search", "gpus": 4}], [{"name": "a"}],
     "teams[0].name: 'search' is the namespace of this stack's own workload(s) a: the team's credential could read"),
    ([{"name": "search", "gpus": 4}, {"name": "search", "gpus": 8}], [], "teams[1].name: 'search' is already used"),
    ([{"name": "keda", "gpus": 4}], [], "teams[0].name: 'keda' is reserved"),
    ([{"name": "gpu-headroom", "gpus": 4}], [], "teams[0].name: 'gpu-headroom' is the platform's headroom namespace"),
])
def test_the_stack_file_refuses_teams_that_would_break(teams: list[dict[str, Any]],
                                                       workloads: list[dict[str, Any]], said: str) -> None:
    raw = {"cluster": DEV_CLUSTER, "teams": teams,
           "workloads": [{"image": "registry.example.com/a:1", "namespace": "search", "maxReplicas": 2, **w}
                         for w in workloads]}
    with pytest.raises(ConfigError) as err:
        load_stack_config(raw)
    assert said in str(err.value), str(err.value)


def test_a_ca_file_of_the_cluster_kubeconfig_is_inlined_and_a_kubeconfig_without_context_refused(
        tmp_path: Path) -> None:
    """The team's machine has no file of the platform engineer's: its CA goes into the kubeconfig itself."""
    (tmp_path / "ca.crt").write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    admin = yaml.safe_load(MOCK_KUBECONFIG)
    admin["clusters"][0]["cluster"]["certificate-authority"] = str(tmp_path / "ca.crt")
    cluster = yaml.safe_load(team_kubeconfig(yaml.safe_dump(admin), "search", "t"))["clusters"][0]["cluster"]
    assert cluster == {"server": "https://127.0.0.1:6443",
                       "certificate-authority-data": base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()}
    with pytest.raises(ValueError, match="names no current-context"):
        team_kubeconfig(yaml.safe_dump({**admin, "current-context": "elsewhere"}), "search", "t")
