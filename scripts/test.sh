#!/usr/bin/env bash
# The project's one test command: installs what the tests need on a fresh machine, then runs them.
# Usage: bash scripts/test.sh [--quick | --setup] [pytest args...]
#   --quick: the inner loop (lint, types, the unit and graph tests); leaves out the tests marked `subprocess` or
#            `charts` (pytest.ini), which the full run (CI) includes, and installs neither Prometheus nor the charts.
#   --setup: only what the full run installs (Prometheus, .venv, the chart cache, the compiled simulator), which
#            scripts/e2e.sh needs too; .ci/run starts the lifecycle suite on it while the fast suite runs.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=""
SETUP=""
if [ "${1:-}" = "--quick" ]; then
  QUICK=1
  shift
elif [ "${1:-}" = "--setup" ]; then
  SETUP=1
  shift
fi

# Real Prometheus/promtool for the metrics-path tests (Debian's `prometheus` package).
# amtool (Debian's `prometheus-alertmanager` package) checks the rendered Alertmanager configuration.
if [ -z "$QUICK" ] && { ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1 \
    || ! command -v amtool >/dev/null 2>&1; }; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo -n"   # GitHub runners: passwordless sudo
  if command -v apt-get >/dev/null 2>&1 && { [ -z "$SUDO" ] || sudo -n true 2>/dev/null; }; then
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager >/dev/null
    # The package may start a system service we do not want: the tests start their own on loopback.
    ($SUDO systemctl stop prometheus prometheus-node-exporter || $SUDO service prometheus stop || true) >/dev/null 2>&1
    ($SUDO systemctl stop prometheus-alertmanager || $SUDO service prometheus-alertmanager stop || true) >/dev/null 2>&1
  else
    echo "warning: prometheus/promtool missing and cannot be installed; metrics-path tests will be skipped" >&2
  fi
fi

# In CI a missing Prometheus is a failure, not a skip: the metrics-path tests are the point.
if [ "${CI:-}" = "true" ]; then
  export REQUIRE_PROMETHEUS=1
  export REQUIRE_AMTOOL=1
fi

VENV="${VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
# Only when the pins or the Gcore SDK changed since the last install: pip reinstalls a local directory requirement
# (sdks/gcore) on every run, taking the SDK out from under any program running in this .venv meanwhile (CI runs the
# lifecycle e2e beside this script; one `pulumi preview` failed in `pip list` that way).
stamp="$VENV/.requirements-dev.sha256"
wanted=$(find requirements-dev.txt sdks/gcore \( -name build -o -name '*.egg-info' -o -name __pycache__ \) -prune \
  -o -type f -print | LC_ALL=C sort | xargs sha256sum | sha256sum)
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements-dev.txt
  echo "$wanted" >"$stamp"
fi
# The tools (`python -m offline.plan`, `stackconfig`, `capacity`, `delivery.*`) are this repository's packages:
# a .pth file puts its root on the environment's sys.path, so they run from any directory, not only from here.
"$VENV/bin/python" -c 'import pathlib, sys, sysconfig
pth = pathlib.Path(sysconfig.get_paths()["purelib"], "gpu-autoscaling-repository.pth")
if not pth.exists() or pth.read_text() != sys.argv[1] + "\n":  # rewritten, it would be empty for a moment
    pth.write_text(sys.argv[1] + "\n")' "$PWD"
charts() {
  # The pinned charts the render tests use, into .cache/charts/ (git-ignored): from the charts' repositories when
  # reachable, else from the mirror CHART_MIRROR (default ../shared/reference/charts/packaged beside the checkout).
  # Prints the source used. A chart found nowhere stops the run here, on every machine, with one message naming
  # where it was looked for and what to run (the render tests would otherwise fail one by one for that one cause).
  "$VENV/bin/python" -m delivery.charts
}
simulator() {
  # The what-if's simulator compiled with mypyc (capacity/native.py) into .cache/capacity-native/: the tuner and
  # the what-if two to three times faster, the same results. Without a C compiler they run it as Python.
  "$VENV/bin/python" -m capacity.native || true
}
if [ -n "$SETUP" ]; then
  charts
  simulator
  exit 0
fi
# Before lint and types: a clone that cannot have the charts learns it at once, not after them.
[ -n "$QUICK" ] || charts
"$VENV/bin/python" -m ruff check .
# Types (mypy.ini lists the files; its cache under .cache/mypy keeps a second run to a second).
"$VENV/bin/python" -m mypy
if [ -n "$QUICK" ]; then
  exec "$VENV/bin/python" -m pytest -q -n auto --dist loadgroup -p tests.skip_accounting -m "not subprocess and not charts" "$@"
fi
simulator  # after lint and types: a rebuild after an edit (~20 s) does not hold them up
# tests.skip_accounting prints the number of skipped tests and why; in CI a skip not explained by a missing
# optional tool fails the run.
# -n auto: pytest-xdist spreads the tests over the cores (two here, more on CI runners); --dist loadgroup keeps
# the tests of one `xdist_group` on one worker, so that they share one fixture (tests/test_tune_runs.py).
exec "$VENV/bin/python" -m pytest -q -n auto --dist loadgroup -p tests.skip_accounting "$@"
