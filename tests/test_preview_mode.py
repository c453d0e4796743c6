"""The program as `pulumi preview` of a new stack evaluates it: every id and computed value unknown (issue 14).

Mocks run with `preview=False` elsewhere in the suite; here they answer as a provider previewing a create does, so
code that needs a known kubeconfig or cluster id at preview time shows up: a resource made inside an `apply` on one
would be missing from the preview's graph, and a plain-Python use of one would raise.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from offline.engine import UNKNOWN, Recording, Secret, record_program, record_stack
from tests.conftest import STACKS


def shape(rec: Recording) -> set[tuple[str, str, str, tuple[str, ...]]]:
    """The graph without values: each resource's URN, parent, provider and dependencies."""
    return {(r.urn, r.parent, r.provider_name, tuple(sorted(r.dependencies))) for r in rec.resources}


@pytest.fixture(params=STACKS, scope="module")
def both(request: pytest.FixtureRequest) -> tuple[Recording, Recording]:
    return record_stack(request.param), record_stack(request.param, preview=True)


def test_the_preview_registers_the_same_graph_as_the_update(both: tuple[Recording, Recording]) -> None:
    update, preview = both
    assert shape(preview) == shape(update)


def test_the_kubeconfig_is_unknown_in_a_preview_and_never_looked_up(both: tuple[Recording, Recording]) -> None:
    _, preview = both
    assert preview.invokes == []  # the lookup waits for the cluster, which a preview does not create
    (provider,) = [r for r in preview.resources if r.type == "pulumi:providers:kubernetes"]
    assert provider.inputs["kubeconfig"] == Secret(UNKNOWN)
    assert "clusterId" not in {k for k, v in preview.outputs.items() if v is not None}


def test_a_resource_made_from_a_computed_value_is_caught(tmp_path: Path) -> None:
    """The check above fails for a program that creates a resource only once a cluster id is known."""
    (tmp_path / "Pulumi.yaml").write_text("name: probe\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(textwrap.dedent("""
        import pulumi
        import pulumi_gcore as gcore

        cluster = gcore.K8sv2("c", name="c", keypair="k", version="v1.35.3",
                              pools=[gcore.K8sv2PoolArgs(name="p", flavor_id="f", min_node_count=1)])
        cluster.id.apply(lambda i: pulumi.CustomResource("probe:index:Child", f"child-of-{i}", {}))
    """))
    update = record_program(tmp_path, "dev")
    preview = record_program(tmp_path, "dev", preview=True)
    assert shape(preview) != shape(update)
    assert {r.name for r in update.resources} - {r.name for r in preview.resources} == {"child-of-c"}
