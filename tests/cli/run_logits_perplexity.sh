#!/usr/bin/env bash
# run / logits / perplexity end to end on stories260K (real weights) against
# llama.cpp's outputs in ../shared/golden.
set -euo pipefail
KAZEIA="$1"; ROOT="$2"
SHARED="${KAZEIA_TEST_DATA:-$ROOT/../shared}"
model="$SHARED/models/stories260K.gguf"
if [ ! -f "$model" ]; then
  echo "*** SKIPPING: $model not found (set KAZEIA_TEST_DATA) ***"; exit 0
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# Greedy from BOS: llama.cpp's continuation reads " Once upon a time, there was a little girl named Lily."
"$KAZEIA" run -m "$model" --tokens 1 -n 16 --temp 0 --print-ids > "$tmp/run.txt"
grep -q "Once upon a time, there was a little girl named Lily" "$tmp/run.txt" \
  || { echo "FAIL: unexpected greedy text:"; cat "$tmp/run.txt"; exit 1; }
# --print-ids: the first 16 ids of the reference greedy continuation.
python3 - "$tmp/run.txt" "$SHARED/golden/logits/stories260K.bos1.json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().strip().splitlines()
ids = json.loads(lines[-1])
ref = json.load(open(sys.argv[2]))["greedy_continuation"][:16]
assert ids == ref, (ids, ref)
PY

# Every position's logits of once5 against the reference rows (1e-4): the
# reference kept its cache in f32 (f16, the default, moves logits ~1e-3).
"$KAZEIA" logits -m "$model" --kv-type f32 --tokens 1,403,407,261,378 --all --out "$tmp/once5.bin" 2>/dev/null
python3 - "$tmp/once5.bin" "$SHARED/golden/logits/stories260K.once5.logits.bin" <<'PY'
import struct, sys
a = open(sys.argv[1], "rb").read(); b = open(sys.argv[2], "rb").read()
assert len(a) == len(b) == 5 * 512 * 4, (len(a), len(b))
n = len(a) // 4
x = struct.unpack(f"<{n}f", a); y = struct.unpack(f"<{n}f", b)
worst = max(abs(p - q) for p, q in zip(x, y))
assert worst <= 1e-4, worst
print(f"logits: max |diff| {worst:.3g}")
PY

# Perplexity of story60's text, first chunk = BOS + 59 tokens (the reference
# ids), every token scored, against the perplexity of the reference logits.
python3 - "$SHARED/golden/logits/stories260K.story60.json" "$SHARED/golden/logits/stories260K.story60.logits.bin" \
  "$tmp/story.txt" > "$tmp/ref_ppl" <<'PY'
import json, math, struct, sys
meta = json.load(open(sys.argv[1])); raw = open(sys.argv[2], "rb").read()
ids = meta["token_ids"]; V = meta["n_vocab"]
rows = struct.unpack(f"<{len(raw)//4}f", raw)
nll = 0.0
for i in range(len(ids) - 1):
    row = rows[i * V:(i + 1) * V]; m = max(row)
    nll += math.log(sum(math.exp(v - m) for v in row)) + m - row[ids[i + 1]]
open(sys.argv[3], "w").write(meta["prompt_text"])
print(math.exp(nll / (len(ids) - 1)))
PY
"$KAZEIA" perplexity -m "$model" --kv-type f32 -f "$tmp/story.txt" -c 60 --all > "$tmp/ppl" 2>/dev/null
python3 - "$tmp/ppl" "$tmp/ref_ppl" <<'PY'
import re, sys
ours = float(re.search(r"perplexity: ([0-9.]+) over 59 tokens", open(sys.argv[1]).read()).group(1))
ref = float(open(sys.argv[2]).read())
assert abs(ours - ref) / ref < 5e-4, (ours, ref)
print(f"perplexity: ours {ours:.5f}, reference {ref:.5f}")
PY
echo "run_logits_perplexity.sh: ok"
