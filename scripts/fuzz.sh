#!/usr/bin/env bash
# scripts/fuzz.sh — builds the libFuzzer targets of tests/fuzz (in the sanitize preset:
# clang-16, ASan + UBSan, coverage on the libraries) and runs each one for a while, as many
# at once as there are cores.
#
#   scripts/fuzz.sh                 every target for 60 seconds (CI runs 30: .ci/run)
#   scripts/fuzz.sh 3600            the long run: an hour each
#   scripts/fuzz.sh 600 idx         one target, ten minutes
#
# A target starts from its seed corpus (tests/fuzz/corpus/<target>, never modified) plus
# what earlier runs found (build-sanitize/fuzz/corpus/<target>). It fails on anything but a clean
# tg::Error for a bad input: a crash, a sanitizer report, an uncaught exception, a property
# check (__builtin_trap), an input taking over 10 s or 2 GiB. The input that did it is
# saved as build-sanitize/fuzz/crashes/<target>/crash-* (replay it: build-sanitize/bin/fuzz_<target>
# FILE).
# The last lines are one summary per target: executions, corpus size, crashes.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
[[ $# -gt 0 ]] && shift
targets=("$@")
all=(safetensors checkpoint idx tokenizer text_dataset bpe)
[[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  if [[ " ${all[*]} " != *" $t "* ]]; then
    echo "fuzz.sh: no target '$t' (the targets: ${all[*]})" >&2
    exit 2
  fi
done
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: SECONDS must be a positive whole number, got '$seconds'" >&2
  exit 2
fi

bash scripts/setup.sh --sanitize
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize --target "${targets[@]/#/fuzz_}"

bin=build-sanitize/bin
out=build-sanitize/fuzz
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0
run_one() {
  local t=$1
  mkdir -p "$out/corpus/$t" "$out/crashes/$t" "$out/logs"
  rm -f "$out/crashes/$t"/*
  # -fork=0: one process; the corpus directory gets the new inputs, the seeds stay as
  # they are (a second directory is read only).
  "$bin/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/crashes/$t/" \
    "$out/corpus/$t" "tests/fuzz/corpus/$t" >"$out/logs/$t.log" 2>&1
}

status=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  while [[ $(jobs -rp | wc -l) -ge $(nproc) ]]; do wait -n || true; done
done
for p in "${pids[@]}"; do wait "$p" || true; done

for t in "${targets[@]}"; do
  log="$out/logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(find "$out/corpus/$t" -type f | wc -l)
  crashes=$(find "$out/crashes/$t" -type f | wc -l)
  echo "fuzz_$t: ${execs:-?} executions in ${seconds} s, corpus ${corpus} inputs, ${crashes} crashes"
  if [[ "$crashes" -gt 0 || -z "$execs" ]]; then
    status=1
    echo "--- the end of $log:"
    tail -30 "$log"
  fi
done
exit $status
