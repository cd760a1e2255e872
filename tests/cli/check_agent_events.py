"""Checks a `kazeia agent --json` event stream (used by the tests/cli scripts).

usage: check_agent_events.py FILE EXPECTED_TURNS [MAX_THINK]
Every line must be one JSON event of a known type with its fields; each turn
ends with one done event whose usage is consistent; with MAX_THINK, each
turn's reasoning stayed within the budget, which closed <think> once.
Exits non-zero (an assertion) on the first problem.
"""
import json, sys
path, turns = sys.argv[1], int(sys.argv[2])
max_think = int(sys.argv[3]) if len(sys.argv) > 3 else None
lines = open(path, encoding="utf-8").read().splitlines()
assert lines, "no output"
events = [json.loads(l) for l in lines]
kinds = {"think", "answer", "tool_call", "tool_result", "error", "done"}
for e in events:
    assert e["type"] in kinds, e
    assert isinstance(e["round"], int) and e["round"] >= 0, e
    if e["type"] in ("think", "answer"): assert isinstance(e["text"], str), e
    if e["type"] == "tool_call": assert isinstance(e["arguments"], dict) and e["name"], e
    if e["type"] == "tool_result": assert isinstance(e["ok"], bool) and "content" in e, e
    if e["type"] == "error": assert isinstance(e["message"], str), e
assert events[-1]["type"] == "done", events[-1]
dones = [e for e in events if e["type"] == "done"]
assert len(dones) == turns, f"{len(dones)} done events, expected {turns}"
for d in dones:
    u = d["usage"]
    assert u["stop_reason"] in ("answer", "max_rounds", "cancelled", "error"), u
    assert u["rounds"] >= 1 and u["prompt_tokens"] > 0 and u["generated_tokens"] >= 0, u
    if max_think is not None:
        assert u["think_tokens"] <= max_think, u
        assert u["forced_think_closes"] == 1, u
