#!/usr/bin/env bash
# scripts/main.sh — the README's first command: set up, build, and run the main program.
# Until the tiny language model exists (issue 5), the main program is the tensor tour.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release
cmake --build --preset release --target tour
build/bin/tour
