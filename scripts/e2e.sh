#!/usr/bin/env bash
# The end-to-end tests on the real engine and a local control plane (e2e/), in a network namespace with only
# loopback (scripts/lib-netns.sh): nothing they start can reach a network.
#
#   bash scripts/e2e.sh               # previews; lifecycle: up, second up, changes, package consumers, destroy; existing clusters;
#                                     # bad input against the real server; two GPU pools under the real scheduler;
#                                     # the GPU-ready gate (real kubectl; cluster-autoscaler gated and not);
#                                     # the real Gcore provider's refusals and the recovery runbook (API emulator)
#   bash scripts/e2e.sh autoscaling   # the autoscaling chain on the real controllers (E2E_OUT: timeline.json, plots)
#   bash scripts/e2e.sh serving       # the serving profile through the same chain (E2E_OUT: serving-timeline.json)
#   bash scripts/e2e.sh -- -k destroy # extra pytest arguments after --
#   E2E_FILES=e2e/test_lifecycle.py bash scripts/e2e.sh   # only these test files
#   E2E_SHARD=1/2 bash scripts/e2e.sh                     # half of them (below)
#
# Needs the toolchain (bash scripts/toolchain.sh; this script never builds it) and the fast suite's environment
# (bash scripts/test.sh makes .venv and fills the chart cache). Each phase prints its wall time.
# Exit status: 0 the tests passed; 1 a test failed; 2 the toolchain or the environment is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib-netns.sh
suite="lifecycle"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then suite="$1"; shift; fi
[ "${1:-}" = "--" ] && shift
case "$suite" in
  lifecycle) files=(e2e/test_preview.py e2e/test_pools.py e2e/test_gpu_gate.py e2e/test_lifecycle.py e2e/test_existing_cluster.py
             e2e/test_prod.py e2e/test_gcore_provider.py e2e/test_bad_input.py e2e/test_upgrade.py) ;;
  autoscaling) files=(e2e/test_autoscaling.py) ;;
  serving) files=(e2e/test_serving_chain.py) ;;
  *) echo "e2e: unknown suite '$suite' (lifecycle, autoscaling or serving)" >&2; exit 2 ;;
esac
if [ -n "${E2E_FILES:-}" ]; then read -r -a files <<<"$E2E_FILES"; fi
# E2E_SHARD=K/N: the suite's K-th of N parts (every N-th file from the K-th), which can run at once: each run has
# its own network namespace, clusters and stacks (.ci/run runs the lifecycle suite's two halves side by side).
if [ -n "${E2E_SHARD:-}" ]; then
  part="${E2E_SHARD%/*}" parts="${E2E_SHARD#*/}" picked=()
  for i in "${!files[@]}"; do (( i % parts == part - 1 )) && picked+=("${files[$i]}"); done
  files=("${picked[@]}")
fi
if ! python3 toolchain/build.py --check >/dev/null 2>&1; then
  echo "e2e: the Go toolchain is not built on this machine; build it once with: bash scripts/toolchain.sh" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  echo "e2e: no .venv; run bash scripts/test.sh first (it makes the environment and the chart cache)" >&2
  exit 2
fi
# npm installs from this cache inside the namespace (e2e/consumers.py); filled here, while the registry is reachable.
export npm_config_cache="$PWD/.cache/npm"
if [ "${INSIDE_NETNS:-}" != 1 ] && [[ " ${files[*]} " == *" e2e/test_lifecycle.py "* ]]; then
  start=$(date +%s)
  .venv/bin/python -m e2e.consumers
  echo "[e2e] npm cache for the TypeScript consumer: $(( $(date +%s) - start )) s" >&2
fi
isolate_network "$0" "$suite" -- "$@"
export E2E_OUT="${E2E_OUT:-$PWD/e2e-out}"
mkdir -p "$E2E_OUT"
export E2E_CLUSTER_DIR="${E2E_CLUSTER_DIR:-$(mktemp -d)}"
.venv/bin/python -m delivery.charts >/dev/null
start=$(date +%s)
set +e
# No hypothesis plugin: no e2e test uses it, and its lazy import at the terminal summary is where CPython 3.11's AST
# recursion-counter bug (python/cpython gh-106905, e2e/conftest.py) once failed a run whose every test had passed.
.venv/bin/python -m pytest -p no:cacheprovider -p no:xdist -p no:hypothesispytest -q -s "${files[@]}" "$@"
rc=$?
set -e
echo "e2e $suite: exit $rc after $(( $(date +%s) - start )) s" >&2
exit $rc
