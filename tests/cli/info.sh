#!/usr/bin/env bash
# `kazeia info` end to end: table and JSON on a real model, a clean error on a bad file.
set -euo pipefail
KAZEIA="$1"; ROOT="$2"
SHARED="${KAZEIA_TEST_DATA:-$ROOT/../shared}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# A file that is not GGUF: exit code 1 and an error that says why.
printf 'NOTGGUF-and-some-bytes' > "$tmp/bad.gguf"
if "$KAZEIA" info -m "$tmp/bad.gguf" > "$tmp/out" 2> "$tmp/err"; then
  echo "FAIL: info accepted a non-GGUF file"; exit 1
fi
grep -qi "magic" "$tmp/err" || { echo "FAIL: error does not mention the magic:"; cat "$tmp/err"; exit 1; }

model="$SHARED/models/qwen3-kq-q4_k_m.gguf"
if [ ! -f "$model" ]; then
  echo "*** SKIPPING the shared-model part: $model not found (set KAZEIA_TEST_DATA) ***"
  exit 0
fi
"$KAZEIA" info -m "$model" > "$tmp/table"
grep -q "architecture *qwen3" "$tmp/table" || { echo "FAIL: table lacks the architecture"; cat "$tmp/table"; exit 1; }
grep -q "Q4_K_M" "$tmp/table" || { echo "FAIL: table lacks the file type"; exit 1; }
"$KAZEIA" info -m "$model" --json > "$tmp/json"
python3 - "$tmp/json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for key in ("architecture", "tensor_count", "parameters", "tensors", "metadata"):
    assert key in j, key
assert j["architecture"] == "qwen3", j["architecture"]
assert j["tensor_count"] == 24 == len(j["tensors"])
t = {x["name"]: x for x in j["tensors"]}
assert t["blk.0.ffn_down.weight"]["shape"] == [768, 256], t["blk.0.ffn_down.weight"]
assert t["blk.1.attn_v.weight"]["type"] == "Q6_K"
assert j["metadata"]["qwen3.feed_forward_length"] == 768
print("info.sh: ok")
PY
