// The body of one <tool_call>…</tool_call>, parsed once the call is complete.
//
// JSON form (Qwen3 / Hermes): the body, trimmed, is one JSON object with a
// non-empty string "name" and an "arguments" object. "arguments" may be
// absent ({}) or a string holding a JSON object (some models double-encode).
//
// XML-parameter form (Qwen3.5):
//   <function=NAME>
//   <parameter=KEY>
//   VALUE
//   </parameter>
//   ...
//   </function>
// Whitespace between the elements is ignored. A value ends at its
// `</parameter>`; when that is missing, at the next `<parameter=` or
// `</function>` (models sometimes drop it). A missing `</function>` at the
// end of the body is tolerated too. A repeated key is an error.
//
// Typing an XML value (type_parameter_value):
//   - The text is the raw value with the one leading and one trailing newline
//     the template puts around it removed; everything else is kept.
//   - With a property schema: its types come from "type" (a name or a list),
//     else from the members of anyOf/oneOf, else from the values of enum /
//     const. "string" keeps the text. integer / number / boolean / null /
//     object / array parse the trimmed text as JSON (the Python spellings
//     True / False / None the template writes are accepted for boolean and
//     null; 3.0 counts as an integer) and keep the result only if it has one
//     of those types; otherwise the value falls back to the text as a string.
//   - Without a schema for the parameter (no tool list, a tool without
//     schema, a key the schema does not list): the trimmed text is parsed as
//     JSON, and a number, true / false / null, object or array is kept as
//     such; anything else (including "True", quoted JSON strings and
//     non-JSON text) stays the text as a string. So `42` -> 42, `[1, 2]` ->
//     [1, 2], `Paris` -> "Paris", `"Paris"` -> "\"Paris\"".
// Arguments are never validated against the schema (required keys, enum,
// ranges): that is the tool executor's job.
//
// Either form is accepted whatever the configured format: a body that starts
// with `{` is JSON, one that starts with `<` is XML. The configured format
// only selects which syntax an error message shows as the fix.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "text/stream_parser.h"

namespace kazeia::text {

struct ParsedToolCall {
  bool ok = false;
  std::string name;           // empty when it could not be read
  nlohmann::ordered_json arguments;  // object when ok (and for unknown functions), keys as written
  std::string message;        // when !ok: what is wrong and how to fix it
};

using KnownTools = std::optional<std::map<std::string, nlohmann::json>>;

// `body` is the text strictly between <tool_call> and </tool_call>.
ParsedToolCall parse_tool_call_body(std::string_view body, ToolCallFormat format, const KnownTools& known_tools);

// One XML-form value; `property_schema` is null / absent when untyped.
nlohmann::ordered_json type_parameter_value(std::string_view raw_value, const nlohmann::json* property_schema);

// The example of the right syntax that error messages end with.
std::string tool_call_syntax_hint(ToolCallFormat format);

// The whitespace the parsers skip between tags and around bodies.
inline bool is_markup_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace kazeia::text
