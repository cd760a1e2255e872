#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
bash "$ROOT/scripts/build.sh" --fuzz
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
for target in "$ROOT"/build-asan/fuzz/*_fuzz; do
  [ -x "$target" ] || continue
  name="$(basename "$target")"
  corpus="$work/$name"
  mkdir -p "$corpus"
  seeds="$ROOT/fuzz/corpus/${name%_fuzz}"
  [ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
  echo "fuzz: $name for ${SECONDS_PER_TARGET}s"
  if ! "$target" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/" "$corpus" > "$work/$name.log" 2>&1; then
    echo "fuzz: $name FAILED"; tail -50 "$work/$name.log"; status=1
  else
    grep -E "stat::number_of_executed_units|Done" "$work/$name.log" | tail -2
  fi
done
exit $status
