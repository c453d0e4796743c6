"""Stack files that validated and then failed at `pulumi up` or in production (issue 17): each is refused now, with
the key, the value and the fix."""

from __future__ import annotations



import pytest

from stacknames import KUBERNETES_NAMESPACES, RESERVED_NAMESPACES
from tests.test_config import config, problems


@pytest.mark.parametrize("namespace", [*KUBERNETES_NAMESPACES, "kube-flannel", *RESERVED_NAMESPACES])
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


