"""How the chains drive the real cluster-autoscaler (e2e/pool_autoscaler.py, e2e/cluster_autoscaler.py), without
it: the flags it is given for a run, and what is read back from its log (its decisions and the timers the what-if
starts from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.cluster_autoscaler import ClusterAutoscaler, go_time
from e2e.pool_autoscaler import run_flags

#: Main loops of cluster-autoscaler 1.35.2 at --v=4, with TZ=UTC: the scale-up lines from a run of the autoscaling
#: suite, the others in the formats of core/static_autoscaler.go, core/scaledown/unneeded/nodes.go and
#: core/scaledown/actuation/actuator.go (the recorded timeline holds the scale-downs a run read with them).
LOG = Path(__file__).parent / "fixtures" / "autoscaling" / "cluster-autoscaler.log"


@pytest.fixture
def ca() -> ClusterAutoscaler:
    return ClusterAutoscaler(kube=None, groups=[], flags={}, log=LOG, year=2026)  # type: ignore[arg-type]


def test_its_decisions_are_its_own_log_lines_not_their_event_echoes(ca: ClusterAutoscaler) -> None:
    decisions = ca.decisions()
    assert [(d["event"], d.get("size"), d.get("node")) for d in decisions] == [
        ("scale-up", 2, None), ("scale-down", None, "gpu-wsw9q"), ("scale-down", None, "gpu-abcde")]
    assert [d.get("empty") for d in decisions[1:]] == [True, False]
    assert decisions[0]["t"] == pytest.approx(go_time("2026-12-04 03:37:04.041903 +0000 UTC"), abs=1e-5)


def test_the_timers_are_those_of_the_last_loop_that_planned_a_scale_down_before_the_moment(
        ca: ClusterAutoscaler) -> None:
    before = ca.memory(go_time("2026-12-04 03:39:00 +0000 UTC"))
    assert before.last_scale_up == before.last_delete == float("-inf") and not before.unneeded_since
    first = ca.memory(go_time("2026-12-04 03:40:00.2 +0000 UTC"))
    assert first.last_scale_up == pytest.approx(go_time("2026-12-04 03:37:04.041903385 +0000 UTC"))
    assert first.last_delete == go_time("2026-12-04 02:26:55.626593385 +0000 UTC")
    assert first.unneeded_since == {"gpu-wsw9q": go_time("2026-12-04 03:39:50.5 +0000 UTC")}
    # The next loop logged no unneeded node: none is remembered any more.
    assert ca.memory(go_time("2026-12-04 03:40:01 +0000 UTC")).unneeded_since == {}


def test_go_times_keep_their_fraction() -> None:
    assert go_time("2026-12-04 03:40:00.5 +0000 UTC") - go_time("2026-12-04 03:40:00 +0000 UTC") == 0.5


def test_every_timing_flag_is_divided_and_a_node_counts_as_starting_through_its_provisioning() -> None:
    flags = run_flags({"max-node-provision-time": "35m", "scale-down-unneeded-time": "35m",
                       "expendable-pods-priority-cutoff": "-10"}, 30)
    assert flags["max-node-provision-time"] == "70000ms"
    assert flags["scale-down-unneeded-time"] == "70000ms"
    # Defaults the stack leaves unset, divided too.
    assert flags["scan-interval"] == "333ms"
    assert flags["scale-down-delay-after-add"] == "20000ms"
    assert flags["unremovable-node-recheck-timeout"] == "10000ms"
    assert flags["max-graceful-termination-sec"] == "20"
    # (35 + 15) minutes / 30: the boot hidden by a late registration, then CA's 15 minutes for a registered node.
    assert flags["max-node-startup-time"] == "100000ms"
    assert flags["expendable-pods-priority-cutoff"] == "-10"
    assert "max-inactivity" not in flags and "max-failing-time" not in flags
