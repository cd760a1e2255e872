#!/usr/bin/env bash
# Configures and builds Kazeia.
#   scripts/build.sh            release build in build/
#   scripts/build.sh --sanitize ASan+UBSan build in build-asan/
#   scripts/build.sh --fuzz     libFuzzer targets (clang) in build-fuzz/
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-release}"
JOBS="${KAZEIA_JOBS:-$(nproc)}"
case "$mode" in
  release|"")  dir="$ROOT/build";      flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  --sanitize)  dir="$ROOT/build-asan"; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAZEIA_SANITIZE=ON -DKAZEIA_BENCH=OFF) ;;
  --fuzz)      dir="$ROOT/build-fuzz"; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAZEIA_FUZZ=ON -DKAZEIA_TESTS=OFF
                                              -DKAZEIA_BENCH=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++) ;;
  *) echo "usage: $0 [--sanitize|--fuzz]" >&2; exit 2 ;;
esac
cmake -S "$ROOT" -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" -j "$JOBS"
