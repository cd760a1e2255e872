#!/usr/bin/env bash
# The C smoke program (c_smoke.c, built as C99) on a generated tiny model:
# it must generate and print exactly 8 token ids, those `kazeia run` gives.
set -euo pipefail
KAZEIA="$1"; SMOKE="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$KAZEIA" gen-model --preset tiny-qwen3 --type q8_0 --seed 1 -o "$tmp/m.gguf" > /dev/null
"$SMOKE" "$tmp/m.gguf" | tee "$tmp/out"
n=$(grep '^tokens:' "$tmp/out" | wc -w)
[ "$n" -eq 9 ] || { echo "FAIL: expected 8 token ids"; exit 1; }
grep -q '^stop: length$' "$tmp/out" || { echo "FAIL: unexpected stop reason"; exit 1; }
ids=$(grep '^tokens:' "$tmp/out" | cut -d' ' -f2- | tr ' ' ',')
"$KAZEIA" run -m "$tmp/m.gguf" -p "The quick brown fox jumps over the lazy dog" -n 8 --temp 0 -t 1 -c 256 \
  --print-ids 2> /dev/null | tail -1 | tr -d '[] ' > "$tmp/cli_ids"
[ "$ids" = "$(cat "$tmp/cli_ids")" ] || { echo "FAIL: C API ids $ids, kazeia run $(cat "$tmp/cli_ids")"; exit 1; }
# Errors come back as codes: a missing file is not a crash.
if "$SMOKE" "$tmp/missing.gguf" 2> "$tmp/err"; then echo "FAIL: loaded a missing file"; exit 1; fi
grep -q "not found.*missing.gguf" "$tmp/err" || { echo "FAIL: unexpected error:"; cat "$tmp/err"; exit 1; }
