#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time,
# $(nproc) targets at a time (each is one single-threaded process).
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
bash "$ROOT/scripts/build.sh" --fuzz
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One target: its seeds copied into a scratch corpus, then fuzzed. Prints one
# block when it ends (so parallel targets do not interleave their lines).
run_target() {
  local target="$1" seconds="$2" work="$3" root="$4"
  local name corpus seeds
  name="$(basename "$target")"
  corpus="$work/$name"
  mkdir -p "$corpus"
  seeds="$root/fuzz/corpus/${name%_fuzz}"
  [ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
  if ! "$target" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/$name-" "$corpus" > "$work/$name.log" 2>&1; then
    echo "fuzz: $name (${seconds}s) FAILED"; tail -50 "$work/$name.log"
    return 1
  fi
  echo "fuzz: $name (${seconds}s)"
  grep -E "stat::number_of_executed_units|Done" "$work/$name.log" | tail -2
}
export -f run_target

targets=()
for target in "$ROOT"/build-asan/fuzz/*_fuzz; do
  [ -x "$target" ] && targets+=("$target")
done
if ((${#targets[@]} == 0)); then
  echo "fuzz: no targets in $ROOT/build-asan/fuzz" >&2
  exit 1
fi
printf '%s\n' "${targets[@]}" |
  xargs -P "$(nproc)" -I{} bash -c 'run_target "$@"' _ {} "$SECONDS_PER_TARGET" "$work" "$ROOT"
