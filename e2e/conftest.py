"""Fixtures of the end-to-end tests (scripts/e2e.sh): the toolchain, the local control plane, kubectl.

These tests are not part of the fast suite (pytest.ini's testpaths is `tests`): they need the Go toolchain built
by `bash scripts/toolchain.sh`, and scripts/e2e.sh runs them inside a network namespace of their own. Without the
toolchain they stop at once with the command that builds it (never a silent skip).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from e2e.harness import Kube, Timer
from realengine import cluster
from realengine.toolchain import ENGINE, Toolchain, ToolchainMissing, bin_dir, prepare

#: Everything the end-to-end tests run: the engine and providers, the control plane, KEDA.
ALL = (*ENGINE, "pulumi-language-nodejs", "kubernetes", "etcd", "kwok", "keda", "cluster-autoscaler")


@pytest.fixture(scope="session")
def tc() -> Toolchain:
    try:
        return prepare(bin_dir(ALL))
    except ToolchainMissing as exc:
        pytest.exit(f"end-to-end tests need the toolchain: {exc}", returncode=2)


@pytest.fixture(scope="session", autouse=True)
def no_leaked_terraform_providers(tc: Toolchain) -> Iterator[None]:
    """The Any Terraform Provider leaves the Terraform provider it starts running after the engine kills it
    (pulumi/pulumi-terraform-bridge#3349, open): the orphans are stopped at the end, those of every toolchain view
    (a preview without a cluster runs the engine alone: realengine/preview.py, another view, another Pulumi home)."""
    yield
    views = str(tc.home.parent.parent) + os.sep
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == 1 and cmdline.startswith(views) and f"{os.sep}dynamic_tf_plugins{os.sep}" in cmdline:
            os.kill(int(proc.name), 15)


@pytest.fixture(scope="session")
def timer() -> Iterator[Timer]:
    t = Timer()
    yield t
    print("\n[e2e] phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in t.phases.items()), file=sys.stderr)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="module")
def kube(tc: Toolchain, timer: Timer, request: pytest.FixtureRequest) -> Iterator[Kube]:
    """A fresh local cluster per test module (`E2E_STACK`'s pools, dev by default), removed afterwards. A module
    may set CLUSTER_STACK, CONTROLLER_MANAGER_ARGS (kube-controller-manager flags) and KWOK_STAGES (a function
    that changes kwok's stages, realengine.cluster.StageEdit)."""
    name = f"e2e-{uuid.uuid4().hex[:6]}"
    stack = getattr(request.module, "CLUSTER_STACK", os.environ.get("E2E_STACK", "dev"))
    kcm_args = list(getattr(request.module, "CONTROLLER_MANAGER_ARGS", []))
    stages = getattr(request.module, "KWOK_STAGES", None)  # a realengine.cluster.StageEdit
    with timer.phase(f"cluster up ({request.module.__name__.rsplit('.', 1)[-1]})"):
        try:
            path = cluster.up(name, stack, extra_kcm_args=kcm_args, stages=stages)
        except BaseException:
            # A cluster that did not come up is not left running into the next tests (its etcd, API server and
            # controllers kept their ports and CPU): its components' last log lines, then it goes.
            logs = cluster.cluster_dir() / "clusters" / name / "logs"
            for log in sorted(logs.glob("*.log")) if logs.is_dir() else []:
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-10:])
                print(f"[e2e] {name}: {log.name}, last lines:\n{tail}", file=sys.stderr)
            cluster.down(name)
            raise
    stop = threading.Event()
    watchdog = threading.Thread(target=watch_control_plane, args=(name, stop), daemon=True)
    watchdog.start()
    try:
        yield Kube(tc, path, name)
    finally:
        stop.set()
        watchdog.join()
        cluster.down(name)


#: Seconds between two looks at the control plane's processes, and the looks in a row a component must be gone at
#: (`down` stops the processes one by one before it removes their pid files).
WATCH_SECONDS, LOOKS = 5.0, 3


def interrupt_session() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def watch_control_plane(name: str, stop: threading.Event, on_death: Callable[[], None] = interrupt_session) -> None:
    """Stop the session as soon as one component of cluster `name` exits under a test: nothing restarts it, and a
    missing scheduler or controller-manager would leave each following `pulumi up` waiting out its readiness
    timeout (46 minutes for a GPU workload). Prints which component went and its last log lines, then interrupts
    pytest (`on_death`; SIGINT: the running test fails, fixtures are torn down, the run ends)."""
    looks: dict[str, int] = {}
    while not stop.wait(WATCH_SECONDS):
        gone = set(cluster.exited_components(name))
        # The API server or etcd gone is the cluster being deleted (`down`, or Gcore's cluster delete in the
        # emulator; kwokctl stops the components in reverse order, them last), or a failure each call to the API
        # reports at once.
        if gone & {"kube-apiserver", "etcd"}:
            gone = set()
        looks = {c: looks.get(c, 0) + 1 for c in gone}
        dead = sorted(c for c, n in looks.items() if n >= LOOKS)
        if dead:
            logs = cluster.cluster_dir() / "clusters" / name / "logs"
            for component in dead:
                log = logs / f"{component}.log"
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:]) if log.exists() else ""
                print(f"\n[e2e] {name}: {component} exited; its last log lines:\n{tail}", file=sys.stderr)
            on_death()
            return
