#!/usr/bin/env bash
# scripts/main.sh — the README's first command: set up, build, train the tiny language
# model on its default data (Debian's word list, /usr/share/dict/words), then print words it
# invents. Once built, the training takes 11-14 s on a 2-core AMD EPYC (2026-11-27,
# `time build/bin/tiny_lm train --out /tmp/tl`); the first build takes several minutes.
#
# Output goes to runs/tiny_lm/: checkpoint.safetensors, metrics.csv and loss.svg. Extra
# arguments go to `tiny_lm train` (try --help); Ctrl-C stops early and still saves.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release
cmake --build --preset release --target tiny_lm
build/bin/tiny_lm train --out runs/tiny_lm "$@"
echo
echo "== words sampled from runs/tiny_lm/checkpoint.safetensors (temperature 0.8, top-k 10):"
build/bin/tiny_lm sample --checkpoint runs/tiny_lm/checkpoint.safetensors \
  --temperature 0.8 --top-k 10 --length 300 --seed 1
