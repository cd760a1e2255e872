#!/usr/bin/env bash
# What the x86 strip kernels' speed rests on and no result shows, checked in
# the compiled objects (release build):
#  1. The decode strips' prefetch of the next strip survives compilation. It
#     once did not: prefetch_lines (strip_runner.h) held nothing but
#     prefetches, GCC inferred it had no side effects and deleted every call,
#     and decode on AMD read its weights at half speed with nothing failing.
#  2. The decoders are inlined into the strip passes: a pass calls nothing but
#     the prefetch helper. GCC once outlined the decoders' static_for lambdas
#     (the unpacked vectors and dot chains then went through memory, and a
#     hot Q8_0 mat-vec ran at 15 instead of 26 GB/s).
#  3. The lane-stream passes (pass<C, false, true>) issue their prefetches
#     inline, among the decoder's instructions: each must hold prefetcht1.
#  4. Other prefetches decode rests on, each once missing from the binary
#     (GCC deletes a loop of nothing but prefetches in some callers): the
#     few-row GemmF32 tiles (tile<1, ..>, tile<2, ..>: decode's attention and
#     delta-rule products) prefetch B (prefetcht0), and the attention's KV
#     tile prefetches (prefetcht1 in attention.cpp.o, of MODELS_LIB).
#  5. The AVX2 row kernels' decode (rows_legacy_avx2.h, rows_q6_k_avx2.h:
#     LegacyRows<..>::run, Q6KRows::run) issue their lane prefetches inline:
#     each must hold prefetcht1.
set -euo pipefail
LIB="$1"  # libkz_kernels.a
MODELS_LIB="${2:-}"  # libkz_models.a
command -v objdump >/dev/null || { echo "*** SKIPPING: objdump not found ***"; exit 0; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
ar x "$LIB"
# every_holds NAME_REGEX INSN OUT: writes "functions holding" to OUT for the
# functions of dis.txt whose name matches; fails unless there are some and
# every one holds INSN.
every_holds() {
  awk -v name="$1" -v insn="$2" '/^[0-9a-f]+ </ {p = ($0 ~ name); if (p) fns++; next}
       p && $0 ~ insn {with[fns] = 1}
       END {n = 0; for (f in with) n++; print fns + 0, n; exit !(fns > 0 && n == fns)}' dis.txt > "$3"
}
found=0
for obj in kernels_avx512.cpp.o kernels_avx2.cpp.o kernels_avxvnni.cpp.o; do
  [ -f "$obj" ] || continue
  found=1
  objdump -dr --no-show-raw-insn -C "$obj" > dis.txt
  n="$(grep -c 'prefetcht1' dis.txt || true)"
  [ "$n" -gt 0 ] || { echo "FAIL: $obj has no prefetcht1: the strips' prefetch was compiled away"; exit 1; }
  # What StripRunner<...>::pass<...> bodies call (a call's relocation names
  # its target): prefetch_lines, and memcpy for the AVX2 tail store of the
  # results; anything else is an outlined piece of a decoder.
  awk 'function check(target) {
         if (target !~ /prefetch_lines|memcpy/) {bad++; if (bad <= 3) print "  in " substr(name, 1, 150) ":\n    " substr(target, 1, 200)}
       }
       /^[0-9a-f]+ </ {if (call != "") check(call); call = ""}
       /^[0-9a-f]+ <.*StripRunner<.*>::pass</ {p = 1; name = $0; passes++; next}
       /^[0-9a-f]+ </ {p = 0; next}
       !p {next}
       /R_X86_64_(PLT32|PC32)/ {if (call != "") check($0); call = ""; next}
       {if (call != "") check(call); call = ""}
       /\tcall/ {call = $0}
       END {if (call != "") check(call); print passes + 0, "passes,", bad + 0, "outlined calls"; exit bad > 0}' dis.txt > calls.txt || {
    cat calls.txt; echo "FAIL: $obj: a strip pass calls out (a decoder was not inlined)"; exit 1; }
  every_holds 'StripRunner<.*>::pass<[0-9]+, false, true>' prefetcht1 lanes.txt || {
    echo "FAIL: $obj: $(cut -d' ' -f2 lanes.txt) of $(cut -d' ' -f1 lanes.txt) lane-stream strip passes prefetch"; exit 1; }
  every_holds 'GemmF32<.*>::tile<[12], ' prefetcht0 tiles.txt || {
    echo "FAIL: $obj: $(cut -d' ' -f2 tiles.txt) of $(cut -d' ' -f1 tiles.txt) few-row GemmF32 tiles prefetch B"; exit 1; }
  rows=""
  if [ "$obj" = kernels_avx2.cpp.o ]; then
    every_holds '(LegacyRows<.*>::run<|Q6KRows::run)' prefetcht1 rows.txt || {
      echo "FAIL: $obj: $(cut -d' ' -f2 rows.txt) of $(cut -d' ' -f1 rows.txt) row kernels prefetch"; exit 1; }
    rows=", $(cut -d' ' -f1 rows.txt) row kernels with prefetcht1"
  fi
  echo "$obj: $n prefetcht1, $(tail -1 calls.txt), $(cut -d' ' -f1 lanes.txt) lane-stream passes with prefetcht1, $(cut -d' ' -f1 tiles.txt) few-row GemmF32 tiles with prefetcht0$rows"
done
[ "$found" = 1 ] || { echo "*** SKIPPING: no x86 kernel objects in $LIB ***"; exit 0; }
if [ -n "$MODELS_LIB" ]; then
  ar x "$MODELS_LIB" attention.cpp.o
  n="$(objdump -d --no-show-raw-insn attention.cpp.o | grep -c prefetcht1 || true)"
  [ "$n" -gt 0 ] || { echo "FAIL: attention.cpp.o has no prefetcht1: its KV tile prefetches were compiled away"; exit 1; }
  echo "attention.cpp.o: $n prefetcht1"
fi
echo OK
