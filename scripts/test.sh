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
  local bin="$1" shard="$2" shards="$3" log="$1.$2.sanitize.log"
  if GTEST_SHARD_INDEX="$shard" GTEST_TOTAL_SHARDS="$shards" \
     timeout 900 "$bin" --gtest_filter='-GenModelData.*:GenModelLayout.*' >"$log" 2>&1; then
    echo "$(basename "$bin") [$((shard + 1))/$shards]: $(grep -E '^\[  PASSED  \]' "$log" | tail -1)"
  else
    echo "$(basename "$bin") [$((shard + 1))/$shards]: FAILED" >&2
    tail -n 60 "$log" >&2
    return 1
  fi
}
export -f run_binary
# Longest first, so the two workers end together: test_models and
# test_kernels (the longest under ASan, ~50 and ~35 s) run as two shards each; the
# others in the order of their last measured times, any new binary at the end.
sanitize_jobs() {
  local known=(test_models:2 test_kernels:2 test_format:1 test_text:1 test_api:1 test_tensor:1 test_agent:1)
  local entry name shards i listed=" "
  for entry in "${known[@]}"; do
    name="${entry%%:*}" shards="${entry##*:}"
    [[ -x "$dir/tests/$name" ]] || continue
    listed+="$name "
    for ((i = 0; i < shards; ++i)); do echo "$dir/tests/$name $i $shards"; done
  done
  find "$dir/tests" -maxdepth 1 -type f -name 'test_*' -perm -u+x | sort | while read -r bin; do
    [[ "$listed" == *" $(basename "$bin") "* ]] || echo "$bin 0 1"
  done
}
status=0
sanitize_jobs | xargs -P "$(nproc)" -L 1 bash -c 'run_binary "$@"' _ || status=1
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --timeout 600 -L 'cli|layering' || status=1
exit $status
