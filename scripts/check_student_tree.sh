#!/usr/bin/env bash
# scripts/check_student_tree.sh — CI's proof that the course's exercises work end to end:
# writes the all-blank student tree (build/bin/student_tree), builds it, runs its whole test
# suite and checks the results (build/bin/exercise_tests check): every test tied to an
# exercise fails with "exercise <id> is not implemented yet — see docs/course/..." for one
# of its exercises, every test tied to none passes, and every exercise has tests.
# Needs this tree's release build (scripts/test.sh makes it).
#
#   scripts/check_student_tree.sh [DIR]    # DIR: where the student tree goes (default below)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${TMPDIR:-/tmp}/tapegrad-student-check}
rm -rf "$dir"
build/bin/student_tree "$dir"
# The learner's preset, without the benchmarks (nothing in the course needs them), with the
# libraries unoptimised (TAPEGRAD_LIBRARY_FLAGS=-O0) and as unity builds
# (TAPEGRAD_UNITY_BUILD): what is checked (the blanks, the labels, the messages) does not
# depend on that, and it makes the build much cheaper. The programs (tests, course programs,
# examples, tools) are compiled exactly as in the release build, so that under a compiler
# cache (.ci/run sets one up) those whose sources are the same in both trees are not
# compiled twice.
(cd "$dir" && cmake --preset release -DTAPEGRAD_BUILD_BENCH=OFF -DTAPEGRAD_LIBRARY_FLAGS=-O0 \
  -DTAPEGRAD_UNITY_BUILD=ON >/dev/null && cmake --build --preset release)
ctest --test-dir "$dir/build" --show-only=json-v1 >"$dir/tests.json"
ctest --test-dir "$dir/build" -j "$(nproc)" --output-junit "$dir/results.xml" -Q || true
build/bin/exercise_tests check --tests "$dir/tests.json" --junit "$dir/results.xml"
