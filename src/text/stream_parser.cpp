// The stream state machine: text modes (answer, think) scan for tags; the
// call-body mode collects bytes until </tool_call>. See stream_parser.h.
#include "text/stream_parser.h"

#include <array>
#include <utility>

#include "text/stream_parser_calls.h"

namespace kazeia::text {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";
constexpr std::string_view kListOpen = "<tool_calls>";
constexpr std::string_view kListClose = "</tool_calls>";

// How many bytes at the end of `s` begin a UTF-8 sequence that later bytes
// could still complete (0 when the end is a character boundary). Invalid
// bytes are not held: they can never complete.
size_t incomplete_utf8_tail(std::string_view s) {
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: look further back
    size_t need = 1;
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) need = 3;
    else if (c >= 0xF0 && c <= 0xF4) need = 4;
    return need > back ? back : 0;
  }
  return 0;
}

enum class TagMatch { kNone, kPartial, kFull };

TagMatch match_tag(std::string_view text, std::string_view tag) {
  if (text.size() >= tag.size()) return text.substr(0, tag.size()) == tag ? TagMatch::kFull : TagMatch::kNone;
  return tag.substr(0, text.size()) == text ? TagMatch::kPartial : TagMatch::kNone;
}

}  // namespace

const char* stream_event_type_name(StreamEventType type) {
  switch (type) {
    case StreamEventType::kThink: return "think";
    case StreamEventType::kAnswer: return "answer";
    case StreamEventType::kToolCall: return "tool_call";
    case StreamEventType::kError: return "error";
  }
  return "unknown";
}

StreamParser::StreamParser(ToolCallFormat format, StreamParserOptions options)
    : format_(format), options_(std::move(options)) {
  reset();
}

void StreamParser::reset() {
  mode_ = options_.starts_in_think ? Mode::kThink : Mode::kAnswer;
  in_call_list_ = false;
  call_in_think_ = false;
  buf_.clear();
  body_scanned_ = 0;
  at_segment_start_ = true;
  pending_.clear();
}

void StreamParser::feed(std::string_view chunk, std::vector<StreamEvent>& out) {
  buf_.append(chunk);
  run(out);
}

void StreamParser::finish(std::vector<StreamEvent>& out) {
  if (mode_ == Mode::kCallBody) {
    emit_call(std::move(buf_), /*closed=*/false, out);
  } else {
    // What is held can no longer become a tag: it is text.
    add_text(buf_, out);
    end_segment(out);
  }
  reset();
}

void StreamParser::run(std::vector<StreamEvent>& out) {
  for (;;) {
    const bool progressed = mode_ == Mode::kCallBody ? run_call_body(out) : run_text(out);
    if (!progressed) return;
  }
}

bool StreamParser::run_text(std::vector<StreamEvent>& out) {
  // Tags that mean something here; all start with '<' and none is a prefix
  // of another, so at most one matches in full.
  std::array<std::string_view, 3> tags = {mode_ == Mode::kThink ? kThinkClose : kThinkOpen, kCallOpen,
                                          in_call_list_ ? kListClose : kListOpen};
  size_t pos = 0;
  while (pos < buf_.size()) {
    const size_t lt = buf_.find('<', pos);
    if (lt == std::string::npos) {
      add_text(std::string_view(buf_).substr(pos), out);
      pos = buf_.size();
      break;
    }
    add_text(std::string_view(buf_).substr(pos, lt - pos), out);
    pos = lt;
    const std::string_view rest = std::string_view(buf_).substr(lt);
    std::string_view full;
    bool partial = false;
    for (std::string_view tag : tags) {
      const TagMatch m = match_tag(rest, tag);
      if (m == TagMatch::kFull) full = tag;
      if (m == TagMatch::kPartial) partial = true;
    }
    if (full.empty()) {
      if (partial) {  // the next chunk decides: keep "<tool_" and the rest
        buf_.erase(0, pos);
        return false;
      }
      add_text("<", out);
      ++pos;
      continue;
    }
    pos += full.size();
    end_segment(out);
    if (full == kCallOpen) {
      call_in_think_ = mode_ == Mode::kThink;
      mode_ = Mode::kCallBody;
      buf_.erase(0, pos);
      body_scanned_ = 0;
      return true;
    }
    if (full == kThinkOpen) mode_ = Mode::kThink;
    else if (full == kThinkClose) mode_ = Mode::kAnswer;
    else if (full == kListOpen) in_call_list_ = true;
    else if (full == kListClose) in_call_list_ = false;
    tags = {mode_ == Mode::kThink ? kThinkClose : kThinkOpen, kCallOpen, in_call_list_ ? kListClose : kListOpen};
  }
  buf_.clear();
  return false;
}

bool StreamParser::run_call_body(std::vector<StreamEvent>& out) {
  const size_t found = buf_.find(kCallClose, body_scanned_);
  if (found == std::string::npos) {
    // The last bytes may be the start of </tool_call>: rescan them next time.
    const size_t overlap = kCallClose.size() - 1;
    body_scanned_ = buf_.size() > overlap ? buf_.size() - overlap : 0;
    return false;
  }
  std::string body = buf_.substr(0, found);
  buf_.erase(0, found + kCallClose.size());
  body_scanned_ = 0;
  mode_ = call_in_think_ ? Mode::kThink : Mode::kAnswer;
  emit_call(std::move(body), /*closed=*/true, out);
  return true;
}

void StreamParser::add_text(std::string_view text, std::vector<StreamEvent>& out) {
  if (at_segment_start_) {
    size_t i = 0;
    while (i < text.size() && is_markup_space(text[i])) ++i;
    text.remove_prefix(i);
    if (text.empty()) return;
    at_segment_start_ = false;
  }
  if (text.empty()) return;
  pending_.append(text);
  // Hold an incomplete character and, before it, trailing whitespace (it is
  // dropped if a tag follows); emit the rest now.
  size_t cut = pending_.size() - incomplete_utf8_tail(pending_);
  while (cut > 0 && is_markup_space(pending_[cut - 1])) --cut;
  if (cut == 0) return;
  emit_text(std::string_view(pending_).substr(0, cut), out);
  pending_.erase(0, cut);
}

void StreamParser::end_segment(std::vector<StreamEvent>& out) {
  size_t end = pending_.size();
  while (end > 0 && is_markup_space(pending_[end - 1])) --end;
  emit_text(std::string_view(pending_).substr(0, end), out);
  pending_.clear();
  at_segment_start_ = true;
}

void StreamParser::emit_text(std::string_view text, std::vector<StreamEvent>& out) {
  if (text.empty()) return;
  StreamEvent event;
  event.type = mode_ == Mode::kThink ? StreamEventType::kThink : StreamEventType::kAnswer;
  event.text = std::string(text);
  out.push_back(std::move(event));
}

void StreamParser::emit_call(std::string body, bool closed, std::vector<StreamEvent>& out) {
  StreamEvent event;
  event.id = "call_" + std::to_string(next_call_id_++);
  event.in_think = call_in_think_;
  ParsedToolCall parsed = parse_tool_call_body(body, format_, options_.known_tools);
  event.raw.reserve(kCallOpen.size() + body.size() + kCallClose.size());
  event.raw.append(kCallOpen).append(body);
  if (closed) event.raw.append(kCallClose);
  event.name = std::move(parsed.name);
  if (closed && parsed.ok) {
    event.type = StreamEventType::kToolCall;
    event.arguments = std::move(parsed.arguments);
  } else {
    event.type = StreamEventType::kError;
    if (closed) {
      event.message = std::move(parsed.message);
      event.arguments = std::move(parsed.arguments);  // null unless only the name was wrong
    } else {
      event.message = "Incomplete tool call: the output ended before </tool_call>, so the call was not made. "
                      "End every call with </tool_call>. " +
                      tool_call_syntax_hint(format_);
    }
  }
  out.push_back(std::move(event));
}

nlohmann::ordered_json stream_event_to_json(const StreamEvent& event) {
  nlohmann::ordered_json j;
  j["type"] = stream_event_type_name(event.type);
  switch (event.type) {
    case StreamEventType::kThink:
    case StreamEventType::kAnswer:
      j["text"] = event.text;
      break;
    case StreamEventType::kToolCall:
      j["id"] = event.id;
      j["name"] = event.name;
      j["arguments"] = event.arguments;
      j["in_think"] = event.in_think;
      break;
    case StreamEventType::kError:
      j["id"] = event.id;
      if (!event.name.empty()) j["name"] = event.name;
      if (event.arguments.is_object()) j["arguments"] = event.arguments;
      j["message"] = event.message;
      j["raw"] = event.raw;
      j["in_think"] = event.in_think;
      break;
  }
  return j;
}

bool operator==(const StreamEvent& a, const StreamEvent& b) {
  return a.type == b.type && a.text == b.text && a.id == b.id && a.name == b.name && a.arguments == b.arguments &&
         a.raw == b.raw && a.message == b.message && a.in_think == b.in_think;
}

}  // namespace kazeia::text
