#!/usr/bin/env python3
"""Dumps llama.cpp's gguf-py dequantization of every quantized tensor of a
GGUF file, as the independent reference of gguf_py_test.cpp.

usage: gguf_py_dequant.py MODEL.gguf OUT.bin
OUT.bin (little-endian), per tensor: u32 name_len, name, u32 ggml_type,
u64 n_floats, f32[n_floats] (the tensor's elements in file order).
Exit code 3 when the gguf / numpy packages are not importable.
"""
import struct
import sys

try:
    import numpy as np
    from gguf import GGUFReader
    from gguf.quants import dequantize
except ImportError as e:
    print("gguf-py not importable: %s" % e, file=sys.stderr)
    sys.exit(3)


def main():
    model, out_path = sys.argv[1], sys.argv[2]
    reader = GGUFReader(model)
    with open(out_path, "wb") as out:
        for t in reader.tensors:
            if int(t.tensor_type) in (0, 1, 30):  # F32, F16, BF16: not quantized
                continue
            y = dequantize(t.data, t.tensor_type)
            y = np.ascontiguousarray(y, dtype=np.float32).reshape(-1)
            name = t.name.encode()
            out.write(struct.pack("<I", len(name)) + name)
            out.write(struct.pack("<IQ", int(t.tensor_type), y.size))
            out.write(y.tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
