#!/usr/bin/env bash
# Instructions one ARM strip call executes, counted by qemu (no aarch64
# hardware here to time the ARM kernels): tools/arm_count/arm_strip_calls.cpp
# runs the kernel R and 2R times under qemu-aarch64 -cpu max -singlestep
# -d exec (one logged translation block per executed instruction); the
# difference over R is the per-call count, setup excluded. Needs the ARM
# build (scripts/test-arm.sh).
#   tools/arm_instruction_count.sh TYPE N_IN ROWS TOKENS [R]
# prints the 4 x 4 SDOT tile strip's and the row dot's (once per row and
# token) instructions per call and per (row, token, 32 weights);
# ARM_COUNT_MODES=strip (or dot) counts one of them; ARM_COUNT_LEVEL=i8mm
# takes that level's strip and dot (default dotprod; scalar: the
# reference dot, with ARM_COUNT_MODES=dot). ARM_COUNT_MODES=group counts
# the level's prefill strip on token groups (dotprod Q4_0 / Q8_0, i8mm Q4_0 / Q8_0 / Q4_K / Q5_K / Q6_K: matmul's
# path for more than 4 tokens), acts the groups' building (once per matmul
# call, per (token, 32 inputs)).
#   tools/arm_instruction_count.sh OP D1 D2 D3 [R]
# counts a float op of the kernel table instead (tools/arm_count/
# arm_float_calls.cpp lists OP and its sizes: gemm M N K, softmax N - -,
# ...): instructions per call and per multiply-add (gemm) or element, at
# ARM_COUNT_LEVEL (default neon; scalar: the references).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KAZEIA_ARM_BUILD_DIR:-$ROOT/build-arm}"
[ $# -ge 4 ] || { sed -n '2,20p' "$0"; exit 2; }
type="$1" n_in="$2" rows="$3" tokens="$4" reps="${5:-4}"
[ -f "$BUILD/libkz_kernels.a" ] || { echo "no ARM build in $BUILD (run scripts/test-arm.sh)" >&2; exit 1; }
build_tool() {  # NAME: tools/arm_count/NAME.cpp linked with the ARM build's libraries
  aarch64-linux-gnu-g++ -O2 -std=c++20 -I"$ROOT/src" -I"$BUILD/layer_include/kernels" -I"$BUILD/layer_include/_status" \
    -I"$BUILD/layer_include/tensor" -I"$BUILD/layer_include/format" -I"$BUILD/layer_include/base" \
    "$ROOT/tools/arm_count/$1.cpp" "$BUILD/libkz_kernels.a" "$BUILD/libkz_tensor.a" \
    "$BUILD/libkz_format.a" "$BUILD/libkz_base.a" -o "$BUILD/$1" -lpthread
}
qemu_count() {  # ARGS...: instructions qemu executed
  qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu -singlestep -d exec -D /dev/stdout "$@" | grep -c '^Trace'
}
if [[ "$type" =~ ^[a-z] ]]; then  # a float op
  build_tool arm_float_calls
  level="${ARM_COUNT_LEVEL:-neon}"
  one=$(qemu_count "$BUILD/arm_float_calls" "$type" "$n_in" "$rows" "$tokens" "$reps" "$level")
  two=$(qemu_count "$BUILD/arm_float_calls" "$type" "$n_in" "$rows" "$tokens" $((2 * reps)) "$level")
  case "$type" in
    gemm*) units=$((n_in * rows * tokens)) unit="multiply-add" ;;
    transpose) units=$((n_in * rows)) unit="element" ;;
    *) units=$n_in unit="element" ;;
  esac
  awk -v l="$level" -v c=$(((two - one) / reps)) -v u="$units" -v name="$unit" \
    'BEGIN { printf "%-7s %10d instructions a call, %6.3f per %s\n", l, c, c / u, name }'
  exit 0
fi
build_tool arm_strip_calls
bin="$BUILD/arm_strip_calls"
count() {  # MODE REPS: instructions qemu executed
  qemu_count "$bin" "$type" "$n_in" "$rows" "$tokens" "$1" "$2" "${ARM_COUNT_LEVEL:-dotprod}"
}
for mode in ${ARM_COUNT_MODES:-strip dot}; do
  one=$(count "$mode" "$reps")
  two=$(count "$mode" $((2 * reps)))
  per_call=$(((two - one) / reps))
  if [ "$mode" = acts ]; then
    awk -v c="$per_call" -v t="$tokens" -v n="$n_in" \
      'BEGIN { printf "acts  %10d instructions a call, %6.2f per (token, 32 inputs)\n", c, c / (t * n / 32) }'
    continue
  fi
  awk -v m="$mode" -v c="$per_call" -v r="$rows" -v t="$tokens" -v n="$n_in" \
    'BEGIN { printf "%-5s %10d instructions a call, %6.2f per (row, token, 32 weights)\n", m, c, c / (r * t * n / 32) }'
done
