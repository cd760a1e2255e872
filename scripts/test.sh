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
exclude=()
# Under the sanitizers, skip the model-generator suites (our own writer of
# random weights, not a parser of hostile input; ~40 % of the sanitized run):
# the release run covers them.
[ "$mode" = --sanitize ] && exclude=(-E '^GenModel(Data|Layout)[.]')
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --timeout 600 "${exclude[@]}"
