#!/usr/bin/env bash
# Offline plan review of a pull request that gets no secrets (fork, Dependabot):
#   offline-plan-review.sh <base-dir> <head-dir> <comment-dir> <stack>...
# Plans each stack on the checked-out base branch into <base-dir>, diffs it against the pull request's plan
# in <head-dir> (`git diff --no-index`), runs delivery.guard on the two plans and the base branch's policy pack
# (delivery.policy_check, policy/config/<stack>.json) and the render check (delivery.render_check: the pinned
# charts rendered with the plan's values, schemas, Pod Security admission) on the pull request's plan, and writes
# <comment-dir>/comment.md plus pr-number for plan-comment.yml. Sets the step output `blocked=true` when the
# guard blocks, `policy_violated=true` when a mandatory policy is violated (the label does not allow that), and
# `render_violated=true` when the render check finds a violation.
# With the what-if tool on the base branch, the comment also gets the what-if table (base vs pull request).
set -euo pipefail
base_dir=$1 head_dir=$2 out_dir=$3
shift 3
mkdir -p "$base_dir" "$out_dir"
blocked=false
policy_violated=false
render_violated=false
{
  echo "## Offline plan (no credentials)"
  echo
  echo "This pull request cannot run \`pulumi preview\` (no secrets for forks and Dependabot). Below is what"
  echo "changes in each stack's desired state (\`python -m offline.plan\`, base branch → pull request), and"
  echo "the base branch's policy pack run over the pull request's plan."
} > "$out_dir/comment.md"
for stack in "$@"; do
  python -m offline.plan "$stack" --out "$base_dir/$stack.yaml"
  rc=0
  git diff --no-index --no-color -- "$base_dir/$stack.yaml" "$head_dir/$stack.yaml" > "$out_dir/$stack.diff" || rc=$?
  [ "$rc" -le 1 ] || exit "$rc"  # 1 = files differ, >1 = error
  rc=0
  python -m delivery.guard plan "$base_dir/$stack.yaml" "$head_dir/$stack.yaml" --stack "$stack" \
    --event "$GITHUB_EVENT_PATH" --out "$out_dir/$stack.guard.md" > /dev/null || rc=$?
  case "$rc" in
    0) ;;
    1) blocked=true ;;
    *) exit "$rc" ;;
  esac
  rc=0
  python -m delivery.policy_check "$head_dir/$stack.yaml" --config "policy/config/$stack.json" \
    --out "$out_dir/$stack.policy.md" > /dev/null || rc=$?
  case "$rc" in
    0) ;;
    1) policy_violated=true ;;
    *) exit "$rc" ;;
  esac
  rc=0
  python -m delivery.render_check --plan "$head_dir/$stack.yaml" --out "$out_dir/$stack.render.md" > /dev/null || rc=$?
  case "$rc" in
    0) ;;
    1) render_violated=true ;;
    *) exit "$rc" ;;
  esac
  {
    echo
    cat "$out_dir/$stack.guard.md"
    echo
    cat "$out_dir/$stack.policy.md"
    echo
    cat "$out_dir/$stack.render.md"
    echo
    if [ -s "$out_dir/$stack.diff" ]; then
      echo "<details><summary>Desired-state diff of <code>$stack</code></summary>"
      echo
      echo '````diff'
      head -c 30000 "$out_dir/$stack.diff"
      echo '````'
      echo "</details>"
    else
      echo "No change to the desired state of \`$stack\`."
    fi
  } >> "$out_dir/comment.md"
done
# What-if (python -m capacity): the base branch's settings replayed here against the pull request's results,
# which the head job computed; they are read as numbers only (capacity/compare.py).
if [ -f capacity/compare.py ]; then
  mkdir -p "$base_dir/what-if"
  for stack in "$@"; do
    # shellcheck disable=SC2086 # WHAT_IF_ARGS: extra options, as in what-if.sh
    python -m capacity "$stack" --if-configured --json "$base_dir/what-if/$stack.base.json" ${WHAT_IF_ARGS:-} > /dev/null
    if [ -f "$head_dir/$stack.whatif.json" ]; then
      cp "$head_dir/$stack.whatif.json" "$base_dir/what-if/$stack.head.json"
    fi
    if [ -f "$head_dir/$stack.tune.json" ]; then
      cp "$head_dir/$stack.tune.json" "$base_dir/what-if/$stack.tune.json"
    fi
  done
  python -m capacity.compare "$out_dir/what-if.md" "$base_dir/what-if" "$@"
  { echo; cat "$out_dir/what-if.md"; } >> "$out_dir/comment.md"
fi
echo "${PR_NUMBER:?}" > "$out_dir/pr-number"
echo "blocked=$blocked" >> "${GITHUB_OUTPUT:-/dev/null}"
# Only when true: an unset output reads as '' in the workflow, the same as false.
if [ "$policy_violated" = true ]; then
  echo "policy_violated=true" >> "${GITHUB_OUTPUT:-/dev/null}"
fi
if [ "$render_violated" = true ]; then
  echo "render_violated=true" >> "${GITHUB_OUTPUT:-/dev/null}"
fi
