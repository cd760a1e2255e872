#!/usr/bin/env bash
# A/B of the AVX-512 matmul kernels: a base revision's src/kernels (compiled
# here) against the working tree's (the release build's library), both in one
# process, calls alternating (see
# bench/kernel_ab/kernel_ab_main.cpp). For kernel changes too small to see in
# whole-process runs on a shared machine.
#   tools/kernel_ab.sh REV TYPE N_IN N_OUT THREADS hot|cold [PAIRS]
#   tools/kernel_ab.sh HEAD Q6_K 1024 1024 1 hot     # compute speed
#   tools/kernel_ab.sh HEAD Q6_K 1024 151936 2 cold  # decode's output matrix
# Needs the release build (scripts/build.sh; KERNEL_AB_BUILD names another
# build directory): the compile flags of kernels_avx512.cpp are read from its
# build.ninja, the libraries linked from its src/. Exits 77 (skipped) on a
# CPU without AVX-512.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 6 ] || { sed -n '2,9p' "$0"; exit 2; }
rev="$1"; shift
build="${KERNEL_AB_BUILD:-$ROOT/build}"
out="$build/kernel_ab"
[ -f "$build/build.ninja" ] || { echo "kernel_ab: no release build in $build (run scripts/build.sh)" >&2; exit 1; }
rule="$(grep -A6 '^build src/CMakeFiles/kz_kernels.dir/kernels/x86/kernels_avx512.cpp.o:' "$build/build.ninja")"
field() { printf '%s\n' "$rule" | sed -n "s/^  $1 = //p"; }
flags="$(field FLAGS)"; defines="$(field DEFINES)"; includes="$(field INCLUDES)"
[ -n "$flags" ] || { echo "kernel_ab: kernels_avx512.cpp's flags not found in build.ninja" >&2; exit 1; }
src="$ROOT/bench/kernel_ab"
# The base object is rebuilt only when the revision's src/kernels (or the
# flags) change.
key="$(git -C "$ROOT" rev-parse "$rev:src/kernels") $(printf '%s' "$flags $defines" | md5sum | cut -c1-12)"
mkdir -p "$out"
# shellcheck disable=SC2086
{
  c++ -O2 -std=c++20 $includes -c "$src/kernel_ab_main.cpp" -o "$out/main.o" &
  main_pid=$!
  if [ ! -f "$out/base.o" ] || [ "$(cat "$out/base.key" 2>/dev/null)" != "$key" ]; then
    # base.o goes too: a failed compile must not leave another revision's.
    rm -rf "$out/base" "$out/base.key" "$out/base.o" && mkdir -p "$out/base"
    git -C "$ROOT" archive "$rev" src/kernels | tar -x -C "$out/base"
    c++ $flags $defines -I"$out/base/src" $includes -c "$src/kernel_ab_variant.cpp" -o "$out/base.o"
    printf '%s\n' "$key" >"$out/base.key"
  fi
  wait "$main_pid"
}
c++ "$out/main.o" "$out/base.o" "$build/src/libkz_kernels.a" "$build/src/libkz_tensor.a" \
  "$build/src/libkz_format.a" "$build/src/libkz_base.a" -lpthread -o "$out/kernel_ab"
exec "$out/kernel_ab" "$@"
