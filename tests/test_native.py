"""The compiled simulator (capacity/native.py): the command line loads it only for the sources it was built from,
and it gives the Python modules' results to the byte, in the what-if and in the tuner (worker processes too)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from capacity import native

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def built() -> Path:
    """The build of this checkout's sources (scripts/test.sh makes it; made here if it is missing)."""
    compiler = str(sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None or not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        pytest.skip(f"no C compiler ({compiler}) or no Python headers (Python.h) to build the simulator with")
    return native.build()


def cli(tmp: Path, name: str, *args: str, compiled: bool) -> bytes:
    env = {**os.environ, "CAPACITY_NATIVE": "1" if compiled else "0", "MPLBACKEND": "Agg"}
    out = tmp / f"{name}-{'native' if compiled else 'python'}.json"
    subprocess.run([sys.executable, "-m", "capacity", *args, "--json", str(out)], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=180)
    return out.read_bytes()


#: Three days of each trace (from Monday: prod's business-hours headroom windows open and close each day) keep each
#: case's code paths at a fifth of the whole trace's time.
WHAT_IFS = {
    "dev": ["dev", "--days", "3"],
    "prod-serving-windows-headroom": ["prod", "--days", "3"],
    "prod-gpu-unaware": ["prod", "--gpu-unaware-autoscaler", "--days", "3"],
    "prod-batch": ["prod", "--workload", "embeddings", "--days", "3"],
    "dev-scale-to-zero": ["dev", "--days", "3", "--set", "workloads.0.minReplicas=0",
                          "--set", 'workloads.0.wakeTrigger={"query": "sum(queue)", "threshold": 5}'],
}


@pytest.mark.parametrize("case", WHAT_IFS)
def test_the_compiled_what_if_gives_the_pythons_json(built: Path, tmp_path: Path, case: str) -> None:
    args = WHAT_IFS[case]
    assert cli(tmp_path, case, *args, compiled=True) == cli(tmp_path, case, *args, compiled=False)


#: Two days, one reordering, the knobs that matter least held: a few dozen settings, simulated in two processes
#: (prod's settings carry its serving profile's model to them).
TUNES = {
    "dev": ["dev", "--days", "3", "--reorderings", "1"],
    "prod-serving": ["prod", "--days", "2", "--reorderings", "1", "--min-attainment", "90%",
                     *(a for k in ("gpuPool.headroom", "workloads.0.schedules", "workloads.0.serving.band.scaleDown",
                                   "workloads.0.scaleDownStabilizationSeconds",
                                   "cluster.autoscaler.scale-down-unneeded-time",
                                   "cluster.autoscaler.scale-down-delay-after-add") for a in ("--keep", k))],
}


@pytest.mark.parametrize("case", TUNES)
def test_the_compiled_tuner_gives_the_pythons_json_with_two_processes(built: Path, tmp_path: Path, case: str) -> None:
    args = ["tune", *TUNES[case], "--jobs", "2", "--quiet"]
    assert cli(tmp_path, case, *args, compiled=True) == cli(tmp_path, case, *args, compiled=False)


def test_the_command_line_loads_the_build_and_a_library_import_does_not(built: Path) -> None:
    probe = ("import runpy, sys; sys.argv = ['capacity', '--help']\n"
             "try:\n    runpy.run_module('capacity', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "import capacity.sim; print(capacity.sim.__file__)")
    env = {**os.environ, "CAPACITY_NATIVE": "1"}
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=True).stdout.splitlines()[-1]
    assert Path(loaded).parent == built / "capacity" and loaded.endswith(".so"), loaded
    library = subprocess.run([sys.executable, "-c", "import capacity.sim; print(capacity.sim.__file__)"], cwd=ROOT,
                             env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert library == str(ROOT / "capacity" / "sim.py")


def test_the_plots_counts_stay_whole_numbers_when_compiled(built: Path) -> None:
    """The plot's series (capacity/tally.py `Downsampler`) are left out of the JSON, so the comparison above does not
    see them: compiled, a `float` annotation would turn each count into 3.0."""
    probe = ("from capacity import native; assert native.use()\n"
             "from capacity.bounds import Request, Stack\nfrom capacity.level import Level\n"
             "from capacity.sim import simulate\nfrom capacity.trace import Segment\nfrom pathlib import Path\n"
             "stack = Stack(Request(stack='dev', root=Path('.').resolve(), level=Level(1.0, 5.0)))\n"
             "demand = [Segment(m * 60, (m + 10) * 60, 2.0 + (m // 60) % 9) for m in range(0, 1440, 10)]\n"
             "series = simulate(stack.settings(stack.cfg), demand, plot=True)['series']\n"
             "print(sorted({type(v).__name__ for k in ('desired', 'nodes', 'pending') for v in series[k]}))")
    kinds = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    assert kinds == "['int']"


def test_a_build_of_other_sources_is_never_loaded(tmp_path: Path) -> None:
    """An edited module makes another key, for which there is no build: the modules stay Python."""
    copy = tmp_path / "repo"
    for path in native.sources(ROOT):
        (copy / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        (copy / path.relative_to(ROOT)).write_bytes(path.read_bytes())
    assert {copy / "capacity" / "settings.py", copy / "stackconfig" / "values.py", copy / "mypy.ini"} <= set(
        native.sources(copy)), "what it was compiled against counts too, however deep"
    before = native.key(copy)
    assert before == native.key(ROOT)
    stale = tmp_path / "cache" / before / "capacity"
    stale.mkdir(parents=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for name in native.MODULES:
        (stale / f"{name}{suffix}").touch()
    assert native.find(copy, tmp_path / "cache") is None, "without the group's shared library it is no build"
    (stale.parent / f"0123456789abcdef0123__mypyc{suffix}").touch()
    assert native.find(copy, tmp_path / "cache") == stale.parent
    with (copy / "capacity" / "hpa.py").open("a") as f:
        f.write("\n# an edit\n")
    assert native.key(copy) != before
    assert native.find(copy, tmp_path / "cache") is None
    (copy / "capacity" / "hpa.py").write_bytes((ROOT / "capacity" / "hpa.py").read_bytes())
    assert native.find(copy, tmp_path / "cache") == stale.parent
    with (copy / "capacity" / "settings.py").open("a") as f:
        f.write("\n# an edit\n")
    assert native.find(copy, tmp_path / "cache") is None
    (copy / "capacity" / "settings.py").write_bytes((ROOT / "capacity" / "settings.py").read_bytes())
    (stale / f"sim{suffix}").unlink()
    assert native.find(copy, tmp_path / "cache") is None, "a build missing a module is no build"
