"""The e2e suites' watch on the local control plane (e2e/conftest.py `watch_control_plane`): a component that exits
under a test stops the run at once, naming it, instead of leaving the next `pulumi up` waiting out a 46-minute
readiness timeout; the cluster deleted on purpose (every component going, the API server among them) stops nothing.

The pid files are laid out as kwokctl's binary runtime lays them out (`clusters/<name>/pids/<component>.pid`), with
real pids: this process's (alive) and one no process has (gone).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from e2e import conftest as e2e_fixtures
from realengine import cluster

ALIVE = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok-controller")


def exited_pid() -> int:
    """A pid no process has now (the highest free one below the kernel's limit)."""
    pid = int(Path("/proc/sys/kernel/pid_max").read_text()) - 1
    while Path(f"/proc/{pid}").exists():
        pid -= 1
    return pid


def lay_out(root: Path, gone: tuple[str, ...]) -> None:
    pids = root / "clusters" / "c" / "pids"
    pids.mkdir(parents=True)
    for component in (*ALIVE, "kube-scheduler"):
        (pids / f"{component}.pid").write_text(str(exited_pid() if component in gone else os.getpid()))
    (root / "clusters" / "c" / "logs").mkdir()
    (root / "clusters" / "c" / "logs" / "kube-scheduler.log").write_text("E1204 leaderelection lost\n")


def watch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, gone: tuple[str, ...]) -> list[str]:
    monkeypatch.setenv("E2E_CLUSTER_DIR", str(tmp_path))
    monkeypatch.setattr(e2e_fixtures, "WATCH_SECONDS", 0.01)
    lay_out(tmp_path, gone)
    deaths: list[str] = []
    stop = threading.Event()
    watcher = threading.Thread(target=e2e_fixtures.watch_control_plane,
                               args=("c", stop, lambda: deaths.append("interrupted")))
    watcher.start()
    watcher.join(0.5)
    stop.set()
    watcher.join()
    return deaths


def test_a_component_that_exited_stops_the_run_and_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert watch(monkeypatch, tmp_path, ("kube-scheduler",)) == ["interrupted"]
    err = capsys.readouterr().err
    assert "c: kube-scheduler exited" in err and "leaderelection lost" in err


def test_the_cluster_deleted_on_purpose_stops_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert watch(monkeypatch, tmp_path, ("kube-scheduler", "kube-apiserver")) == []


def test_a_cluster_whose_components_all_run_stops_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert watch(monkeypatch, tmp_path, ()) == []
    assert cluster.exited_components("c") == []


def test_no_component_of_the_local_cluster_runs_a_leader_election(monkeypatch: pytest.MonkeyPatch) -> None:
    """One scheduler and one controller-manager: a late lease renewal would make them exit (realengine/cluster.py
    SINGLE_INSTANCE_ARGS); a test's own controller-manager flags come after."""
    monkeypatch.setattr(cluster, "pins", lambda: {"kubernetes": {"version": "v1.35.4"}})
    doc = json.loads(cluster.kwokctl_config("c", ["--node-monitor-period=5s"]))
    args = {p["name"]: {a["key"]: a["value"] for a in p["extraArgs"]} for p in doc["componentsPatches"]}
    assert args["kube-scheduler"]["leader-elect"] == "false"
    assert args["kube-controller-manager"] == {"leader-elect": "false", "node-monitor-period": "5s"}
