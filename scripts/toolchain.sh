#!/usr/bin/env bash
# Build the pinned Go toolchain (toolchain/pins.toml) into a cache outside the repository:
# the Pulumi CLI, pulumi-resource-kubernetes, etcd, kube-apiserver/controller-manager/scheduler, kubectl, kwok,
# kwokctl and KEDA. Idempotent: a second run builds nothing. Prints each build and its time on stderr and, as its
# LAST line on stdout, the directory that holds the binaries (put it on PATH).
#
#   bash scripts/toolchain.sh            # build what is missing (cold: ~30-60 min on two cores)
#   bash scripts/toolchain.sh --check    # build nothing; exit 0 (and print the directory) if all is built
#   bash scripts/toolchain.sh --only pulumi,pulumi-kubernetes
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 toolchain/build.py "$@"
