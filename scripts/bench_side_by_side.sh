#!/usr/bin/env bash
# scripts/bench_side_by_side.sh — one sitting of tapegrad next to PyTorch (and OpenBLAS).
#
#   scripts/bench_side_by_side.sh [REPS] [OUT_DIR]     (defaults: 3, runs/bench)
#
# Runs every workload of ../shared/bench/README.md REPS times, alternating the two
# frameworks so that a drift of the machine hits both, plus the raw GEMM against OpenBLAS
# on 1 and 2 threads and the peak memory of the lm run (GNU time, the same way for both).
# The JSON lines land in OUT_DIR; the last step prints the table of medians and ratios
# that docs/performance.md quotes. Nothing here is a test: speed is measured, not asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
out=${2:-runs/bench}
torch_ref=${TORCH_REFERENCE:-../shared/bench/torch_reference.py}
py=/usr/bin/python3  # Debian's, which has python3-torch

bash scripts/setup.sh --bench
cmake --preset release >/dev/null
cmake --build --preset release --target tapegrad-bench tapegrad-bench-compare
[[ -f "$torch_ref" ]] || { echo "bench_side_by_side.sh: $torch_ref not found (set TORCH_REFERENCE)" >&2; exit 1; }
bench=build/bin/tapegrad-bench
mkdir -p "$out"
rm -f "$out"/*.jsonl
{ date -u +%FT%TZ; uname -srm; grep -m1 "model name" /proc/cpuinfo; nproc; } > "$out/machine.txt"

# peak_rss LABEL FRAMEWORK COMMAND...: one JSON line with the command's peak resident memory.
peak_rss() {
  local framework=$1; shift
  local kb
  kb=$(/usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1)
  printf '{"workload": "peak_rss", "framework": "%s", "max_rss_mb": %s}\n' "$framework" \
    "$(awk "BEGIN{print $kb/1024}")"
}

for rep in $(seq "$reps"); do
  echo "== repetition $rep of $reps"
  for w in overhead ops lm; do
    echo "   $w"
    "$py" "$torch_ref" "$w" --best >> "$out/torch_$w.jsonl"
    "$bench" "$w" >> "$out/tapegrad_$w.jsonl"
  done
  echo "   mlp (3 epochs)"
  "$py" "$torch_ref" mlp --best --epochs 3 >> "$out/torch_mlp.jsonl"
  "$bench" mlp --epochs 3 >> "$out/tapegrad_mlp.jsonl"
  echo "   peak memory of lm (the best thread setting of each)"
  threads=$(grep '"best": true' "$out/torch_lm.jsonl" | tail -1 | sed -E 's/.*"threads": ([0-9]+).*/\1/')
  blas=$(grep '"best": true' "$out/torch_lm.jsonl" | tail -1 | sed -E 's/.*"blas_threads": "([0-9]+)".*/\1/')
  peak_rss pytorch "$py" "$torch_ref" lm --threads "$threads" --blas-threads "$blas" >> "$out/rss.jsonl"
  peak_rss tapegrad "$bench" lm >> "$out/rss.jsonl"
  if [[ -x build/bin/tapegrad-bench-blas ]]; then
    echo "   gemm against OpenBLAS"
    for t in 1 2; do
      "$bench" gemm --threads "$t" >> "$out/tapegrad_gemm.jsonl"
      build/bin/tapegrad-bench-blas "$t" >> "$out/openblas_gemm.jsonl"
    done
  fi
done
cat "$out/machine.txt"
build/bin/tapegrad-bench-compare "$out"/*.jsonl | tee "$out/table.md"
