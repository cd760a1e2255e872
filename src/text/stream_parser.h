// Incremental parser for a chat model's decoded output: splits the text into
// reasoning (`<think>…</think>`), answer text and tool calls, as the streaming
// detokenizer hands it over.
//
// Chunking never matters: feeding a text whole, in two pieces at any byte, or
// byte by byte gives the same events once consecutive text pieces are merged
// (merge_text_events). Bytes that could still be the start of a tag, trailing
// whitespace of a segment and an incomplete UTF-8 sequence at the end of a
// chunk are held back until a later chunk (or finish()) decides them.
//
// Tags (exact, case-sensitive; anything else is text):
//   <think> … </think>      reasoning. `<think>` opens it only outside think;
//                           `</think>` outside think is plain text (a stray),
//                           and so is `<think>` inside think (nested).
//   <tool_call> … </tool_call>   one call, in answer text or inside think (a
//                           call inside think is reported like any other, with
//                           in_think = true). The body ends at the first
//                           `</tool_call>`: nothing inside is a tag.
//   <tool_calls> … </tool_calls>  optional wrapper around calls; `</tool_calls>`
//                           is a tag only after `<tool_calls>`.
//
// Whitespace: every run of text between two structural tags (or the start /
// end of the stream) is a segment, and segments are trimmed of leading and
// trailing ASCII whitespace (space, tab, CR, LF); bytes inside a segment are
// kept exactly. So whitespace between calls, around `<think>`/`</think>` and
// around calls is framing, never answer text, and a whitespace-only output
// gives no event. The Qwen templates trim reasoning and content when they
// render the conversation back, so the model sees the same text next turn.
//
// Call bodies: see stream_parser_calls.h (JSON form, XML-parameter form and
// how parameter values are typed from the tool's schema).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kazeia::text {

// The tool-call syntax of the chat-template family. Either body form is
// accepted in either mode; the format picks the syntax error messages teach.
enum class ToolCallFormat {
  kHermes,  // Qwen3: <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>
  kQwen35,  // Qwen3.5: <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>
};

enum class StreamEventType { kThink, kAnswer, kToolCall, kError };

struct StreamEvent {
  StreamEventType type = StreamEventType::kAnswer;
  std::string text;              // kThink / kAnswer: a piece of the segment
  // kToolCall / kError (every error comes from one <tool_call>):
  std::string id;                // "call_0", "call_1", ... in order, errors included
  std::string name;              // the function name (kError: when it could be read)
  nlohmann::ordered_json arguments;  // kToolCall: an object, keys in the order written; kError: object or null
  std::string raw;               // the exact bytes from <tool_call> to </tool_call> (or to the end)
  std::string message;           // kError: what is wrong and how to write it instead
  bool in_think = false;         // the call appeared inside <think>
};

const char* stream_event_type_name(StreamEventType type);  // "think", "answer", ...

struct StreamParserOptions {
  // The prompt already opened <think> (Qwen3.5's generation prompt does):
  // the output starts as reasoning and its first `</think>` closes it.
  bool starts_in_think = false;
  // When set, a call to a function not in the map is an error event. The
  // value is the function's parameters JSON schema ({"type": "object",
  // "properties": {...}}), or null when unknown; XML-form values are typed
  // from it.
  std::optional<std::map<std::string, nlohmann::json>> known_tools;
};

class StreamParser {
 public:
  explicit StreamParser(ToolCallFormat format, StreamParserOptions options = {});

  // Parses the next bytes; appends the events they complete to `out`.
  void feed(std::string_view chunk, std::vector<StreamEvent>& out);
  // End of stream: flushes held bytes; an unclosed <think> just ends, an
  // unclosed <tool_call> becomes an error event. Later feeds start over.
  void finish(std::vector<StreamEvent>& out);

  bool in_think() const { return mode_ == Mode::kThink || (mode_ == Mode::kCallBody && call_in_think_); }
  // Inside a <tool_call> body (in think or not): nothing may be inserted here.
  bool in_call() const { return mode_ == Mode::kCallBody; }

 private:
  enum class Mode { kAnswer, kThink, kCallBody };

  void run(std::vector<StreamEvent>& out);            // consumes buf_ as far as it can
  bool run_text(std::vector<StreamEvent>& out);        // false: needs more bytes
  bool run_call_body(std::vector<StreamEvent>& out);   // false: needs more bytes
  // Text the current segment definitely contains (no tag inside).
  void add_text(std::string_view text, std::vector<StreamEvent>& out);
  // A structural tag ends the segment: trailing whitespace is dropped.
  void end_segment(std::vector<StreamEvent>& out);
  void emit_text(std::string_view text, std::vector<StreamEvent>& out);
  void emit_call(std::string raw_body, bool closed, std::vector<StreamEvent>& out);
  void reset();

  ToolCallFormat format_;
  StreamParserOptions options_;

  Mode mode_ = Mode::kAnswer;
  bool in_call_list_ = false;   // inside <tool_calls>
  bool call_in_think_ = false;  // the open call started inside think
  std::string buf_;             // unconsumed input (a possible tag prefix, or a call body)
  size_t body_scanned_ = 0;     // kCallBody: bytes of buf_ known not to start </tool_call>
  // Segment state: leading whitespace is skipped while at_segment_start_;
  // pending_ holds trailing whitespace and an incomplete UTF-8 tail.
  bool at_segment_start_ = true;
  std::string pending_;
  size_t next_call_id_ = 0;
};

// Joins consecutive think pieces and consecutive answer pieces, so the event
// lists of two chunkings of one text compare equal.
// Any event type with `type` (kThink / kAnswer / ...) and `text` members:
// the public API's StreamEvent uses the same rule.
template <class Event>
std::vector<Event> merge_text_events(const std::vector<Event>& events) {
  using Type = decltype(Event::type);
  std::vector<Event> merged;
  merged.reserve(events.size());
  for (const Event& event : events) {
    const bool is_text = event.type == Type::kThink || event.type == Type::kAnswer;
    if (is_text && !merged.empty() && merged.back().type == event.type) {
      merged.back().text += event.text;
      continue;
    }
    merged.push_back(event);
  }
  return merged;
}

// One JSON object per event: {"type":"think","text":...}, {"type":"tool_call",
// "id":...,"name":...,"arguments":{...},"raw":...,"in_think":...},
// {"type":"error","id":...,"name":...,"arguments":{...},"message":...,"raw":...,
// "in_think":...} (name and arguments only when they could be read).
nlohmann::ordered_json stream_event_to_json(const StreamEvent& event);

bool operator==(const StreamEvent& a, const StreamEvent& b);

}  // namespace kazeia::text
