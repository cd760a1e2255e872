#!/usr/bin/env bash
# `kazeia bench` end to end on a generated tiny model: llama-bench-like rows
# (pp and tg, one per thread count), the decode row's GB/s and % of the
# measured bandwidth, and a peak RSS that is the model's - the bandwidth
# probe's 1 GiB buffer must not count in it.
set -euo pipefail
KAZEIA="$1"; ROOT="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The bound (file + KV/state + 64 MiB) holds for the release build; under
# AddressSanitizer its shadow memory puts even a tiny model above it.
sanitized=0; grep -q __asan_init "$KAZEIA" && sanitized=1

"$KAZEIA" gen-model --preset tiny-qwen35 --type q8_0 --seed 3 -o "$tmp/m.gguf" > /dev/null
"$KAZEIA" bench -m "$tmp/m.gguf" -p 32 -n 16 -r 2 -t 1,2 --bandwidth --bandwidth-mib 64 --json > "$tmp/out.json"
python3 - "$tmp/out.json" "$sanitized" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
rss = [r for r in rows if r["test"] == "peak_rss"]
assert len(rss) == 1 and rss[0]["bytes"] > 0, rss
# Weights on 2 MiB pages: none for a file this small (under 32 MiB).
assert rss[0]["huge_page_bytes"] == 0 and rss[0]["file_size"] > 0, rss
if sys.argv[2] == "0":
    assert rss[0]["bytes"] <= rss[0]["bound_bytes"], rss  # and the probe's buffer is not in it
# What ran the products: vendor, kernel table, decode walk.
kern = [r for r in rows if r["test"] == "kernels"]
assert len(kern) == 1 and "decode walk " in kern[0]["summary"] and "kernels " in kern[0]["summary"], kern
rows = [r for r in rows if r["test"] not in ("peak_rss", "kernels")]
tests = sorted((r["test"], r["threads"]) for r in rows)
assert tests == [("pp32", 1), ("pp32", 2), ("tg16", 1), ("tg16", 2)], tests
for r in rows:
    assert r["tps_mean"] > 0 and len(r["seconds"]) == 2, r
    if r["test"] == "tg16":
        assert r["read_bandwidth"] > 1e8, r  # a real machine reads more than 0.1 GB/s
        want = r["weight_bytes_per_token"] * r["tps_mean"]
        assert abs(r["weight_bytes_per_second"] - want) <= 1e-6 * want, r
        assert abs(r["bandwidth_ratio"] - want / r["read_bandwidth"]) <= 1e-9 + 1e-6 * r["bandwidth_ratio"], r
        # and against a plain read of the mapped file itself
        assert r["mapped_read_bandwidth"] > 1e8, r
        assert abs(r["mapped_bandwidth_ratio"] - want / r["mapped_read_bandwidth"]) <= 1e-9 + 1e-6 * r["mapped_bandwidth_ratio"], r
PY
"$KAZEIA" bench -m "$tmp/m.gguf" -p 0 -n 8 -r 1 -t 1 --bandwidth > "$tmp/out.txt"
grep -q "read bandwidth, 1 thread(s):" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "no bandwidth line"; }
grep -q ", kernels .*, decode walk \(lanes\|strips\)" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "no kernel summary line"; }
grep -q "read bandwidth of the mapped file, 1 thread(s): .* (tg8: .* % of it)" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "no mapped-file bandwidth line"; }
peak=$(sed -n 's/^peak RSS: \([0-9.]*\) MiB.*/\1/p' "$tmp/out.txt")
[ -n "$peak" ] || { cat "$tmp/out.txt"; fail "no peak RSS line"; }
# The default probe's 1 GiB buffer must not count in the peak: a tiny model
# needs tens of MiB (more under the sanitizers, so no tighter bound here).
python3 -c "import sys; sys.exit(0 if float('$peak') < 512 else 1)" || fail "peak RSS $peak MiB includes the bandwidth probe"
if [ "$sanitized" = 0 ]; then grep -q "within" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "peak RSS not within its bound"; }; fi
# Without -t (the default, 0 = the physical cores) the decode row is rated
# against a probe with the same thread count: a bandwidth ratio is there.
"$KAZEIA" bench -m "$tmp/m.gguf" -p 0 -n 4 -r 1 --bandwidth --bandwidth-mib 64 --json > "$tmp/default.json"
python3 - "$tmp/default.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
tg = [r for r in rows if r["test"] == "tg4"]
assert len(tg) == 1 and tg[0]["threads"] >= 1, rows
assert tg[0].get("read_bandwidth", 0) > 1e8 and tg[0].get("bandwidth_ratio", 0) > 0, tg
PY
# -d: both tests run after 40 tokens already in the context, named as
# llama-bench names them; a depth the context cannot hold is refused.
"$KAZEIA" bench -m "$tmp/m.gguf" -p 8 -n 4 -d 40 -r 1 -t 1 --json > "$tmp/depth.json"
python3 - "$tmp/depth.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["test"] not in ("peak_rss", "kernels")]
assert sorted(r["test"] for r in rows) == ["pp8 @ d40", "tg4 @ d40"], rows
assert all(r["n_depth"] == 40 and r["tps_mean"] > 0 for r in rows), rows
PY
"$KAZEIA" bench -m "$tmp/m.gguf" -p 8 -n 0 -d -1 -r 1 > /dev/null 2>&1 && fail "a negative depth was accepted"
# --ab: decode alternating token by token between the defaults and other
# kernel settings; every timed token counted once, on each parity.
"$KAZEIA" bench -m "$tmp/m.gguf" -n 8 -d 4 -r 2 -t 1 --ab KAZEIA_CPU_LEVEL=scalar --json > "$tmp/ab.json"
python3 - "$tmp/ab.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 1, rows
r = rows[0]
assert r["test"] == "tg8 @ d4" and r["settings_b"] == "KAZEIA_CPU_LEVEL=scalar" and r["threads"] == 1, r
assert r["tokens_a"] == 8 and r["tokens_b"] == 8, r  # 2 repetitions x 8 tokens, half each
for k in ("median_seconds_a", "median_seconds_b", "ratio_median", "ratio_fast80", "ratio_even_tokens", "ratio_odd_tokens"):
    assert r[k] > 0, (k, r)
assert abs(r["ratio_median"] - r["median_seconds_b"] / r["median_seconds_a"]) < 1e-9 * r["ratio_median"], r
PY
"$KAZEIA" bench -m "$tmp/m.gguf" -n 8 -r 2 -t 1 --ab KAZEIA_CPU_LEVEL=scalar > "$tmp/ab.txt"
grep -q "^  B/A token time: median " "$tmp/ab.txt" || { cat "$tmp/ab.txt"; fail "no A/B ratio line"; }
"$KAZEIA" bench -m "$tmp/m.gguf" -n 8 -r 2 -t 1 --ab KAZEIA_NOPE=1 > /dev/null 2> "$tmp/ab.err" && fail "an unknown kernel setting was accepted"
grep -q "KAZEIA_NOPE=1" "$tmp/ab.err" || { cat "$tmp/ab.err"; fail "the error does not name the bad setting"; }
"$KAZEIA" bench -m "$tmp/m.gguf" -n 8 -r 1 -t 1 --ab KAZEIA_CPU_LEVEL=scalar > /dev/null 2>&1 && fail "--ab with one repetition was accepted"
echo "bench: ok (peak RSS $peak MiB)"
