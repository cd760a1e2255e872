#!/usr/bin/env bash
# A real model end to end: SmolLM2-135M-Instruct (unpacked by scripts/setup.sh
# from PyPI into models/) answers a question through its chat template.
set -euo pipefail
KAZEIA="$1"; ROOT="$2"
SMOL="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -f "$SMOL" ]; then
  echo "*** SKIPPING: $SMOL not found (scripts/setup.sh fetches it from PyPI) ***"; exit 0
fi
out="$("$KAZEIA" run -m "$SMOL" --chat --system "You are a helpful assistant." \
        -p "What is the capital of France?" -n 24 --temp 0)"
echo "answer: $out"
grep -q "Paris" <<<"$out" || { echo "FAIL: the answer does not mention Paris"; exit 1; }
