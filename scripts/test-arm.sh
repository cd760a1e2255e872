#!/usr/bin/env bash
# Cross-builds the kernel layers (base, format, tensor, kernels) for aarch64
# and runs their tests under qemu-user, qemu -cpu max, no level override:
# all of test_base, test_tensor, test_kernels; the kernel tests compare
# every table this CPU can run (scalar, neon, dotprod, i8mm) with the
# references. `scripts/test-arm.sh neon scalar` adds runs with
# KAZEIA_CPU_LEVEL set (labels kernels and base): the dispatch override on
# ARM. CI runs max only (each extra level is ~45 s of its 20 minutes).
# Prints ctest's summary line for each; exits non-zero if any run fails, or
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

failed=0
summaries=()
for level in max "$@"; do
  log="$BUILD/ctest-$level.log"
  t0=$SECONDS
  echo "== test-arm: level $level"
  ctest_args=(--test-dir "$BUILD" -j "$JOBS" --timeout 600 --output-on-failure)
  if [[ $level == max ]]; then
    env -u KAZEIA_CPU_LEVEL ctest "${ctest_args[@]}" >"$log" 2>&1 || failed=1
  else
    KAZEIA_CPU_LEVEL=$level ctest "${ctest_args[@]}" -L 'kernels|base' >"$log" 2>&1 || failed=1
  fi
  # On failure: the gtest failure messages (capped) and the failed tests.
  if grep -q 'The following tests FAILED' "$log"; then
    grep -A6 -E '(Failure|error:)$' "$log" | head -80
    sed -n '/The following tests FAILED/,$p' "$log"
    echo "(full log: $log)"
  fi
  summary="$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" || echo "no ctest summary (see $log)")"
  skipped="$(grep -cE '\(Skipped\)$' "$log" || true)"
  line="$level: $summary; $skipped skipped; $((SECONDS - t0)) s"
  echo "$line"
  summaries+=("$line")
  if [[ $level == max ]] && grep -E '\(Skipped\)' "$log" | grep -q 'Arm'; then
    echo "test-arm: ARM kernel tests were skipped at level max (does qemu -cpu max offer dotprod and i8mm?)" >&2
    grep -E '\(Skipped\)' "$log" | grep 'Arm' | head -5 >&2
    failed=1
  fi
  if [[ $summary == no\ ctest* ]]; then failed=1; fi
done

echo "== test-arm summary ($((SECONDS - start)) s)"
printf '  %s\n' "${summaries[@]}"
exit "$failed"
