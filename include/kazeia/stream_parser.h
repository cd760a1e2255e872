// Splitting a chat model's streamed output into reasoning, answer text and
// tool calls (`kazeia parse-stream`, the agent runtime).
//
// Feed the decoded text as it arrives, in chunks of any size (a tag may be
// split at any byte); each call appends the events that became certain.
// Reasoning and answer text come in pieces; merge_text_events() joins
// consecutive pieces, and the merged list does not depend on the chunking.
//
// Recognised: <think>…</think> (reasoning), <tool_call>…</tool_call> (one
// call, also inside reasoning), an optional <tool_calls>…</tool_calls>
// wrapper. Other tags, stray closing tags and nested tags are text. Each run
// of text between tags is trimmed of leading/trailing ASCII whitespace.
// Call bodies: JSON ({"name": ..., "arguments": {...}}, Qwen3) or XML
// parameters (<function=NAME><parameter=KEY>VALUE</parameter></function>,
// Qwen3.5), either accepted in both modes. An XML value loses the one
// leading and trailing newline the template adds; with a property schema it
// is typed from the schema ("string" keeps the text; integer / number /
// boolean / null / object / array parse it as JSON, True / False / None
// accepted, and fall back to the text when that fails); without one, JSON
// numbers, true / false / null, objects and arrays are typed and everything
// else stays a string (details: src/text/stream_parser_calls.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

enum class ToolCallFormat {
  kHermes,  // Qwen3 and other Hermes-style templates: JSON inside <tool_call>
  kQwen35,  // Qwen3.5: <function=NAME> with <parameter=KEY> blocks
};

// "hermes" (also "qwen3", "json") or "qwen35" (also "xml").
Result<ToolCallFormat> parse_tool_call_format(std::string_view name);

enum class StreamEventType { kThink, kAnswer, kToolCall, kError };

struct StreamEvent {
  StreamEventType type = StreamEventType::kAnswer;
  std::string text;            // kThink / kAnswer: the next piece of text
  // kToolCall / kError (each error stands for one malformed <tool_call>):
  std::string id;              // "call_0", "call_1", ... per parser, errors included
  std::string name;            // function name (kError: when it could be read)
  std::string arguments_json;  // kToolCall: a JSON object, keys as written; kError: "" or an object
  std::string raw;             // the call's exact text, <tool_call> to </tool_call>
  std::string message;         // kError: what is wrong, phrased for the model
  bool in_think = false;       // the call appeared inside <think>
};

struct StreamParserOptions {
  // The prompt already opened <think>: the output starts as reasoning.
  bool starts_in_think = false;
  // When set, calls to other functions become error events. Value: the
  // function's parameters JSON schema as text, or "" when unknown.
  std::optional<std::map<std::string, std::string>> known_tools;
};

// known_tools from an OpenAI-style tools array: [{"type": "function",
// "function": {"name": ..., "parameters": {...}}}, ...] (bare {"name",
// "parameters"} objects are accepted too).
Result<std::map<std::string, std::string>> tools_from_json(std::string_view tools_json);

class StreamParser {
 public:
  // Fails when a schema in known_tools is not valid JSON.
  static Result<StreamParser> create(ToolCallFormat format, const StreamParserOptions& options = {});
  StreamParser(StreamParser&&) noexcept;
  StreamParser& operator=(StreamParser&&) noexcept;
  ~StreamParser();

  void feed(std::string_view chunk, std::vector<StreamEvent>& out);
  // End of the output: flushes held text; an unclosed <tool_call> becomes an
  // error event. The parser is then ready for a new output (ids continue).
  void finish(std::vector<StreamEvent>& out);

 private:
  struct Impl;
  explicit StreamParser(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

std::vector<StreamEvent> merge_text_events(const std::vector<StreamEvent>& events);

// One line of JSON (no newline): {"type":"answer","text":...},
// {"type":"tool_call","id":...,"name":...,"arguments":{...},"in_think":false},
// {"type":"error","id":...,"name":...,"arguments":{...},"message":...,"raw":...,"in_think":false}
// (an error has name and arguments only when they could be read).
std::string stream_event_to_json(const StreamEvent& event);

}  // namespace kazeia
