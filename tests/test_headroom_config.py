"""Headroom and schedule config (issue 8): defaults, the effective placeholder size, and every rule with its
bad value and message. Uses test_config's BASE (one 8-GPU node minimum, two maximum, one 1-GPU workload)."""

from __future__ import annotations

from typing import Any

import pytest

from stackconfig import ConfigError, load_stack_config, packing
from stacknames import HEADROOM_NAMESPACE, HEADROOM_PRIORITY
from tests.test_config import config, problems

WINDOW = {"start": "0 8 * * 1-5", "end": "0 18 * * 1-5", "timezone": "Europe/Luxembourg", "minReplicas": 2}


def with_headroom(headroom: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return config(**{"gpuPool.headroom": headroom}, **changes)


# --- packing.pack -------------------------------------------------------------------------------------


def test_pack_is_first_fit_decreasing() -> None:
    assert packing.pack([1, 2, 4, 1], 8, 1) == [[4, 2, 1, 1]]
    assert packing.pack([4, 4, 2], 8, 2) == [[4, 4], [2]]
    assert packing.pack([], 8, 0) == []
    assert packing.pack([2, 2, 2], 8, 0) is None


def test_pack_refuses_what_does_not_fit() -> None:
    assert packing.pack([8, 1], 8, 1) is None
    assert packing.pack([9], 8, 3) is None
    assert packing.pack([2, 2, 2, 2, 1], 8, 1) is None
    # Decreasing order matters: first-fit in the given order would strand the 4 ([1,2,2,2] then 4 = 11 > 8).
    assert packing.pack([1, 1, 1, 1, 4, 4, 4], 8, 2) == [[4, 4], [4, 1, 1, 1, 1]]


def test_pack_rejects_nonsense_arguments() -> None:
    with pytest.raises(ValueError):
        packing.pack([1], 0, 1)
    with pytest.raises(ValueError):
        packing.pack([-1], 8, 1)


# --- defaults -----------------------------------------------------------------------------------------


def test_no_headroom_by_default_and_a_price_estimate() -> None:
    cfg = load_stack_config(config())
    assert cfg.pools[0].headroom is None
    assert cfg.pools[0].price_per_gpu_hour == 4.0
    assert cfg.workloads[0].schedules == []


def test_placeholder_size_defaults_to_the_largest_workload_pod() -> None:
    raw = with_headroom({"gpus": 4})
    raw["workloads"].append({"name": "batch", "image": "r/b:1", "gpusPerPod": 2, "maxReplicas": 4})
    cfg = load_stack_config(raw)
    assert cfg.headroom_pod_gpus(cfg.pools[0]) == 2
    one = load_stack_config(with_headroom({"gpus": 3, "podGpus": 1}))
    assert one.headroom_pod_gpus(one.pools[0]) == 1
    empty = load_stack_config(config(**{"gpuPool.headroom": {"gpus": 2}, "workloads": []}))
    assert empty.headroom_pod_gpus(empty.pools[0]) == 1


def test_schedules_parse_with_keda_names() -> None:
    raw = with_headroom({"gpus": 1, "schedules": [WINDOW]}, **{"workloads.0.schedules": [WINDOW]})
    cfg = load_stack_config(raw)
    assert cfg.pools[0].headroom is not None
    (window,) = cfg.pools[0].headroom.schedules
    assert (window.start, window.end, window.timezone, window.min_replicas) == (
        "0 8 * * 1-5", "0 18 * * 1-5", "Europe/Luxembourg", 2)
    assert cfg.workloads[0].schedules == [window]
    utc = {k: v for k, v in WINDOW.items() if k != "timezone"}
    headroom = load_stack_config(with_headroom({"gpus": 0, "schedules": [utc]})).pools[0].headroom
    assert headroom is not None and headroom.schedules[0].timezone == "UTC"


def test_headroom_and_schedules_are_frozen() -> None:
    cfg = load_stack_config(with_headroom({"gpus": 2}))
    with pytest.raises(ValueError):
        cfg.pools[0].headroom.gpus = 3  # type: ignore[union-attr,misc]


# --- rules --------------------------------------------------------------------------------------------

RULES = [
    pytest.param(with_headroom({"gpus": 0}),
                 ["gpuPool.headroom.gpus: 0 holds no GPUs and has no schedules", "remove gpuPool.headroom"],
                 id="empty-headroom"),
    pytest.param(with_headroom({"gpus": -1}), ["gpuPool.headroom.gpus: -1 must be at least 0"], id="negative"),
    pytest.param(with_headroom({"gpus": 3, "podGpus": 2}),
                 ["gpuPool.headroom.gpus: 3 is not a whole number of placeholder pods of 2 GPU(s)",
                  "Fix: use 4 or 2"], id="partial-pod"),
    pytest.param(with_headroom({"gpus": 16, "podGpus": 16}),
                 ["gpuPool.headroom.podGpus: 16 exceeds the GPUs of one pool node (8)", "use at most 8"],
                 id="pod-larger-than-node"),
    pytest.param(with_headroom({"gpus": 8}, **{"workloads.0.minReplicas": 2}),
                 ["gpuPool.headroom.gpus: 8 does not fit the pool at minNodes (1 × 8 GPUs)",
                  "lower gpuPool.headroom.gpus to at most 6, or raise gpuPool.minNodes"], id="no-fit-at-min"),
    pytest.param(with_headroom({"gpus": 2, "schedules": [{**WINDOW, "minReplicas": 16}]}),
                 ["gpuPool.headroom.schedules[*].minReplicas: 16 placeholder pods of 1 GPU(s) do not fit the pool "
                  "even at maxNodes (2)"], id="window-beyond-max"),
    pytest.param(with_headroom({"gpus": 2}, **{"cluster.autoscaler": {"expendable-pods-priority-cutoff": 0}}),
                 ["cluster.autoscaler.expendable-pods-priority-cutoff: '0' is above the headroom placeholders' "
                  f"priority ({HEADROOM_PRIORITY})", "never add a node"], id="cutoff-above-placeholders"),
    pytest.param(with_headroom({"gpus": 2}, **{"cluster.autoscaler": {"expendable-pods-priority-cutoff": "low"}}),
                 ["cluster.autoscaler.expendable-pods-priority-cutoff: 'low' is not an integer priority"],
                 id="cutoff-not-a-number"),
    pytest.param(with_headroom({"gpus": 1}, **{"workloads.0.namespace": HEADROOM_NAMESPACE}),
                 [f"workloads[0].namespace: '{HEADROOM_NAMESPACE}' is the namespace of the headroom placeholders"],
                 id="workload-in-headroom-namespace"),
    pytest.param(with_headroom({"gpus": 1, "podGpu": 1}),
                 ["gpuPool.headroom.podGpu", "did you mean 'podGpus'"], id="typo"),
    pytest.param(config(**{"workloads.0.schedules": [{**WINDOW, "end": WINDOW["start"]}]}),
                 ["workloads[0].schedules[0].end: '0 8 * * 1-5' is the same as start"], id="start-equals-end"),
    pytest.param(config(**{"workloads.0.schedules": [{**WINDOW, "start": "0 0 8 * * 1-5"}]}),
                 ["workloads[0].schedules[0].start", "has 6 field(s); KEDA's cron scaler takes 5"], id="six-fields"),
    pytest.param(config(**{"workloads.0.schedules": [{**WINDOW, "start": "0 25 * * *"}]}),
                 ["workloads[0].schedules[0].start", "is out of range"], id="hour-25"),
    pytest.param(config(**{"workloads.0.schedules": [{**WINDOW, "end": "0 18 L * *"}]}),
                 ["workloads[0].schedules[0].end", "field 'L', which is not standard cron"], id="croniter-extension"),
    pytest.param(config(**{"workloads.0.schedules": [{**WINDOW, "timezone": "Europe/Atlantis"}]}),
                 ["workloads[0].schedules[0].timezone: 'Europe/Atlantis' is not a time zone name of "
                  "the IANA database"], id="timezone"),
    pytest.param(config(**{"workloads.0.schedules": [{**WINDOW, "minReplicas": 9}]}),
                 ["workloads[0].schedules[0].minReplicas: 9 is greater than the workload's maxReplicas (8)"],
                 id="window-above-max-replicas"),
    pytest.param(config(**{"workloads.0.schedules": [{**WINDOW, "minReplicas": 0}]}),
                 ["workloads[0].schedules[0].minReplicas: 0 must be at least 1"], id="window-of-zero"),
    pytest.param(config(**{"gpuPool.pricePerGpuHour": 0}), ["gpuPool.pricePerGpuHour: 0 must be greater than 0"],
                 id="price"),
]


@pytest.mark.parametrize(("raw", "expected"), RULES)
def test_rule(raw: dict[str, Any], expected: list[str]) -> None:
    message = problems(raw)
    for part in expected:
        assert part in message, message


def test_a_lower_cutoff_and_a_fitting_headroom_pass() -> None:
    raw = with_headroom({"gpus": 6}, **{"workloads.0.minReplicas": 2,
                                        "cluster.autoscaler": {"expendable-pods-priority-cutoff": -20}})
    assert load_stack_config(raw).pools[0].headroom.gpus == 6  # type: ignore[union-attr]


def test_no_headroom_means_no_cutoff_rule() -> None:
    load_stack_config(config(**{"cluster.autoscaler": {"expendable-pods-priority-cutoff": 0}}))


def test_config_error_lists_every_problem_at_once() -> None:
    raw = with_headroom({"gpus": 3, "podGpus": 2}, **{"workloads.0.schedules": [{**WINDOW, "end": WINDOW["start"]}]})
    with pytest.raises(ConfigError) as exc:
        load_stack_config(raw)
    keys = {p.key for p in exc.value.problems}
    assert keys == {"gpuPool.headroom.gpus", "workloads[0].schedules[0].end"}


def test_a_window_counts_the_workloads_at_their_scheduled_minimum() -> None:
    """Placeholders of a window must fit at maxNodes beside the workloads' *scheduled* minimums (16 GPUs)."""
    fits = with_headroom({"gpus": 1, "schedules": [{**WINDOW, "minReplicas": 6}]},
                         **{"workloads.0.schedules": [{**WINDOW, "minReplicas": 8}]})
    load_stack_config(fits)
    too_many = with_headroom({"gpus": 1, "schedules": [{**WINDOW, "minReplicas": 9}]},
                             **{"workloads.0.schedules": [{**WINDOW, "minReplicas": 8}]})
    assert "scheduled minimum replicas" in problems(too_many)


def test_the_most_placeholders_that_fit_are_found_in_a_few_packs(monkeypatch: pytest.MonkeyPatch) -> None:
    """3,200 placeholders on a pool of 199 nodes at minNodes: the advice names the most that fit beside the
    workload's replica (199 × 8 − 1), found by halving, a pack per halving (one pack per count took 23 s)."""
    from stackconfig.rules import headroom

    packs: list[int] = []
    real_pack = packing.pack

    def counted(*args: Any) -> Any:
        packs.append(1)
        return real_pack(*args)

    monkeypatch.setattr(headroom.packing, "pack", counted)
    message = problems(with_headroom({"gpus": 3200}, **{"gpuPool.minNodes": 199, "gpuPool.maxNodes": 200,
                                                       "workloads.0.maxReplicas": 1600}))
    assert "lower gpuPool.headroom.gpus to at most 1591, or raise gpuPool.minNodes" in message, message
    assert len(packs) <= 2 + 12, len(packs)  # the check itself, then log2(3200) halvings
