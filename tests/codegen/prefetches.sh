#!/usr/bin/env bash
# Software prefetches the decode speed rests on and no result shows, checked
# in the compiled objects (release build). GCC deletes a loop or a helper of
# nothing but __builtin_prefetch / _mm_prefetch in some callers; each of these
# was once missing from the binary with every test passing:
#  1. GemmF32's few-row tiles (tile<1, ..> and tile<2, ..>: decode's
#     attention and delta-rule products) prefetch B rows ahead: prefetcht0.
#  2. The attention's KV tile prefetches (prefetch_to_l2): prefetcht1 in
#     attention.cpp.o.
set -euo pipefail
KERNELS="$1"  # libkz_kernels.a
MODELS="$2"   # libkz_models.a
command -v objdump >/dev/null || { echo "*** SKIPPING: objdump not found ***"; exit 0; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
ar x "$KERNELS"
found=0
for obj in kernels_avx512.cpp.o kernels_avx2.cpp.o kernels_avxvnni.cpp.o; do
  [ -f "$obj" ] || continue
  found=1
  objdump -d --no-show-raw-insn -C "$obj" |
    awk '/^[0-9a-f]+ </ {p = ($0 ~ /GemmF32<.*>::tile<[12], /); if (p) tiles++; next}
         p && /prefetcht0/ {with[tiles] = 1}
         END {n = 0; for (t in with) n++; print tiles + 0, n; exit !(tiles > 0 && n == tiles)}' > tiles.txt || {
    echo "FAIL: $obj: $(cut -d' ' -f2 tiles.txt) of $(cut -d' ' -f1 tiles.txt) few-row GemmF32 tiles prefetch B"; exit 1; }
  echo "$obj: every one of $(cut -d' ' -f1 tiles.txt) few-row GemmF32 tiles has prefetcht0"
done
[ "$found" = 1 ] || { echo "*** SKIPPING: no x86 kernel objects in $KERNELS ***"; exit 0; }
ar x "$MODELS" attention.cpp.o
n="$(objdump -d --no-show-raw-insn attention.cpp.o | grep -c prefetcht1 || true)"
[ "$n" -gt 0 ] || { echo "FAIL: attention.cpp.o has no prefetcht1: its KV tile prefetches were compiled away"; exit 1; }
echo "attention.cpp.o: $n prefetcht1"
echo OK
