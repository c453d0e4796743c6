#!/usr/bin/env bash
# A real `pulumi preview --diff` of a stack, offline: the real Pulumi CLI runs it in a project directory with
# Pulumi.yaml and the stack file, and its Python language host runs __main__.py in .venv (realengine/stack.py); the
# engine, host and providers are built by scripts/toolchain.sh; a local file backend, a passphrase secrets
# provider, and nothing reaching a network (a network namespace with only loopback: scripts/lib-netns.sh).
#
#   bash scripts/preview.sh dev
#   bash scripts/preview.sh prod --json preview-prod.json    # also the engine's JSON, for delivery.guard
#   bash scripts/preview.sh dev --set gpu-autoscaling:gpuPool.maxNodes=3
#
# Exit status: 0 the preview ran; 1 the engine or the program failed; 2 usage error or toolchain not built.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib-netns.sh
isolate_network "$0" "$@"
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
exec "$PY" -m realengine.preview "$@"
