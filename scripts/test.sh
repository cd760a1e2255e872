#!/usr/bin/env bash
# Builds and runs the whole test suite (ctest).
#   scripts/test.sh             release build
#   scripts/test.sh --sanitize  the same suite under ASan+UBSan
# Tests that need ../shared (models + golden data; override with
# KAZEIA_TEST_DATA) say loudly when they skip.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-release}"
bash "$ROOT/scripts/build.sh" "$mode"
case "$mode" in
  --sanitize) dir="$ROOT/build-asan" ;;
  *)          dir="$ROOT/build" ;;
esac
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
if [ "$mode" != --sanitize ]; then
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --timeout 600
  exit 0
fi
# Under the sanitizers: each GoogleTest binary as one process, $(nproc) at a
# time (ctest's one process per test case spent a third of the sanitized
# run starting the ASan runtime 1,000 times), then the other tests (cli,
# layering) through ctest. The model-generator suites are skipped (our own
# writer of random weights, not a parser of hostile input): the release run
# covers them.
run_binary() {
  local bin="$1" log="$1.sanitize.log"
  if timeout 900 "$bin" --gtest_filter='-GenModelData.*:GenModelLayout.*' >"$log" 2>&1; then
    echo "$(basename "$bin"): $(grep -E '^\[  PASSED  \]' "$log" | tail -1)"
  else
    echo "$(basename "$bin"): FAILED" >&2
    tail -n 60 "$log" >&2
    return 1
  fi
}
export -f run_binary
status=0
find "$dir/tests" -maxdepth 1 -type f -name 'test_*' -perm -u+x | sort |
  xargs -P "$(nproc)" -I{} bash -c 'run_binary "$1"' _ {} || status=1
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --timeout 600 -L 'cli|layering' || status=1
exit $status
