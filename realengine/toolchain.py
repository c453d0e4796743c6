"""Where the built toolchain is, and the environment that makes the real Pulumi CLI use it and nothing else.

The CLI, the providers and the control plane are built by `bash scripts/toolchain.sh` into a cache outside the
repository (toolchain/build.py). This module finds that build (without starting one: a cold build takes most of
an hour), installs the providers into a Pulumi home of their own, so that `pulumi plugin ls` lists exactly the
pinned versions, and gives the environment every real-engine command runs in: no update check, no plugin
download, a local file backend and a passphrase secrets provider.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "toolchain" / "pins.toml"
#: The passphrase of every local real-engine stack (a file backend in a temporary directory; nothing to protect,
#: but Pulumi encrypts secrets in the state with it exactly as it would with a real passphrase).
PASSPHRASE = "local-real-engine-tests"
#: The Gcore provider's registry address and version, as Pulumi.yaml's `packages: gcore` states them.
GCORE_REGISTRY = "registry.opentofu.org"
GCORE_SOURCE = "g-core/gcore"


class ToolchainMissing(RuntimeError):
    """The toolchain is not built; the message says what to run."""


def pins() -> dict[str, dict[str, object]]:
    return tomllib.loads(PINS.read_text())


def stamp(name: str) -> str:
    entry = pins()[name]
    return str(entry.get("stamp", entry["version"])).lstrip("v")


#: What a real preview needs; the control plane and KEDA are only needed by the end-to-end tests.
ENGINE = ("pulumi", "pulumi-language-python", "pulumi-kubernetes", "terraform-bridge", "gcore")


def bin_dir(only: tuple[str, ...] = ENGINE) -> Path:
    """The directory of the built binaries; ToolchainMissing when one is not built (nothing is built here)."""
    proc = subprocess.run([sys.executable, str(ROOT / "toolchain" / "build.py"), "--check", "--only", ",".join(only)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainMissing(
            "the Go toolchain is not built on this machine (" + proc.stderr.strip().splitlines()[-1]
            + "); build it once with `bash scripts/toolchain.sh` (30-60 minutes on two cores)")
    return Path(proc.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class Toolchain:
    bin: Path
    home: Path

    @property
    def pulumi(self) -> str:
        return str(self.bin / "pulumi")

    def env(self, backend: Path | None = None) -> dict[str, str]:
        """The environment of a real-engine command: this toolchain only, no network, a local backend."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "GCORE_", "KUBECONFIG"))}
        env.update({
            "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            "PULUMI_HOME": str(self.home),
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            # Plugins come from PULUMI_HOME (installed below), never from PATH, so `pulumi plugin ls` is the truth.
            "PULUMI_IGNORE_AMBIENT_PLUGINS": "true",
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            "PULUMI_DYNAMIC_TF_PLUGIN_CACHE_DIR": str(self.home / "dynamic_tf_plugins"),
            "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK": "true",
        })
        if backend is not None:
            env["PULUMI_BACKEND_URL"] = backend.as_uri()
        return env


def plugins() -> list[tuple[str, str, str]]:
    """(kind, name, version) of every plugin the program needs, with the binary that serves it."""
    return [
        ("resource", "kubernetes", stamp("pulumi-kubernetes")),
        ("resource", "terraform-provider", stamp("terraform-bridge")),
    ]


def prepare(bindir: Path | None = None) -> Toolchain:
    """Install the built providers into a Pulumi home keyed by the build (once), and return the toolchain."""
    bindir = bindir or bin_dir()
    home = bindir.parent / "pulumi-home"
    tc = Toolchain(bindir, home)
    marker = home / ".installed"
    if marker.exists():
        return tc
    home.mkdir(parents=True, exist_ok=True)
    binaries = {"kubernetes": "pulumi-resource-kubernetes", "terraform-provider": "pulumi-resource-terraform-provider"}
    for kind, name, version in plugins():
        subprocess.run([tc.pulumi, "plugin", "install", kind, name, version, "--file", str(bindir / binaries[name])],
                       env=tc.env(), check=True, capture_output=True, text=True)
    # The Any Terraform Provider finds `g-core/gcore 0.34.3` in its plugin cache before it would download it
    # (pulumi-terraform-bridge v3.120.0, dynamic/internal/shim/run/loader.go: getProviderServer); the cache has
    # OpenTofu's layout (<host>/<namespace>/<type>/<version>/<os>_<arch>/terraform-provider-<type>_v<version>).
    gcore_version = str(pins()["gcore"]["version"]).lstrip("v")
    target = (home / "dynamic_tf_plugins" / GCORE_REGISTRY / GCORE_SOURCE / gcore_version / "linux_amd64"
              / f"terraform-provider-gcore_v{gcore_version}")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() or target.is_symlink():
        target.unlink()
    target.symlink_to(bindir / "terraform-provider-gcore")
    marker.write_text("ok\n")
    return tc
