#!/usr/bin/env bash
# scripts/test.sh — the README's second command: set up, build everything, run every test,
# then check that the course's figures match the code (scripts/figures.sh).
# .ci/run calls this very script, so CI proves what a new user gets.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release
cmake --build --preset release
ctest --preset release -j "$(nproc)"
bash scripts/figures.sh --check
