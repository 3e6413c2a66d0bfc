#!/usr/bin/env bash
# scripts/setup.sh — installs the Debian packages tapegrad needs to build and test.
#
# Idempotent: packages already installed are left alone, and with nothing missing it
# does not touch apt at all. Needs root (or password-less sudo) to install; otherwise it
# stops and prints the exact command to run.
#   scripts/setup.sh          build + test dependencies
#   scripts/setup.sh --dev    also clang-format (the formatting check in .ci/run) and ccache
#                             (the compiler cache .ci/run shares between its two g++ builds)
#   scripts/setup.sh --bench  also what the side-by-side benchmarks compare against:
#                             PyTorch (python3-torch), OpenBLAS, and GNU time for peak memory
#   scripts/setup.sh --sanitize  also clang-16 with its sanitizers, libFuzzer, OpenMP and
#                             symbolizer: the sanitize preset and scripts/fuzz.sh (Debian's
#                             default clang-14 lacks std::source_location)
set -euo pipefail

# graphviz is the `dot` program that renders tg::to_dot's pictures of the tape (a test
# renders one; the course draws its graphs with it). Open MPI (libopenmpi-dev, openmpi-bin)
# is what data-parallel training runs on: `mpirun -np 2 build/bin/tiny_lm train` (the tests
# run two and three processes on this machine). The last three are data: the word list
# tiny_lm learns from by default, the images of the fashion_mnist example, and the Chinese
# fortune files whose 300 Tang poems tiny_lm --data tang learns (the tests use all three,
# and skip what is missing).
# lld is the linker: the build links some 190 programs, and lld links each about three times
# faster than the system's default (see TAPEGRAD_LLD in CMakeLists.txt).
packages=(g++ cmake ninja-build lld pkg-config libfmt-dev libgtest-dev libgmock-dev
          libbenchmark-dev zlib1g-dev nlohmann-json3-dev libcli11-dev graphviz
          libopenmpi-dev openmpi-bin wamerican dataset-fashion-mnist fortunes-zh)
if [[ "${1:-}" == "--dev" ]]; then
  packages+=(clang-format ccache)
elif [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3-torch python3-numpy libopenblas-dev time)
elif [[ "${1:-}" == "--sanitize" ]]; then
  packages+=(clang-16 libclang-rt-16-dev libomp-16-dev llvm-16)
elif [[ $# -gt 0 ]]; then
  echo "setup.sh: unknown argument '$1' (the options are --dev, --bench and --sanitize)" >&2
  exit 2
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup.sh: this is not a Debian-like system (no dpkg-query/apt-get)." >&2
  echo "Install these packages (or their equivalents) yourself: ${packages[*]}" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup.sh: all ${#packages[@]} packages are installed"
  exit 0
fi

install="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  run=(sh -c "$install")
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run=(sudo sh -c "$install")
else
  echo "setup.sh: missing packages: ${missing[*]}" >&2
  echo "setup.sh: installing them needs root. Run:" >&2
  echo "  sudo sh -c '$install'" >&2
  exit 1
fi
echo "setup.sh: installing ${missing[*]}"
"${run[@]}"
