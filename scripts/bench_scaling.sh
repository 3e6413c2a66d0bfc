#!/usr/bin/env bash
# scripts/bench_scaling.sh — how the lm train step grows with d_model and with context,
# tapegrad next to PyTorch, in one sitting.
#
#   scripts/bench_scaling.sh [STEPS] [OUT_DIR] [TORCH_THREADS] [TORCH_BLAS_THREADS]
#
# Defaults: 20 timed steps per run (after 5 warm-up steps), runs/scaling, and PyTorch on
# 1 intra-op thread with 2 OpenBLAS threads: the setting torch_reference.py --best picks for
# the reference lm workload on the 2-core machine of docs/performance.md (the last two also
# come from the environment variables of the same names). tapegrad uses its default
# threads (TAPEGRAD_NUM_THREADS, else one per processor).
#
# Two sweeps through the reference workload (d_model 128, context 128, batch 16):
#   d_model in SCALING_SIZES at context 128, and context in SCALING_SIZES at d_model 128,
# SCALING_SIZES defaulting to "64 128 256 512" (set e.g. SCALING_SIZES="64 128" for a quick
# check that everything works). Each size is run REPS times (default 1), alternating the
# two frameworks so that a drift of the machine hits both; the tables show medians.
# The JSON lines land in OUT_DIR; build/bin/tapegrad-bench-scaling then prints the two
# markdown tables (also saved as OUT_DIR/table.md) and writes OUT_DIR/scaling_d_model.svg
# and OUT_DIR/scaling_context.svg. Nothing here is a test: speed is measured, not asserted.
#
# The full sweep at the defaults is 14 runs (the reference size counts once per sweep) of
# 25 steps each; the largest sizes take seconds per step, so expect several minutes per
# repetition on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-20}
out=${2:-runs/scaling}
torch_threads=${3:-${TORCH_THREADS:-1}}
torch_blas_threads=${4:-${TORCH_BLAS_THREADS:-2}}
sizes=${SCALING_SIZES:-64 128 256 512}
reps=${REPS:-1}
torch_ref=${TORCH_REFERENCE:-../shared/bench/torch_reference.py}
py=/usr/bin/python3  # Debian's, which has python3-torch

bash scripts/setup.sh --bench
cmake --preset release >/dev/null
cmake --build --preset release --target tapegrad-bench tapegrad-bench-scaling
[[ -f "$torch_ref" ]] || { echo "bench_scaling.sh: $torch_ref not found (set TORCH_REFERENCE)" >&2; exit 1; }
bench=build/bin/tapegrad-bench
mkdir -p "$out"
rm -f "$out"/*.jsonl "$out"/scaling_*.svg "$out/table.md"
{ date -u +%FT%TZ; uname -srm; grep -m1 "model name" /proc/cpuinfo; nproc
  echo "steps=$steps reps=$reps torch_threads=$torch_threads torch_blas_threads=$torch_blas_threads"
} > "$out/machine.txt"

# run D T: one run of each framework at d_model D and context T.
run() {
  echo "   d_model $1, context $2"
  "$py" tests/reference/lm_scaling.py --reference "$torch_ref" --d-model "$1" --context "$2" \
    --steps "$steps" --threads "$torch_threads" --blas-threads "$torch_blas_threads" \
    >> "$out/torch_lm_scaling.jsonl"
  "$bench" lm --d-model "$1" --context "$2" --steps "$steps" >> "$out/tapegrad_lm_scaling.jsonl"
}

for rep in $(seq "$reps"); do
  echo "== repetition $rep of $reps"
  for d in $sizes; do run "$d" 128; done
  for t in $sizes; do
    [[ "$t" == 128 ]] || run 128 "$t"  # (128, 128) was run in the d_model sweep
  done
done
cat "$out/machine.txt"
build/bin/tapegrad-bench-scaling "$out" | tee "$out/table.md"
echo "pictures: $out/scaling_d_model.svg $out/scaling_context.svg"
