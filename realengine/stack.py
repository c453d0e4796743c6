"""Run this repository's `__main__.py` on the real Pulumi engine, for one stack, in a throw-away workspace.

The program runs through the Python SDK's own language server (pulumi.automation, an inline program that the CLI
reaches with `--client`): the standalone Python language host is a module the Go proxy does not serve, and the
language server is the SDK's supported way to run a program without it. Everything else is what `pulumi up` on a
user's machine runs: the CLI's engine, pulumi-resource-kubernetes, the Any Terraform Provider with the real Gcore
provider behind it (pointed at the Gcore API emulator, realengine/gcore_api.py), the SDK generated for it
(sdks/gcore), a file backend and the passphrase secrets provider.

The stack file is copied into the workspace, optionally changed (`overrides`, dotted stack-file paths), so a test
can preview "the same stack with maxNodes 3" without touching the repository's files.
"""

from __future__ import annotations

import copy
import runpy
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from realengine.toolchain import ROOT, Toolchain

SDKS = ROOT / "sdks"
PROJECT = "gpu-autoscaling"
#: A token that no API would accept; the Gcore provider sends it only to the Gcore API emulator.
DUMMY_TOKEN = "fake-token-for-local-previews"


def program_path() -> list[str]:
    """sys.path entries the program needs: the repository (its packages) and the generated Gcore SDK."""
    return [str(ROOT), str(SDKS / "gcore")]


def run_program() -> None:
    """The inline program: exactly the repository's `__main__.py`, as the Python language host would run it."""
    for entry in reversed(program_path()):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__")


def set_path(doc: dict[str, Any], dotted: str, value: Any) -> None:
    """Set a stack-file path such as `gpu-autoscaling:gpuPool.minNodes` or `gpu-autoscaling:workloads.0.image`
    (list items by index); `None` removes the key."""
    keys = dotted.split(".")
    node: Any = doc.setdefault("config", {})
    for i, key in enumerate(keys):
        k: Any = int(key) if isinstance(node, list) else key
        if isinstance(node, list) and k == len(node):
            node.append({})  # one past the end adds an item (`workloads.1` on a one-workload stack)
        if i < len(keys) - 1:
            node = node[k] if isinstance(node, list) else node.setdefault(k, {})
        elif value is None and isinstance(node, dict):
            node.pop(k, None)
        else:
            node[k] = value


@dataclass
class LocalStack:
    """A stack of this project in a local workspace and file backend of its own."""

    name: str
    toolchain: Toolchain
    workdir: Path
    stack: Any
    events: list[dict[str, Any]] = field(default_factory=list)
    #: Stack-file changes every rewrite keeps (what the workspace was opened with).
    base_overrides: dict[str, Any] = field(default_factory=dict)

    def _collect(self) -> Callable[[Any], None]:
        self.events.clear()

        def on_event(event: Any) -> None:
            pre = getattr(event, "resource_pre_event", None)
            if pre is not None and pre.metadata is not None:
                md = pre.metadata
                self.events.append({
                    "op": str(md.op.value if hasattr(md.op, "value") else md.op),
                    "urn": md.urn,
                    "type": md.type,
                    "diffs": list(md.diffs or []),
                    "keys": list(md.keys or []),
                    "detailed_diff": {k: str(getattr(v.diff_kind, "value", v.diff_kind))
                                      for k, v in (md.detailed_diff or {}).items()},
                })

        return on_event

    def preview(self, **kwargs: Any) -> Any:
        return self.stack.preview(color="never", on_event=self._collect(), **kwargs)

    def up(self, **kwargs: Any) -> Any:
        return self.stack.up(color="never", on_event=self._collect(), **kwargs)

    def destroy(self, **kwargs: Any) -> Any:
        return self.stack.destroy(color="never", on_event=self._collect(), **kwargs)

    def refresh(self, **kwargs: Any) -> Any:
        return self.stack.refresh(color="never", on_event=self._collect(), **kwargs)

    def changes(self) -> dict[str, str]:
        """URN -> operation of the last command's steps, without the ones that change nothing."""
        return {e["urn"]: e["op"] for e in self.events if e["op"] not in ("same", "read")}

    def write_stack_file(self, overrides: Mapping[str, Any] | None = None, base: Path | None = None) -> None:
        """(Re)write the workspace's stack file from the repository's (or `base`), with the workspace's own
        `base_overrides` and then `overrides` applied."""
        src = base or ROOT / f"Pulumi.{self.name}.yaml"
        doc = yaml.safe_load(src.read_text()) or {}
        current = self.workdir / f"Pulumi.{self.name}.yaml"
        if current.exists():
            # Keep what the engine wrote (the passphrase salt, secrets set below) and replace the rest.
            kept = yaml.safe_load(current.read_text()) or {}
            for key in ("encryptionsalt", "secretsprovider", "encryptedkey"):
                if key in kept:
                    doc[key] = kept[key]
            secure = {k: v for k, v in (kept.get("config") or {}).items() if isinstance(v, dict) and "secure" in v}
            doc.setdefault("config", {}).update(secure)
        doc = copy.deepcopy(doc)
        for path, value in {**self.base_overrides, **(overrides or {})}.items():
            set_path(doc, path, value)
        current.write_text(yaml.safe_dump(doc, sort_keys=False))


@contextmanager
def local_stack(name: str, toolchain: Toolchain, *, overrides: Mapping[str, Any] | None = None,
                secrets: Mapping[str, str] | None = None, workdir: Path | None = None,
                env: Mapping[str, str] | None = None, keep: bool = False) -> Iterator[LocalStack]:
    """A fresh stack `name` with the repository's stack file (plus `overrides`) and dummy secret values."""
    from pulumi import automation as auto

    own = workdir is None
    work = workdir or Path(tempfile.mkdtemp(prefix=f"real-{name}-"))
    backend = work / "backend"
    backend.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "Pulumi.yaml", work / "Pulumi.yaml")
    envvars = {**toolchain.env(backend), **(env or {})}
    ls = LocalStack(name, toolchain, work, None, base_overrides=dict(overrides or {}))
    ls.write_stack_file()
    ws = auto.LocalWorkspace(
        work_dir=str(work),
        pulumi_home=str(toolchain.home),
        env_vars=envvars,
        program=run_program,
        pulumi_command=auto.PulumiCommand(root=str(toolchain.bin.parent), skip_version_check=True),
    )
    ls.stack = auto.create_or_select_stack(name, project_name=PROJECT, program=run_program, work_dir=str(work),
                                          opts=auto.LocalWorkspaceOptions(
                                              work_dir=str(work), pulumi_home=str(toolchain.home),
                                              env_vars=envvars,
                                              pulumi_command=ws.pulumi_command))
    config = {"gcore:permanentApiToken": DUMMY_TOKEN, **{f"secrets:{k}": v for k, v in (secrets or {}).items()}}
    ls.stack.set_all_config({k: auto.ConfigValue(v, secret=True) for k, v in config.items()})
    try:
        yield ls
    finally:
        if own and not keep:
            shutil.rmtree(work, ignore_errors=True)
