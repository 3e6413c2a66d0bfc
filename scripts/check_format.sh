#!/usr/bin/env bash
# scripts/check_format.sh — fails if any C++ file differs from .clang-format's layout.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.h' '*.cpp')
if ! clang-format --dry-run -Werror $files; then
  echo "check_format.sh: run 'clang-format -i' on the files above" >&2
  exit 1
fi
echo "check_format.sh: $(echo "$files" | wc -l) files formatted"
