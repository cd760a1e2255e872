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
# The sanitizer build links the x86 SIMD objects of the release build when
# build/ is a release build of this tree (uninstrumented in both; see
# KAZEIA_SIMD_OBJECTS_DIR in cmake/KazeiaLayer.cmake), after bringing them up
# to date there. KAZEIA_SANITIZE_OWN_SIMD=1 compiles them here instead.
release="$ROOT/build"
if [[ $dir != "$release" ]]; then
  simd_dir=""
  if [[ -z ${KAZEIA_SANITIZE_OWN_SIMD:-} && -f $release/build.ninja ]] &&
     grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT" "$release/CMakeCache.txt" &&
     grep -qx "CMAKE_BUILD_TYPE:STRING=Release" "$release/CMakeCache.txt"; then
    simd_dir="$release"
  fi
  flags+=("-DKAZEIA_SIMD_OBJECTS_DIR=$simd_dir")
fi
cmake -S "$ROOT" -B "$dir" -G Ninja "${flags[@]}" >/dev/null
if [[ -n ${simd_dir:-} && -s $dir/simd_objects.txt ]]; then
  echo "build: x86 SIMD objects from the release build ($simd_dir)"
  mapfile -t simd_objects <"$dir/simd_objects.txt"
  ninja -C "$simd_dir" -j "$JOBS" "${simd_objects[@]}"
fi
ninja -C "$dir" -j "$JOBS"
