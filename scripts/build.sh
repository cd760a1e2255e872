#!/usr/bin/env bash
# Configures and builds Kazeia.
#   scripts/build.sh            release build in build/
#   scripts/build.sh --sanitize ASan+UBSan build (clang) in build-asan/, with
#                               the libFuzzer targets (--fuzz: the same build)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-release}"
JOBS="${KAZEIA_JOBS:-$(nproc)}"
case "$mode" in
  release|"")  dir="$ROOT/build";      flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  # One clang build serves the sanitized test suite and the fuzzers: every
  # layer is compiled with ASan+UBSan and libFuzzer's coverage hooks, -O1
  # with line tables (readable stacks, a third of -O3's compile time).
  --sanitize|--fuzz)
               dir="$ROOT/build-asan"; flags=(-DCMAKE_BUILD_TYPE=Sanitize -DKAZEIA_SANITIZE=ON -DKAZEIA_FUZZ=ON
                                              -DKAZEIA_BENCH=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++) ;;
  *) echo "usage: $0 [--sanitize|--fuzz]" >&2; exit 2 ;;
esac
cmake -S "$ROOT" -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" -j "$JOBS"
