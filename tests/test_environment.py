"""One environment, pinned: what `pulumi install` builds is what the tests and the offline tools run in."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def ranges(name: str) -> list[Requirement]:
    out = []
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            out += ranges(str(Path(name).parent / line.removeprefix("-r ").strip()))
        else:
            out.append(Requirement(line))
    return out


def pins(name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line == "sdks/gcore":
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;]+)", line)
        assert match, f"{name}: {line!r} is not an exact pin; regenerate with `bash scripts/lock.sh`"
        out[canonicalize_name(match.group(1))] = match.group(2)
    return out


LOCKS = [("requirements.in", "requirements.txt"), ("requirements-dev.in", "requirements-dev.txt"),
         ("capacity/requirements.in", "capacity/requirements.txt")]


@pytest.mark.parametrize(("source", "lock"), LOCKS)
def test_every_range_is_pinned_inside_it(source: str, lock: str) -> None:
    pinned = pins(lock)
    for req in ranges(source):
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req.name} (from {source}) is not pinned in {lock}: run `bash scripts/lock.sh`"
        assert req.specifier.contains(pinned[name], prereleases=True), (
            f"{lock} pins {req.name}=={pinned[name]}, outside {source}'s {req.specifier}: run `bash scripts/lock.sh`"
        )


@pytest.mark.parametrize("lock", ["requirements.txt", "capacity/requirements.txt"])
def test_tests_run_what_pulumi_and_the_tools_install(lock: str) -> None:
    runtime, dev = pins(lock), pins("requirements-dev.txt")
    differ = {n: (v, dev.get(n)) for n, v in runtime.items() if dev.get(n) != v}
    assert not differ, f"requirements-dev.txt must pin everything exactly as {lock} does: {differ}"


def test_pulumi_and_the_test_command_share_one_virtualenv() -> None:
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert project["runtime"]["options"]["toolchain"] == "pip"
    venv = project["runtime"]["options"]["virtualenv"]
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert f'VENV="${{VENV:-{venv}}}"' in script, "scripts/test.sh must default to Pulumi.yaml's virtualenv"
    assert "-r requirements-dev.txt" in script, "scripts/test.sh must install the pinned dev requirements"
