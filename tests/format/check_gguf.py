#!/usr/bin/env python3
"""Reads a GGUF file with llama.cpp's own Python reader (the `gguf` package)
and prints what it found as JSON, for gguf_crosscheck_test.cpp to compare
with what Kazeia's writer wrote.

Output: {"version", "alignment", "data_offset",
         "kv": [{"key", "type", "value"}],           # in file order
         "tensors": [{"name", "type", "shape", "n_bytes", "offset", "fnv1a64"}]}
A scalar value is a JSON number / string / bool; an array is
{"element_type": "INT32", "items": [...]}, nested arrays included. Offsets are
relative to the data section; fnv1a64 is a decimal string of the FNV-1a hash
of the tensor's bytes as the reader returns them.
"""
import json
import sys

from gguf import GGUFReader, GGUFValueType


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def decode(parts, i, vtype):
    """Decodes one value starting at parts[i]; returns (value, next index).

    GGUFReader flattens nested arrays into its `parts` list (an array is its
    element type, its count, then its items' parts), so walk that list here.
    """
    if vtype == GGUFValueType.STRING:
        return bytes(parts[i + 1]).decode("utf-8"), i + 2
    if vtype == GGUFValueType.ARRAY:
        itype = GGUFValueType(int(parts[i][0]))
        count = int(parts[i + 1][0])
        i += 2
        items = []
        for _ in range(count):
            item, i = decode(parts, i, itype)
            items.append(item)
        return {"element_type": itype.name, "items": items}, i
    return parts[i][0].item(), i + 1


def main() -> int:
    reader = GGUFReader(sys.argv[1])
    out = {"alignment": int(reader.alignment), "data_offset": int(reader.data_offset), "kv": [], "tensors": []}
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            if name == "GGUF.version":
                out["version"] = int(field.parts[0][0])
            continue
        vtype = field.types[0]
        value, end = decode(field.parts, 3, vtype)  # parts 0-2: key length, key, type
        assert end == len(field.parts), f"{name}: {len(field.parts) - end} parts left over"
        out["kv"].append({"key": name, "type": vtype.name, "value": value})
    for t in reader.tensors:
        out["tensors"].append({
            "name": t.name,
            "type": t.tensor_type.name,
            "shape": [int(d) for d in t.shape],
            "n_bytes": int(t.n_bytes),
            "offset": int(t.data_offset) - int(reader.data_offset),
            "fnv1a64": str(fnv1a64(t.data.tobytes())),
        })
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
