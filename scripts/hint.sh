#!/usr/bin/env bash
# scripts/hint.sh — the next hint of a course exercise, one more each time you ask.
#
#   scripts/hint.sh rms_norm.forward             # hint 1; run it again for hint 2, ...
#   scripts/hint.sh --lang zh rms_norm.forward   # in Chinese (default: from $LANG)
#   scripts/hint.sh --reset rms_norm.forward     # lock them again
#
# The hints live in tools/hints.txt; how many you have unlocked is kept in
# build/grade/hints/<exercise>. A hint gives the idea and the shape of the computation,
# never a line of the solution.
set -euo pipefail
cd "$(dirname "$0")/.."
lang=en
case "${TAPEGRAD_LANG:-${LANG:-}}" in zh*) lang=zh ;; esac
id= reset=0
while [ $# -gt 0 ]; do
  case "$1" in
    --lang) lang=${2:?--lang needs en or zh}; shift 2 ;;
    --lang=*) lang=${1#--lang=}; shift ;;
    --reset) reset=1; shift ;;
    -*) echo "hint.sh: unknown option $1 (usage: scripts/hint.sh [--lang en|zh] [--reset] EXERCISE)" >&2; exit 2 ;;
    *) id=$1; shift ;;
  esac
done
if [ -z "$id" ]; then
  echo "usage: scripts/hint.sh [--lang en|zh] [--reset] EXERCISE; tools/exercises.txt lists them" >&2
  exit 2
fi
state=build/grade/hints/$id
if [ "$reset" = 1 ]; then
  rm -f "$state"
  echo "hint.sh: the hints of $id are locked again"
  exit 0
fi
[ -f build/CMakeCache.txt ] || cmake --preset release >/dev/null
cmake --build --preset release --target exercise_tests >/dev/null
exec build/bin/exercise_tests hint "$id" --lang "$lang" --state "$state"
