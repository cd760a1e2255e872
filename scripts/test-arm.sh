#!/usr/bin/env bash
# Cross-builds the kernel layers (base, format, tensor, kernels) for aarch64
# and runs their tests under qemu-user, qemu -cpu max, no level override:
# all of test_base, test_tensor, test_kernels; the kernel tests compare
# every table this CPU can run (scalar, neon, dotprod, i8mm) with the
# references. `scripts/test-arm.sh neon scalar` adds runs with
# KAZEIA_CPU_LEVEL set (test_base and test_kernels): the dispatch override on
# ARM. CI runs max only (each extra level is ~45 s of its 20 minutes).
# Each test binary runs as one qemu process (test_kernels as two shards),
# $JOBS at a time: one process per test case, as ctest runs them, spent a
# quarter of the step starting qemu 344 times. (ctest in the build directory
# still works, one test at a time.)
# Prints a summary line for each level; exits non-zero if any run fails, or
# if the max run skipped an ARM kernel test (qemu lacking dotprod / i8mm
# would otherwise pass silently).
#
# Needs: g++-aarch64-linux-gnu, qemu-user, libgtest-dev (GoogleTest sources,
# built here for aarch64), cmake, ninja. The build goes to build-arm/
# (KAZEIA_ARM_BUILD_DIR overrides); JOBS sets the parallelism (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KAZEIA_ARM_BUILD_DIR:-$ROOT/build-arm}"
JOBS="${JOBS:-2}"

missing=()
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
[[ -f /usr/src/googletest/CMakeLists.txt ]] || missing+=(libgtest-dev)
command -v ninja >/dev/null || missing+=(ninja-build)
if ((${#missing[@]})); then
  echo "test-arm: missing packages: ${missing[*]} (apt-get install ${missing[*]})" >&2
  exit 1
fi
if ! grep -q 'include(cmake/ArmCrossBuild.cmake)' "$ROOT/CMakeLists.txt"; then
  echo "test-arm: $ROOT/CMakeLists.txt does not include cmake/ArmCrossBuild.cmake" >&2
  exit 1
fi

start=$SECONDS
echo "== test-arm: configure + build ($BUILD, -j$JOBS)"
# A build directory configured from another checkout cannot be reused.
if [[ -f $BUILD/CMakeCache.txt ]] && ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT" "$BUILD/CMakeCache.txt"; then
  echo "test-arm: $BUILD was configured for another source tree; starting it afresh"
  rm -rf "$BUILD"
fi
mkdir -p "$BUILD"
cmake -G Ninja -S "$ROOT" -B "$BUILD" \
  -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-aarch64.cmake" \
  -DKAZEIA_ARM_KERNELS_ONLY=ON -DCMAKE_BUILD_TYPE=Release >"$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log" >&2; exit 1; }
ninja -C "$BUILD" -j "$JOBS" test_base test_tensor test_kernels
echo "== test-arm: built in $((SECONDS - start)) s"

# As the toolchain file's CMAKE_CROSSCOMPILING_EMULATOR (no spaces in it).
export QEMU_CMD="qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu"
# One shard of one binary: its gtest output to a log, one line on stdout;
# on failure also the gtest failure messages (capped) and the log's tail.
run_shard() {
  local bin="$1" shard="$2" shards="$3" log="$4"
  # shellcheck disable=SC2086  # QEMU_CMD is split into its words on purpose
  if GTEST_SHARD_INDEX="$shard" GTEST_TOTAL_SHARDS="$shards" timeout 900 $QEMU_CMD "$bin" >"$log" 2>&1; then
    echo "$(basename "$bin") [$((shard + 1))/$shards]: $(grep -E '^\[  PASSED  \]' "$log" | tail -1)"
    return 0
  fi
  echo "$(basename "$bin") [$((shard + 1))/$shards]: FAILED (log: $log)"
  { grep -A6 -E '(Failure|error:)$' "$log" | head -80; grep -E '^\[  FAILED  \]' "$log" | head -40; } || true
  tail -n 20 "$log"
  return 1
}
export -f run_shard

failed=0
summaries=()
for level in max "$@"; do
  t0=$SECONDS
  echo "== test-arm: level $level"
  if [[ $level == max ]]; then
    jobs_list=("test_kernels 0 2" "test_kernels 1 2" "test_tensor 0 1" "test_base 0 1")
    unset KAZEIA_CPU_LEVEL
  else
    jobs_list=("test_kernels 0 2" "test_kernels 1 2" "test_base 0 1")
    export KAZEIA_CPU_LEVEL=$level
  fi
  logs=() lines=()
  for j in "${jobs_list[@]}"; do
    read -r name shard shards <<<"$j"
    logs+=("$BUILD/$name.$level.$shard.log")
    lines+=("$BUILD/$name $shard $shards $BUILD/$name.$level.$shard.log")
  done
  level_failed=0
  printf '%s\n' "${lines[@]}" | xargs -P "$JOBS" -L 1 bash -c 'run_shard "$@"' _ || level_failed=1
  unset KAZEIA_CPU_LEVEL
  passed=$( (cat "${logs[@]}" | grep -E '^\[  PASSED  \]' | grep -oE '[0-9]+' | paste -sd+ | bc) || true)
  # gtest names each failed / skipped test twice (as it ends, and in the
  # closing list): count names once.
  n_failed=$(cat "${logs[@]}" | grep -E '^\[  FAILED  \] [A-Za-z]' | sed 's/^\[  FAILED  \] //; s/ (.*//; s/, where.*//' | sort -u | grep -c . || true)
  skipped_names=$(cat "${logs[@]}" | grep -E '^\[  SKIPPED \] [A-Za-z]' | sed 's/^\[  SKIPPED \] //; s/ (.*//' | sort -u || true)
  n_skipped=$(grep -c . <<<"$skipped_names" || true)
  line="$level: ${passed:-0} tests passed, $n_failed failed; $n_skipped skipped; $((SECONDS - t0)) s"
  ((level_failed)) && line+=" - FAILED"
  echo "$line"
  summaries+=("$line")
  ((level_failed)) && failed=1
  if [[ $level == max ]] && grep -q 'Arm' <<<"$skipped_names"; then
    echo "test-arm: ARM kernel tests were skipped at level max (does qemu -cpu max offer dotprod and i8mm?)" >&2
    grep 'Arm' <<<"$skipped_names" | head -5 >&2
    failed=1
  fi
done

echo "== test-arm summary ($((SECONDS - start)) s)"
printf '  %s\n' "${summaries[@]}"
exit "$failed"
