"""A small client of the local API server, for the parts of the autoscaling suite that act many times a second.

The node provisioning (e2e/pool_autoscaler.py) polls every 0.1 s, the recorder
watches pods, nodes and the HPA, and the exporter maps GPUs to pods: a `kubectl` process per call (~0.2 s on a loaded
machine) is too slow for that. This speaks the API's REST directly with the admin client certificate of kwokctl's
kubeconfig (pki/admin.crt, which the API server's client CA signed), over TLS verified against the cluster's CA.
Standard library only: list, get, create, patch (merge / strategic / JSON), delete, the eviction subresource and
watch streams (`?watch=1`, one JSON event per line: kubernetes.io/docs/reference/using-api/api-concepts).
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PATCH_TYPES = {"merge": "application/merge-patch+json", "strategic": "application/strategic-merge-patch+json",
               "json": "application/json-patch+json"}


class ApiError(RuntimeError):
    def __init__(self, status: int, method: str, path: str, body: str) -> None:
        super().__init__(f"{method} {path}: HTTP {status}: {body[:500]}")
        self.status = status


@dataclass
class KubeApi:
    """The API server at `kubeconfig`'s current context, with its client certificate."""

    kubeconfig: Path
    host: str = ""
    port: int = 0
    _context: ssl.SSLContext | None = None
    _local: threading.local = field(default_factory=threading.local)

    def __post_init__(self) -> None:
        doc = yaml.safe_load(self.kubeconfig.read_text())
        current = doc["current-context"]
        context = next(c["context"] for c in doc["contexts"] if c["name"] == current)
        cluster = next(c["cluster"] for c in doc["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in doc["users"] if u["name"] == context["user"])
        url = urllib.parse.urlsplit(cluster["server"])
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443
        ctx = ssl.create_default_context(cafile=cluster["certificate-authority"])
        ctx.load_cert_chain(user["client-certificate"], user["client-key"])
        self._context = ctx

    def _connection(self, timeout: float) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self._context, timeout=timeout)

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                timeout: float = 30) -> Any:
        """One call on a connection kept per thread; JSON in and out. 404 and 409 raise ApiError like the rest."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = self._connection(timeout)
            try:
                conn.request(method, path, body=data, headers=headers)
                response = conn.getresponse()
                payload = response.read().decode()
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
                continue
            if response.status >= 400:
                raise ApiError(response.status, method, path, payload)
            return json.loads(payload) if payload else None
        raise AssertionError("unreachable")

    def get(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        return self.request("GET", f"{path}{query}")

    def items(self, path: str, **params: str) -> list[dict[str, Any]]:
        return list(self.get(path, **params).get("items", []))

    def create(self, path: str, body: dict[str, Any]) -> Any:
        return self.request("POST", path, body)

    def patch(self, path: str, body: Any, kind: str = "merge") -> Any:
        return self.request("PATCH", path, body, PATCH_TYPES[kind])

    def delete(self, path: str, body: dict[str, Any] | None = None) -> Any:
        return self.request("DELETE", path, body)

    def evict(self, namespace: str, pod: str) -> bool:
        """The eviction subresource, as `kubectl drain` and the Cluster Autoscaler use it: it honours
        PodDisruptionBudgets (429 while a budget forbids it, which returns False here)."""
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": namespace}}
        try:
            self.create(f"/api/v1/namespaces/{namespace}/pods/{pod}/eviction", body)
        except ApiError as exc:
            if exc.status in (404, 429):
                return exc.status == 404
            raise
        return True

    def watch(self, path: str, on_list: Callable[[list[dict[str, Any]]], None],
              on_event: Callable[[str, dict[str, Any]], None], stop: threading.Event,
              **params: str) -> threading.Thread:
        """List `path` (`on_list(items)`: the whole set), then stream its changes (`on_event(type, obj)`, type
        ADDED, MODIFIED or DELETED) until `stop` is set; a dropped stream or an expired resourceVersion (410) lists
        again, so `on_list` must replace what it knew."""

        def run() -> None:
            while not stop.is_set():
                try:
                    listing = self.get(path, **params)
                    on_list(list(listing.get("items", [])))
                    version = listing["metadata"]["resourceVersion"]
                    for kind, obj in self._stream(path, version, stop, params):
                        on_event(kind, obj)
                except (OSError, http.client.HTTPException, ApiError, ValueError):
                    if not stop.is_set():
                        time.sleep(0.2)

        thread = threading.Thread(target=run, name=f"watch {path}", daemon=True)
        thread.start()
        return thread

    def _stream(self, path: str, version: str, stop: threading.Event,
                params: dict[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
        query = urllib.parse.urlencode({**params, "watch": "1", "resourceVersion": version,
                                        "allowWatchBookmarks": "true", "timeoutSeconds": "240"})
        conn = self._connection(timeout=90)  # bookmarks arrive about once a minute
        try:
            conn.request("GET", f"{path}?{query}", headers={"Accept": "application/json"})
            response = conn.getresponse()
            if response.status >= 400:
                raise ApiError(response.status, "WATCH", path, response.read().decode())
            while not stop.is_set():
                line = response.readline()
                if not line:
                    return
                event = json.loads(line)
                if event["type"] == "ERROR":
                    return  # 410 Gone and the like: list again
                if event["type"] != "BOOKMARK":
                    yield event["type"], event["object"]
        finally:
            conn.close()
