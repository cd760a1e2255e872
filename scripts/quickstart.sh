#!/usr/bin/env bash
# The newcomer's one command: install dependencies, build, run the main job.
# Today's main job describes a model with `kazeia info` (real generation
# arrives with the models issue). It uses ../shared/models (or
# KAZEIA_TEST_DATA) when present, otherwise a model generated on the spot.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/build.sh"
KAZEIA="$ROOT/build/bin/kazeia"
SHARED="${KAZEIA_TEST_DATA:-$ROOT/../shared}"
model="$SHARED/models/qwen35-tiny-q4_0.gguf"
if [ -f "$model" ]; then
  echo "quickstart: using $model"
else
  model="$ROOT/models/tiny-qwen35-q4_0.gguf"
  mkdir -p "$ROOT/models"
  echo "quickstart: ../shared not found; generating $model"
  "$KAZEIA" gen-model --preset tiny-qwen35 --type q4_0 --seed 1 -o "$model"
fi
"$KAZEIA" info -m "$model"
