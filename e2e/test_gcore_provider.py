"""The real Gcore provider (terraform-provider-gcore v0.34.3, through the Any Terraform Provider) against the Gcore API
emulator (realengine/gcore_api.py): what a user sees when the provider or its client refuses, and the recovery of
docs/timeouts-and-recovery.md after a `pulumi up` that stopped while Gcore was still creating the cluster.

The flavor change and the in-place `maxNodes` update are in e2e/test_lifecycle.py (they need a deployed stack).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pulumi.automation import CommandError

from e2e.harness import Kube, Timer, platform, wait_for
from realengine import gcore_api
from realengine.stack import LocalStack
from realengine.toolchain import Toolchain

CLUSTER_URN_SUFFIX = "K8sv2::gpu-cluster"


def state(ls: LocalStack) -> dict[str, Any]:
    return dict(json.loads(json.dumps(ls.stack.export_stack().deployment)))


def test_min_nodes_0_is_refused_by_our_check_and_else_by_the_client(
        tc: Toolchain, kube: Kube, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`gpuPool.minNodes: 0` is refused by the stack's config check with the key and the fix. With that check off,
    the preview passes (the provider's schema has no rule for it) and `up` fails in the provider: its API client
    refuses `min_node_count` 0 before sending anything (`validate:"required,gt=0"`, pools.CreateOpts in
    gcorelabscloud-go v0.29.5), so nothing reaches Gcore."""
    overrides = {"gpu-autoscaling:gpuPool.minNodes": 0}
    with platform("dev", tc, kube, workdir / "min-nodes-ours", overrides=overrides) as ls, \
            pytest.raises(CommandError) as ours:
        ls.up()
    assert "gpuPool.minNodes" in str(ours.value) and "Fix:" in str(ours.value)

    import pulumi_gcore  # the generated SDK the program runs with (sdks/gcore), in this process

    real = pulumi_gcore.K8sv2PoolArgs

    def zero_min(**kwargs: Any) -> Any:
        return real(**{**kwargs, "min_node_count": 0} if kwargs["name"] == "gpu" else kwargs)

    # The program's pools are built through this class (components/cluster.py): the GPU pool's minimum becomes 0.
    monkeypatch.setattr(pulumi_gcore, "K8sv2PoolArgs", zero_min)
    api = workdir / "min-nodes-client" / "gcore-api"
    with platform("dev", tc, kube, workdir / "min-nodes-client") as ls:
        ls.preview()
        with pytest.raises(CommandError) as client:
            ls.up()
        ls.destroy()
    message = str(client.value)
    print(f"\n[e2e] the provider's refusal of min_node_count 0:\n{message[-1500:]}")
    # The client's validator message, as the user reads it under the cluster resource.
    assert "MinNodeCount: MinNodeCount is a required field" in message, message[-3000:]
    assert not [r for r in gcore_api.requests_log(api) if r["method"] != "GET"]  # nothing was sent to create


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(proc.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def pulumi_process(tc: Toolchain, workdir: Path) -> int | None:
    """The `pulumi up` the Automation API started in `workdir`."""
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if cmd[0].decode() == tc.pulumi and b"up" in cmd and Path(os.readlink(proc / "cwd")) == workdir:
                return int(proc.name)
        except (OSError, ValueError, IndexError):
            continue
    return None


@pytest.fixture
def interrupted(tc: Toolchain, kube: Kube, workdir: Path, timer: Timer) -> Iterator[tuple[LocalStack, Path]]:
    """dev's first `up`, killed (a lost CI runner: the CLI, the bridge and the provider at once) while Gcore's
    cluster-create task is still RUNNING; the task finishes 20 s after it was made."""
    base = workdir / "interrupted"
    api = base / "gcore-api"
    gcore_api.set_behaviour(api, gcore_api.Behaviour(new_seconds=1, running_seconds=20))
    with platform("dev", tc, kube, base) as ls:
        errors: list[BaseException] = []

        def run() -> None:
            try:
                ls.up()
            except CommandError as exc:
                errors.append(exc)

        thread = threading.Thread(target=run)
        with timer.phase("up until the provider polls its task"):
            thread.start()
            wait_for("the provider polling the create task",
                     lambda: sum("/tasks/" in r["path"] for r in gcore_api.requests_log(api)) >= 2, timeout=300)
        pid = pulumi_process(tc, ls.workdir)
        assert pid is not None
        for p in descendants(pid):
            os.kill(p, signal.SIGKILL)
        thread.join(60)
        assert errors and not thread.is_alive()
        yield ls, api


def cli(ls: LocalStack, endpoint_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The Pulumi CLI in the stack's workspace, as a user types it (the program is not run by these commands)."""
    env = {**ls.toolchain.env(ls.workdir / "backend"), **endpoint_env}
    return subprocess.run([ls.toolchain.pulumi, *args, "--stack", ls.name, "--non-interactive"], cwd=ls.workdir,
                          env=env, capture_output=True, text=True, timeout=300)


def test_an_interrupted_first_up_is_recovered_as_the_runbook_says(interrupted: tuple[LocalStack, Path],
                                                                  timer: Timer) -> None:
    ls, api = interrupted
    pending = [op for op in state(ls).get("pending_operations", [])
               if op["resource"]["urn"].endswith(CLUSTER_URN_SUFFIX)]
    assert [op["type"] for op in pending] == ["creating"]
    assert not [r for r in state(ls).get("resources", []) if r["urn"].endswith(CLUSTER_URN_SUFFIX)]
    # Gcore carries on: the cluster is Provisioned once its task ends.
    wait_for("the cluster Provisioned", lambda: gcore_api.read_cluster(api, "gpu-dev")["status"] == "Provisioned",
             timeout=60)
    print(f"\n[e2e] pending operations after the kill: {json.dumps(pending)[:600]}")
    # A second `up` as it is (what a re-run CI job does) fails: the pending create is not adopted.
    with pytest.raises(CommandError) as again:
        ls.up()
    print(f"\n[e2e] the second up after the kill:\n{str(again.value)[-1500:]}")
    env = {"GCORE_API_ENDPOINT": ls.stack.workspace.env_vars["GCORE_API_ENDPOINT"]}
    urn = next(op["resource"]["urn"] for op in pending)
    with timer.phase("refresh --import-pending-creates"):
        refreshed = cli(ls, env, "refresh", "--yes", "--import-pending-creates", urn,
                        "--import-pending-creates", "1:76:gpu-dev")
    print(f"\n[e2e] refresh --import-pending-creates:\n{refreshed.stdout[-1500:]}{refreshed.stderr[-1500:]}")
    assert refreshed.returncode == 0
    (cluster,) = [r for r in state(ls)["resources"] if r["urn"] == urn]
    print(f"\n[e2e] the adopted cluster: id {cluster['id']!r}, outputs {sorted(cluster.get('outputs', {}))[:40]}")
    ls.preview(diff=True)
    (event,) = [e for e in ls.events if e["type"] == "gcore:index/k8sv2:K8sv2"]
    print(f"\n[e2e] the preview after the adoption: {event}")
    assert event["op"] in ("same", "update"), event
