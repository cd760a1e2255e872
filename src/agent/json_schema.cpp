#include "agent/json_schema.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/text_util.h"

namespace kazeia::agent {
namespace {

constexpr std::array<std::string_view, 7> kTypeNames = {"string", "integer", "number", "boolean",
                                                        "object",  "array",   "null"};

// Keywords whose meaning we do not implement. Accepting them silently would
// make a schema look stricter than it is.
constexpr std::array<std::string_view, 25> kUnsupportedKeywords = {
    "anyOf",         "oneOf",           "allOf",         "not",
    "$ref",          "if",              "then",          "else",
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas",
    "dependencies",  "prefixItems",     "contains",      "minContains",
    "maxContains",   "uniqueItems",     "unevaluatedProperties", "unevaluatedItems",
    "minProperties", "maxProperties",   "multipleOf",    "additionalItems",
    "$dynamicRef"};

bool is_known_type(std::string_view name) {
  return std::find(kTypeNames.begin(), kTypeNames.end(), name) != kTypeNames.end();
}

bool is_nonnegative_integer(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

// ---------------------------------------------------------------------------
// Regular expressions (pattern). Compiled per use: argument validation runs a
// handful of times per turn, and it keeps the validator free of caches.

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
using RegexPtr = std::unique_ptr<pcre2_code, CodeDeleter>;

Result<RegexPtr> compile_pattern(const std::string& pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    std::array<PCRE2_UCHAR, 256> buffer{};
    pcre2_get_error_message(error_code, buffer.data(), buffer.size());
    return InvalidArgument("invalid pattern '" + pattern + "' at offset " +
                           std::to_string(error_offset) + ": " +
                           reinterpret_cast<const char*>(buffer.data()));
  }
  return RegexPtr(code);
}

// Unanchored search, as JSON Schema specifies. A match error (invalid UTF-8,
// match limit hit on a pathological pattern) counts as "does not match".
bool pattern_matches(const pcre2_code* code, const std::string& subject) {
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(code, nullptr);
  if (match == nullptr) return false;
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, 0,
                       match, nullptr);
  pcre2_match_data_free(match);
  return rc >= 0;
}

// ---------------------------------------------------------------------------
// check_schema

Status check_node(const json& schema, const std::string& pointer);

Status schema_error(const std::string& pointer, const std::string& what) {
  return InvalidArgument("schema " + (pointer.empty() ? std::string("root") : pointer) + ": " +
                         what);
}

Status check_node(const json& schema, const std::string& pointer) {
  if (schema.is_boolean()) return OkStatus();  // true: anything, false: nothing
  if (!schema.is_object()) return schema_error(pointer, "a schema must be an object or a boolean");
  for (const auto& [keyword, value] : schema.items()) {
    const std::string at = pointer + "/" + keyword;
    if (std::find(kUnsupportedKeywords.begin(), kUnsupportedKeywords.end(), keyword) !=
        kUnsupportedKeywords.end()) {
      return schema_error(at, "keyword '" + keyword + "' is not supported by this validator");
    }
    if (keyword == "type") {
      if (value.is_string()) {
        if (!is_known_type(value.get<std::string>())) {
          return schema_error(at, "unknown type '" + value.get<std::string>() + "'");
        }
      } else if (value.is_array() && !value.empty()) {
        for (const json& t : value) {
          if (!t.is_string() || !is_known_type(t.get<std::string>())) {
            return schema_error(at, "type list entries must be type names, got " + t.dump());
          }
        }
      } else {
        return schema_error(at, "must be a type name or a non-empty array of type names");
      }
    } else if (keyword == "properties") {
      if (!value.is_object()) return schema_error(at, "must be an object");
      for (const auto& [name, sub] : value.items()) {
        KZ_RETURN_IF_ERROR(check_node(sub, at + "/" + name));
      }
    } else if (keyword == "required") {
      if (!value.is_array()) return schema_error(at, "must be an array of property names");
      for (const json& name : value) {
        if (!name.is_string()) return schema_error(at, "entries must be strings");
      }
    } else if (keyword == "additionalProperties" || keyword == "items") {
      if (keyword == "items" && value.is_array()) {
        return schema_error(at, "tuple form of 'items' is not supported; use one schema");
      }
      KZ_RETURN_IF_ERROR(check_node(value, at));
    } else if (keyword == "enum") {
      if (!value.is_array() || value.empty()) return schema_error(at, "must be a non-empty array");
    } else if (keyword == "minimum" || keyword == "maximum" || keyword == "exclusiveMinimum" ||
               keyword == "exclusiveMaximum") {
      if (value.is_boolean()) {
        return schema_error(at, "boolean form (draft 4) is not supported; give the bound as a number");
      }
      if (!value.is_number()) return schema_error(at, "must be a number");
    } else if (keyword == "minLength" || keyword == "maxLength" || keyword == "minItems" ||
               keyword == "maxItems") {
      if (!is_nonnegative_integer(value)) return schema_error(at, "must be a non-negative integer");
    } else if (keyword == "pattern") {
      if (!value.is_string()) return schema_error(at, "must be a string");
      auto compiled = compile_pattern(value.get<std::string>());
      if (!compiled.ok()) return schema_error(at, compiled.status().message());
    }
    // Everything else (description, title, default, examples, format, $schema,
    // ...) is an annotation: accepted, not enforced.
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------
// validate_arguments

std::string json_type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

// A short rendering of a value for messages: long strings and containers are
// cut so that a runaway argument does not flood the model's context.
std::string brief(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr size_t kMax = 60;
  if (text.size() <= kMax) return text;
  return std::string(utf8_prefix(text, kMax)) + "...";
}

bool is_integral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool matches_type(const json& v, std::string_view type) {
  if (type == "string") return v.is_string();
  if (type == "integer") return is_integral(v);
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "null") return v.is_null();
  return false;
}

// Three-way comparison of two JSON numbers; exact when both are integers.
int compare_numbers(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    auto wide = [](const json& v) -> __int128 {
      return v.is_number_unsigned() ? static_cast<__int128>(v.get<uint64_t>())
                                    : static_cast<__int128>(v.get<int64_t>());
    };
    __int128 x = wide(a), y = wide(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  double x = a.get<double>(), y = b.get<double>();
  return x < y ? -1 : (x > y ? 1 : 0);
}

std::string subject(const std::string& path) {
  return path.empty() ? std::string("arguments") : "argument '" + path + "'";
}

std::string member_path(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

std::string type_phrase(const json& schema) {
  auto it = schema.find("type");
  if (it == schema.end()) return "value";
  if (it->is_string()) return it->get<std::string>();
  std::string out;
  for (size_t i = 0; i < it->size(); ++i) {
    if (i > 0) out += i + 1 == it->size() ? " or " : ", ";
    out += (*it)[i].get<std::string>();
  }
  return out;
}

Status fail(const std::string& path, const std::string& message) {
  return InvalidArgument(subject(path) + ": " + message);
}

Status validate_node(const json& schema, const json& value, const std::string& path);

Status validate_number(const json& schema, const json& value, const std::string& path) {
  // Every bound the schema has goes into the message, so one correction is
  // enough: "expected integer >= 1 and <= 1440, got -5".
  struct Bound {
    const char* keyword;
    const char* op;
    bool ok_if_cmp(int c) const {
      std::string_view k = keyword;
      if (k == "minimum") return c >= 0;
      if (k == "maximum") return c <= 0;
      if (k == "exclusiveMinimum") return c > 0;
      return c < 0;
    }
  };
  constexpr std::array<Bound, 4> kBounds = {Bound{"minimum", ">="}, Bound{"exclusiveMinimum", ">"},
                                            Bound{"maximum", "<="}, Bound{"exclusiveMaximum", "<"}};
  bool violated = false;
  std::string expectation;
  for (const Bound& bound : kBounds) {
    auto it = schema.find(bound.keyword);
    if (it == schema.end()) continue;
    if (!expectation.empty()) expectation += " and ";
    expectation += std::string(bound.op) + " " + it->dump();
    if (!bound.ok_if_cmp(compare_numbers(value, *it))) violated = true;
  }
  if (!violated) return OkStatus();
  std::string kind = is_integral(value) && type_phrase(schema) == "integer" ? "integer" : "number";
  return fail(path, "expected " + kind + " " + expectation + ", got " + brief(value));
}

Status validate_string(const json& schema, const std::string& text, const std::string& path) {
  auto min_it = schema.find("minLength");
  auto max_it = schema.find("maxLength");
  if (min_it != schema.end() || max_it != schema.end()) {
    const uint64_t length = utf8_length(text);
    const bool too_short = min_it != schema.end() && length < min_it->get<uint64_t>();
    const bool too_long = max_it != schema.end() && length > max_it->get<uint64_t>();
    if (too_short || too_long) {
      auto plural = [](uint64_t n) {
        return std::to_string(n) + (n == 1 ? " character" : " characters");
      };
      std::string expected;
      if (min_it != schema.end() && max_it != schema.end()) {
        expected = std::to_string(min_it->get<uint64_t>()) + " to " + plural(max_it->get<uint64_t>());
      } else if (min_it != schema.end()) {
        expected = "at least " + plural(min_it->get<uint64_t>());
      } else {
        expected = "at most " + plural(max_it->get<uint64_t>());
      }
      return fail(path, "expected string of " + expected + ", got a string of " + plural(length));
    }
  }
  auto pattern_it = schema.find("pattern");
  if (pattern_it != schema.end()) {
    const std::string pattern = pattern_it->get<std::string>();
    auto compiled = compile_pattern(pattern);
    if (!compiled.ok()) return compiled.status();
    if (!pattern_matches(compiled->get(), text)) {
      return fail(path, "expected string matching pattern '" + pattern + "', got " + brief(json(text)));
    }
  }
  return OkStatus();
}

Status validate_array(const json& schema, const json& value, const std::string& path) {
  auto count_phrase = [](uint64_t n) { return std::to_string(n) + (n == 1 ? " item" : " items"); };
  auto min_it = schema.find("minItems");
  if (min_it != schema.end() && value.size() < min_it->get<uint64_t>()) {
    return fail(path, "expected array of at least " + count_phrase(min_it->get<uint64_t>()) +
                          ", got " + count_phrase(value.size()));
  }
  auto max_it = schema.find("maxItems");
  if (max_it != schema.end() && value.size() > max_it->get<uint64_t>()) {
    return fail(path, "expected array of at most " + count_phrase(max_it->get<uint64_t>()) +
                          ", got " + count_phrase(value.size()));
  }
  auto items_it = schema.find("items");
  if (items_it != schema.end()) {
    for (size_t i = 0; i < value.size(); ++i) {
      KZ_RETURN_IF_ERROR(validate_node(*items_it, value[i], path + "[" + std::to_string(i) + "]"));
    }
  }
  return OkStatus();
}

Status validate_object(const json& schema, const json& value, const std::string& path) {
  auto required_it = schema.find("required");
  if (required_it != schema.end()) {
    for (const json& name : *required_it) {
      const std::string key = name.get<std::string>();
      if (!value.contains(key)) {
        return InvalidArgument("missing required argument '" + member_path(path, key) + "'");
      }
    }
  }
  static const json kNoProperties = json::object();
  auto props_it = schema.find("properties");
  const json& properties = props_it != schema.end() ? *props_it : kNoProperties;
  // Declared members first, in schema order: deterministic messages.
  for (const auto& [name, sub] : properties.items()) {
    auto member = value.find(name);
    if (member != value.end()) KZ_RETURN_IF_ERROR(validate_node(sub, *member, member_path(path, name)));
  }
  auto extra_it = schema.find("additionalProperties");
  if (extra_it == schema.end() || (extra_it->is_boolean() && extra_it->get<bool>())) {
    return OkStatus();
  }
  for (const auto& [name, member] : value.items()) {
    if (properties.contains(name)) continue;
    if (extra_it->is_boolean()) {  // additionalProperties: false
      std::string message = "unknown argument '" + member_path(path, name) + "'";
      if (properties.empty()) {
        message += path.empty() ? "; this tool takes no arguments" : "; '" + path + "' takes no members";
      } else {
        message += "; expected one of: ";
        bool first = true;
        for (const auto& [known, unused] : properties.items()) {
          if (!first) message += ", ";
          message += known;
          first = false;
        }
      }
      return InvalidArgument(message);
    }
    KZ_RETURN_IF_ERROR(validate_node(*extra_it, member, member_path(path, name)));
  }
  return OkStatus();
}

Status validate_node(const json& schema, const json& value, const std::string& path) {
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return OkStatus();
    return fail(path, "no value is allowed here");
  }
  auto type_it = schema.find("type");
  if (type_it != schema.end()) {
    bool ok = false;
    if (type_it->is_string()) {
      ok = matches_type(value, type_it->get<std::string>());
    } else {
      for (const json& t : *type_it) ok = ok || matches_type(value, t.get<std::string>());
    }
    if (!ok) {
      return fail(path, "expected " + type_phrase(schema) + ", got " + json_type_name(value) +
                            (value.is_object() || value.is_array() ? "" : " " + brief(value)));
    }
  }
  auto enum_it = schema.find("enum");
  if (enum_it != schema.end()) {
    if (std::find(enum_it->begin(), enum_it->end(), value) == enum_it->end()) {
      std::string options;
      for (size_t i = 0; i < enum_it->size(); ++i) {
        if (i > 0) options += ", ";
        options += brief((*enum_it)[i]);
      }
      return fail(path, "expected one of " + options + ", got " + brief(value));
    }
  }
  auto const_it = schema.find("const");
  if (const_it != schema.end() && *const_it != value) {
    return fail(path, "expected " + brief(*const_it) + ", got " + brief(value));
  }
  if (value.is_number()) return validate_number(schema, value, path);
  if (value.is_string()) return validate_string(schema, value.get_ref<const std::string&>(), path);
  if (value.is_array()) return validate_array(schema, value, path);
  if (value.is_object()) return validate_object(schema, value, path);
  return OkStatus();
}

}  // namespace

Status check_schema(const json& schema) { return check_node(schema, ""); }

Status validate_arguments(const json& schema, const json& value) {
  return validate_node(schema, value, "");
}

}  // namespace kazeia::agent
