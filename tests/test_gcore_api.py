"""The Gcore API emulator (realengine/gcore_api.py) answered over HTTP as the provider's client calls it: the
paths and bodies of gcorelabscloud-go v0.29.5, tasks NEW -> RUNNING -> FINISHED (or ERROR) on their delays, state
that survives a restart, and the API's error body. The real provider against it: e2e/test_gcore_provider.py."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from realengine.gcore_api import Behaviour, requests_log, serving, set_behaviour

BASE = "/cloud/v2/k8s/clusters/1/76"
POOL = {"name": "gpu", "flavor_id": "bm3-ai-1xlarge-h100-80-8", "min_node_count": 1, "max_node_count": 2,
        "labels": {"a": "b"}, "taints": {"t": "v:NoSchedule"}}
CLUSTER = {"name": "gpu-dev", "keypair": "team", "version": "v1.35.3", "fixed_network": "", "fixed_subnet": "",
           "pools": [POOL, {**POOL, "name": "system", "flavor_id": "g1-standard-4-8",
                            "servergroup_policy": "soft-anti-affinity"}]}


def call(endpoint: str, method: str, path: str, body: Any = None, token: bool = True) -> tuple[int, Any]:
    req = urllib.request.Request(endpoint + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": "APIKey t"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def task_state(endpoint: str, task_id: str) -> str:
    status, task = call(endpoint, "GET", f"/cloud/v1/tasks/{task_id}")
    assert status == 200
    return str(task["state"])


def test_a_task_goes_new_running_finished_and_then_the_cluster_is_provisioned(tmp_path: Path) -> None:
    set_behaviour(tmp_path, Behaviour(new_seconds=2, running_seconds=2))  # wide: the machine may be busy
    with serving(tmp_path) as api:
        start = time.monotonic()
        status, out = call(api, "POST", BASE, CLUSTER)
        assert status == 200 and len(out["tasks"]) == 1
        task = out["tasks"][0]
        assert task_state(api, task) == "NEW"
        assert call(api, "GET", f"{BASE}/gpu-dev")[1]["status"] == "Provisioning"
        time.sleep(max(0.0, start + 3 - time.monotonic()))
        assert task_state(api, task) == "RUNNING"
        time.sleep(max(0.0, start + 5 - time.monotonic()))
        assert task_state(api, task) == "FINISHED"
        cluster = call(api, "GET", f"{BASE}/gpu-dev")[1]
    assert cluster["status"] == "Provisioned" and cluster["creator_task_id"] == task
    assert [p["name"] for p in cluster["pools"]] == ["gpu", "system"]
    assert cluster["pools"][0]["status"] == "Running"


def test_state_survives_a_restart_and_a_task_ends_while_the_server_is_down(tmp_path: Path) -> None:
    with serving(tmp_path) as api:
        call(api, "POST", BASE, CLUSTER)
    set_behaviour(tmp_path, Behaviour(running_seconds=0.3))
    with serving(tmp_path) as api:
        task = call(api, "DELETE", f"{BASE}/gpu-dev")[1]["tasks"][0]
        assert call(api, "GET", f"{BASE}/gpu-dev")[1]["status"] == "Deleting"
    time.sleep(0.4)
    with serving(tmp_path) as api:
        assert task_state(api, task) == "FINISHED"
        status, err = call(api, "GET", f"{BASE}/gpu-dev")
    assert status == 404 and set(err) == {"exception_class", "message", "traceback", "request_id"}


def test_a_failed_task_is_error_with_its_text(tmp_path: Path) -> None:
    set_behaviour(tmp_path, Behaviour(error="No capacity for flavor bm3-ai-1xlarge-h100-80-8"))
    with serving(tmp_path) as api:
        task = call(api, "POST", BASE, CLUSTER)[1]["tasks"][0]
        status, view = call(api, "GET", f"/cloud/v1/tasks/{task}")
        cluster = call(api, "GET", f"{BASE}/gpu-dev")[1]
    assert view["state"] == "ERROR" and view["error"].startswith("No capacity")
    assert cluster["status"] == "Failed"


def test_a_pool_patch_answers_the_pool_at_once_without_a_task(tmp_path: Path) -> None:
    set_behaviour(tmp_path, Behaviour(running_seconds=60))  # a task would still be running
    with serving(tmp_path) as api:
        call(api, "POST", BASE, CLUSTER)
        status, pool = call(api, "PATCH", f"{BASE}/gpu-dev/pools/gpu", {"min_node_count": 1, "max_node_count": 5})
        assert status == 200 and pool["max_node_count"] == 5 and "tasks" not in pool
        assert call(api, "GET", f"{BASE}/gpu-dev/pools/gpu")[1]["max_node_count"] == 5
        status, err = call(api, "PATCH", f"{BASE}/gpu-dev/pools/gpu", {"min_node_count": 6, "max_node_count": 5})
    assert status == 400 and "max_node_count" in err["message"]


def test_refusals_carry_the_apis_error_body(tmp_path: Path) -> None:
    with serving(tmp_path) as api:
        assert call(api, "GET", f"{BASE}/gpu-dev", token=False)[0] == 401
        assert call(api, "GET", f"{BASE}/nothing")[0] == 404
        call(api, "POST", BASE, CLUSTER)
        status, err = call(api, "POST", BASE, CLUSTER)
        assert status == 409 and err["exception_class"] == "ClusterAlreadyExists"
        assert call(api, "POST", f"{BASE}/gpu-dev/pools", POOL)[0] == 409
        assert call(api, "DELETE", f"{BASE}/gpu-dev/pools/none")[0] == 404
        status, err = call(api, "POST", BASE, {**CLUSTER, "name": "x", "pools": [{**POOL, "min_node_count": 0}]})
        assert status == 400 and "min_node_count" in err["message"]
    assert [r["status"] for r in requests_log(tmp_path)] == [401, 404, 200, 409, 409, 404, 400]


def test_the_name_lookups_and_the_kubeconfig(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    with serving(tmp_path / "api", kubeconfig=kubeconfig) as api:
        assert {"id": 1, "name": "Default"}.items() <= call(api, "GET", "/cloud/v1/projects")[1]["results"][0].items()
        regions = {r["display_name"]: r["id"] for r in call(api, "GET", "/cloud/v1/regions")[1]["results"]}
        assert regions["Luxembourg-2"] == 76
        call(api, "POST", BASE, CLUSTER)
        assert call(api, "GET", f"{BASE}/gpu-dev/config")[1]["config"] == kubeconfig.read_text()


@pytest.mark.parametrize("path", ["/v2/k8s/clusters/1/76", "/cloud/v2/other"])
def test_unknown_paths_are_404(tmp_path: Path, path: str) -> None:
    with serving(tmp_path) as api:
        assert call(api, "GET", path)[0] == 404


def test_a_task_ends_and_takes_effect_without_being_polled(tmp_path: Path) -> None:
    set_behaviour(tmp_path, Behaviour(running_seconds=0.3))
    with serving(tmp_path) as api:
        call(api, "POST", BASE, CLUSTER)
        deadline = time.monotonic() + 10  # the store's file, read without asking the API
        while (status := json.loads(next((tmp_path / "clusters").glob("*-gpu-dev.json")).read_text())["status"]) \
                != "Provisioned" and time.monotonic() < deadline:
            time.sleep(0.05)
    assert status == "Provisioned"
