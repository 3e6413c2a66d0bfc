#!/usr/bin/env bash
# scripts/error_table.sh — rewrites docs/errors.md, the table of the errors a user can meet,
# from what the tests see: it runs the release build's tests with TAPEGRAD_ERROR_LOG set, so
# that every EXPECT_TG_THROW and every refusal test of the example programs records the
# error it provoked, then tools/error_table turns the records into the table.
#
#   scripts/error_table.sh              run the tests, rewrite docs/errors.md
#   scripts/error_table.sh --check DIR  only compare docs/errors.md with the records in DIR
#                                       (what .ci/run does after its own run of the tests)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--check" ]]; then
  [[ $# -eq 2 ]] || { echo "error_table.sh: --check needs the log directory" >&2; exit 2; }
  cmake --build --preset release --target error_table >/dev/null
  exec build/bin/error_table --log "$2" --check docs/errors.md
elif [[ $# -gt 0 ]]; then
  echo "error_table.sh: unknown argument '$1' (the option is --check DIR)" >&2
  exit 2
fi

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
cmake --preset release >/dev/null
cmake --build --preset release
TAPEGRAD_ERROR_LOG="$log" ctest --preset release -j "$(nproc)" | tail -3
build/bin/error_table --log "$log" --write docs/errors.md
