#!/usr/bin/env bash
# The decode strips' prefetch of the next strip must survive compilation. It
# once did not: prefetch_lines (strip_runner.h) held nothing but prefetches,
# GCC inferred it had no side effects and deleted every call, and decode on
# AMD read its weights at half speed for days with nothing failing. Checks
# that each x86 kernel file's code still holds prefetcht1 (the strips' hint).
set -euo pipefail
LIB="$1"  # libkz_kernels.a
command -v objdump >/dev/null || { echo "*** SKIPPING: objdump not found ***"; exit 0; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
ar x "$LIB"
found=0
for obj in kernels_avx512.cpp.o kernels_avx2.cpp.o kernels_avxvnni.cpp.o; do
  [ -f "$obj" ] || continue
  found=1
  n="$(objdump -d "$obj" | grep -c 'prefetcht1' || true)"
  echo "$obj: $n prefetcht1"
  [ "$n" -gt 0 ] || { echo "FAIL: $obj has no prefetcht1: the strips' prefetch was compiled away"; exit 1; }
done
[ "$found" = 1 ] || { echo "*** SKIPPING: no x86 kernel objects in $LIB ***"; exit 0; }
echo OK
