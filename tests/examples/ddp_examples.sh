#!/usr/bin/env bash
# tests/examples/ddp_examples.sh — the training examples under mpirun (chapter 25):
#
#   ddp_examples.sh lm      MPIRUN TINY_LM WORDS DIR
#   ddp_examples.sh fashion MPIRUN FASHION_MNIST DIR
#
# lm: tiny_lm on 2 processes takes the steps of 1 process with the same global batch: every
#     metrics.csv row (loss, lr, gradient norm, validation losses) within 1e-5 relative, the
#     same float32 sums in another order (measured: 2.4e-7, two ulp; a wrong shard or a sum
#     in place of the average is off by 1e-2 or more); only rank 0 reports; and a run stopped
#     on 2 processes and resumed on 1 continues as the straight run did.
# fashion: fashion_mnist on 2 processes (shards of each epoch) against 1 process, likewise
#     (measured: 3.0e-7).
# MPIRUN is the mpirun command with its options, as one word separated by "|".
set -euo pipefail
what=$1
IFS='|' read -r -a mpirun <<<"$2"
shift 2

# compare A.csv B.csv TOL COLUMNS: the rows of two metrics.csv files agree in their first COLUMNS
# columns (the timings after them aside) within TOL relative to max(1, |value|); a cell empty
# in one must be empty in the other.
compare() {
  awk -F, -v tol="$3" -v cols="$4" '
    NR == FNR { a[FNR] = $0; n = FNR; next }
    {
      if (!(FNR in a)) { printf "%s has more rows than %s\n", FILENAME, ARGV[1]; bad = 1; exit }
      split(a[FNR], x, ","); m = split($0, y, ",")
      for (i = 1; i <= cols && i <= m; ++i) {
        if (x[i] == y[i]) continue
        if (x[i] == "" || y[i] == "") { printf "row %d column %d: \"%s\" vs \"%s\"\n", FNR, i, x[i], y[i]; bad = 1; continue }
        d = x[i] - y[i]; if (d < 0) d = -d
        s = x[i] < 0 ? -x[i] : x[i]; if (s < 1) s = 1
        if (d > tol * s) { printf "row %d column %d: %s vs %s\n", FNR, i, x[i], y[i]; bad = 1 }
        if (d / s > worst) worst = d / s
      }
      rows = FNR
    }
    END {
      if (!bad && rows != n) { printf "%s has %d rows, %s has %d\n", ARGV[1], n, ARGV[2], rows; bad = 1 }
      printf "compared %d rows: largest relative difference %.3g (tolerance %s)\n", rows, worst, tol
      exit bad
    }' "$1" "$2"
}

run() {
  echo "\$ $*"
  "$@"
}

case "$what" in
  lm)
    tiny_lm=$1 words=$2 dir=$3
    rm -rf "$dir" && mkdir -p "$dir"
    args=(train --data "$words" --steps 20 --d-model 16 --layers 1 --heads 2 --d-ff 32
          --context 8 --batch 4 --warmup 5 --eval-every 10 --eval-tokens 256 --json
          --bucket-kb 4)
    run "${mpirun[@]}" 1 "$tiny_lm" "${args[@]}" --out "$dir/one" >/dev/null
    run "${mpirun[@]}" 2 "$tiny_lm" "${args[@]}" --out "$dir/two" | tee "$dir/two.log"
    grep -q '"processes":2' "$dir/two.log" || { echo "no summary from rank 0"; exit 1; }
    [[ $(grep -c '"event":"summary"' "$dir/two.log") == 1 ]] || { echo "more than one rank reported"; exit 1; }
    compare "$dir/one/metrics.csv" "$dir/two/metrics.csv" 1e-5 7
    # Stopped on 2 processes, resumed on 1: the rows of the straight 1-process run.
    run "${mpirun[@]}" 2 "$tiny_lm" "${args[@]}" --out "$dir/resumed" --stop-after 10 >/dev/null
    run "${mpirun[@]}" 1 "$tiny_lm" "${args[@]}" --out "$dir/resumed" --resume >/dev/null
    compare "$dir/one/metrics.csv" "$dir/resumed/metrics.csv" 1e-5 7
    ;;
  fashion)
    fashion=$1 dir=$2
    if [[ ! -d /usr/share/datasets/fashion-mnist ]]; then
      echo "SKIP: /usr/share/datasets/fashion-mnist is missing (scripts/setup.sh installs it)"
      exit 77
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    args=(--train-limit 1024 --epochs 2 --batch 64 --json)
    run "${mpirun[@]}" 1 "$fashion" "${args[@]}" --out "$dir/one" >/dev/null
    run "${mpirun[@]}" 2 "$fashion" "${args[@]}" --out "$dir/two" | tee "$dir/two.log"
    compare "$dir/one/metrics.csv" "$dir/two/metrics.csv" 1e-5 5
    ;;
  *)
    echo "ddp_examples.sh: the first argument is lm or fashion, got '$what'" >&2
    exit 2
    ;;
esac
