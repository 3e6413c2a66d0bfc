#!/usr/bin/env bash
# scripts/figures.sh — the course's figures (docs/images/course/), drawn by the project itself.
#
#   scripts/figures.sh                builds build/bin/course_figures, writes every figure
#                                     source into docs/images/course/ and renders each .dot
#                                     to an .svg beside it with Graphviz
#   scripts/figures.sh --check [BIN]  builds nothing: runs BIN (default build/bin/course_figures)
#                                     into a temporary directory and fails if a committed
#                                     source is stale or missing, if a graph does not render,
#                                     or if a chapter and the figures disagree
#
# Two kinds of figure, told apart by their names:
#   NN-name-graph.dot + NN-name-graph.svg   tg::to_dot's graph of a real computation, and
#                                           Graphviz's rendering of it (the chapters show the .svg)
#   NN-name.svg (no .dot twin)              SVG written by tools/course_figures_*.cpp itself
# The sources (every .dot, every code-written .svg) are compared byte for byte. A rendered
# .svg is not (Graphviz versions lay a graph out differently); --check renders each .dot
# afresh instead. Run by scripts/test.sh after the tests.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."

dir=docs/images/course
bin=build/bin/course_figures
mode="write"
if [[ "${1:-}" == "--check" ]]; then
  mode=check
  if [[ -n "${2:-}" ]]; then  # a path given from where the script was called
    bin=$2
    [[ $bin == /* ]] || bin=$caller/$bin
  fi
elif [[ $# -gt 0 ]]; then
  echo "figures.sh: unknown argument '$1' (usage: scripts/figures.sh [--check [BIN]])" >&2
  exit 2
fi
if ! command -v dot >/dev/null 2>&1; then
  echo "figures.sh: Graphviz's 'dot' is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ $mode == write ]]; then
  [[ -d build ]] || cmake --preset release
  cmake --build --preset release --target course_figures
elif [[ ! -x "$bin" ]]; then
  echo "figures.sh: $bin does not exist; build it first:" >&2
  echo "  cmake --build --preset release --target course_figures" >&2
  exit 1
fi
"$bin" "$tmp/new" >/dev/null

problems=()
render_failed=0
# Each graph must render to a non-empty SVG, and each code-written SVG must be one document.
mkdir -p "$tmp/rendered"
for source in "$tmp"/new/*; do
  name=$(basename "$source")
  if [[ $name == *.dot ]]; then
    if ! dot -Tsvg "$source" -o "$tmp/rendered/${name%.dot}.svg" 2>"$tmp/dot.err" ||
       [[ ! -s "$tmp/rendered/${name%.dot}.svg" ]]; then
      problems+=("$name does not render with Graphviz: $(head -c 300 "$tmp/dot.err")")
      render_failed=1
    fi
  elif [[ $(head -c 4 "$source") != "<svg" || $(tail -n 1 "$source") != "</svg>" ]]; then
    problems+=("$name is not one complete SVG document")
    render_failed=1
  fi
done

if [[ $mode == write ]]; then
  mkdir -p "$dir"
  for old in "$dir"/*; do  # figures that course_figures no longer makes
    [[ -e "$old" ]] || continue
    name=$(basename "$old")
    [[ -e "$tmp/new/$name" || ($name == *.svg && -e "$tmp/new/${name%.svg}.dot") ]] || rm "$old"
  done
  cp "$tmp"/new/* "$dir"/
  find "$tmp/rendered" -name '*.svg' -exec cp {} "$dir"/ \;
  sources=("$tmp"/new/*) graphs=("$tmp"/new/*.dot)
  echo "figures.sh: wrote ${#sources[@]} figure sources into $dir and rendered ${#graphs[@]} graphs"
else
  # Every source course_figures writes must be committed, byte for byte, with its rendering.
  for source in "$tmp"/new/*; do
    name=$(basename "$source")
    if [[ ! -e "$dir/$name" ]]; then
      problems+=("missing: $dir/$name")
    elif ! cmp -s "$source" "$dir/$name"; then
      problems+=("stale: $dir/$name differs from what $bin writes now")
    fi
    if [[ $name == *.dot && ! -s "$dir/${name%.dot}.svg" ]]; then
      problems+=("missing: $dir/${name%.dot}.svg, the rendering of $name")
    fi
  done
  # ... and nothing else may be there.
  for old in "$dir"/*; do
    [[ -e "$old" ]] || continue
    name=$(basename "$old")
    if [[ ! -e "$tmp/new/$name" && ! ($name == *.svg && -e "$tmp/new/${name%.svg}.dot") ]]; then
      problems+=("not made by $bin: $old (remove it, or add it to tools/course_figures_*.cpp)")
    fi
  done
fi

# The chapters and the figures must agree: every figure a chapter shows exists, and every
# figure is shown somewhere (a .dot through its rendered .svg).
used=" "
for md in docs/course/*.md docs/course/zh/*.md; do
  for ref in $(grep -o 'images/course/[A-Za-z0-9._-]*' "$md" | sort -u); do
    name=${ref#images/course/}
    used+="$name "
    [[ -e "$dir/$name" || -e "$tmp/new/$name" || -e "$tmp/new/${name%.svg}.dot" ]] ||
      problems+=("$md shows $ref, which no figure is")
  done
done
for source in "$tmp"/new/*; do
  name=$(basename "$source")
  shown=${name%.dot}
  shown=${shown%.svg}.svg
  [[ $used == *" $shown "* ]] ||
    problems+=("no chapter shows $dir/$shown (add it to a chapter, or remove it from tools/course_figures_*.cpp)")
done

if [[ ${#problems[@]} -gt 0 ]]; then
  printf 'figures.sh: %s\n' "${problems[@]}" >&2
  if [[ $mode == check ]]; then
    echo "figures.sh: the figures do not match the code or the chapters: run scripts/figures.sh" \
         "to regenerate them (and fix a chapter named above)" >&2
    exit 1
  fi
  exit $render_failed  # writing: the chapters may show a new figure next
fi
if [[ $mode == check ]]; then
  sources=("$tmp"/new/*)
  echo "figures.sh: ${#sources[@]} figure sources are current, every graph renders, and the" \
       "chapters show every figure"
fi
