#!/usr/bin/env bash
# scripts/bench_threads.sh — every workload of the side-by-side benchmarks (lm, mlp, ops,
# overhead) at 1, 2, 4, ... threads up to the machine's cores, tapegrad and PyTorch at the
# same thread count, in one sitting; then a markdown table, a JSON file and SVG plots, and
# where tapegrad's lm step and mlp epoch spend their time at each thread count, op by op.
#
#   scripts/bench_threads.sh [OUT_DIR]          # default runs/threads
#
# Settings, from the environment:
#   THREADS="1 2 4"    the thread counts (default: 1 and the powers of two below the number
#                      of processors, and that number itself)
#   REPS=3             runs of everything, alternating the frameworks (the table takes medians)
#   STEPS=20 EPOCHS=2  timed lm steps per run, mlp epochs per run
#   WORKLOADS="lm mlp ops overhead"
#   PYTHON=/usr/bin/python3   the Python whose torch is the comparison (PYTHON=none: tapegrad
#                      alone); TORCH_REFERENCE=../shared/bench/torch_reference.py
#   TORCH_SETTINGS=same  PyTorch at T/T only (for a PyTorch whose BLAS is not OpenBLAS, such
#                      as pip's on MKL, where the OpenBLAS setting changes nothing)
#   NO_SETUP=1         use the existing build and installed packages (the smoke test does)
#   BIN=build/bin      where tapegrad-bench and tapegrad-bench-threads are
#
# PyTorch runs with OPENBLAS_CORETYPE unset so that OpenBLAS picks its own kernel, and at
# every thread count T > 1 in three settings, --threads T --blas-threads T, 1 and T, T and 1
# (T and T can oversubscribe the cores: on 2 cores it took the lm step from 77 to 250 ms);
# the table counts its fastest setting at each T and names it. Its "best" column is its
# fastest median over the thread counts. With GNU time (scripts/setup.sh --bench installs
# it) the lm and mlp runs of both frameworks also record their peak memory (peak_rss rows). Each JSON line names the framework's version, the BLAS and the CPU, and
# OUT_DIR/machine.txt records the machine, so every figure can say where it came from.
# Nothing here is a test: speed is measured, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/threads}
cores=$(nproc)
if [[ -z "${THREADS:-}" ]]; then
  THREADS=""
  for ((t = 1; t < cores; t *= 2)); do THREADS+="$t "; done
  THREADS+="$cores"
fi
reps=${REPS:-3}
steps=${STEPS:-20}
epochs=${EPOCHS:-2}
workloads=${WORKLOADS:-lm mlp ops overhead}
py=${PYTHON:-/usr/bin/python3}
torch_ref=${TORCH_REFERENCE:-../shared/bench/torch_reference.py}

if [[ -z "${NO_SETUP:-}" ]]; then
  bash scripts/setup.sh --bench
  cmake --preset release >/dev/null
  cmake --build --preset release --target tapegrad-bench tapegrad-bench-threads
fi
bin=${BIN:-build/bin}
bench=$bin/tapegrad-bench
torch=yes
if [[ "$py" == none ]] || ! "$py" -c "import torch" 2>/dev/null || [[ ! -f "$torch_ref" ]]; then
  torch=no
  echo "bench_threads.sh: no PyTorch to compare with (PYTHON=$py, $torch_ref): tapegrad alone"
fi
if [[ " $workloads " == *" mlp "* && ! -d /usr/share/datasets/fashion-mnist ]]; then
  echo "bench_threads.sh: Fashion-MNIST is not installed: mlp left out"
  workloads=${workloads//mlp/}
fi

mkdir -p "$out"
rm -f "$out"/*.jsonl "$out"/threads_*.svg "$out/threads.json" "$out/table.md"
{
  date -u +%FT%TZ
  uname -srm
  grep -m1 "model name" /proc/cpuinfo || true
  echo "processors: $cores; threads: $THREADS; reps $reps, lm steps $steps, mlp epochs $epochs"
  [[ $torch == yes ]] && "$py" -c "import torch; print('PyTorch', torch.__version__)"
  git log -1 --format='tapegrad commit %h (%cs)' 2>/dev/null || true
} >"$out/machine.txt"

# flags W: the run-length flags of workload W, the same for both frameworks.
flags() {
  case $1 in
    lm) echo "--steps $steps" ;;
    mlp) echo "--epochs $epochs" ;;
    *) echo "" ;;
  esac
}

profile() {
  case $1 in
    lm | mlp) echo "--profile" ;;
    *) echo "" ;;
  esac
}

# settings T: PyTorch's "intra-op/OpenBLAS" thread settings for T cores.
settings() {
  if [[ $1 == 1 || ${TORCH_SETTINGS:-all} == same ]]; then echo "$1/$1"; else echo "$1/$1 1/$1 $1/1"; fi
}

# measured OF FRAMEWORK T COMMAND...: runs COMMAND, under GNU time for the lm and mlp (the
# peak resident memory goes to rss.jsonl as a peak_rss line).
measured() {
  local of=$1 framework=$2 t=$3
  shift 3
  if [[ -x /usr/bin/time && ($of == lm || $of == mlp) ]]; then
    local name=tiny_lm_train_step
    [[ $of == mlp ]] && name=mlp_fashion_mnist_epoch
    /usr/bin/time -a -o "$out/rss.jsonl" -f "{\"workload\": \"peak_rss\", \"of\": \"$name\", \"framework\": \"$framework\", \"threads\": $t, \"max_rss_kb\": %M}" "$@"
  else
    "$@"
  fi
}

for rep in $(seq "$reps"); do
  for t in $THREADS; do
    echo "== repetition $rep of $reps, $t thread(s)"
    for w in $workloads; do
      # --profile: after its timed runs, tapegrad-bench runs the lm steps (an mlp epoch)
      # again under tg::Profiler and prints their time op by op (the table's last part).
      # shellcheck disable=SC2046  # the flags are words
      measured "$w" tapegrad "$t" "$bench" "$w" --threads "$t" $(flags "$w") $(profile "$w") \
        >>"$out/tapegrad.jsonl"
      [[ $torch == yes ]] || continue
      for s in $(settings "$t"); do
        # Each line is tagged with the count it is for and the setting (ops lines name only
        # their BLAS threads).
        # shellcheck disable=SC2046
        measured "$w" pytorch "$t" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" "$torch_ref" \
          "$w" --threads "${s%/*}" --blas-threads "${s#*/}" $(flags "$w") |
          sed "s|}\$|, \"sweep_threads\": $t, \"setting\": \"$s\"}|" >>"$out/pytorch.jsonl"
      done
    done
  done
done

"$bin/tapegrad-bench-threads" "$out" | tee "$out/table.md"
echo
echo "bench_threads.sh: $out/table.md, $out/threads.json, $out/threads_lm.svg, $out/threads_mlp.svg"
cat "$out/machine.txt"
