#!/usr/bin/env python3
"""Interleaved speed comparison: `kazeia bench` against llama.cpp's llama-bench.

    tools/peers/compare.py --kazeia build/bin/kazeia --llama-bench PATH \
        [-p 512] [-n 128] [-t 2] [--rounds 3] MODEL.gguf [MODEL.gguf ...]

Each round runs, per model, one llama-bench repetition and one kazeia bench
repetition back to back (prefill and decode are separate runs), so both see
the same state of a shared, noisy machine; which side goes first alternates
from round to round, so a machine getting faster or slower over a round
does not favour one side. The table gives each side's median over the
rounds and the median, minimum and maximum of the per-round ratios
(ours / peer): on a shared machine the medians of the two sides can come
from different states of it, a round's pair from one.
"""
import argparse
import json
import statistics
import subprocess
import sys


def llama_bench(binary, model, p, n, threads):
    out = subprocess.run([binary, "-m", model, "-t", str(threads), "-p", str(p), "-n", str(n), "-r", "1", "-o", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)[0]["avg_ts"]


def kazeia_bench(binary, model, p, n, threads):
    out = subprocess.run([binary, "bench", "-m", model, "-t", str(threads), "-p", str(p), "-n", str(n), "-r", "1", "--json"],
                         check=True, capture_output=True, text=True).stdout
    rows = [r for r in json.loads(out) if r.get("test", "").startswith(("pp", "tg"))]
    return rows[0]["tps_mean"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kazeia", required=True)
    ap.add_argument("--llama-bench", required=True)
    ap.add_argument("-p", type=int, default=512)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("-t", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    tests = [(f"pp{a.p}", a.p, 0)] if a.p > 0 else []
    tests += [(f"tg{a.n}", 0, a.n)] if a.n > 0 else []
    results = {}
    for r in range(a.rounds):
        for model in a.models:
            for name, p, n in tests:
                if r % 2 == 0:
                    peer = llama_bench(a.llama_bench, model, p, n, a.t)
                    ours = kazeia_bench(a.kazeia, model, p, n, a.t)
                else:
                    ours = kazeia_bench(a.kazeia, model, p, n, a.t)
                    peer = llama_bench(a.llama_bench, model, p, n, a.t)
                results.setdefault((model, name), []).append((ours, peer))
                print(f"round {r + 1}: {model.rsplit('/', 1)[-1]} {name}: kazeia {ours:.2f}, llama.cpp {peer:.2f} t/s"
                      f" ({ours / peer:.2f})", file=sys.stderr)
    print(f"| model | test | kazeia t/s (median of {a.rounds}) | llama.cpp t/s | ratio of medians"
          " | per-round ratio: median (min - max) |")
    print("|---|---|---|---|---|---|")
    for (model, name), pairs in results.items():
        ours = statistics.median(o for o, _ in pairs)
        peer = statistics.median(p for _, p in pairs)
        ratios = [o / p for o, p in pairs]
        print(f"| {model.rsplit('/', 1)[-1]} | {name} | {ours:.1f} | {peer:.1f} | {ours / peer:.2f} "
              f"| {statistics.median(ratios):.2f} ({min(ratios):.2f} - {max(ratios):.2f}) |")


if __name__ == "__main__":
    main()
