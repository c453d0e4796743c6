"""A recorded run of e2e/test_serving_chain.py (the serving profile on the real KEDA and HPA), replayed through the
checks that suite makes (e2e/serving_checks.py), and each check shown to fail on an HPA that breaks its rule.

The recording is `$E2E_OUT/serving-timeline.json` of a run on the toolchain (`bash scripts/e2e.sh serving`),
copied to tests/fixtures/serving_chain/: each scenario keeps the HPA's readings (its desired and current counts,
the value it read from each trigger, the Ready and loading pods). A change to the checks that stops them catching
the broken HPAs below fails here without the toolchain.

The same recording calibrates the what-if's latency trigger (capacity/service.py): the engines' model rows it kept
(demand and Ready GPUs every 5 s) are fed through `Service` on the recording's own clock, and its trigger value
must follow the value the real HPA read, queue memory included.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from capacity.config import read_stack_file
from capacity.service import ServiceModel
from e2e import serving_checks as checks
from e2e import timescale
from e2e.serving_checks import SIZING, Reading
from renderers.serving_profile import LATENCY_TRIGGER
from stackconfig import load_stack_config
from stackconfig.serving import ServingConfig
from tests.vllm_history import PROFILE

RECORDING = Path(__file__).parent / "fixtures" / "serving_chain" / "serving-timeline.json"


def doc() -> dict[str, Any]:
    return dict(json.loads(RECORDING.read_text()))


def scenario(name: str) -> dict[str, Any]:
    return next(s for s in doc()["scenarios"] if s["scenario"] == name)


def readings(name: str) -> list[Reading]:
    return [Reading.from_json(r) for r in scenario(name)["notes"]["hpaReadings"]]


def held() -> float:
    """Dev's scale-down stabilisation window on the run's clock, plus the HPA's sync and the trace's sampling."""
    w = load_stack_config(read_stack_file("dev")).workloads[0]
    return w.scale_down_stabilization_seconds / timescale.FACTOR + 1.0


def test_the_recorded_rise_sized_every_round_by_the_pods_that_serve() -> None:
    r = readings("rising")
    assert checks.starting_windows(r), "no pod loaded its model in the recording"
    assert checks.rounds_while_loading(r), "the recording has no round ordered while pods loaded"
    assert not checks.counted_loading_pods(r, held())
    assert not checks.unexplained_rounds(r)


def test_an_hpa_that_counts_loading_pods_as_serving_ones_is_caught() -> None:
    """Such an HPA asks ceil(value × all replicas) while pods load (an AverageValue trigger on replicas × ratio
    behaves so): more than the serving pods' ask."""
    def counting(x: Reading) -> Reading:
        if x.starting == 0:
            return x
        v = max((x.values[n] for n in SIZING if n in x.values), default=0.0)
        return replace(x, desired=max(x.desired, math.ceil(v * (x.ready + x.starting))))
    assert checks.counted_loading_pods([counting(x) for x in readings("rising")], held())


def test_a_second_round_for_the_same_signal_is_caught() -> None:
    """One more pod ordered in the middle of the first start-up, with the same values from the same pods."""
    r = readings("rising")
    w0, w1 = checks.starting_windows(r)[0]
    i = next(i for i, x in enumerate(r) if x.t > (w0 + w1) / 2)
    # The signal and the pods exactly as when the HPA set the count it holds.
    set_at = next(x for k, x in reversed(list(enumerate(r[:i]))) if k == 0 or r[k - 1].desired != x.desired)
    # Beyond what the HPA recommended then (a round up to that is the rest of the ask, held by the policy).
    extra = replace(set_at, t=(r[i - 1].t + r[i].t) / 2,
                    desired=max(r[i - 1].desired, set_at.recommendation()) + 1)
    again = [*r[:i], extra, *[replace(x, desired=max(x.desired, extra.desired)) for x in r[i:]]]
    assert checks.unexplained_rounds(again)


def test_the_rest_of_an_ask_held_back_by_the_scale_up_policy_is_not_a_second_round() -> None:
    """As on a CI run: the HPA asked 8 (ceil(2.483 × 3 serving)) but the policy let 7 through; the 8th came a sync
    later with the same values from the same pods."""
    values = {"latency-objective": 2.483, "queue-depth": 2.0, "kv-cache": 1.094}
    r = [Reading(0.0, 3, 3, 3, 0, values), Reading(1.0, 7, 5, 3, 4, values), Reading(4.0, 8, 7, 3, 5, values)]
    assert not checks.unexplained_rounds(r)
    assert checks.unexplained_rounds([*r[:2], replace(r[2], desired=9)])


def test_the_recorded_scale_in_waited_for_the_stabilisation_window() -> None:
    r = readings("removed")
    lower, down = checks.first_lower_recommendation(r), checks.first_scale_down(r)
    assert lower is not None and down is not None
    assert down - lower >= held() - 2.0
    assert r[-1].desired == 1 and all(v == 0.0 for v in r[-1].values.values())


def test_a_scale_in_without_the_window_is_caught() -> None:
    """An HPA without the stabilisation window follows its recommendation at once."""
    r = readings("removed")
    lower = checks.first_lower_recommendation(r)
    assert lower is not None
    eager = [replace(x, desired=max(1, min(x.desired, x.recommendation()))) if x.t >= lower else x for x in r]
    down = checks.first_scale_down(eager)
    assert down is not None and down - lower < held() - 2.0


@pytest.mark.parametrize("band_value", [None, 1.2, 0.8])
def test_the_steady_state_held_the_band_and_leaving_it_is_caught(band_value: float | None) -> None:
    """The recording's latency trigger read the band's 1 throughout; a value out of the HPA's tolerance (a band
    that puts healthy latency above or below it) is caught."""
    r = readings("steady")
    assert len({x.desired for x in r}) == 1
    if band_value is None:
        assert not checks.left_the_band(r, LATENCY_TRIGGER)
    else:
        moved = [replace(x, values={**x.values, LATENCY_TRIGGER: band_value}) for x in r]
        assert checks.left_the_band(moved, LATENCY_TRIGGER)


# --- the what-if's latency trigger against the real one ------------------------------------------------------


def recorded_model() -> ServiceModel:
    """The profile the recorded run deployed: tests/vllm_history.py PROFILE with the run's band."""
    profile = copy.deepcopy(PROFILE)
    profile["band"] = doc()["band"]
    model = ServiceModel.from_config(ServingConfig.model_validate(profile), checks.SCRAPE)
    assert model is not None
    return model


def misfits(model: ServiceModel, name: str) -> list[str]:
    scenarios = doc()["scenarios"]
    series = checks.trigger_replay(model, scenarios, float(scenarios[0]["title"].split(" ")[0]))
    return checks.trigger_misfits(series, scenario(name), LATENCY_TRIGGER)


def test_the_what_ifs_latency_trigger_follows_the_real_one_through_the_queue_and_after_it() -> None:
    """The rise (one replica queueing), the clamp while it queues, and the ~100 s after the queue has gone during
    which the real trigger still asked for more (the overshoot to 8 replicas where 4 suffice)."""
    sc = scenario("rising")
    queue_gone = next(r[0] for r in sc["notes"]["model"] if r[3] == 0.0) - sc["start"]
    last_high = max(x.t for x in readings("rising") if x.values[LATENCY_TRIGGER] > 1.0 + checks.SLACK) - sc["start"]
    assert last_high - queue_gone > 60, "the recording has no memory of the queue to calibrate against"
    assert not misfits(recorded_model(), "rising")


@pytest.mark.parametrize("name", ["rising", "removed"])
def test_an_instant_p90_misses_the_memory_the_real_trigger_had(name: str) -> None:
    """The what-if before this calibration took the P90 of the instant (a span of one second): after the queue
    its trigger falls back into the band a minute before the real one did, and with the load removed it reads 0
    while the real one still reads the band."""
    assert misfits(replace(recorded_model(), span=1.0), name)


@pytest.mark.parametrize("name", ["steady", "removed"])
def test_the_what_ifs_latency_trigger_follows_the_real_one_when_steady_and_when_idle(name: str) -> None:
    assert not misfits(recorded_model(), name)
