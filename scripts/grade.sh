#!/usr/bin/env bash
# scripts/grade.sh — the course's grade table: builds, runs the tests, and prints one row per
# exercise: its id, pass or fail, its tests passed / tests tied to it, the chapter section
# that teaches it, and the first failure.
#
#   scripts/grade.sh                          # every exercise (builds everything)
#   scripts/grade.sh rms_norm.backward        # one exercise: builds only what its tests run
#   scripts/grade.sh --lang zh rms_norm.backward   # the table in Chinese (default: from $LANG)
#
# A test is tied to each exercise whose code it runs (tests/exercise_ties.txt), so a test of
# a later exercise also fails while an earlier one it runs through is blank: read the first
# failure's message. Exits 1 while any test it ran fails. docs/course/README.md explains.
#
# Grading one exercise after the first full build rebuilds only the programs its tests run
# (build/bin/exercise_tests targets lists them, from CTest's own test list): the file you
# changed, those programs' links, and nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
lang=en
case "${TAPEGRAD_LANG:-${LANG:-}}" in zh*) lang=zh ;; esac
id=
while [ $# -gt 0 ]; do
  case "$1" in
    --lang) lang=${2:?--lang needs en or zh}; shift 2 ;;
    --lang=*) lang=${1#--lang=}; shift ;;
    -*) echo "grade.sh: unknown option $1 (usage: scripts/grade.sh [--lang en|zh] [EXERCISE])" >&2; exit 2 ;;
    *) id=$1; shift ;;
  esac
done
case "$lang" in en | zh) ;; *) echo "grade.sh: --lang is en or zh, not '$lang'" >&2; exit 2 ;; esac
if [ -n "$id" ] && ! grep -q "^${id}[[:space:]]" tools/exercises.txt; then
  echo "grade.sh: no exercise '$id'; tools/exercises.txt lists them:" >&2
  grep -v '^#' tools/exercises.txt | awk 'NF { print "  " $1 }' >&2
  exit 2
fi
[ -f build/CMakeCache.txt ] || cmake --preset release >/dev/null
out=$PWD/build/grade
mkdir -p "$out"
# After one full build (the marker), one exercise builds only its own programs.
targets=
if [ -n "$id" ] && [ -f "$out/built-once" ] && [ -x build/bin/exercise_tests ]; then
  cmake --build --preset release --target exercise_tests >/dev/null
  ctest --test-dir build --show-only=json-v1 >"$out/tests.json"
  targets=$(build/bin/exercise_tests targets --tests "$out/tests.json" --only "$id" \
    --bin "$PWD/build/bin")
fi
if [ -n "$targets" ]; then
  # shellcheck disable=SC2086 # one word per target
  cmake --build --preset release --target $targets
else
  cmake --build --preset release
  touch "$out/built-once"
fi
ctest --test-dir build --show-only=json-v1 >"$out/tests.json"
filter=()
[ -n "$id" ] && filter=(-L "^exercise:${id//./\\.}\$")
status=0
ctest --test-dir build -j "$(nproc)" "${filter[@]}" --output-junit "$out/results.xml" -Q ||
  status=1
build/bin/exercise_tests grade --tests "$out/tests.json" --junit "$out/results.xml" \
  --lang "$lang" ${id:+--only "$id"}
exit "$status"
