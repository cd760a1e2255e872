#!/usr/bin/env python3
"""Regenerates tests/tensor/data/ggml_quant_golden.bin from the real ggml.

The golden file holds float inputs (several distributions, chosen to hit edge
cases: exact rounding ties, all-zero and constant blocks, fp16-subnormal
scales, outliers) and, for every type we quantize, the bytes that ggml's own
reference quantizers (quantize_row_*_ref, ggml_fp32_to_fp16_row,
ggml_fp32_to_bf16_row) produce, plus an FNV-1a 64 hash of what ggml's
dequantize_row_* gives back for those bytes. golden_test.cpp checks our
quantize_row / dequantize_row against it byte for byte (bit for bit).

The ggml used is the prebuilt one of the PyPI package `libggml-python`
(ggml 0.20.x); it is only needed to regenerate the file, never by the tests:

    python3 -m venv /tmp/ggmlvenv
    /tmp/ggmlvenv/bin/pip install libggml-python numpy
    /tmp/ggmlvenv/bin/python tests/tensor/make_ggml_golden.py

File format (little-endian):
    "KZQG" u32 version=1 u32 n_cases
    per case: u32 name_len, name, u32 n_floats, f32[n_floats],
              u32 n_outputs, per output: u32 ggml_type, u32 n_bytes, bytes[n_bytes],
                                         u64 fnv1a64(ggml dequantized f32 bytes)
"""
import ctypes
import importlib.metadata
import os
import struct
import sys

import numpy as np

import libggml

N = 512  # floats per case: 2 K-quant super-blocks, 16 legacy blocks

# ggml type id -> (name, block elements, block bytes)
TYPES = {
    1: ("F16", 1, 2),
    30: ("BF16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
}


def load_ggml():
    lib_dir = os.path.join(os.path.dirname(libggml.__file__), "lib64")
    if not os.path.isdir(lib_dir):
        lib_dir = os.path.join(os.path.dirname(libggml.__file__), "lib")
    return ctypes.CDLL(os.path.join(lib_dir, "libggml-base.so"))


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def cases():
    rng = np.random.default_rng(20261001)
    g = lambda: rng.standard_normal(N).astype(np.float32)
    u = lambda: rng.uniform(-1, 1, N).astype(np.float32)
    out = []
    out.append(("gaussian", g()))
    out.append(("uniform", u()))
    out.append(("positive-offset", (2 + u()).astype(np.float32)))
    out.append(("negative-offset", (-2 + u()).astype(np.float32)))
    x = (0.01 * g()).astype(np.float32)
    x[5::64] = 10.0
    x[40::128] = -12.0
    out.append(("outliers", x))
    out.append(("tiny-1e-3", (1e-3 * g()).astype(np.float32)))
    out.append(("subnormal-scales-1e-6", (1e-6 * g()).astype(np.float32)))
    out.append(("large-1e3", (1e3 * g()).astype(np.float32)))
    out.append(("huge-1e4", (1e4 * g()).astype(np.float32)))
    x = g()
    x[0:32] = 0
    x[64:96] = 0
    x[256:512] = 0
    out.append(("zero-blocks", x))
    x = g()
    x[rng.uniform(size=N) < 0.9] = 0
    out.append(("sparse", x))
    out.append(("integers", np.round(4 * g()).astype(np.float32)))
    out.append(("halves", (np.round(8 * g()) / 2).astype(np.float32)))
    x = np.full(N, 0.75, dtype=np.float32)
    x[256:] = -3.0
    out.append(("constant", x))
    out.append(("heavy-tail", (g() ** 3).astype(np.float32)))
    out.append(("ramp", np.linspace(-1, 1, N, dtype=np.float32)))
    scales = (2.0 ** (np.arange(N) // 16 % 8 - 4)).astype(np.float32)
    out.append(("group-scales", (g() * scales).astype(np.float32)))
    return out


def main():
    lib = load_ggml()
    fp = ctypes.POINTER(ctypes.c_float)
    vp = ctypes.c_void_p
    for fn in ("ggml_fp32_to_fp16_row", "ggml_fp32_to_bf16_row_ref", "ggml_fp16_to_fp32_row",
               "ggml_bf16_to_fp32_row"):
        getattr(lib, fn).argtypes = [vp, vp, ctypes.c_int64]
        getattr(lib, fn).restype = None

    def quantize(tid, x):
        name, bs, bb = TYPES[tid]
        out = ctypes.create_string_buffer(len(x) // bs * bb)
        src = x.ctypes.data_as(fp)
        if tid == 1:
            lib.ggml_fp32_to_fp16_row(src, out, len(x))
        elif tid == 30:
            lib.ggml_fp32_to_bf16_row_ref(src, out, len(x))
        else:
            f = getattr(lib, "quantize_row_%s_ref" % name.lower().replace("_k", "_K"))
            f.argtypes = [vp, vp, ctypes.c_int64]
            f.restype = None
            f(src, out, len(x))
        return out.raw

    def dequantize(tid, q, n):
        name = TYPES[tid][0]
        y = np.zeros(n, dtype=np.float32)
        qb = ctypes.create_string_buffer(q, len(q))
        if tid == 1:
            lib.ggml_fp16_to_fp32_row(qb, y.ctypes.data_as(fp), n)
        elif tid == 30:
            lib.ggml_bf16_to_fp32_row(qb, y.ctypes.data_as(fp), n)
        else:
            f = getattr(lib, "dequantize_row_%s" % name.lower().replace("_k", "_K"))
            f.argtypes = [vp, vp, ctypes.c_int64]
            f.restype = None
            f(qb, y.ctypes.data_as(fp), n)
        return y.tobytes()

    blob = bytearray(b"KZQG")
    all_cases = cases()
    blob += struct.pack("<II", 1, len(all_cases))
    for name, x in all_cases:
        x = np.ascontiguousarray(x, dtype=np.float32)
        assert x.shape == (N,)
        blob += struct.pack("<I", len(name)) + name.encode()
        blob += struct.pack("<I", N) + x.tobytes()
        blob += struct.pack("<I", len(TYPES))
        for tid in TYPES:
            q = quantize(tid, x)
            blob += struct.pack("<II", tid, len(q)) + q
            blob += struct.pack("<Q", fnv1a64(dequantize(tid, q, N)))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ggml_quant_golden.bin")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(blob)
    print("wrote %s: %d cases, %d bytes (ggml from libggml-python %s)" %
          (path, len(all_cases), len(blob), importlib.metadata.version("libggml-python")))


if __name__ == "__main__":
    sys.exit(main())
