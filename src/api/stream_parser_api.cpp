// Public wrapper of text::StreamParser with std-only types.
#include "kazeia/stream_parser.h"

#include <nlohmann/json.hpp>

#include "text/stream_parser.h"

namespace kazeia {
namespace {

constexpr auto kReplaceInvalidUtf8 = nlohmann::json::error_handler_t::replace;

text::ToolCallFormat to_internal(ToolCallFormat format) {
  return format == ToolCallFormat::kQwen35 ? text::ToolCallFormat::kQwen35 : text::ToolCallFormat::kHermes;
}

StreamEventType to_public(text::StreamEventType type) {
  switch (type) {
    case text::StreamEventType::kThink: return StreamEventType::kThink;
    case text::StreamEventType::kAnswer: return StreamEventType::kAnswer;
    case text::StreamEventType::kToolCall: return StreamEventType::kToolCall;
    case text::StreamEventType::kError: return StreamEventType::kError;
  }
  return StreamEventType::kError;
}

text::StreamEventType to_internal(StreamEventType type) {
  switch (type) {
    case StreamEventType::kThink: return text::StreamEventType::kThink;
    case StreamEventType::kAnswer: return text::StreamEventType::kAnswer;
    case StreamEventType::kToolCall: return text::StreamEventType::kToolCall;
    case StreamEventType::kError: return text::StreamEventType::kError;
  }
  return text::StreamEventType::kError;
}

void append_public(std::vector<text::StreamEvent>& events, std::vector<StreamEvent>& out) {
  for (text::StreamEvent& e : events) {
    StreamEvent p;
    p.type = to_public(e.type);
    p.text = std::move(e.text);
    p.id = std::move(e.id);
    p.name = std::move(e.name);
    if (!e.arguments.is_null()) p.arguments_json = e.arguments.dump(-1, ' ', false, kReplaceInvalidUtf8);
    p.raw = std::move(e.raw);
    p.message = std::move(e.message);
    p.in_think = e.in_think;
    out.push_back(std::move(p));
  }
  events.clear();
}

}  // namespace

Result<ToolCallFormat> parse_tool_call_format(std::string_view name) {
  if (name == "hermes" || name == "qwen3" || name == "json") return ToolCallFormat::kHermes;
  if (name == "qwen35" || name == "xml") return ToolCallFormat::kQwen35;
  return InvalidArgument("unknown tool-call format '" + std::string(name) + "' (expected hermes or qwen35)");
}

Result<std::map<std::string, std::string>> tools_from_json(std::string_view tools_json) {
  const nlohmann::json tools = nlohmann::json::parse(tools_json, nullptr, false);
  if (tools.is_discarded() || !tools.is_array()) return InvalidArgument("tools: expected a JSON array of tools");
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < tools.size(); ++i) {
    const nlohmann::json* fn = &tools[i];
    if (fn->is_object() && fn->contains("function")) fn = &(*fn)["function"];
    if (!fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string())
      return InvalidArgument("tools[" + std::to_string(i) + "]: no function name");
    std::string schema;
    if (auto it = fn->find("parameters"); it != fn->end()) schema = it->dump();
    out[(*fn)["name"].get<std::string>()] = std::move(schema);
  }
  return out;
}

struct StreamParser::Impl {
  text::StreamParser parser;
  std::vector<text::StreamEvent> scratch;
};

StreamParser::StreamParser(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamParser::StreamParser(StreamParser&&) noexcept = default;
StreamParser& StreamParser::operator=(StreamParser&&) noexcept = default;
StreamParser::~StreamParser() = default;

Result<StreamParser> StreamParser::create(ToolCallFormat format, const StreamParserOptions& options) {
  text::StreamParserOptions internal;
  internal.starts_in_think = options.starts_in_think;
  if (options.known_tools) {
    internal.known_tools.emplace();
    for (const auto& [name, schema_text] : *options.known_tools) {
      nlohmann::json schema;  // null: no schema
      if (!schema_text.empty()) {
        schema = nlohmann::json::parse(schema_text, nullptr, false);
        if (schema.is_discarded()) return InvalidArgument("tool '" + name + "': parameters schema is not valid JSON");
      }
      (*internal.known_tools)[name] = std::move(schema);
    }
  }
  return StreamParser(std::make_unique<Impl>(Impl{text::StreamParser(to_internal(format), std::move(internal)), {}}));
}

void StreamParser::feed(std::string_view chunk, std::vector<StreamEvent>& out) {
  impl_->parser.feed(chunk, impl_->scratch);
  append_public(impl_->scratch, out);
}

void StreamParser::finish(std::vector<StreamEvent>& out) {
  impl_->parser.finish(impl_->scratch);
  append_public(impl_->scratch, out);
}

std::vector<StreamEvent> merge_text_events(const std::vector<StreamEvent>& events) {
  return text::merge_text_events(events);
}

std::string stream_event_to_json(const StreamEvent& event) {
  text::StreamEvent e;
  e.type = to_internal(event.type);
  e.text = event.text;
  e.id = event.id;
  e.name = event.name;
  if (!event.arguments_json.empty())
    e.arguments = nlohmann::ordered_json::parse(event.arguments_json, nullptr, false);
  if (e.arguments.is_discarded()) e.arguments = event.arguments_json;  // not ours: keep the text
  e.raw = event.raw;
  e.message = event.message;
  e.in_think = event.in_think;
  return text::stream_event_to_json(e).dump(-1, ' ', false, kReplaceInvalidUtf8);
}

}  // namespace kazeia
