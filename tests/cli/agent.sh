#!/usr/bin/env bash
# `kazeia agent` end to end on real (random-weight) models: --prompt --json gives well-formed JSON
# lines that end in one done event (content is arbitrary: structure only), the interactive mode
# reads turns from stdin, the reasoning budget shows in the usage on a Qwen3.5-template model,
# and bad options fail cleanly.
set -euo pipefail
KAZEIA="$1"; ROOT="$2"
SHARED="${KAZEIA_TEST_DATA:-$ROOT/../shared}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$KAZEIA" gen-model --preset tiny-qwen3 --type q8_0 -o "$tmp/m.gguf" > /dev/null

# check_events FILE EXPECTED_TURNS [MAX_THINK]: every line a JSON event, each turn closed by done.
check_events() { python3 "$ROOT/tests/cli/check_agent_events.py" "$@"; }

"$KAZEIA" agent -m "$tmp/m.gguf" --prompt "What's 234*567? Also, set a timer for 5 minutes." --json \
  -n 24 --temp 0 --max-rounds 2 > "$tmp/one.jsonl" || fail "agent --prompt failed"
check_events "$tmp/one.jsonl" 1 || fail "bad event stream: $(cat "$tmp/one.jsonl")"

# Interactive: two turns from stdin, /reset between them, /exit ends.
printf 'Hello\n/reset\nWhat time is it?\n/exit\nnot read\n' |
  "$KAZEIA" agent -m "$tmp/m.gguf" --json -n 8 --temp 0 --tools clock > "$tmp/two.jsonl" || fail "interactive agent failed"
check_events "$tmp/two.jsonl" 2 || fail "bad interactive stream: $(cat "$tmp/two.jsonl")"

# Readable mode (not a TTY: no escape codes) prints the usage line on stderr.
"$KAZEIA" agent -m "$tmp/m.gguf" --prompt "Hi" -n 8 --temp 0 > "$tmp/text.out" 2> "$tmp/text.err" || fail "text mode failed"
grep -q "stop: " "$tmp/text.err" || fail "no usage line: $(cat "$tmp/text.err")"
if grep -q $'\x1b' "$tmp/text.out"; then fail "ANSI codes written to a pipe"; fi

# Reasoning budget on a Qwen3.5-template model (its prompt opens <think>).
if [ -f "$SHARED/models/qwen35-mtp-f32.gguf" ]; then
  "$KAZEIA" agent -m "$SHARED/models/qwen35-mtp-f32.gguf" --prompt "Hi" --json -n 16 --temp 0 \
    --max-think 3 --tools "" > "$tmp/think.jsonl" || fail "agent --max-think failed"
  check_events "$tmp/think.jsonl" 1 3 || fail "bad think-budget stream: $(cat "$tmp/think.jsonl")"
  # --no-think renders the prompt with thinking off: Qwen3.5's generation prompt then holds an
  # empty, closed think block instead of an open <think>, so the prompt is longer.
  "$KAZEIA" agent -m "$SHARED/models/qwen35-mtp-f32.gguf" --prompt "Hi" --json -n 4 --temp 0 --tools "" \
    --no-think > "$tmp/nothink.jsonl" || fail "agent --no-think failed"
  check_events "$tmp/nothink.jsonl" 1 || fail "bad --no-think stream: $(cat "$tmp/nothink.jsonl")"
  prompt_tokens() { python3 -c 'import json, sys; print([json.loads(l) for l in open(sys.argv[1])][-1]["usage"]["prompt_tokens"])' "$1"; }
  [ "$(prompt_tokens "$tmp/nothink.jsonl")" -gt "$(prompt_tokens "$tmp/think.jsonl")" ] ||
    fail "--no-think did not change the prompt: $(prompt_tokens "$tmp/nothink.jsonl") vs $(prompt_tokens "$tmp/think.jsonl") tokens"
  # On a terminal the reasoning (all of a random model's 8 tokens here: the prompt opened <think>)
  # is dimmed and the style reset after it; `script` provides the pseudo-terminal.
  if command -v script > /dev/null; then
    script -qec "'$KAZEIA' agent -m '$SHARED/models/qwen35-mtp-f32.gguf' --prompt Hi -n 8 --temp 0 --tools ''" \
      /dev/null < /dev/null > "$tmp/tty.out" || fail "agent on a terminal failed"
    grep -q $'\x1b\[2m' "$tmp/tty.out" || fail "reasoning not dimmed on a terminal: $(od -c "$tmp/tty.out" | head)"
    grep -q $'\x1b\[0m' "$tmp/tty.out" || fail "dim style never reset: $(od -c "$tmp/tty.out" | head)"
  else
    echo "*** SKIPPING the terminal check: no 'script' command"
  fi
  # The same budget in plain generation (run --chat --max-think).
  "$KAZEIA" run -m "$SHARED/models/qwen35-mtp-f32.gguf" --chat -p "Hi" -n 10 --temp 0 --max-think 2 > "$tmp/run.txt" ||
    fail "run --max-think failed"
  grep -q "</think>" "$tmp/run.txt" || fail "run --max-think did not close think: $(cat "$tmp/run.txt")"
else
  echo "*** SKIPPING the reasoning-budget check: $SHARED/models/qwen35-mtp-f32.gguf not found"
fi

# Pending timers live in the --memory database: one whose time came while no agent was running
# fires when the next one starts, announced as late; one still to come stays saved.
"$KAZEIA" agent -m "$tmp/m.gguf" --memory "$tmp/agent.db" --tools timer --prompt "Hi" -n 4 --temp 0 --json \
  > /dev/null || fail "agent --memory failed"
python3 - "$tmp/agent.db" <<'PY'
import sqlite3, sys, time
now = int(time.time() * 1000)
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO timers(label, duration_ms, created_at, due_at) VALUES ('tea', 300000, ?, ?)", (now - 900000, now - 600000))
db.execute("INSERT INTO timers(label, duration_ms, created_at, due_at) VALUES ('bread', 7200000, ?, ?)", (now, now + 7200000))
db.commit()
PY
printf '/exit\n' | "$KAZEIA" agent -m "$tmp/m.gguf" --memory "$tmp/agent.db" --tools timer -n 4 --temp 0 \
  > /dev/null 2> "$tmp/timer.err" || fail "agent with saved timers failed"
grep -q '"tea" (5 min) fired late: its time came 10 min' "$tmp/timer.err" || fail "no late-timer notice: $(cat "$tmp/timer.err")"
left="$(python3 -c 'import sqlite3, sys; print(",".join(r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT label FROM timers")))' "$tmp/agent.db")"
[ "$left" = "bread" ] || fail "saved timers after the restart: '$left', expected 'bread'"

# Bad options: exit code 1 and a message naming the problem.
if "$KAZEIA" agent -m "$tmp/m.gguf" --tools calculator,teleport --prompt x 2> "$tmp/err"; then fail "accepted an unknown tool"; fi
grep -q "teleport" "$tmp/err" || fail "error does not name the tool: $(cat "$tmp/err")"
if "$KAZEIA" agent -m "$tmp/m.gguf" --tools memory --prompt x 2> "$tmp/err"; then fail "memory without a database"; fi
grep -q "memory" "$tmp/err" || fail "error does not mention memory: $(cat "$tmp/err")"
if "$KAZEIA" agent -m "$tmp/none.gguf" --prompt x 2> /dev/null; then fail "accepted a missing model"; fi
echo OK
