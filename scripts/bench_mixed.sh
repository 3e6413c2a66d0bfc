#!/usr/bin/env bash
# scripts/bench_mixed.sh — mixed precision side by side, in one sitting: the lm step and the
# linear fwd+bwd shapes in float32 and in bfloat16 under autocast, tapegrad
# (`tapegrad-bench lm|ops --dtype f32|bf16`) against PyTorch
# (tests/reference/autocast_bench.py, torch.autocast("cpu", dtype=torch.bfloat16)), at each
# thread count; then a markdown table of medians and ratios.
#
#   scripts/bench_mixed.sh [OUT_DIR]        # default runs/mixed
#
# Settings, from the environment: THREADS="1 2" (default 1 and the number of processors),
# REPS=3 (runs of everything, alternating the frameworks; the table takes medians),
# STEPS=20, PYTHON=/usr/bin/python3, BIN=build/bin. PyTorch runs with --blas-threads 1, its
# fastest setting on 2 cores (scripts/bench_threads.sh measures the others).
# Nothing here is a test: speed is measured, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/mixed}
reps=${REPS:-3}
steps=${STEPS:-20}
python=${PYTHON:-/usr/bin/python3}
bin=${BIN:-build/bin}
threads=${THREADS:-"1 $(nproc)"}
mkdir -p "$out"
lines=$out/lines.jsonl
: >"$lines"
{
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) processors"
  echo "flags: $(grep -o -w -E 'avx512_bf16|amx_bf16|avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "date: $(date -u +%Y-%m-%d)"
  echo "torch: $($python -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
} >"$out/machine.txt"
cat "$out/machine.txt"

for ((rep = 1; rep <= reps; ++rep)); do
  for t in $threads; do
    for dtype in f32 bf16; do
      "$bin/tapegrad-bench" lm --threads "$t" --steps "$steps" --dtype "$dtype" >>"$lines"
      "$bin/tapegrad-bench" ops --threads "$t" --dtype "$dtype" | grep linear_fwd_bwd >>"$lines"
      if [[ "$python" != none ]]; then
        "$python" tests/reference/autocast_bench.py lm --threads "$t" --blas-threads 1 \
          --steps "$steps" --dtype "$dtype" >>"$lines"
        "$python" tests/reference/autocast_bench.py linear --threads "$t" --blas-threads 1 \
          --dtype "$dtype" >>"$lines"
      fi
    done
  done
  echo "repetition $rep of $reps done"
done

# The table: one row per (workload, shape, threads), the median of each framework and dtype.
field() { grep -o "\"$1\": *[^,}]*" | head -1 | sed 's/.*: *//; s/"//g'; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else print v[int((NR + 1) / 2)]}'; }
{
  echo "| workload | threads | tapegrad f32 | tapegrad bf16 | bf16 speedup | PyTorch f32 |" \
    "PyTorch bf16 | tapegrad bf16 vs PyTorch bf16 |"
  echo "|---|---|---|---|---|---|---|---|"
  for t in $threads; do
    for key in "tiny_lm_train_step" "linear_fwd_bwd 128,784,256" "linear_fwd_bwd 2048,128,384" \
      "linear_fwd_bwd 512,512,512" "linear_fwd_bwd 1024,1024,1024"; do
      workload=${key%% *}
      shape=${key#* }
      [[ "$shape" == "$key" ]] && shape=""
      unit=$([[ $workload == tiny_lm_train_step ]] && echo ms_per_step || echo ms)
      declare -A m=()
      for fw in tapegrad pytorch; do
        for dtype in f32 bf16; do
          m[$fw.$dtype]=$(grep "\"workload\": *\"$workload\"" "$lines" | grep "\"framework\": *\"$fw" |
            grep "\"dtype\": *\"$dtype\"" | grep -E "\"threads\": *$t[,}]" |
            { if [[ -n "$shape" ]]; then grep "\"shape\": *\[${shape//,/, *}\]"; else cat; fi; } |
            while read -r l; do echo "$l" | field "$unit"; done | median)
        done
      done
      ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2fx", a / b}'; }
      echo "| $workload ${shape:+($shape) }$unit | $t | ${m[tapegrad.f32]} | ${m[tapegrad.bf16]} |" \
        "$(ratio "${m[tapegrad.f32]}" "${m[tapegrad.bf16]}") | ${m[pytorch.f32]} |" \
        "${m[pytorch.bf16]} | $(ratio "${m[pytorch.bf16]}" "${m[tapegrad.bf16]}") |"
    done
  done
} | tee "$out/table.md"
