#!/usr/bin/env bash
# `kazeia parse-stream --format hermes|qwen35`: model text on stdin -> JSON-line events. Expected
# events are written by hand; the whole stream and one byte at a time must print the same merged
# events; --tools types XML values from the schema; --starts-in-think; bad options fail cleanly.
set -euo pipefail
KAZEIA="$1"; ROOT="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect NAME EVENTS_FILE EXPECTED_PY: the events (JSON lines) match the Python list of
# (type, field dict) pairs: every listed field equal, nothing more and nothing less in order.
expect() {
  python3 - "$@" <<'PY' || fail "$1: $(cat "$2")"
import json, sys
name, path, expected = sys.argv[1], sys.argv[2], eval(sys.argv[3])
events = [json.loads(l) for l in open(path, encoding="utf-8").read().splitlines()]
assert len(events) == len(expected), f"{name}: {len(events)} events, expected {len(expected)}"
for e, (kind, fields) in zip(events, expected):
    assert e["type"] == kind, f"{name}: {e} is not a {kind}"
    for k, v in fields.items():
        assert e.get(k) == v, f"{name}: {k} = {e.get(k)!r}, expected {v!r}"
PY
}

# Hermes: reasoning, text, two calls in a row (the second one malformed).
printf '%s' $'<think>\nplan the call\n</think>\n\nSure, computing.\n<tool_call>\n{"name": "calculator", "arguments": {"expression": "234*567"}}\n</tool_call>\n<tool_call>\n{"name": "calculator", "arguments": {</tool_call>' > "$tmp/hermes.txt"
for chunk in 4096 1; do
  "$KAZEIA" parse-stream --format hermes --merge --chunk "$chunk" < "$tmp/hermes.txt" > "$tmp/hermes.$chunk.jsonl" ||
    fail "parse-stream hermes --chunk $chunk failed"
done
expect hermes "$tmp/hermes.4096.jsonl" '[
  ("think", {"text": "plan the call"}),
  ("answer", {"text": "Sure, computing."}),
  ("tool_call", {"name": "calculator", "arguments": {"expression": "234*567"}, "in_think": False}),
  ("error", {"raw": "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {</tool_call>"}),
]'
cmp -s "$tmp/hermes.4096.jsonl" "$tmp/hermes.1.jsonl" || fail "byte-by-byte differs: $(diff "$tmp/hermes.4096.jsonl" "$tmp/hermes.1.jsonl")"

# Without --merge, events come as soon as they are known: one byte at a time gives more text pieces,
# which join to the same text.
"$KAZEIA" parse-stream --format hermes --chunk 1 < "$tmp/hermes.txt" > "$tmp/pieces.jsonl"
python3 - "$tmp/pieces.jsonl" <<'PY' || fail "unmerged pieces: $(cat "$tmp/pieces.jsonl")"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
assert sum(e["type"] == "think" for e in events) > 1, "expected several think pieces"
assert "".join(e["text"] for e in events if e["type"] == "think") == "plan the call"
assert "".join(e["text"] for e in events if e["type"] == "answer") == "Sure, computing."
PY

# Qwen3.5 XML form: values typed from the tool's schema with --tools, plain JSON literals without.
cat > "$tmp/tools.json" <<'JSON'
[{"type": "function", "function": {"name": "timer", "parameters": {"type": "object",
  "properties": {"minutes": {"type": "number"}, "label": {"type": "string"}}}}}]
JSON
printf '%s' $'Setting it.\n<tool_call>\n<function=timer>\n<parameter=minutes>\n5\n</parameter>\n<parameter=label>\n42\n</parameter>\n</function>\n</tool_call>' > "$tmp/q35.txt"
"$KAZEIA" parse-stream --format qwen35 --merge --tools "$tmp/tools.json" < "$tmp/q35.txt" > "$tmp/q35.jsonl" ||
  fail "parse-stream qwen35 failed"
expect qwen35_typed "$tmp/q35.jsonl" '[("answer", {"text": "Setting it."}),
  ("tool_call", {"name": "timer", "arguments": {"minutes": 5, "label": "42"}})]'
"$KAZEIA" parse-stream --format qwen35 --merge < "$tmp/q35.txt" > "$tmp/q35u.jsonl"
expect qwen35_untyped "$tmp/q35u.jsonl" '[("answer", {"text": "Setting it."}),
  ("tool_call", {"name": "timer", "arguments": {"minutes": 5, "label": 42}})]'
# A function the tool list does not have is an error naming it.
printf '%s' $'<tool_call>\n<function=teleport>\n</function>\n</tool_call>' |
  "$KAZEIA" parse-stream --format qwen35 --merge --tools "$tmp/tools.json" > "$tmp/unknown.jsonl"
expect unknown_tool "$tmp/unknown.jsonl" '[("error", {"name": "teleport"})]'

# The prompt opened <think>: the output starts as reasoning.
printf 'still thinking</think>\n\nDone.' | "$KAZEIA" parse-stream --format qwen35 --starts-in-think --merge > "$tmp/think.jsonl"
expect starts_in_think "$tmp/think.jsonl" '[("think", {"text": "still thinking"}), ("answer", {"text": "Done."})]'

# Bad options: exit code 1 and a message naming the problem.
if "$KAZEIA" parse-stream --format bogus < /dev/null 2> "$tmp/err"; then fail "accepted an unknown format"; fi
grep -q "bogus" "$tmp/err" || fail "error does not name the format: $(cat "$tmp/err")"
if "$KAZEIA" parse-stream --format hermes --tools "$tmp/none.json" < /dev/null 2> /dev/null; then fail "accepted a missing tools file"; fi
echo OK
