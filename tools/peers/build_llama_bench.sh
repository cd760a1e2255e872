#!/usr/bin/env bash
# Builds llama.cpp's llama-bench (mainline, libllama 0.5.0 - the "mainline"
# peer of the speed issues) from the llama.cpp tree vendored in the PyPI
# source package llama-cpp-python==0.3.36, for side-by-side runs with
# `kazeia bench` (tools/peers/compare.py). Prints the binary's path.
#
#   tools/peers/build_llama_bench.sh [--native]
#
# Default: AVX2/AVX-512 (VNNI, VBMI, BF16) enabled explicitly, AMX off. With
# --native, -march=native as llama.cpp builds by default; on this project's
# AMX machines that build's AMX prefill path died with SIGILL (pp512), while
# its decode uses the AMX repacked weights (a second copy in memory).
# Cache: $KAZEIA_PEERS_DIR (default ~/.cache/kazeia/peers). Needs pip, cmake,
# ninja and a C++ compiler (scripts/setup.sh installs them).
set -euo pipefail
VERSION=0.3.36
DIR="${KAZEIA_PEERS_DIR:-$HOME/.cache/kazeia/peers}"
variant=avx512
[[ "${1:-}" == --native ]] && variant=native
mkdir -p "$DIR"
src="$DIR/llama_cpp_python-$VERSION/vendor/llama.cpp"
if [[ ! -f "$src/CMakeLists.txt" ]]; then
  python3 -m pip download "llama-cpp-python==$VERSION" --no-deps --no-binary :all: -d "$DIR" >&2
  tar -xzf "$DIR/llama_cpp_python-$VERSION.tar.gz" -C "$DIR"
fi
build="$src/build-$variant"
if [[ "$variant" == native ]]; then
  flags=(-DGGML_NATIVE=ON)
else
  flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
         -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_BF16=ON
         -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF)
fi
if [[ ! -x "$build/bin/llama-bench" ]]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_OPENMP=OFF \
        -DLLAMA_BUILD_TESTS=OFF "${flags[@]}" >&2
  ninja -C "$build" llama-bench >&2
fi
echo "$build/bin/llama-bench"
