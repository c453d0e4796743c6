"""A Gcore Cloud API emulator: what terraform-provider-gcore v0.34.3's `gcore_k8sv2` and `gcore_k8sv2_kubeconfig`
call, answered on 127.0.0.1 from clusters and tasks kept as JSON files in a directory (they survive a restart).

    python -m realengine.gcore_api serve DIR [--kubeconfig FILE] [--port N]   # prints the endpoint, serves until ^C

The provider is pointed at it with `gcore:apiEndpoint` (the provider's `api_endpoint`; its cloud API is that plus
`/cloud`). Request and response shapes follow the provider's client, G-Core/gcorelabscloud-go v0.29.5:
- `gcore/k8s/v2/clusters`, `gcore/k8s/v2/pools`: `POST|GET|PATCH|DELETE /v2/k8s/clusters/{project}/{region}/...`;
  create, delete, upgrade, update and pool create/delete answer `{"tasks": [id]}`, a pool's PATCH answers the pool;
- `gcore/task/v1/tasks`: `GET /v1/tasks/{id}`, whose `state` goes NEW, RUNNING, then FINISHED or ERROR after the
  delays in DIR/behaviour.json (`set_behaviour`), read when the task is made; a task's effect (the cluster made,
  a pool gone) shows in the cluster's GET once the task has finished, as the provider expects;
- `gcore/project/v1/projects`, `gcore/region/v1/regions`: the name look-ups for `project_name` / `region_name`;
- `gcore/securitygroup/v1/securitygroups`: the cluster's security group list (empty).
Refusals use the API's error body (`GcoreErrorType` in the client's results.go: exception_class, message,
request_id), with the status the client maps to its ErrDefault4xx types: 401 without an `APIKey` token, 404 for a
cluster or pool that does not exist (the provider reads a 404 as "gone"), 409 for a name already taken, 400 for a
request body the client's own validation would have refused. The exact messages of Gcore's servers are not known
here: these are ours.

Every request is appended to DIR/requests.jsonl (method, path, body) so tests can see what the provider sent.

One file over 400 lines: the routes and the store are the two halves of one API, each read against the same client
packages; split, every route would reach across the split.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

#: The projects and regions of the emulated account, for the name look-ups (the ids are ours, not Gcore's).
PROJECTS = {"Default": 1}
REGIONS = {"Luxembourg-2": 76, "Luxembourg": 1, "Amsterdam": 38}
#: How often the emulator looks for tasks that have ended.
SETTLE_SECONDS = 0.2
#: Labels the API adds to a pool; the provider hides them (resourceK8sV2FilteredPoolLabels).
SYSTEM_LABEL_PREFIX = "gcorecluster.x-k8s.io"


@dataclass(frozen=True)
class Behaviour:
    """How long each new task stays NEW and then RUNNING, and whether it ends in ERROR (with this text)."""

    new_seconds: float = 0.0
    running_seconds: float = 0.0
    error: str | None = None


def set_behaviour(directory: Path, behaviour: Behaviour) -> None:
    """The behaviour of every task made from now on (the running server reads it per task)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "behaviour.json").write_text(json.dumps(asdict(behaviour)))


def behaviour(directory: Path) -> Behaviour:
    path = directory / "behaviour.json"
    return Behaviour(**json.loads(path.read_text())) if path.exists() else Behaviour()


def requests_log(directory: Path) -> list[dict[str, Any]]:
    """Every request the emulator answered, oldest first: {method, path, body, status}."""
    path = directory / "requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def cluster_file(directory: Path, name: str) -> Path:
    """Where the emulator in `directory` keeps cluster `name`; KeyError when it has none."""
    found = sorted((directory / "clusters").glob(f"*-*-{name}.json"))
    if not found:
        raise KeyError(f"no cluster {name!r} in {directory}")
    return found[0]


def read_cluster(directory: Path, name: str) -> dict[str, Any]:
    """The cluster `name` as the emulator in `directory` keeps it (the API's GET body); KeyError when it has none."""
    return dict(json.loads(cluster_file(directory, name).read_text()))


def list_pools_in(directory: Path, name: str, order: list[str]) -> None:
    """Make the emulator list cluster `name`'s pools in `order`, the order the API answers GET with. Gcore does not
    document that order; the provider's import reads it into a Go map (resource_gcore_k8sv2.go, resourceK8sV2Read)."""
    path = cluster_file(directory, name)
    cluster = json.loads(path.read_text())
    by_name = {p["name"]: p for p in cluster["pools"]}
    if sorted(by_name) != sorted(order):
        raise ValueError(f"cluster {name!r} has pools {sorted(by_name)}, not {sorted(order)}")
    cluster["pools"] = [by_name[n] for n in order]
    write_json(path, cluster)


def write_json(path: Path, value: Any) -> None:
    """Whole or not at all: a reader (the settle thread, a test watching the state) never sees half a file."""
    staged = path.with_suffix(".tmp")
    staged.write_text(json.dumps(value, indent=2, sort_keys=True))
    staged.replace(path)


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ApiError(Exception):
    def __init__(self, status: int, exception_class: str, message: str) -> None:
        super().__init__(message)
        self.status, self.exception_class, self.message = status, exception_class, message


class Store:
    """Clusters (DIR/clusters/<project>-<region>-<name>.json) and tasks (DIR/tasks/<id>.json)."""

    def __init__(self, directory: Path, kubeconfig: Path | None = None, on_delete: str | None = None) -> None:
        self.dir = directory
        self.kubeconfig = kubeconfig
        self.on_delete = on_delete
        self.lock = threading.RLock()
        for sub in ("clusters", "tasks"):
            (directory / sub).mkdir(parents=True, exist_ok=True)

    # --- files -----------------------------------------------------------------------------------------------

    def _cluster_path(self, project: int, region: int, name: str) -> Path:
        return self.dir / "clusters" / f"{project}-{region}-{name}.json"

    def load(self, project: int, region: int, name: str) -> dict[str, Any] | None:
        path = self._cluster_path(project, region, name)
        return json.loads(path.read_text()) if path.exists() else None

    def save(self, cluster: dict[str, Any]) -> None:
        write_json(self._cluster_path(cluster["project_id"], cluster["region_id"], cluster["name"]), cluster)

    def task(self, task_id: str) -> dict[str, Any] | None:
        path = self.dir / "tasks" / f"{task_id}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def _save_task(self, task: dict[str, Any]) -> None:
        write_json(self.dir / "tasks" / f"{task['id']}.json", task)

    # --- tasks -----------------------------------------------------------------------------------------------

    def new_task(self, task_type: str, project: int, region: int, effect: dict[str, Any]) -> str:
        b = behaviour(self.dir)
        task = {"id": str(uuid.uuid4()), "task_type": task_type, "project_id": project, "region_id": region,
                "created": time.time(), "new_seconds": b.new_seconds, "running_seconds": b.running_seconds,
                "fail": b.error, "effect": effect, "applied": False}
        self._save_task(task)
        return str(task["id"])

    @staticmethod
    def state(task: dict[str, Any]) -> str:
        age = time.time() - task["created"]
        if age < task["new_seconds"]:
            return "NEW"
        if age < task["new_seconds"] + task["running_seconds"]:
            return "RUNNING"
        return "ERROR" if task["fail"] else "FINISHED"

    def settle(self) -> None:
        """Apply the effect of every task that has ended since the last request (in the order they were made)."""
        with self.lock:
            tasks = sorted((json.loads(p.read_text()) for p in (self.dir / "tasks").glob("*.json")),
                           key=lambda t: t["created"])
            for task in tasks:
                if task["applied"] or self.state(task) in ("NEW", "RUNNING"):
                    continue
                self._apply(task, failed=self.state(task) == "ERROR")
                task["applied"] = True
                self._save_task(task)

    def _apply(self, task: dict[str, Any], failed: bool) -> None:
        e = task["effect"]
        cluster = self.load(task["project_id"], task["region_id"], e["cluster"])
        if cluster is None:
            return
        kind = e["kind"]
        if failed:
            # Gcore keeps what a failed task left; the cluster shows the failure in its status.
            cluster["status"] = "Failed"
        elif kind == "cluster_create":
            cluster["status"] = "Provisioned"
            for pool in cluster["pools"]:
                pool["status"] = "Running"
        elif kind == "cluster_delete":
            self._cluster_path(cluster["project_id"], cluster["region_id"], cluster["name"]).unlink()
            if self.on_delete:
                # Deleting a Gcore cluster deletes everything in it: the local control plane standing for it too.
                subprocess.run(self.on_delete, shell=True, check=False, capture_output=True,
                               env={**os.environ, "GCORE_API_CLUSTER": cluster["name"]})
            return
        elif kind == "pool_create":
            for pool in cluster["pools"]:
                if pool["name"] == e["pool"]:
                    pool["status"] = "Running"
        elif kind == "pool_delete":
            cluster["pools"] = [p for p in cluster["pools"] if p["name"] != e["pool"]]
        elif kind == "cluster_upgrade":
            cluster["version"] = e["version"]
        elif kind == "cluster_update":
            cluster.update(e["fields"])
        cluster["task_id"] = None
        if kind != "cluster_delete":
            cluster["status"] = "Failed" if failed else "Provisioned"
        self.save(cluster)

    def task_view(self, task: dict[str, Any]) -> dict[str, Any]:
        state = self.state(task)
        created = datetime.fromtimestamp(task["created"], UTC).strftime("%Y-%m-%dT%H:%M:%S")
        finished = None
        if state in ("FINISHED", "ERROR"):
            end = task["created"] + task["new_seconds"] + task["running_seconds"]
            finished = datetime.fromtimestamp(end, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return {"id": task["id"], "task_type": task["task_type"], "project_id": task["project_id"],
                "region_id": task["region_id"], "client_id": 1, "user_id": 1, "user_client_id": 1, "state": state,
                "created_on": created, "updated_on": finished, "finished_on": finished, "acknowledged_at": None,
                "acknowledged_by": None, "request_id": None, "data": None,
                "error": task["fail"] if state == "ERROR" else None,
                "created_resources": ({"k8s_clusters": [task["effect"]["cluster"]]}
                                      if state == "FINISHED" and task["effect"]["kind"] == "cluster_create" else None)}

    # --- clusters and pools ----------------------------------------------------------------------------------

    def kubeconfig_text(self, name: str) -> str:
        if self.kubeconfig is not None:
            return self.kubeconfig.read_text()
        # No local control plane: a kubeconfig for a host that cannot resolve, so nothing reaches a network.
        return (f"apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster: {{server: "
                f"'https://{name}.gcore-api.invalid:6443'}}\nusers:\n- name: {name}-admin\n  user: {{token: none}}\n"
                f"contexts:\n- name: {name}\n  context: {{cluster: {name}, user: {name}-admin}}\n"
                f"current-context: {name}\n")


def pool_record(body: dict[str, Any]) -> dict[str, Any]:
    """A pool as the API keeps it, from a pool create body (pools.CreateOpts), with the API's defaults."""
    flavor = str(body["flavor_id"])
    vm = flavor.startswith(("g", "a"))  # the provider's resourceK8sV2IsVMFlavor
    return {
        "id": str(uuid.uuid4()), "name": body["name"], "flavor_id": flavor,
        "min_node_count": body["min_node_count"],
        "max_node_count": body.get("max_node_count") or body["min_node_count"],
        "node_count": body["min_node_count"], "status": "Provisioning",
        "boot_volume_type": body.get("boot_volume_type") or "standard",
        "boot_volume_size": body.get("boot_volume_size") or (10 if vm else 0),
        "auto_healing_enabled": bool(body.get("auto_healing_enabled", False)),
        "is_public_ipv4": bool(body.get("is_public_ipv4", False)),
        "servergroup_policy": body.get("servergroup_policy", ""),
        "servergroup_id": str(uuid.uuid4()) if body.get("servergroup_policy") else "",
        "servergroup_name": f"{body['name']}-servergroup" if body.get("servergroup_policy") else "",
        "labels": {**(body.get("labels") or {}), f"{SYSTEM_LABEL_PREFIX}/pool": body["name"]},
        "taints": body.get("taints") or {}, "crio_config": body.get("crio_config") or {},
        "kubelet_config": body.get("kubelet_config") or {}, "created_at": now_iso(),
    }


def require(body: dict[str, Any], rules: dict[str, str]) -> None:
    """400 for a field the client's validation tags (`validate:"required,..."`) would have refused."""
    for key, rule in rules.items():
        value = body.get(key)
        if rule == "required" and value in (None, "", [], {}):
            raise ApiError(400, "ValidationError", f"{key}: field required")
        if rule == "gt0" and value is not None and (not isinstance(value, int) or value <= 0):
            raise ApiError(400, "ValidationError", f"{key}: ensure this value is greater than 0 (got {value!r})")


def check_pool(body: dict[str, Any]) -> None:
    require(body, {"name": "required", "flavor_id": "required", "min_node_count": "gt0", "max_node_count": "gt0"})
    if "min_node_count" not in body:
        raise ApiError(400, "ValidationError", "min_node_count: field required")
    if body.get("max_node_count") and body["max_node_count"] < body["min_node_count"]:
        raise ApiError(400, "ValidationError", "max_node_count: must not be below min_node_count")


class Api:
    """The routes. Each returns (status, body)."""

    def __init__(self, store: Store) -> None:
        self.s = store

    def route(self, method: str, parts: list[str], body: Any) -> tuple[int, Any]:
        self.s.settle()
        match parts:
            case ["v1", "projects"]:
                return 200, listing([{"id": i, "name": n, "client_id": 1, "state": "ACTIVE"}
                                     for n, i in PROJECTS.items()])
            case ["v1", "regions"]:
                return 200, listing([{"id": i, "display_name": n, "keystone_name": n, "state": "ACTIVE"}
                                     for n, i in REGIONS.items()])
            case ["v1", "tasks", task_id] if method == "GET":
                task = self.s.task(task_id)
                if task is None:
                    raise ApiError(404, "TaskNotFound", f"Task {task_id} not found")
                return 200, self.s.task_view(task)
            case ["v1", "securitygroups", _, _]:
                return 200, listing([])
            case ["v2", "k8s", "clusters", p, r, *rest]:
                return self.k8s(method, int(p), int(r), rest, body)
        raise ApiError(404, "NotFound", f"{method} /{'/'.join(parts)} is not an endpoint of this API")

    def k8s(self, method: str, p: int, r: int, rest: list[str], body: Any) -> tuple[int, Any]:
        with self.s.lock:
            match rest:
                case [] if method == "POST":
                    return self.create(p, r, body)
                case [] if method == "GET":
                    return 200, listing(sorted((json.loads(f.read_text()) for f in
                                                (self.s.dir / "clusters").glob(f"{p}-{r}-*.json")),
                                               key=lambda c: c["name"]))
                case ["pools", "check_limits"] if method == "POST":
                    require(body, {"flavor_id": "required", "min_node_count": "gt0", "max_node_count": "gt0"})
                    return 200, {}
                case [name] if method == "GET":
                    return 200, self.cluster(p, r, name)
                case [name] if method == "DELETE":
                    c = self.cluster(p, r, name)
                    return 200, self.task(c, "delete_k8s_cluster_v2", {"kind": "cluster_delete"}, "Deleting")
                case [name] if method == "PATCH":
                    c = self.cluster(p, r, name)
                    fields = {k: body[k] for k in ("authentication", "autoscaler_config", "cni", "ddos_profile")
                              if k in body}
                    return 200, self.task(c, "update_k8s_cluster_v2", {"kind": "cluster_update", "fields": fields})
                case [name, "upgrade"] if method == "POST":
                    c = self.cluster(p, r, name)
                    require(body, {"version": "required"})
                    return 200, self.task(c, "upgrade_k8s_cluster_v2",
                                          {"kind": "cluster_upgrade", "version": body["version"]}, "Upgrading")
                case [name, "config"] if method == "GET":
                    self.cluster(p, r, name)
                    return 200, {"config": self.s.kubeconfig_text(name), "host": "", "cluster_ca_certificate": "",
                                 "client_certificate": "", "client_key": ""}
                case [name, "pools"] if method == "GET":
                    return 200, listing(self.cluster(p, r, name)["pools"])
                case [name, "pools"] if method == "POST":
                    c = self.cluster(p, r, name)
                    check_pool(body)
                    if any(x["name"] == body["name"] for x in c["pools"]):
                        raise ApiError(409, "PoolAlreadyExists", f"Pool {body['name']} already exists in {name}")
                    c["pools"].append(pool_record(body))
                    return 200, self.task(c, "create_k8s_cluster_pool_v2",
                                          {"kind": "pool_create", "pool": body["name"]})
                case [name, "pools", pool] if method in ("GET", "PATCH", "DELETE"):
                    c = self.cluster(p, r, name)
                    found = [x for x in c["pools"] if x["name"] == pool]
                    if not found:
                        raise ApiError(404, "PoolNotFound", f"Pool {pool} not found in cluster {name}")
                    if method == "GET":
                        return 200, found[0]
                    if method == "DELETE":
                        found[0]["status"] = "Deleting"
                        return 200, self.task(c, "delete_k8s_cluster_pool_v2", {"kind": "pool_delete", "pool": pool})
                    return 200, self.update_pool(c, found[0], body)
        raise ApiError(404, "NotFound", f"{method} {'/'.join(rest)} is not an endpoint of this API")

    def cluster(self, p: int, r: int, name: str) -> dict[str, Any]:
        c = self.s.load(p, r, name)
        if c is None:
            raise ApiError(404, "ClusterNotFound", f"Cluster {name} not found")
        return c

    def task(self, cluster: dict[str, Any], task_type: str, effect: dict[str, Any], status: str | None = None
             ) -> dict[str, Any]:
        task_id = self.s.new_task(task_type, cluster["project_id"], cluster["region_id"],
                                  {**effect, "cluster": cluster["name"]})
        cluster["task_id"] = task_id
        if status:
            cluster["status"] = status
        self.s.save(cluster)
        self.s.settle()  # a task without delays has already ended
        return {"tasks": [task_id]}

    def create(self, p: int, r: int, body: dict[str, Any]) -> tuple[int, Any]:
        require(body, {"name": "required", "keypair": "required", "version": "required", "pools": "required"})
        if len(body["name"]) > 20:
            raise ApiError(400, "ValidationError", f"name: {body['name']!r} is longer than 20 characters")
        for pool in body["pools"]:
            check_pool(pool)
        if self.s.load(p, r, body["name"]) is not None:
            raise ApiError(409, "ClusterAlreadyExists", f"Cluster {body['name']} already exists")
        cluster = {
            "id": str(uuid.uuid4()), "name": body["name"], "keypair": body["keypair"], "version": body["version"],
            "status": "Provisioning", "is_public": True, "project_id": p, "region_id": r, "region": str(r),
            "fixed_network": body.get("fixed_network", ""), "fixed_subnet": body.get("fixed_subnet", ""),
            "is_ipv6": bool(body.get("is_ipv6", False)), "created_at": now_iso(),
            "autoscaler_config": body.get("autoscaler_config") or {},
            "cni": body.get("cni") or {"provider": "calico"},
            "pools": [pool_record(pool) for pool in body["pools"]], "task_id": None, "creator_task_id": None,
        }
        for key in ("authentication", "csi", "ddos_profile", "pods_ip_pool", "services_ip_pool", "pods_ipv6_pool",
                    "services_ipv6_pool"):
            if body.get(key) is not None:
                cluster[key] = body[key]
        self.s.save(cluster)
        out = self.task(cluster, "create_k8s_cluster_v2", {"kind": "cluster_create"})
        cluster = self.cluster(p, r, body["name"])
        cluster["creator_task_id"] = out["tasks"][0]
        self.s.save(cluster)
        return 200, out

    def update_pool(self, cluster: dict[str, Any], pool: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """PATCH answers the pool at once, no task (pools.Update's UpdateResult): the API applies the bounds."""
        lo = body.get("min_node_count", pool["min_node_count"])
        hi = body.get("max_node_count", pool["max_node_count"])
        for key, value in (("min_node_count", lo), ("max_node_count", hi)):
            if not isinstance(value, int) or not 0 < value <= 200:
                raise ApiError(400, "ValidationError", f"{key}: {value!r} is not between 1 and 200")
        if hi < lo:
            raise ApiError(400, "ValidationError", "max_node_count: must not be below min_node_count")
        pool.update(min_node_count=lo, max_node_count=hi, node_count=min(max(pool["node_count"], lo), hi))
        if "auto_healing_enabled" in body:
            pool["auto_healing_enabled"] = bool(body["auto_healing_enabled"])
        if "labels" in body:
            system = {k: v for k, v in pool["labels"].items() if k.startswith(SYSTEM_LABEL_PREFIX)}
            pool["labels"] = {**(body["labels"] or {}), **system}
        if "taints" in body:
            pool["taints"] = body["taints"] or {}
        self.s.save(cluster)
        return pool


def listing(items: list[Any]) -> dict[str, Any]:
    return {"count": len(items), "results": items}


def handler(api: Api, directory: Path) -> type[BaseHTTPRequestHandler]:
    log_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            body: Any = None
            status: int
            try:
                body = json.loads(raw) if raw else {}
                if not self.headers.get("Authorization", "").startswith("APIKey "):
                    raise ApiError(401, "NotAuthenticated", "Authentication credentials were not provided.")
                parts = [p for p in path.split("/") if p]
                if parts[:1] != ["cloud"]:
                    raise ApiError(404, "NotFound", f"{path}: the cloud API is under /cloud")
                status, out = api.route(self.command, parts[1:], body)
            except ApiError as exc:
                status = exc.status
                out = {"exception_class": exc.exception_class, "message": exc.message,
                       "traceback": "", "request_id": str(uuid.uuid4())}
            except (ValueError, KeyError, TypeError) as exc:
                status = 400
                out = {"exception_class": "ValidationError", "message": f"bad request: {exc}", "traceback": "",
                       "request_id": str(uuid.uuid4())}
            # Logged before the answer, so the log holds a request as soon as its caller has the answer.
            with log_lock, (directory / "requests.jsonl").open("a") as f:
                f.write(json.dumps({"method": self.command, "path": path, "body": body, "status": status}) + "\n")
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

    return Handler


def provider_env(endpoint: str) -> dict[str, str]:
    """The environment that points the Gcore provider at `endpoint`: its `api_endpoint` reads GCORE_API_ENDPOINT
    (`schema.EnvDefaultFunc` in gcore/provider.go), which keeps the emulator's port out of the stack's state."""
    return {"GCORE_API_ENDPOINT": endpoint}


@contextmanager
def serving(directory: Path, kubeconfig: Path | None = None, on_delete: str | None = None,
            port: int = 0) -> Iterator[str]:
    """Serve DIR on 127.0.0.1 (an ephemeral port unless `port`) in a thread; yields the provider's `api_endpoint`.
    Tasks end on their own, whether or not anyone polls them, as Gcore's do: a second thread settles them."""
    directory.mkdir(parents=True, exist_ok=True)
    store = Store(directory, kubeconfig, on_delete)
    server = ThreadingHTTPServer(("127.0.0.1", port), handler(Api(store), directory))
    stop = threading.Event()

    def settle_loop() -> None:
        while not stop.wait(SETTLE_SECONDS):
            store.settle()

    # serve_forever checks for shutdown every poll_interval (0.5 s by default): each `serving` would end that late.
    threads = [threading.Thread(target=server.serve_forever, args=(0.02,), name="gcore-api", daemon=True),
               threading.Thread(target=settle_loop, name="gcore-api-tasks", daemon=True)]
    for thread in threads:
        thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        threads[1].join()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m realengine.gcore_api", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["serve"])
    ap.add_argument("dir", type=Path, help="where clusters and tasks are kept")
    ap.add_argument("--kubeconfig", type=Path, help="the kubeconfig GET .../config returns")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    with serving(args.dir, args.kubeconfig, port=args.port) as endpoint:
        print(endpoint, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
