#!/usr/bin/env bash
# Regenerates the pinned requirement files from their ranges, so a new upstream release changes nothing until
# someone runs this and the tests pass with it:
#   requirements.in     -> requirements.txt      (the program's runtime; what `pulumi install` installs)
#   requirements-dev.in -> requirements-dev.txt  (runtime + test tools; what scripts/test.sh installs)
#   capacity/requirements.in -> capacity/requirements.txt  (runtime + the what-if tool; the what-if CI job)
# Usage: bash scripts/lock.sh [--upgrade]   (run inside .venv: `uv` is a dev dependency)
set -euo pipefail
cd "$(dirname "$0")/.."
UV="${UV:-.venv/bin/uv}"
header() {
  printf '# Pinned by scripts/lock.sh from %s (edit that file, then run `bash scripts/lock.sh`).\n' "$1"
  [ "$1" = requirements.in ] && printf '# `pulumi install` may append the line `sdks/gcore` (the generated Gcore SDK): keep it.\n'
  return 0
}
# Dev first; the runtime is then resolved under the dev pins, so both files pin the runtime identically.
for pair in "requirements-dev.in:requirements-dev.txt:" "requirements.in:requirements.txt:requirements-dev.txt" \
            "capacity/requirements.in:capacity/requirements.txt:requirements-dev.txt"; do
  IFS=: read -r in out constraint <<<"$pair"
  keep=""
  [ -f "$out" ] && keep=$(grep -x 'sdks/gcore' "$out" || true)
  tmp=$(mktemp)
  pins=""
  if [ -n "$constraint" ]; then  # the dev pins as constraints, without the local `sdks/gcore` (uv refuses a path there)
    pins=$(mktemp)
    grep -vx 'sdks/gcore' "$constraint" > "$pins"
  fi
  "$UV" pip compile --quiet --no-header --python-version 3.11 ${pins:+-c "$pins"} "$@" "$in" -o "$tmp"
  if [ -n "$pins" ]; then sed -i "s#-c $pins#-c $constraint#" "$tmp"; rm -f "$pins"; fi
  { header "$in"; cat "$tmp"; [ -n "$keep" ] && echo "$keep"; } > "$out"
  rm -f "$tmp"
done
