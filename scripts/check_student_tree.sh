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
# The learner's preset, without the benchmarks (nothing in the course needs them), without
# optimisation or debug info, and with the libraries as unity builds (TAPEGRAD_UNITY_BUILD):
# what is checked (the blanks, the labels, the messages) does not depend on them, and it
# makes this build much cheaper (6 minutes on 2 cores with optimisation, 4 without).
(cd "$dir" && cmake --preset release -DTAPEGRAD_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DTAPEGRAD_UNITY_BUILD=ON >/dev/null && cmake --build --preset release)
ctest --test-dir "$dir/build" --show-only=json-v1 >"$dir/tests.json"
ctest --test-dir "$dir/build" -j "$(nproc)" --output-junit "$dir/results.xml" -Q || true
build/bin/exercise_tests check --tests "$dir/tests.json" --junit "$dir/results.xml"
