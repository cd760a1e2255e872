// libFuzzer target for the stream parser: random model output, random
// chunking. Must not crash, and the merged events of chunked feeding must
// equal those of feeding the text whole.
//
// Input layout: byte 0 = options (bit 0 format, bit 1 starts_in_think, bit 2
// tool list, bit 3 expand tokens), byte 1 = chunking seed, the rest = text.
// With "expand tokens", bytes 0x01..0x14 stand for tags and call fragments,
// so the fuzzer reaches deep states without having to guess "<tool_call>".
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "text/stream_parser.h"

namespace {

using kazeia::text::StreamEvent;
using kazeia::text::StreamEventType;
using kazeia::text::StreamParser;
using kazeia::text::StreamParserOptions;
using kazeia::text::ToolCallFormat;

constexpr std::string_view kTokens[] = {
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_calls>", "</tool_calls>",
    "<function=f>", "</function>", "<parameter=a>", "<parameter=b>", "</parameter>", "{\"name\": \"f\", \"arguments\": ",
    "{\"name\": \"g\"}", "\"arguments\"", "True", "None", "\n", "<tool_", "</thi", "\xF0\x9F\x98",
};

std::string expand(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 1 && b <= std::size(kTokens)) out += kTokens[b - 1];
    else out += c;
  }
  return out;
}

StreamParserOptions make_options(uint8_t flags) {
  StreamParserOptions options;
  options.starts_in_think = flags & 2;
  if (flags & 4) {
    options.known_tools.emplace();
    (*options.known_tools)["f"] = nlohmann::json::parse(
        R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": ["boolean", "null"]}}})");
    (*options.known_tools)["g"] = nullptr;
  }
  return options;
}

void check_pieces(const std::vector<StreamEvent>& events) {
  for (const StreamEvent& e : events) {
    const bool is_text = e.type == StreamEventType::kThink || e.type == StreamEventType::kAnswer;
    if (is_text && e.text.empty()) std::abort();
    if (!is_text && (e.id.empty() || e.raw.rfind("<tool_call>", 0) != 0)) std::abort();
    if (e.type == StreamEventType::kToolCall && !e.arguments.is_object()) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  uint32_t seed = data[1];
  std::string_view input(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::string text = flags & 8 ? expand(input) : std::string(input);
  const ToolCallFormat format = flags & 1 ? ToolCallFormat::kQwen35 : ToolCallFormat::kHermes;
  const StreamParserOptions options = make_options(flags);

  StreamParser whole_parser(format, options);
  std::vector<StreamEvent> whole;
  whole_parser.feed(text, whole);
  whole_parser.finish(whole);
  check_pieces(whole);
  whole = kazeia::text::merge_text_events(whole);

  // Chunk sizes 1..16 from a small LCG seeded by byte 1.
  StreamParser chunk_parser(format, options);
  std::vector<StreamEvent> chunked;
  for (size_t pos = 0; pos < text.size();) {
    seed = seed * 1103515245u + 12345u;
    const size_t n = std::min<size_t>(1 + (seed >> 16) % 16, text.size() - pos);
    chunk_parser.feed(std::string_view(text).substr(pos, n), chunked);
    pos += n;
  }
  chunk_parser.finish(chunked);
  check_pieces(chunked);
  if (kazeia::text::merge_text_events(chunked) != whole) std::abort();

  // The JSON form of every event must be producible (invalid UTF-8 replaced).
  for (const StreamEvent& e : whole)
    (void)kazeia::text::stream_event_to_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
