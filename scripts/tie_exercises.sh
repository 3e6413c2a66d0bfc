#!/usr/bin/env bash
# scripts/tie_exercises.sh — rewrites tests/exercise_ties.txt: which tests run which exercise.
#
# A test is tied to an exercise when it runs the exercise's code. To find out, this builds a
# probe tree (build/bin/student_tree DIR --probe: every solution kept, each with a call in
# front that records its id), runs every test on its own with TAPEGRAD_EXERCISE_PROBE naming
# a file of its own, and writes what each test reached. tests/CMakeLists.txt turns the file
# into CTest labels ("exercise:<id>"). Run it after adding tests or moving an exercise; CI's
# all-blank check (scripts/check_student_tree.sh) fails while the file is stale.
#
#   scripts/tie_exercises.sh [DIR]     # DIR: where the probe tree is built (default below)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/tapegrad-probe}
cmake --preset release >/dev/null
cmake --build --preset release --target student_tree exercise_tests
rm -rf "$dir"
build/bin/student_tree "$dir" --probe
(cd "$dir" && cmake --preset release -DTAPEGRAD_BUILD_BENCH=OFF >/dev/null &&
  cmake --build --preset release)
probes=$dir/probes
mkdir -p "$probes"
ctest --test-dir "$dir/build" --show-only=json-v1 >"$probes/tests.json"
# One ctest per test (by number), so each writes its own probe file; failures do not matter
# here (the probe tree passes the same tests as this one). A test that needs a fixture (the
# example programs' checkpoints) brings its set-up tests along, which write the same files
# for every such test: those tests run one at a time, the others two or more at once.
build/bin/exercise_tests list --tests "$probes/tests.json" >"$probes/list.txt"
probe() {
  xargs -P "$1" -I{} sh -c \
    "TAPEGRAD_EXERCISE_PROBE='$probes/{}.txt' ctest --test-dir '$dir/build' -I {},{} -Q || true"
}
grep -Ev $'\t(example|refuses)\\.' "$probes/list.txt" | cut -f1 | probe "$(nproc)"
grep -E $'\t(example|refuses)\\.' "$probes/list.txt" | cut -f1 | probe 1
build/bin/exercise_tests ties --tests "$probes/tests.json" --probes "$probes" >tests/exercise_ties.txt
echo "tie_exercises: $(grep -vc '^#' tests/exercise_ties.txt) tests tied; tests/exercise_ties.txt written"
