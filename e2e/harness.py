"""Helpers of the end-to-end tests: the platform stack on the local control plane, kubectl, waiting, timing.

A `Platform` is one stack of this project deployed by the real engine onto the local cluster: the real Gcore
provider creates the cluster in the Gcore API emulator (realengine/gcore_api.py), whose kubeconfig is the local
cluster's admin kubeconfig, so the program runs unchanged, the kubeconfig invoke included; or, in existing-cluster
mode, the stack is given that kubeconfig as a secret and creates no cluster at all.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realengine import gcore_api
from realengine.config_keys import secret_keys
from realengine.stack import LocalStack, local_stack
from realengine.toolchain import ROOT, Toolchain

CHART_CACHE = ROOT / ".cache" / "charts"
#: Label every object the program creates carries (components: PLATFORM_LABELS).
PART_OF = "app.kubernetes.io/part-of=gpu-platform"


@dataclass
class Timer:
    """Wall time of each phase, printed as it ends (scripts/e2e.sh shows them)."""

    phases: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.phases[name] = time.monotonic() - start
            print(f"\n[e2e] {name}: {self.phases[name]:.1f} s", flush=True)


@dataclass(frozen=True)
class Kube:
    """kubectl against the local cluster `name`."""

    tc: Toolchain
    kubeconfig: Path
    name: str = ""

    def env(self) -> dict[str, str]:
        return {**self.tc.env(), "KUBECONFIG": str(self.kubeconfig)}

    def run(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.tc.bin / "kubectl"), *args], env=self.env(), input=input, text=True,
                              capture_output=True, check=check, timeout=120)

    def get(self, *args: str) -> Any:
        return json.loads(self.run("get", *args, "-o", "json").stdout)

    def apply(self, manifest: Mapping[str, Any], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run("apply", "-f", "-", *args, input=json.dumps(manifest), check=check)

    def create(self, manifest: Mapping[str, Any], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run("create", "-f", "-", *args, input=json.dumps(manifest), check=check)

    def ours(self) -> list[str]:
        """Every object (of every listable kind) that carries the platform's label, as `kind/namespace/name`."""
        kinds = self.run("api-resources", "--verbs=list", "-o", "name").stdout.split()
        out: list[str] = []
        for kind in kinds:
            if kind.startswith("events"):
                continue
            proc = self.run("get", kind, "-A", "-l", PART_OF, "-o", "json", "--ignore-not-found", check=False)
            if proc.returncode != 0 or not proc.stdout.strip():
                continue
            for item in json.loads(proc.stdout).get("items", []):
                md = item["metadata"]
                out.append(f"{item['kind']}/{md.get('namespace', '')}/{md['name']}")
        return sorted(out)


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60, every: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def existing_cluster_settings(stack: str) -> dict[str, Any]:
    """The stack file's changes that deploy `stack` into an existing cluster (docs/existing-cluster.md): the
    kubeconfig from `secrets:kubeconfig`, no keys of a created cluster, the GPU pool stated in full."""
    from realengine.stack_view import config

    cfg = config(stack)
    p = cfg.pools[0]
    ns = "gpu-autoscaling"
    return {
        f"{ns}:cluster.existing": {"kubeconfigSecret": "kubeconfig"},
        **{f"{ns}:cluster.{key}": None for key in ("projectId", "projectName", "regionId", "regionName", "keypair",
                                                    "network", "subnet", "cni", "autoscaler")},
        f"{ns}:cluster.version": cfg.cluster.version,
        f"{ns}:gpuPool.flavor": p.flavor, f"{ns}:gpuPool.minNodes": p.min_nodes, f"{ns}:gpuPool.maxNodes": p.max_nodes,
        f"{ns}:gpuPool.labels": dict(p.labels), f"{ns}:gpuPool.taints": dict(p.taints),
        f"{ns}:systemPool": None, f"{ns}:protect": None,
    }


def placeholder_secrets(stack: str) -> dict[str, str]:
    return {k: f"placeholder-{k}" for k in secret_keys(stack)}


def repackaged_chart(archive: Path, version: str, out: Path) -> Path:
    """The chart in `archive` under another version (Chart.yaml `version`), nothing else changed: a second pin to
    upgrade to, for a chart whose only other archive is not in the cache."""
    with tarfile.open(archive) as src, tarfile.open(out, "w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            if data is not None and member.name.count("/") == 1 and member.name.endswith("/Chart.yaml"):
                lines = [f"version: {version}" if line.startswith("version:") else line
                         for line in data.decode().splitlines()]
                data = ("\n".join(lines) + "\n").encode()
                member.size = len(data)
            dst.addfile(member, io.BytesIO(data) if data is not None else None)
    return out


@contextmanager
def platform(stack: str, tc: Toolchain, kube: Kube, workdir: Path, *, overrides: Mapping[str, Any] | None = None,
             mirror: Path = CHART_CACHE, existing_cluster: bool = False, prelude: str = "") -> Iterator[LocalStack]:
    """The stack `stack` of this project, on the local cluster, in a workspace and Gcore API emulator of its own
    (served while the stack is open; its clusters and tasks in `workdir/gcore-api`; `prelude`:
    realengine.stack.project_dir)."""
    # Deleting a Gcore cluster deletes everything in it: the local control plane standing for it goes too.
    on_delete = f"PYTHONPATH={ROOT} {sys.executable} -m realengine.cluster down --name {kube.name}"
    settings: dict[str, Any] = {"gpu-autoscaling:charts.mirror": str(mirror), **(overrides or {})}
    secrets = placeholder_secrets(stack)
    if existing_cluster:
        settings.update(existing_cluster_settings(stack))
        secrets["kubeconfig"] = kube.kubeconfig.read_text()
    with (gcore_api.serving(workdir / "gcore-api", kube.kubeconfig, on_delete) as endpoint,
          local_stack(stack, tc, overrides=settings, secrets=secrets, workdir=workdir / "workspace",
                      env=gcore_api.provider_env(endpoint), prelude=prelude) as ls):
        yield ls
