#!/usr/bin/env python3
"""Instruction counts of the ARM kernels' loops, from the compiler's output.

No aarch64 hardware times the ARM kernels here (qemu runs them, at no
meaningful speed), so their cost is compared by what the compiler emits: each
source under src/kernels/arm whose name matches an argument is compiled to
assembly with the flags of the ARM build (build-arm/compile_commands.json,
made by scripts/test-arm.sh), and for every function the basic blocks that
hold multiply instructions (SDOT, SMMLA, SMULL) are listed with their length
and number of multiplies: an unrolled loop body's length over the products it
makes is the kernel's instructions per product.

  tools/arm_loop_counts.py strip_dotprod vec_dot_int8_dotprod vec_dot_i8mm
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MULTIPLIES = ("sdot", "smmla", "smull", "smull2")


def assembly(entry):
    command = re.sub(r" -o \S+", " ", entry["command"]) + " -S -o -"
    return subprocess.run(command, shell=True, check=True, cwd=entry["directory"], capture_output=True,
                          text=True).stdout


def functions(asm):
    """(mangled name, [(label, [instructions])]) per function."""
    lines = asm.split("\n")
    for i, line in enumerate(lines):
        if not re.match(r"^_Z\S*:$", line):
            continue
        blocks, label, current = [], "entry", []
        for body in lines[i + 1:]:
            if body.startswith("\t.size"):
                break
            if re.match(r"^\.L\w+:", body):
                blocks.append((label, current))
                label, current = body[:-1], []
            elif body.startswith("\t") and not body.startswith("\t."):
                current.append(body.strip())
        blocks.append((label, current))
        yield line[:-1], blocks


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    db = ROOT / "build-arm" / "compile_commands.json"
    if not db.exists():
        print(f"{db} missing: run scripts/test-arm.sh first", file=sys.stderr)
        return 1
    entries = json.loads(db.read_text())
    for name in sys.argv[1:]:
        matches = [e for e in entries if "/kernels/arm/" in e["file"] and Path(e["file"]).stem == name]
        if not matches:
            print(f"no ARM source named {name}.cpp in {db}", file=sys.stderr)
            return 1
        print(f"== {name}.cpp")
        for mangled, blocks in functions(assembly(matches[0])):
            hot = [(label, len(ins), sum(i.split()[0] in MULTIPLIES for i in ins)) for label, ins in blocks
                   if any(i.split()[0] in MULTIPLIES for i in ins)]
            if not hot:
                continue
            demangled = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip()
            for noise in ("kazeia::kernels::", "arm::", "dotprod::", "i8mm::", "neon::", "(anonymous namespace)::"):
                demangled = demangled.replace(noise, "")
            print(demangled[:200])
            for label, n, mul in hot:
                print(f"    {label}: {n} instructions, {mul} multiplies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
