#!/usr/bin/env bash
# scripts/grade.sh — the course's grade table: builds, runs the tests, and prints one row per
# exercise: its id, its chapter, tests passed / tests tied to it, and the first failure.
#
#   scripts/grade.sh                      # every exercise
#   scripts/grade.sh rms_norm.backward    # just that exercise's tests (ctest -L exercise:ID)
#
# A test is tied to each exercise whose code it runs (tests/exercise_ties.txt), so a test of
# a later exercise also fails while an earlier one it runs through is blank: read the first
# failure's message. Exits 1 while any test it ran fails. docs/course/README.md explains.
set -euo pipefail
cd "$(dirname "$0")/.."
id=${1:-}
if [ -n "$id" ] && ! grep -q "^${id}[[:space:]]" tools/exercises.txt; then
  echo "grade.sh: no exercise '$id'; tools/exercises.txt lists them:" >&2
  grep -v '^#' tools/exercises.txt | awk 'NF { print "  " $1 }' >&2
  exit 2
fi
[ -f build/CMakeCache.txt ] || cmake --preset release >/dev/null
cmake --build --preset release
out=$PWD/build/grade
mkdir -p "$out"
ctest --test-dir build --show-only=json-v1 >"$out/tests.json"
filter=()
[ -n "$id" ] && filter=(-L "^exercise:${id//./\\.}\$")
status=0
ctest --test-dir build -j "$(nproc)" "${filter[@]}" --output-junit "$out/results.xml" -Q ||
  status=1
build/bin/exercise_tests grade --tests "$out/tests.json" --junit "$out/results.xml" ${id:+--only "$id"}
exit "$status"
