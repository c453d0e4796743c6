"""Random bad stack configs, grown from the repository's own stack files: a mistake the hand-written cases never
thought of must still come back as a `ConfigError` naming it, never as a traceback, and as the same text on every
run. A fuzzer found both kinds of hole at once (commit 5d6c12a): a workload written as text next to one without an
image raised KeyError, and a rule judged a list refused whole on its empty stand-in, or not, by PYTHONHASHSEED."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackconfig import ConfigError, load_stack_config
from stackconfig.stack import SECTIONS
from tests.conftest import ROOT
from tests.test_pools import stack_file

KeyPath = tuple[str | int, ...]

#: The stack files as `load_stack_config` takes them: dev (one workload, a system pool) and prod (two workloads,
#: probes, ports, schedules, whatIf), the shapes a user copies and edits.
BASES: tuple[dict[str, Any], ...] = (stack_file("dev"), stack_file("prod"))

#: Wrong types, out-of-range numbers, lists where maps go and the reverse, text that looks like a key's value.
VALUES: tuple[Any, ...] = (
    "abc", "", "3", "inference", "http", "v1.35.3", "5m", "0 8 * * 1-5", "x" * 50, "UPPER",
    0, 1, 2, -1, 7, 100, 1000, 3201, 10**9, 0.5, 2.5, True, False, None,
    [], [1], ["a"], [{"name": "x"}], {}, {"a": 1}, {"gpus": 3, "podGpus": 2}, {"port": "http"},
)

SCALARS = tuple(v for v in VALUES if not isinstance(v, list | dict))

#: Workloads appended to the list: one without its required image, one with every type wrong, one on no pool.
WORKLOADS: tuple[dict[str, Any], ...] = (
    {"name": "batch", "maxReplicas": 2},
    {"name": "x", "image": 5, "maxReplicas": "many"},
    {"name": "y", "image": "registry.example.com/a:1", "maxReplicas": 3, "pool": "nope"},
)

#: Every section path with its stack-file keys (`workloads[].probes` -> port, path, ...), for keys the stack files
#: leave out (their defaults are where a rule reads an unchecked value) and for misspellings of them.
SECTION_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (section, tuple(f.alias or name for name, f in model.model_fields.items())) for section, model in SECTIONS.items()
)


def _paths(node: Any, prefix: KeyPath = ()) -> Iterator[KeyPath]:
    if isinstance(node, dict):
        items: Any = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for key, value in items:
        yield (*prefix, key)
        yield from _paths(value, (*prefix, key))


def _parent(raw: dict[str, Any], path: KeyPath) -> Any:
    node: Any = raw
    for part in path[:-1]:
        node = node[part]
    return node


def _section_path(raw: dict[str, Any], section: str, index: int) -> KeyPath | None:
    """`workloads[].probes` as a path into `raw` (list items by `index`), or None if `raw` has no such place."""
    path: list[str | int] = []
    node: Any = raw
    for part in (p for p in section.split(".") if p):
        name = part.removesuffix("[]")
        if not isinstance(node, dict):
            return None
        node = node.setdefault(name, {}) if name == part else node.get(name)
        path.append(name)
        if name != part:
            if not isinstance(node, list) or not node:
                return None
            path.append(index % len(node))
            node = node[index % len(node)]
    return tuple(path) if isinstance(node, dict) else None


@st.composite
def bad_configs(draw: st.DrawFn) -> dict[str, Any]:
    """A stack file with one to four mistakes, each at a place the file has, or a key its sections know."""
    raw = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["set", "set", "drop", "section key", "unknown key", "workload", "text item"]))
        if kind == "text item":  # a list item that is no mapping: `- inference` where `- name: inference` goes
            lists = [node for node in (_parent(raw, p)[p[-1]] for p in _paths(raw)) if isinstance(node, list) and node]
            if lists:
                items = draw(st.sampled_from(lists))
                items[draw(st.integers(0, len(items) - 1))] = draw(st.sampled_from(SCALARS))
            continue
        if kind == "workload":
            workloads = raw.setdefault("workloads", [])
            if isinstance(workloads, list):
                workloads.append(copy.deepcopy(draw(st.sampled_from(WORKLOADS))))
            continue
        if kind in ("section key", "unknown key"):
            section, keys = draw(st.sampled_from(SECTION_KEYS))
            where = _section_path(raw, section, draw(st.integers(0, 1)))
            if where is not None:
                key = draw(st.sampled_from(keys))
                if kind == "unknown key":
                    key = draw(st.sampled_from([key[:-1], key.lower() + "s", "replicas"]))
                _parent(raw, (*where, key))[key] = copy.deepcopy(draw(st.sampled_from(VALUES)))
            continue
        path = draw(st.sampled_from(list(_paths(raw))))
        parent = _parent(raw, path)
        if kind == "drop":
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(VALUES)))
    return raw


def outcome(raw: dict[str, Any]) -> str:
    """What the user sees: the whole error text, or that the config loaded."""
    try:
        load_stack_config(raw)
    except ConfigError as exc:
        assert exc.problems and str(exc).startswith("invalid stack configuration"), exc
        return str(exc)
    return "OK"


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(bad_configs())
def test_a_bad_stack_file_is_refused_with_a_message_never_a_traceback(raw: dict[str, Any]) -> None:
    """Any exception but ConfigError escapes and fails the test; hypothesis shrinks it to the smallest stack file."""
    outcome(raw)


#: Whole lists refused (an item, or the list, of the wrong kind) beside other bad values: the set of dropped keys
#: then has several members, and a rule over the refused list once stood or fell by their set order.
HASH_SAMPLE: tuple[dict[str, Any], ...] = tuple(
    {**base, **changes}
    for base, changes in (
        (BASES[1], {"workloads": [{**BASES[1]["workloads"][0], "requests": 0.6}, 2]}),
        (BASES[1], {"workloads": [{**BASES[1]["workloads"][0], "minReplicas": True}, "0 8 * * 1-5"]}),
        (BASES[1], {"workloads": [{**BASES[1]["workloads"][0], "terminationGracePeriodSeconds": None}, False]}),
        (BASES[1], {"workloads": [{**BASES[1]["workloads"][0], "ports": 5}, BASES[1]["workloads"][1]]}),
        (BASES[0], {"workloads": ["inference", {**BASES[0]["workloads"][0], "name": "b"}],
                    "systemPool": {"maxNodes": {}}}),
        (BASES[0], {"gpuPool": [], "workloads": "inference", "cluster": {**BASES[0]["cluster"], "version": 3}}),
    )
)

_EVALUATE = """
import json, sys
from stackconfig import ConfigError, load_stack_config

def outcome(raw):
    try:
        load_stack_config(raw)
    except ConfigError as exc:
        return str(exc)
    return "OK"

print(json.dumps([outcome(raw) for raw in json.load(sys.stdin)]))
"""


@pytest.mark.subprocess
def test_the_error_text_does_not_depend_on_the_hash_seed() -> None:
    """Set order is the one thing that differs between two runs of the same stack file: the messages must not."""
    here = [outcome(copy.deepcopy(raw)) for raw in HASH_SAMPLE]
    for seed in ("0", "1"):
        result = subprocess.run([sys.executable, "-c", _EVALUATE], input=json.dumps(HASH_SAMPLE), cwd=ROOT,
                                env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True,
                                check=True)
        assert json.loads(result.stdout) == here, f"PYTHONHASHSEED={seed}"
