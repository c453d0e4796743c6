#!/usr/bin/env bash
# Diff the offline plans (and their Mermaid graphs) of two versions of the program, stack by stack:
#   bash scripts/plan-diff.sh BASE_REF [HEAD_REF] [-- STACK...]
# BASE_REF and HEAD_REF are git revisions; without HEAD_REF the working tree (uncommitted changes included) is the
# head. Stacks default to every Pulumi.<stack>.yaml of the head. Each side runs ITS code on ITS stack files
# (`python -m offline.plan`, no credentials), in the one environment (.venv) scripts/test.sh creates.
# Exit 0: every plan byte-identical; 1: a plan differs (the diff is printed); 2: a side could not be planned.
# A reviewer's tool for refactors ("behaviour unchanged"), and the proof that a fix changes what it says.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PYTHON="${PYTHON:-$root/.venv/bin/python}"
[ $# -ge 1 ] || { echo "usage: bash scripts/plan-diff.sh BASE_REF [HEAD_REF] [-- STACK...]" >&2; exit 2; }
base=$1
shift
head=""
if [ $# -ge 1 ] && [ "$1" != "--" ]; then head=$1; shift; fi
[ "${1:-}" = "--" ] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A revision as a plain tree (no checkout, no worktree metadata): git archive.
tree_of() {
  mkdir -p "$tmp/$2"
  git archive --format=tar "$1" | tar -x -C "$tmp/$2"
  echo "$tmp/$2"
}
base_dir=$(tree_of "$base" base)
if [ -n "$head" ]; then head_dir=$(tree_of "$head" head); else head_dir=$root; fi

stacks=("$@")
if [ ${#stacks[@]} -eq 0 ]; then
  for f in "$head_dir"/Pulumi.*.yaml; do s=${f##*/Pulumi.}; stacks+=("${s%.yaml}"); done
fi

status=0
for stack in "${stacks[@]}"; do
  for side in base head; do
    dir=$base_dir; [ $side = head ] && dir=$head_dir
    if ! (cd "$dir" && "$PYTHON" -m offline.plan "$stack" --out "$tmp/$stack.$side.yaml" 2>"$tmp/$stack.$side.log"); then
      echo "plan-diff: $stack: the $side could not be planned:" >&2
      cat "$tmp/$stack.$side.log" >&2
      exit 2
    fi
  done
  same=1
  for ext in yaml mmd; do
    if ! diff -u --label "$stack.$ext ($base)" --label "$stack.$ext (${head:-working tree})" \
        "$tmp/$stack.base.$ext" "$tmp/$stack.head.$ext"; then
      status=1 same=0
    fi
  done
  [ $same -eq 1 ] && echo "plan-diff: $stack: identical ($base → ${head:-working tree})" >&2
done
exit $status
