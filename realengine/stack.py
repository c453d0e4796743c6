"""Run this repository's `__main__.py` on the real Pulumi engine, for one stack, in a throw-away project directory.

The CLI runs `pulumi preview` / `up` / `destroy` in the project directory, as a user types them, and starts the
program through the real Python language host (pulumi-language-python beside the CLI, toolchain/pins.toml) with the
virtualenv Pulumi.yaml names. The Automation API's local-program mode (a workspace on that directory, no inline
program) only types the commands and reads their event log. The providers are the toolchain's:
pulumi-resource-kubernetes, the Any Terraform Provider with the real Gcore provider behind it (pointed at the
Gcore API emulator, realengine/gcore_api.py), the SDK generated for it (sdks/gcore, installed in the
virtualenv); a file backend and the passphrase secrets provider.

The project directory holds a copy of Pulumi.yaml, the stack file (copied, optionally changed: `overrides`, dotted
stack-file paths, so a test can preview "the same stack with maxNodes 3" without touching the repository's
files), and symlinks to the program's `__main__.py` and to the virtualenv these tools run in (the repository's
.venv) under the name Pulumi.yaml gives it. PYTHONPATH names the checkout, whose packages the program imports (in
the repository root, where a user runs it, they are beside `__main__.py`): with `--base`, the base revision's
checkout (realengine/preview.py).
"""

from __future__ import annotations

import copy
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from realengine.toolchain import ROOT, Toolchain, ToolchainMissing

#: A token that no API would accept; the Gcore provider sends it only to the Gcore API emulator.
DUMMY_TOKEN = "fake-token-for-local-previews"
#: The file a `prelude` runs the program from (not `program.py`: the program imports a package of that name).
UNPATCHED_MAIN = "_main_unpatched.py"


def project_dir(src: Path, work: Path, prelude: str = "") -> None:
    """Make `work` a project directory of the program in `src`: its Pulumi.yaml, its `__main__.py` and, under the
    name Pulumi.yaml gives it, the virtualenv this process runs in (.venv, which scripts/test.sh makes).

    `prelude`: Python run in the program's process before the program (a test switching a rule off)."""
    runtime = yaml.safe_load((src / "Pulumi.yaml").read_text()).get("runtime")
    options = (runtime.get("options") or {}) if isinstance(runtime, dict) else {}
    venv_name = options.get("virtualenv")
    if options.get("toolchain", "pip") != "pip" or not isinstance(venv_name, str):
        raise ToolchainMissing(
            f"{src / 'Pulumi.yaml'}: runtime.options is {options!r}; the real engine runs the program in the "
            "repository's virtualenv, so it needs `toolchain: pip` and `virtualenv: <dir>` (this project: .venv)")
    venv = Path(sys.prefix)
    if sys.prefix == sys.base_prefix:
        raise ToolchainMissing(f"{sys.executable} is not a virtualenv's; run this with .venv/bin/python (bash "
                               "scripts/test.sh makes .venv)")
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "Pulumi.yaml", work / "Pulumi.yaml")
    links = {venv_name: venv}
    if prelude:
        links[UNPATCHED_MAIN] = src / "__main__.py"
        (work / "__main__.py").write_text(
            f"{prelude}\n\nimport pathlib\nimport runpy\n\n"
            f"runpy.run_path(str(pathlib.Path(__file__).with_name({UNPATCHED_MAIN!r})), run_name='__main__')\n")
    else:
        links["__main__.py"] = src / "__main__.py"
    for name, target in links.items():
        link = work / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)


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


def open_stack(name: str, work: Path, toolchain: Toolchain, env: Mapping[str, str]) -> Any:
    """The Automation API's local-program workspace on the project directory `work`, stack `name` in it."""
    from pulumi import automation as auto

    opts = auto.LocalWorkspaceOptions(
        work_dir=str(work), pulumi_home=str(toolchain.home), env_vars=dict(env),
        pulumi_command=auto.PulumiCommand(root=str(toolchain.bin.parent), skip_version_check=True))
    return auto.create_or_select_stack(name, work_dir=str(work), opts=opts)


@contextmanager
def local_stack(name: str, toolchain: Toolchain, *, overrides: Mapping[str, Any] | None = None,
                secrets: Mapping[str, str] | None = None, workdir: Path | None = None,
                env: Mapping[str, str] | None = None, keep: bool = False, prelude: str = "") -> Iterator[LocalStack]:
    """A fresh stack `name` with the repository's stack file (plus `overrides`) and dummy secret values."""
    from pulumi import automation as auto

    own = workdir is None
    work = workdir or Path(tempfile.mkdtemp(prefix=f"real-{name}-"))
    backend = work / "backend"
    backend.mkdir(parents=True, exist_ok=True)
    project_dir(ROOT, work, prelude)
    envvars = {**toolchain.env(backend), "PYTHONPATH": str(ROOT), **(env or {})}
    ls = LocalStack(name, toolchain, work, None, base_overrides=dict(overrides or {}))
    ls.write_stack_file()
    ls.stack = open_stack(name, work, toolchain, envvars)
    config = {"gcore:permanentApiToken": DUMMY_TOKEN, **{f"secrets:{k}": v for k, v in (secrets or {}).items()}}
    ls.stack.set_all_config({k: auto.ConfigValue(v, secret=True) for k, v in config.items()})
    try:
        yield ls
    finally:
        if own and not keep:
            shutil.rmtree(work, ignore_errors=True)
