#!/usr/bin/env bash
# Installs every system package Kazeia needs to build, test, fuzz and cross-build.
# Idempotent: packages already present are skipped; safe to run as often as you like.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3
  libpcre2-dev nlohmann-json3-dev libsqlite3-dev libcpp-httplib-dev libcli11-dev
  libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev llvm
  qemu-user g++-aarch64-linux-gnu
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
