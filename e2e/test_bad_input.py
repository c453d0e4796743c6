"""Config rules that exist to prevent a failing `up`, against a real API server (issue 15).

For each: with the rule, the real engine's `up` stops before any resource is registered, with the key, the value
and the fix; with the rule switched off in the program's process (a prelude the project's `__main__.py` runs
first, realengine.stack.project_dir), the real server or engine fails where the rule said it would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from pulumi.automation import CommandError

from e2e.harness import Kube, platform
from realengine.stack import LocalStack
from realengine.toolchain import Toolchain

HTTP = [{"name": "http", "port": 8000}]
#: The workload rules without the one that refuses a second workload of one name.
WITHOUT_DUPLICATE_NAMES = """
import stackconfig.loader as loader
import stackconfig.rules.workloads as rules

original = rules.workload_problems


def without_duplicates(cfg):
    return [p for p in original(cfg) if "is already used by" not in p.message]


loader.RULES = tuple(without_duplicates if r is original else r for r in loader.RULES)
"""


@pytest.fixture
def stack_with(tc: Toolchain, kube: Kube, workdir: Path,
               request: pytest.FixtureRequest) -> Iterator[Callable[..., LocalStack]]:
    """Open dev stacks with stack-file changes (and a prelude, Python the program's process runs first); each is
    destroyed (or removed, if it cannot be) afterwards."""
    with ExitStack() as stack:
        opened: list[LocalStack] = []

        def open_stack(overrides: dict[str, Any], prelude: str = "") -> LocalStack:
            where = workdir / f"bad-{request.node.name[:40]}-{len(opened)}"
            # Into the cluster as an existing one: every object is then deleted one by one on destroy (a created
            # cluster's are deleted with it), which is what shows what the API server does with each.
            ls = stack.enter_context(platform("dev", tc, kube, where, overrides=overrides, existing_cluster=True,
                                              prelude=prelude))
            opened.append(ls)
            return ls

        yield open_stack
        for ls in opened:
            try:
                ls.destroy()
            except CommandError:
                ls.stack.workspace.remove_stack("dev", force=True)


def resources_in_state(ls: LocalStack) -> list[str]:
    deployment = json.loads(json.dumps(ls.stack.export_stack().deployment))
    return [r["type"] for r in deployment.get("resources", []) if r["type"] != "pulumi:pulumi:Stack"]


def refused_before_anything_registers(ls: LocalStack, key: str) -> str:
    with pytest.raises(CommandError) as err:
        ls.up()
    message = str(err.value)
    assert "invalid stack configuration" in message and key in message and "Fix:" in message
    assert resources_in_state(ls) == []
    return message


def test_a_workload_in_namespace_default(stack_with: Callable[..., LocalStack], kube: Kube) -> None:
    overrides = {"gpu-autoscaling:workloads.0.namespace": "default"}
    refused_before_anything_registers(stack_with(overrides), "workloads[0].namespace")
    # Without the rule, the real thing is worse than the AlreadyExists one would expect: pulumi-kubernetes'
    # server-side apply adopts `default` silently, `up` succeeds and stamps the platform's Pod Security level on
    # it (enforced from then on for everything else in `default`), and `destroy` fails, because the API server
    # never deletes `default`; the label stays behind. (Into a cluster the stack created, destroy skips it: every
    # in-cluster resource is deleted with the cluster.)
    ls = stack_with(overrides, prelude="import stackconfig.rules.workloads as rules\n"
                                       "rules.namespace_problem = lambda key, namespace: None")
    assert ls.up().summary.result == "succeeded"
    labels = kube.get("namespace", "default")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
    with pytest.raises(CommandError) as err:
        ls.destroy()
    assert 'namespaces "default" is forbidden: this namespace may not be deleted' in str(err.value)
    left = kube.get("namespace", "default")
    assert left["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    kube.run("label", "namespace", "default", "pod-security.kubernetes.io/enforce-", "app.kubernetes.io/part-of-",
             "app.kubernetes.io/managed-by-")


def test_a_workload_name_that_is_no_service_name(stack_with: Callable[..., LocalStack]) -> None:
    overrides = {"gpu-autoscaling:workloads.0.name": "7b-chat", "gpu-autoscaling:workloads.0.ports": HTTP}
    refused_before_anything_registers(stack_with(overrides), "workloads[0].name")
    # Without the rule the Service named after the workload is refused by the API server's own validation.
    ls = stack_with(overrides, prelude="import re\nimport stackconfig.values as values\n"
                                       "values.DNS_1035_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')")
    with pytest.raises(CommandError) as err:
        ls.up()
    assert 'Service "7b-chat" is invalid' in str(err.value) and "DNS-1035 label" in str(err.value)


def test_two_workloads_with_one_name(stack_with: Callable[..., LocalStack]) -> None:
    second = {"name": "inference", "namespace": "team-b", "image": "registry.example.com/gpu-app:1.4.2",
              "maxReplicas": 4}
    overrides = {"gpu-autoscaling:workloads.0.maxReplicas": 8, "gpu-autoscaling:workloads.1": second}
    refused_before_anything_registers(stack_with(overrides), "workloads[1].name")
    # Without the rule both register the same resources: the engine refuses the second of each name.
    ls = stack_with(overrides, prelude=WITHOUT_DUPLICATE_NAMES)
    with pytest.raises(CommandError) as err:
        ls.up()
    assert "Duplicate resource URN" in str(err.value)
