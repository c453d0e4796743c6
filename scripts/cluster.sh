#!/usr/bin/env bash
# A local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) from the
# toolchain's binaries, on 127.0.0.1, whose nodes mirror a stack's pools (realengine/cluster.py).
#
#   bash scripts/cluster.sh up [--stack dev] [--name gpu-e2e]   # LAST line: the admin kubeconfig's path
#   bash scripts/cluster.sh down [--name gpu-e2e]               # stops it and removes its state
#
# Exit status: 0 done; 1 a component failed (its output says which); 2 usage error or toolchain not built.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
exec "$PY" -m realengine.cluster "$@"
