#!/usr/bin/env bash
# What-if of a pull request (python -m capacity), base against head:
#   what-if.sh <base-sha> <out-dir> <stack>...
# Runs in the pull request's checkout (any depth); the base commit is checked out as a detached worktree and
# replays each stack with ITS code and ITS stack file, the head with the pull request's. A stack without a
# whatIf section, or a base without the what-if tool, has no result on that side and the table says so.
# Writes <out-dir>/<stack>.{base,head}.json and <out-dir>/comment.md (python -m capacity.compare).
# The head is also tuned (python -m capacity tune, <out-dir>/<stack>.tune.json): the comment says when another
# setting is both cheaper and serves more. A level the stack cannot meet (exit 2) only leaves that line out.
# WHAT_IF_ARGS adds options to every run (e.g. "--days 2" for a quick look).
set -euo pipefail
base_sha=$1
out=$(realpath -m "$2")
shift 2
mkdir -p "$out"
src="$out/base-src"
# The base must be a commit here: in a shallow or detached checkout (a pull request's, or a clone without the
# branch), fetch it from origin, one commit deep where the clone is shallow already (never deepening a full one).
if ! git rev-parse --verify --quiet "$base_sha^{commit}" > /dev/null; then
  depth=$([ "$(git rev-parse --is-shallow-repository)" = true ] && echo --depth=1 || true)
  # shellcheck disable=SC2086 # depth is empty or one option
  git fetch --quiet $depth origin "${base_sha#origin/}"
  base_sha=$(git rev-parse FETCH_HEAD)
fi
git worktree add --detach "$src" "$base_sha" > /dev/null
for stack in "$@"; do
  # shellcheck disable=SC2086 # WHAT_IF_ARGS is a list of options
  python -m capacity "$stack" --if-configured --json "$out/$stack.head.json" ${WHAT_IF_ARGS:-}
  # shellcheck disable=SC2086
  python -m capacity tune "$stack" --if-configured --quiet --json "$out/$stack.tune.json" ${WHAT_IF_ARGS:-} \
    > /dev/null || [ $? -eq 2 ]
  if [ -f "$src/capacity/__main__.py" ]; then
    # shellcheck disable=SC2086
    (cd "$src" && python -m capacity "$stack" --if-configured --json "$out/$stack.base.json" ${WHAT_IF_ARGS:-})
  fi
done
git worktree remove --force "$src"
python -m capacity.compare "$out/comment.md" "$out" "$@"
