// Parsing one complete tool-call body; see stream_parser_calls.h.
#include "text/stream_parser_calls.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace kazeia::text {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::string_view kFunctionOpen = "<function=";
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kParameterOpen = "<parameter=";
constexpr std::string_view kParameterClose = "</parameter>";

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_markup_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_markup_space(s.back())) s.remove_suffix(1);
  return s;
}

size_t skip_space(std::string_view s, size_t pos) {
  while (pos < s.size() && is_markup_space(s[pos])) ++pos;
  return pos;
}

bool starts_with_at(std::string_view s, size_t pos, std::string_view prefix) {
  return s.size() - pos >= prefix.size() && s.substr(pos, prefix.size()) == prefix;
}

// At most ~40 bytes of `s` for a message, cut at a character boundary.
std::string excerpt(std::string_view s) {
  constexpr size_t kMax = 40;
  if (s.size() <= kMax) return std::string(s);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

ParsedToolCall failure(std::string message, std::string name = {}) {
  ParsedToolCall call;
  call.name = std::move(name);
  call.message = std::move(message);
  return call;
}

// ---- schema types ------------------------------------------------------

enum TypeBits : unsigned {
  kString = 1u << 0,
  kInteger = 1u << 1,
  kNumber = 1u << 2,
  kBoolean = 1u << 3,
  kNull = 1u << 4,
  kObject = 1u << 5,
  kArray = 1u << 6,
};
constexpr unsigned kAllButString = kInteger | kNumber | kBoolean | kNull | kObject | kArray;

unsigned type_bit(std::string_view name) {
  if (name == "string") return kString;
  if (name == "integer") return kInteger;
  if (name == "number") return kNumber;
  if (name == "boolean") return kBoolean;
  if (name == "null") return kNull;
  if (name == "object") return kObject;
  if (name == "array") return kArray;
  return 0;
}

unsigned value_type_bit(const nlohmann::json& v) {
  if (v.is_string()) return kString;
  if (v.is_number_integer()) return kInteger;
  if (v.is_number()) return kNumber;
  if (v.is_boolean()) return kBoolean;
  if (v.is_null()) return kNull;
  if (v.is_object()) return kObject;
  if (v.is_array()) return kArray;
  return 0;
}

// The types a property schema allows; 0 when it does not say.
unsigned schema_types(const nlohmann::json& schema, int depth = 0) {
  if (!schema.is_object() || depth > 8) return 0;
  if (auto it = schema.find("type"); it != schema.end()) {
    if (it->is_string()) return type_bit(it->get_ref<const std::string&>());
    unsigned bits = 0;
    if (it->is_array())
      for (const auto& t : *it)
        if (t.is_string()) bits |= type_bit(t.get_ref<const std::string&>());
    return bits;
  }
  unsigned bits = 0;
  for (const char* key : {"anyOf", "oneOf"})
    if (auto it = schema.find(key); it != schema.end() && it->is_array())
      for (const auto& member : *it) bits |= schema_types(member, depth + 1);
  if (bits) return bits;
  if (auto it = schema.find("enum"); it != schema.end() && it->is_array())
    for (const auto& v : *it) bits |= value_type_bit(v);
  if (auto it = schema.find("const"); it != schema.end()) bits |= value_type_bit(*it);
  return bits;
}

// `v` converted to one of `allowed` (never to a string), or null-discarded.
std::optional<ordered_json> accept_typed(ordered_json v, unsigned allowed) {
  if (v.is_string()) return std::nullopt;
  if (v.is_number_float() && (allowed & kInteger) && !(allowed & kNumber)) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return ordered_json(static_cast<int64_t>(d));
    return std::nullopt;
  }
  unsigned bit = value_type_bit(v);
  if (bit == kInteger && (allowed & kNumber)) bit = kNumber;  // an integer is a number
  if (allowed & bit) return v;
  return std::nullopt;
}

// ---- JSON form ---------------------------------------------------------

// Strips nlohmann's "[json.exception.parse_error.101] " prefix.
std::string plain_parse_error(const char* what) {
  std::string s = what;
  if (!s.empty() && s.front() == '[') {
    if (size_t close = s.find("] "); close != std::string::npos) s.erase(0, close + 2);
  }
  return s;
}

ParsedToolCall parse_json_body(std::string_view body, ToolCallFormat format) {
  const std::string_view text = trim(body);
  const std::string hint = tool_call_syntax_hint(format);
  if (text.empty()) return failure("Invalid tool call: nothing between <tool_call> and </tool_call>. " + hint);
  ordered_json call;
  try {
    call = ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return failure("Invalid tool call: the text between <tool_call> and </tool_call> is not valid JSON (" +
                   plain_parse_error(e.what()) + "). " + hint);
  }
  if (!call.is_object())
    return failure(std::string("Invalid tool call: expected one JSON object, got ") + call.type_name() + ". " + hint);
  auto name_it = call.find("name");
  if (name_it == call.end() || !name_it->is_string() || trim(name_it->get_ref<const std::string&>()).empty())
    return failure("Invalid tool call: the JSON object has no \"name\" string naming the function to call. " + hint);
  std::string name(trim(name_it->get_ref<const std::string&>()));

  ordered_json arguments = ordered_json::object();
  if (auto it = call.find("arguments"); it != call.end() && !it->is_null()) {
    arguments = *it;
    if (arguments.is_string()) {  // double-encoded: "{\"city\": \"Paris\"}"
      ordered_json inner = ordered_json::parse(arguments.get_ref<const std::string&>(), nullptr, false);
      if (inner.is_object()) arguments = std::move(inner);
    }
    if (!arguments.is_object())
      return failure("Invalid tool call to \"" + name + "\": \"arguments\" must be a JSON object mapping " +
                         "parameter names to values, got " + arguments.type_name() + ". " + hint,
                     name);
  }
  ParsedToolCall parsed;
  parsed.ok = true;
  parsed.name = std::move(name);
  parsed.arguments = std::move(arguments);
  return parsed;
}

// ---- XML-parameter form ------------------------------------------------

// Reads "NAME>" at `pos` (just after "<function=" or "<parameter="): the
// name, trimmed, and the position after '>'. A newline before '>' means the
// tag was never closed.
bool read_tag_name(std::string_view body, size_t pos, std::string& name, size_t& after) {
  const size_t close = body.find('>', pos);
  if (close == std::string_view::npos) return false;
  const std::string_view inside = body.substr(pos, close - pos);
  if (inside.find('\n') != std::string_view::npos) return false;
  name = std::string(trim(inside));
  after = close + 1;
  return true;
}

const nlohmann::json* property_schema(const KnownTools& known_tools, const std::string& function,
                                      const std::string& key) {
  if (!known_tools) return nullptr;
  auto tool = known_tools->find(function);
  if (tool == known_tools->end() || !tool->second.is_object()) return nullptr;
  auto props = tool->second.find("properties");
  if (props == tool->second.end() || !props->is_object()) return nullptr;
  auto prop = props->find(key);
  return prop == props->end() ? nullptr : &*prop;
}

ParsedToolCall parse_xml_body(std::string_view body, ToolCallFormat format, const KnownTools& known_tools) {
  const std::string hint = tool_call_syntax_hint(format);
  size_t pos = skip_space(body, 0);
  if (!starts_with_at(body, pos, kFunctionOpen))
    return failure("Invalid tool call: expected <function=NAME> right after <tool_call>. " + hint);
  std::string name;
  if (!read_tag_name(body, pos + kFunctionOpen.size(), name, pos))
    return failure("Invalid tool call: the <function=NAME> tag is not closed with '>'. " + hint);
  if (name.empty()) return failure("Invalid tool call: <function=> has no function name. " + hint);

  ordered_json arguments = ordered_json::object();
  for (;;) {
    pos = skip_space(body, pos);
    if (pos >= body.size()) break;  // a missing </function> is tolerated
    if (starts_with_at(body, pos, kFunctionClose)) {
      pos = skip_space(body, pos + kFunctionClose.size());
      if (pos < body.size())
        return failure("Invalid tool call to \"" + name + "\": unexpected text after </function>: \"" +
                           excerpt(body.substr(pos)) +
                           "\". Put exactly one <function=...> in each <tool_call> block. " + hint,
                       name);
      break;
    }
    if (!starts_with_at(body, pos, kParameterOpen))
      return failure("Invalid tool call to \"" + name + "\": expected <parameter=KEY> or </function>, found \"" +
                         excerpt(body.substr(pos)) + "\". " + hint,
                     name);
    std::string key;
    size_t value_start = 0;
    if (!read_tag_name(body, pos + kParameterOpen.size(), key, value_start))
      return failure("Invalid tool call to \"" + name + "\": a <parameter=KEY> tag is not closed with '>'. " + hint,
                     name);
    if (key.empty())
      return failure("Invalid tool call to \"" + name + "\": <parameter=> has no parameter name. " + hint, name);
    // The value ends at </parameter>, or where the next element starts when
    // the model left </parameter> out.
    size_t end = body.find(kParameterClose, value_start);
    size_t next = end;
    if (end != std::string_view::npos) next = end + kParameterClose.size();
    for (std::string_view tag : {kParameterOpen, kFunctionClose}) {
      const size_t other = body.find(tag, value_start);
      if (other < end) end = next = other;
    }
    if (end == std::string_view::npos) end = next = body.size();
    if (arguments.contains(key))
      return failure("Invalid tool call to \"" + name + "\": parameter \"" + key +
                         "\" is given twice. Give each parameter once.",
                     name);
    arguments[key] = type_parameter_value(body.substr(value_start, end - value_start),
                                          property_schema(known_tools, name, key));
    pos = next;
  }
  ParsedToolCall parsed;
  parsed.ok = true;
  parsed.name = std::move(name);
  parsed.arguments = std::move(arguments);
  return parsed;
}

std::string unknown_function_message(const std::string& name, const std::map<std::string, nlohmann::json>& tools) {
  std::string message = "Unknown function \"" + name + "\": the call was not made. ";
  if (tools.empty()) return message + "No functions are available; answer without calling one.";
  message += "Call one of the available functions: ";
  bool first = true;
  for (const auto& [tool, schema] : tools) {
    if (!first) message += ", ";
    message += tool;
    first = false;
  }
  return message + ".";
}

}  // namespace

std::string tool_call_syntax_hint(ToolCallFormat format) {
  if (format == ToolCallFormat::kQwen35)
    return "Write each call as:\n<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n"
           "</function>\n</tool_call>";
  return "Write each call as:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
         "</tool_call>";
}

nlohmann::ordered_json type_parameter_value(std::string_view raw_value, const nlohmann::json* property_schema) {
  std::string_view text = raw_value;
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);

  const unsigned declared = property_schema ? schema_types(*property_schema) : 0;
  const unsigned allowed = declared ? declared : kAllButString;
  if (allowed & kAllButString) {
    const std::string_view literal = trim(text);
    ordered_json parsed = ordered_json::parse(literal, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() && declared) {
      // The Qwen3.5 template writes booleans and null the Python way.
      if (literal == "True") parsed = true;
      else if (literal == "False") parsed = false;
      else if (literal == "None") parsed = nullptr;
    }
    if (!parsed.is_discarded())
      if (auto typed = accept_typed(std::move(parsed), allowed)) return *typed;
  }
  return ordered_json(std::string(text));
}

ParsedToolCall parse_tool_call_body(std::string_view body, ToolCallFormat format, const KnownTools& known_tools) {
  const size_t first = skip_space(body, 0);
  bool xml = format == ToolCallFormat::kQwen35;
  if (first < body.size() && body[first] == '{') xml = false;
  if (first < body.size() && body[first] == '<') xml = true;
  ParsedToolCall parsed = xml ? parse_xml_body(body, format, known_tools) : parse_json_body(body, format);
  if (parsed.ok && known_tools && !known_tools->count(parsed.name)) {
    parsed.ok = false;
    parsed.message = unknown_function_message(parsed.name, *known_tools);
  }
  return parsed;
}

}  // namespace kazeia::text
