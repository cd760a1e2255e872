#!/usr/bin/env bash
# A/B of the x86 matmul kernels: a base revision's src/kernels (compiled
# here) against the working tree's (the release build's library), both in one
# process, calls alternating (see
# bench/kernel_ab/kernel_ab_main.cpp). For kernel changes too small to see in
# whole-process runs on a shared machine. KERNEL_AB_ISA=avx512|avx2 picks the
# table (default: avx512 where the CPU has AVX-512, else avx2; for avx2 on an
# AVX-512 or AVX-VNNI CPU also set KAZEIA_CPU_LEVEL=avx2).
#   tools/kernel_ab.sh REV TYPE N_IN N_OUT THREADS hot|cold [PAIRS]
#   tools/kernel_ab.sh HEAD Q6_K 1024 1024 1 hot     # compute speed
#   tools/kernel_ab.sh HEAD Q6_K 1024 151936 2 cold  # decode's output matrix
#   KERNEL_AB_TOKENS=256 tools/kernel_ab.sh HEAD Q8_0 1024 3072 1 hot  # prefill
# KERNEL_AB_TOKENS (default 1): the batch of every call; the base side then
# also takes the revision's token tiles (token_tiles_<isa>.cpp) where the
# current table tiles with that ISA's.
# Needs the release build (scripts/build.sh; KERNEL_AB_BUILD names another
# build directory): the compile flags of kernels_<isa>.cpp are read from its
# build.ninja, the libraries linked from its src/. Exits 77 (skipped) when
# the active kernels are not that ISA's.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 6 ] || { sed -n '2,9p' "$0"; exit 2; }
rev="$1"; shift
build="${KERNEL_AB_BUILD:-$ROOT/build}"
out="$build/kernel_ab"
[ -f "$build/build.ninja" ] || { echo "kernel_ab: no release build in $build (run scripts/build.sh)" >&2; exit 1; }
isa="${KERNEL_AB_ISA:-$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)}"
case "$isa" in
  avx512) isa_define="" ;;
  avx2) isa_define="-DKERNEL_AB_AVX2" ;;
  *) echo "kernel_ab: KERNEL_AB_ISA must be avx512 or avx2, not '$isa'" >&2; exit 2 ;;
esac
# field FILE NAME: a variable (FLAGS, DEFINES, INCLUDES) of the rule that
# compiles src/kernels/x86/FILE in build.ninja.
field() {
  grep -A6 "^build src/CMakeFiles/kz_kernels.dir/kernels/x86/$1.o:" "$build/build.ninja" | sed -n "s/^  $2 = //p"
}
flags="$(field "kernels_$isa.cpp" FLAGS)"; tile_flags="$(field "token_tiles_$isa.cpp" FLAGS)"
defines="$(field "kernels_$isa.cpp" DEFINES) $isa_define"; includes="$(field "kernels_$isa.cpp" INCLUDES)"
for f in "kernels_$isa.cpp:$flags" "token_tiles_$isa.cpp:$tile_flags"; do
  [ -n "${f#*:}" ] || { echo "kernel_ab: ${f%%:*}'s flags not found in build.ninja" >&2; exit 1; }
done
src="$ROOT/bench/kernel_ab"
# The base objects are rebuilt only when the revision's src/kernels, the
# flags or kernel_ab_variant.cpp change.
key="$(git -C "$ROOT" rev-parse "$rev:src/kernels") $(cat - "$src/kernel_ab_variant.cpp" <<<"$flags $tile_flags $defines" | md5sum | cut -c1-12)"
out="$out/$isa"
mkdir -p "$out"
# shellcheck disable=SC2086
{
  c++ -O2 -std=c++20 $includes -c "$src/kernel_ab_main.cpp" -o "$out/main.o" &
  main_pid=$!
  if [ ! -f "$out/base.o" ] || [ "$(cat "$out/base.key" 2>/dev/null)" != "$key" ]; then
    # base.o goes too: a failed compile must not leave another revision's.
    rm -rf "$out/base" "$out/base.key" "$out/base.o" "$out/base_tiles.o" && mkdir -p "$out/base"
    git -C "$ROOT" archive "$rev" src/kernels | tar -x -C "$out/base"
    c++ $flags $defines -I"$out/base/src" $includes -c "$src/kernel_ab_variant.cpp" -o "$out/base.o" &
    base_pid=$!
    # The token tiles' fill under another name, so both builds link.
    c++ $tile_flags $defines -Dfill_${isa}_token_tiles=kernel_ab_base_token_tiles -I"$out/base/src" $includes \
      -c "$out/base/src/kernels/x86/token_tiles_$isa.cpp" -o "$out/base_tiles.o"
    wait "$base_pid"
    printf '%s\n' "$key" >"$out/base.key"
  fi
  wait "$main_pid"
}
c++ "$out/main.o" "$out/base.o" "$out/base_tiles.o" "$build/src/libkz_kernels.a" "$build/src/libkz_tensor.a" \
  "$build/src/libkz_format.a" "$build/src/libkz_base.a" -lpthread -o "$out/kernel_ab"
exec "$out/kernel_ab" "$@"
