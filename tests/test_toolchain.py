"""The pinned Go toolchain (toolchain/pins.toml, toolchain/build.py): pins agree with each other and with the
Python pins, and the builder's behaviour that CI and reviewers rely on (idempotence, `--check`, the last line,
naming the module the proxy refused). None of this builds anything: cold builds take most of an hour."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "toolchain"))

import build  # noqa: E402  (toolchain/build.py: standard library only, runs before the virtualenv exists)


def pypi_pin(name: str) -> str:
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        m = re.match(rf"^{re.escape(name)}==(\S+)", line)
        if m:
            return m.group(1)
    raise AssertionError(f"{name} is not pinned in requirements.txt")


def required_version(gomod: Path, module: str) -> str:
    m = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", gomod.read_text(), re.M)
    assert m, f"{gomod} does not require {module}"
    return m.group(1)


@pytest.fixture(scope="module")
def components() -> list[build.Component]:
    return build.load_pins()


def test_each_pin_is_the_version_its_wrapper_requires(components: list[build.Component]) -> None:
    for c in components:
        rev = {m.module: m.rev for m in c.mirror}.get(c.module)
        if rev is not None and not rev.startswith("v"):
            # An untagged module, at a commit: the wrapper requires the placeholder of a folder replace, so that
            # the version comes from the pin's rev alone (a mirror folder, or `go get module@rev`).
            assert re.fullmatch(r"v\d+\.0\.0-00010101000000-000000000000",
                                required_version(c.wrapper_dir / "go.mod", c.module)), c.name
        else:
            assert required_version(c.wrapper_dir / "go.mod", c.module) == c.version, c.name


def test_the_language_host_is_built_against_the_clis_release(components: list[build.Component]) -> None:
    by = {c.name: c for c in components}
    host, cli = by["pulumi-language-python"], by["pulumi"]
    assert host.version == cli.version and host.ldflags == cli.ldflags[:1]
    for lib in ("github.com/pulumi/pulumi/pkg/v3", "github.com/pulumi/pulumi/sdk/v3"):
        assert required_version(host.wrapper_dir / "go.mod", lib) == cli.version, lib
    # The CLI finds the host and its executor script beside itself (pulumi/pulumi sdk/python/cmd/pulumi-language-
    # python/main.go runs `pulumi-language-python-exec`).
    assert host.outputs == ("pulumi-language-python", "pulumi-language-python-exec")


def test_every_wrapper_commits_its_go_sum(components: list[build.Component]) -> None:
    for c in components:
        assert (c.wrapper_dir / "go.sum").stat().st_size > 0, f"{c.wrapper} has no go.sum"


def test_python_sdk_pins_match_the_engine_and_providers(components: list[build.Component]) -> None:
    by = {c.name: c for c in components}
    # pulumi-kubernetes: the provider is stamped with the version of the Python SDK pin.
    assert by["pulumi-kubernetes"].stamp == pypi_pin("pulumi-kubernetes")
    # The CLI is never older than the SDK (Pulumi's compatibility runs one way: a newer CLI, an older SDK).
    cli = tuple(int(x) for x in by["pulumi"].version.lstrip("v").split("."))
    sdk = tuple(int(x) for x in pypi_pin("pulumi").split("."))
    assert cli >= sdk
    assert f"Version={by['pulumi'].version}" in " ".join(by["pulumi"].ldflags)


def test_the_gcore_provider_is_the_version_pulumi_yaml_names(components: list[build.Component]) -> None:
    gcore = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["packages"]["gcore"]
    for provider in (c for c in components if c.name == "gcore"):
        assert gcore["parameters"] == ["g-core/gcore", provider.version.lstrip("v")], provider.name
        assert provider.binaries == ("terraform-provider-gcore",)  # the bridge names the package after the binary


def test_the_control_plane_is_the_minor_the_stacks_run() -> None:
    from stackconfig.versions import DEFAULT_K8S_VERSION

    k8s = next(c for c in build.load_pins() if c.name == "kubernetes")
    assert k8s.version.split(".")[:2] == DEFAULT_K8S_VERSION.split(".")[:2]
    # Unstamped binaries report v0.0.0-master, which pulumi-kubernetes and Helm refuse.
    flags = " ".join(k8s.ldflags)
    minor = k8s.version.split(".")[1]
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        assert f"{pkg}.gitVersion={k8s.version} " in flags and f"{pkg}.gitMinor={minor} " in flags


def test_the_refused_module_is_named_from_gos_own_error() -> None:
    text = ("go: gpu-autoscaling.local/toolchain/terraform-bridge imports\n\tgithub.com/G-Core/gcorelabscloud-go/gcore"
            "/utils/metadata/v1/metadata: github.com/G-Core/gcorelabscloud-go@v0.29.5: reading https://proxy.golang."
            "org/github.com/%21g-%21core/gcorelabscloud-go/@v/v0.29.5.zip: 403 Forbidden\n")
    assert build.module_refused(text) == "github.com/G-Core/gcorelabscloud-go@v0.29.5 (403 Forbidden)"
    assert build.module_refused("go: some other failure") is None


@pytest.mark.subprocess
def test_check_builds_nothing_and_says_what_to_run(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "toolchain" / "build.py"), "--check", "--cache", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "bash scripts/toolchain.sh" in proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was built or created


@pytest.mark.subprocess
def test_an_unknown_component_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "toolchain" / "build.py"), "--only", "pulumii", "--cache",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "pulumii" in proc.stderr and "pulumi-kubernetes" in proc.stderr


@pytest.mark.subprocess
def test_a_built_toolchain_is_not_rebuilt_and_the_last_line_is_its_bin_dir(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Idempotence: with every component marked complete, a run builds nothing and prints the directory."""
    comps = build.load_pins()
    gover = build.go_version()
    for c in comps:
        out = tmp_path / f"{c.name}-{c.version}-{build.cache_key(c, gover)}"
        (out / "bin").mkdir(parents=True)
        for b in c.outputs:
            (out / "bin" / b).write_text("#!/bin/sh\n")
        (out / ".complete").write_text("{}\n")

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("a complete component was rebuilt")

    monkeypatch.setattr(build, "build", no_build)
    lines: list[str] = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: lines.append(" ".join(map(str, a))))
    assert build.main(["--cache", str(tmp_path)]) == 0
    bindir = Path(lines[-1])
    assert bindir.name == "bin" and bindir.parent.parent == tmp_path
    assert sorted(p.name for p in bindir.iterdir()) == sorted({b for c in comps for b in c.outputs})
    # Hard links: the CLI finds its language host beside its own path, symlinks resolved.
    host = next(c for c in comps if c.name == "pulumi-language-python")
    entry = tmp_path / f"{host.name}-{host.version}-{build.cache_key(host, gover)}" / "bin"
    assert not (bindir / "pulumi").is_symlink()
    assert (bindir / "pulumi-language-python").samefile(entry / "pulumi-language-python")


def test_runs_at_once_link_the_bin_dir_without_failing_each_other(tmp_path: Path) -> None:
    """CI's two lifecycle halves check the toolchain at the same moment: each relinks the bin dir, and one of them
    once saw the other's half-made links and reported the toolchain not built."""
    targets = [tmp_path / "cache" / f"t{i}" for i in range(2)]
    for i, target in enumerate(targets):
        target.parent.mkdir(exist_ok=True)
        target.write_text(f"#!/bin/sh\necho {i}\n")
    (tmp_path / "bin").mkdir()
    links = [tmp_path / "bin" / f"tool{i}" for i in range(20)]
    errors: list[BaseException] = []

    def relink(rounds: int) -> None:
        try:
            for r in range(rounds):
                for link in links:
                    build.link_into(targets[r % 2], link)
        except BaseException as exc:  # noqa: BLE001 - any failure of a run is the finding
            errors.append(exc)

    runs = [threading.Thread(target=relink, args=(200,)) for _ in range(4)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert not errors, errors[:3]
    assert all(link.exists() and not link.is_symlink() for link in links)
    assert not [p.name for p in (tmp_path / "bin").iterdir() if p.name.startswith(".")]  # no staged link left


def test_the_cache_key_follows_the_wrapper_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    c = build.load_pins()[0]
    before = build.cache_key(c, "go1.26.8")
    shutil.copytree(c.wrapper_dir, tmp_path / c.wrapper)
    monkeypatch.setattr(build, "HERE", tmp_path)  # Component.wrapper_dir is HERE / wrapper
    assert build.cache_key(c, "go1.26.8") == before
    gosum = tmp_path / c.wrapper / "go.sum"
    gosum.write_text(gosum.read_text() + "\n")
    assert build.cache_key(c, "go1.26.8") != before
    assert build.cache_key(c, "go1.27.0") != build.cache_key(c, "go1.26.8")


PIN = """
[x]
wrapper = "x"
module = "example.com/x"
version = "v1.0.0"
packages = ["."]
binaries = ["x"]
"""


def test_tags_mirror_and_scripts_are_read_from_the_pin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "HERE", tmp_path)  # Component.wrapper_dir is HERE / wrapper
    (tmp_path / "x").mkdir()
    pins = tmp_path / "pins.toml"
    pins.write_text(PIN + """tags = ["kwok"]
[x.mirror]
"example.com/x" = { dir = "x-1.0.0", rev = "0123456789ab" }
"example.com/x/apis" = { dir = "x-1.0.0/apis", rev = "0123456789ab" }
[x.scripts]
"x-exec" = { module = "example.com/sdk", path = "cmd/x-exec" }
""")
    (c,) = build.load_pins(pins)
    assert c.tags == ("kwok",)
    assert c.mirror == (build.Mirrored("example.com/x", "x-1.0.0", "0123456789ab"),
                        build.Mirrored("example.com/x/apis", "x-1.0.0/apis", "0123456789ab"))
    assert c.outputs == ("x", "x-exec")
    plain = build.Component(**{**c.__dict__, "tags": (), "mirror": (), "scripts": ()})
    keys = {build.cache_key(v, "go1.26.8") for v in (c, plain, build.Component(**{**plain.__dict__, "tags": c.tags}),
                                                     build.Component(**{**plain.__dict__, "mirror": c.mirror}),
                                                     build.Component(**{**plain.__dict__, "scripts": c.scripts}))}
    assert len(keys) == 5  # each of them decides the binaries, so each is part of the cache key


@pytest.mark.parametrize(("extra", "named"), [
    ('tags = "kwok"\n', "tags = 'kwok'"),
    ('[x.mirror]\n"example.com/x" = { dir = "x-1.0.0" }\n', "mirror.'example.com/x'"),
    ('[x.mirror]\n"example.com/x" = { dir = "../x", rev = "v1.0.0" }\n', "dir = '../x'"),
    ('[x.scripts]\n"x-exec" = { module = "", path = "cmd/x-exec" }\n', "scripts.'x-exec'"),
])
def test_a_bad_pin_field_is_named_with_its_value(tmp_path: Path, extra: str, named: str) -> None:
    pins = tmp_path / "pins.toml"
    pins.write_text(PIN + extra)
    with pytest.raises(build.ToolchainError, match=re.escape(named)) as err:
        build.load_pins(pins)
    assert "[x]" in str(err.value) and "expected" in str(err.value)


def test_the_mirror_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "DEFAULT_MIRROR", tmp_path)
    monkeypatch.delenv("GO_SOURCE_MIRROR", raising=False)
    assert build.source_mirror() == tmp_path  # unset: the default beside the checkout, when it exists
    monkeypatch.setattr(build, "DEFAULT_MIRROR", tmp_path / "absent")
    assert build.source_mirror() is None
    monkeypatch.setenv("GO_SOURCE_MIRROR", "")
    monkeypatch.setattr(build, "DEFAULT_MIRROR", tmp_path)
    assert build.source_mirror() is None  # set empty: the proxy, even where the default exists
    monkeypatch.setenv("GO_SOURCE_MIRROR", str(tmp_path / "nope"))
    with pytest.raises(build.ToolchainError, match="GO_SOURCE_MIRROR=.*nope.*not a directory"):
        build.source_mirror()


def mirrored(tmp_path: Path) -> build.Component:
    pins = tmp_path / "pins.toml"
    pins.write_text(PIN + """[x.mirror]
"example.com/x" = { dir = "x-1.0.0", rev = "v1.0.0" }
"example.com/x/apis" = { dir = "x-1.0.0/apis", rev = "v1.0.0" }
""")
    return build.load_pins(pins)[0]


@pytest.mark.subprocess
def test_a_read_only_mirror_is_built_from_a_writable_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "x-1.0.0" / "apis").mkdir(parents=True)
    (mirror / "x-1.0.0" / "go.mod").write_text("module example.com/x\n")
    (mirror / "x-1.0.0" / "apis" / "go.mod").write_text("module example.com/x/apis\n")
    for p in [*mirror.rglob("*")][::-1]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    src = tmp_path / "src"
    src.mkdir()
    (src / "go.mod").write_text("module example.com/w\n\ngo 1.26.0\n")
    monkeypatch.setenv("GO_SOURCE_MIRROR", str(mirror))
    env = dict(os.environ, GOFLAGS="-mod=readonly")
    build.use_mirror(mirrored(tmp_path), src, tmp_path / "build", env, tmp_path / "log")
    gomod = (src / "go.mod").read_text()
    assert f"example.com/x => {tmp_path}/build/mirror/x-1.0.0\n" in gomod
    assert f"example.com/x/apis => {tmp_path}/build/mirror/x-1.0.0/apis\n" in gomod
    copy = tmp_path / "build" / "mirror" / "x-1.0.0"
    assert all(p.stat().st_mode & 0o200 for p in [copy, *copy.rglob("*")])  # one copy, writable (root ignores bits)
    assert env["GOFLAGS"] == "-mod=readonly"  # go.sum stays as committed
    (mirror / "x-1.0.0").chmod(0o755)
    (mirror / "x-1.0.0" / "apis").chmod(0o755)
    shutil.rmtree(mirror / "x-1.0.0" / "apis")
    with pytest.raises(build.ToolchainError, match=r"x-1\.0\.0/apis, which does not exist.*GO_SOURCE_MIRROR empty"):
        build.use_mirror(mirrored(tmp_path), src, tmp_path / "build2", env, tmp_path / "log")


def test_without_a_mirror_the_proxy_serves_and_the_checksum_database_checks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GO_SOURCE_MIRROR", "")
    calls: list[tuple[list[str], str]] = []
    monkeypatch.setattr(build, "run_go", lambda args, cwd, env, log: calls.append((args, env["GOFLAGS"])))
    env = {"GOFLAGS": "-mod=readonly"}
    build.use_mirror(mirrored(tmp_path), tmp_path, tmp_path, env, tmp_path / "log")
    assert calls == [(["get", "example.com/x@v1.0.0"], "-mod=mod"), (["get", "example.com/x/apis@v1.0.0"], "-mod=mod")]
    assert env["GOFLAGS"] == "-mod=mod"  # the build that follows may add (checked) go.sum lines
