#!/usr/bin/env bash
# scripts/bench_ddp.sh — data-parallel tiny_lm on this machine (chapter 25): the step time on 1
# and 2 processes, the scaling efficiency, and how much of the all-reduce the overlap hides.
#
#   scripts/bench_ddp.sh [STEPS] [REPEATS]      (defaults: 60 steps, 5 repeats)
#
# Every run trains tiny_lm's default model on the default data with one thread per process
# (TAPEGRAD_NUM_THREADS=1), and reports the median step time over its steps (step_ms_median
# of the --json summary: batch, forward, backward with the all-reduces, update; evaluation
# excluded) and, on 2 processes, the median wait at the end of backward for the all-reduces
# still on their way (ddp_wait_ms_median). The figures printed are medians over REPEATS runs.
#
#   1 x B        1 process, --batch 32: the baseline
#   2 x B        2 processes, --batch 64 (32 each): the same work per process, twice the
#                data per step; scaling efficiency = throughput(2 x B) / (2 x throughput(1 x B))
#   1 x 2B       1 process, --batch 64: what the 2 processes replace, step for step
#   2 x B, all at the end   as 2 x B with --no-overlap: every bucket sent after backward
#   1 x 2B, 2 threads       1 process with 2 threads, --batch 64: the other way to use 2 cores
# The hidden share is 1 - wait(overlap) / wait(no overlap): the part of the all-reduce time
# that runs while backward is still computing.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-60}
repeats=${2:-5}
bin=build/bin/tiny_lm
[[ -x $bin ]] || { echo "bench_ddp.sh: build first (cmake --build --preset release)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "bench_ddp.sh: no mpirun (scripts/setup.sh installs Open MPI)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TAPEGRAD_NUM_THREADS=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# field NAME FILE: a number from the JSON summary line in FILE ("nan" when absent)
field() {
  grep -o "\"$1\":[0-9.e+-]*" "$2" | cut -d: -f2 | grep . || echo nan
}

# measure NP BATCH [FLAGS...]: REPEATS runs of one configuration; prints the medians of
# step_ms_median and ddp_wait_ms_median
measure() {
  local np=$1 batch=$2
  shift 2
  : >"$out/step" && : >"$out/wait"
  for ((i = 0; i < repeats; ++i)); do
    mpirun --oversubscribe ${MPIRUN_FLAGS:-} -np "$np" "$bin" train --steps "$steps" --eval-every 100000 \
      --batch "$batch" --json --out "$out/run" "$@" 2>/dev/null | tail -1 >"$out/summary"
    field step_ms_median "$out/summary" >>"$out/step"
    field ddp_wait_ms_median "$out/summary" >>"$out/wait"
  done
  for f in step wait; do
    sort -g "$out/$f" | awk '{a[NR] = $1} END {printf "%s ", a[int((NR + 1) / 2)]}'
  done
  echo
}

cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "tiny_lm data-parallel, $steps steps x $repeats runs, 1 thread per process; $cpu," \
     "$(nproc) cores, $(mpirun --version | head -1), $(date -u +%F), commit $(git rev-parse --short HEAD)"
read -r one _ < <(measure 1 32)
read -r two wait_on < <(measure 2 64)
read -r big _ < <(measure 1 64)
read -r _ wait_off < <(measure 2 64 --no-overlap)
# (Open MPI binds a run of 1 or 2 processes to one core each: unbound, so the 2 threads can
# use both cores.)
read -r threads _ < <(TAPEGRAD_NUM_THREADS=2 MPIRUN_FLAGS="--bind-to none" measure 1 64)
awk -v one="$one" -v two="$two" -v big="$big" -v threads="$threads" -v on="$wait_on" \
    -v off="$wait_off" 'BEGIN {
  printf "| run | processes | sequences per step | step, ms (median) | sequences/s |\n"
  printf "|---|---|---|---|---|\n"
  printf "| 1 x B | 1 | 32 | %.2f | %.0f |\n", one, 32000 / one
  printf "| 2 x B | 2 | 64 (32 each) | %.2f | %.0f |\n", two, 64000 / two
  printf "| 1 x 2B | 1 | 64 | %.2f | %.0f |\n", big, 64000 / big
  printf "| 1 x 2B, 2 threads | 1 | 64 | %.2f | %.0f |\n", threads, 64000 / threads
  printf "\nscaling efficiency (2 x B against 2 x the throughput of 1 x B): %.0f%%\n", 100 * (64 / two) / (2 * 32 / one)
  printf "speed-up over 1 x 2B (the same global batch on one process): %.2fx\n", big / two
  printf "speed-up over 1 x 2B on 2 threads: %.2fx\n", threads / two
  hidden = off > 0 ? 100 * (1 - on / off) : 0
  printf "wait for the all-reduces at the end of backward: %.3f ms overlapped, %.3f ms all at the end; hidden: %.0f%%\n", on, off, hidden
}'
