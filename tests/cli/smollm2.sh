#!/usr/bin/env bash
# A real model end to end: SmolLM2-135M-Instruct (unpacked by scripts/setup.sh
# from PyPI into models/) answers a question in its ChatML turn format.
set -euo pipefail
KAZEIA="$1"; ROOT="$2"
SMOL="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -f "$SMOL" ]; then
  echo "*** SKIPPING: $SMOL not found (scripts/setup.sh fetches it from PyPI) ***"; exit 0
fi
# The user turn in the model's ChatML form, greedy.
out="$("$KAZEIA" run -m "$SMOL" -p $'<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n' \
        -n 24 --temp 0)"
echo "answer: $out"
grep -q "Paris" <<<"$out" || { echo "FAIL: the answer does not mention Paris"; exit 1; }
