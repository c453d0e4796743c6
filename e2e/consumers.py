"""A workload team's program, in each language a team may write it, with the platform's component package added
as a user adds it (`pulumi package add`): the examples under examples/ in fresh project directories.

npm inside the suite's network namespace installs from npm's cache only (`npm_config_offline`). scripts/e2e.sh
fills that cache first, with the registry reachable, by setting the TypeScript example up once in a scratch
directory (`python -m e2e.consumers`): the same `npm ci` and `pulumi package add`, so the cache holds what the tests'
own setup asks for, the generated SDK's own dependencies included (pulumi's Node.js codegen asks for TypeScript 4).
`npm_config_cache` (scripts/e2e.sh) is the repository's `.cache/npm`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from realengine.stack import LocalStack
from realengine.toolchain import ROOT, Toolchain

#: The language host upgrades pip, setuptools and wheel and installs requirements.txt in each virtualenv it uses
#: (pulumi sdk/python/toolchain/pip.go `InstallDependencies`). Offline there is no index: pip keeps what is
#: installed, and builds the generated SDK with the setuptools it has.
OFFLINE_PIP = {"PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0"}


#: The consumer examples a workload team copies, by language: the folder under examples/ and the workload name the
#: deploy test gives the platform's dev workload there.
CONSUMERS = {"python": ("package-consumer", "inference-b"), "typescript": ("package-consumer-ts", "inference-c")}


def npm_ci(project: Path, env: dict[str, str]) -> None:
    """The project's locked npm packages, install scripts off (the kubernetes plugin is the toolchain's)."""
    done = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def add_package(tc: Toolchain, work: Path, env: dict[str, str], language: str) -> None:
    shutil.copytree(ROOT / "examples" / CONSUMERS[language][0], work,
                    ignore=shutil.ignore_patterns("Pulumi.*.yaml", "node_modules", "sdks", "venv"))
    if language == "python":
        subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
        site = next((work / "venv" / "lib").glob("python*/site-packages"))
        purelib = sysconfig.get_paths()["purelib"]
        (site / "platform-venv.pth").write_text(f"import sys; sys.path.insert(0, {purelib!r})\n")
    else:
        npm_ci(work, env)
    added = subprocess.run([tc.pulumi, "package", "add", str(ROOT / "gpu_platform")], cwd=work, env=env,
                           capture_output=True, text=True, timeout=600)
    assert added.returncode == 0, added.stdout[-2000:] + added.stderr[-3000:]
    if language == "python":
        assert "sdks/gpu-platform" in (work / "requirements.txt").read_text().split()
    else:
        dependencies = json.loads((work / "package.json").read_text())["dependencies"]
        assert dependencies["@pulumi/gpu-platform"] == "file:sdks/gpu-platform", dependencies


def package_consumer(tc: Toolchain, dev: LocalStack, work: Path, stack_name: str, workload: dict[str, Any],
                     language: str, team: str) -> Any:
    """The `language` consumer example in a fresh project directory, the package added as a user adds it: `pulumi
    package add`, which generates that language's SDK from the package's schema and installs it. Offline the Python
    project's virtualenv sees the repository's (pulumi, pulumi-kubernetes), put first on its path, and gets only the
    generated SDK; the TypeScript project installs its locked npm packages from npm's cache (above). Stack
    `stack_name` reads the dev platform through a StackReference, and deploys with the kubeconfig of `team`."""
    from pulumi import automation as auto

    from realengine.stack import open_stack

    env = {**tc.env(dev.workdir / "backend"), **OFFLINE_PIP, "npm_config_offline": "true"}
    if not work.exists():
        try:
            add_package(tc, work, env, language)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)  # the next test starts afresh, not from half a project
            raise
    stack = open_stack(stack_name, work, tc, env)
    stack.set_all_config({
        "platformStack": auto.ConfigValue(f"organization/gpu-autoscaling/{dev.name}"),
        "team": auto.ConfigValue(team),
        "workload": auto.ConfigValue(json.dumps(workload)),
    })
    return stack


def fill_npm_cache() -> None:
    from realengine.toolchain import ENGINE, bin_dir, prepare

    tc = prepare(bin_dir((*ENGINE, "pulumi-language-nodejs")))
    with tempfile.TemporaryDirectory(prefix="npm-cache-fill-") as tmp:
        add_package(tc, Path(tmp) / "project", {**tc.env(), **OFFLINE_PIP}, "typescript")


if __name__ == "__main__":
    fill_npm_cache()
