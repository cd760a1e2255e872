// Argument validation: every supported rule, accepted and rejected, and the
// exact wording the model sees.
#include <gtest/gtest.h>

#include "agent/json_schema.h"

namespace kazeia::agent {
namespace {

json schema_of(const char* text) { return json::parse(text); }

// The message of a rejection, or "" when the value is accepted.
std::string check(const json& schema, const json& value) {
  EXPECT_TRUE(check_schema(schema).ok()) << check_schema(schema).message();
  Status status = validate_arguments(schema, value);
  if (!status.ok()) {
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  }
  return status.ok() ? "" : status.message();
}

std::string check(const char* schema, const char* value) { return check(schema_of(schema), json::parse(value)); }

TEST(JsonSchema, TypeEach) {
  struct Case {
    const char* type;
    const char* good;
    const char* bad;
    const char* message;
  };
  const Case cases[] = {
      {"string", R"("x")", "5", "arguments: expected string, got integer 5"},
      {"integer", "5", "5.5", "arguments: expected integer, got number 5.5"},
      {"number", "5.5", R"("5")", "arguments: expected number, got string \"5\""},
      {"boolean", "true", "1", "arguments: expected boolean, got integer 1"},
      {"object", "{}", "[]", "arguments: expected object, got array"},
      {"array", "[1]", "{}", "arguments: expected array, got object"},
      {"null", "null", "0", "arguments: expected null, got integer 0"},
  };
  for (const Case& c : cases) {
    json schema{{"type", c.type}};
    EXPECT_EQ(check(schema, json::parse(c.good)), "") << c.type;
    EXPECT_EQ(check(schema, json::parse(c.bad)), c.message) << c.type;
  }
}

TEST(JsonSchema, IntegerAcceptsIntegralFloatAndNumberAcceptsInteger) {
  EXPECT_EQ(check(R"({"type": "integer"})", "3.0"), "");
  EXPECT_EQ(check(R"({"type": "number"})", "3"), "");
  EXPECT_EQ(check(R"({"type": "integer"})", "-9223372036854775808"), "");
  EXPECT_EQ(check(R"({"type": "integer"})", "18446744073709551615"), "");
}

TEST(JsonSchema, TypeArray) {
  const char* schema = R"({"type": ["string", "null"]})";
  EXPECT_EQ(check(schema, R"("a")"), "");
  EXPECT_EQ(check(schema, "null"), "");
  EXPECT_EQ(check(schema, "1"), "arguments: expected string or null, got integer 1");
  EXPECT_EQ(check(R"({"type": ["string", "integer", "null"]})", "true"),
            "arguments: expected string, integer or null, got boolean true");
}

TEST(JsonSchema, RequiredAndNestedRequired) {
  const char* schema = R"({"type": "object", "properties": {
      "expression": {"type": "string"},
      "options": {"type": "object", "properties": {"unit": {"type": "string"}}, "required": ["unit"]}},
      "required": ["expression"]})";
  EXPECT_EQ(check(schema, R"({"expression": "1+1"})"), "");
  EXPECT_EQ(check(schema, "{}"), "missing required argument 'expression'");
  EXPECT_EQ(check(schema, R"({"expression": "1", "options": {}})"), "missing required argument 'options.unit'");
  EXPECT_EQ(check(schema, R"({"expression": "1", "options": {"unit": 3}})"),
            "argument 'options.unit': expected string, got integer 3");
}

TEST(JsonSchema, AdditionalProperties) {
  const char* closed = R"({"type": "object", "properties": {"seconds": {}, "label": {}},
                           "additionalProperties": false})";
  EXPECT_EQ(check(closed, R"({"seconds": 1})"), "");
  EXPECT_EQ(check(closed, R"({"seconds": 1, "unit": "s"})"),
            "unknown argument 'unit'; expected one of: seconds, label");
  EXPECT_EQ(check(R"({"type": "object", "additionalProperties": false})", R"({"x": 1})"),
            "unknown argument 'x'; this tool takes no arguments");
  // Open by default.
  EXPECT_EQ(check(R"({"type": "object", "properties": {"a": {}}})", R"({"b": 1})"), "");
  // A schema for the extra members.
  const char* typed = R"({"type": "object", "additionalProperties": {"type": "integer"}})";
  EXPECT_EQ(check(typed, R"({"a": 1, "b": 2})"), "");
  EXPECT_EQ(check(typed, R"({"a": 1, "b": "two"})"), "argument 'b': expected integer, got string \"two\"");
}

TEST(JsonSchema, EnumAndConst) {
  const char* schema = R"({"enum": ["seconds", "minutes"]})";
  EXPECT_EQ(check(schema, R"("minutes")"), "");
  EXPECT_EQ(check(schema, R"("hours")"), "arguments: expected one of \"seconds\", \"minutes\", got \"hours\"");
  EXPECT_EQ(check(R"({"enum": [1, 2.5, null]})", "2.5"), "");
  EXPECT_EQ(check(R"({"const": "v1"})", R"("v1")"), "");
  EXPECT_EQ(check(R"({"const": "v1"})", R"("v2")"), "arguments: expected \"v1\", got \"v2\"");
}

TEST(JsonSchema, NumericBounds) {
  const char* schema = R"({"type": "object", "properties": {"minutes": {"type": "integer", "minimum": 1}}})";
  EXPECT_EQ(check(schema, R"({"minutes": 1})"), "");
  EXPECT_EQ(check(schema, R"({"minutes": -5})"), "argument 'minutes': expected integer >= 1, got -5");
  EXPECT_EQ(check(R"({"type": "number", "maximum": 10})", "10"), "");
  EXPECT_EQ(check(R"({"type": "number", "maximum": 10})", "10.5"), "arguments: expected number <= 10, got 10.5");
  EXPECT_EQ(check(R"({"type": "number", "exclusiveMinimum": 0})", "0.001"), "");
  EXPECT_EQ(check(R"({"type": "number", "exclusiveMinimum": 0})", "0"), "arguments: expected number > 0, got 0");
  EXPECT_EQ(check(R"({"type": "number", "exclusiveMaximum": 1.5})", "1.4"), "");
  EXPECT_EQ(check(R"({"type": "number", "exclusiveMaximum": 1.5})", "1.5"),
            "arguments: expected number < 1.5, got 1.5");
  // All bounds are named at once.
  EXPECT_EQ(check(R"({"type": "integer", "minimum": 1, "maximum": 1440})", "2000"),
            "arguments: expected integer >= 1 and <= 1440, got 2000");
  // Exact comparison of large integers (a double would call these equal).
  EXPECT_EQ(check(R"({"type": "integer", "maximum": 9007199254740992})", "9007199254740993"),
            "arguments: expected integer <= 9007199254740992, got 9007199254740993");
  EXPECT_EQ(check(R"({"type": "integer", "minimum": -1})", "18446744073709551615"), "");
}

TEST(JsonSchema, StringLengthCountsCodePoints) {
  const char* schema = R"({"type": "string", "minLength": 2, "maxLength": 3})";
  EXPECT_EQ(check(schema, R"("ab")"), "");
  EXPECT_EQ(check(schema, R"("日本語")"), "");  // 9 bytes, 3 characters
  EXPECT_EQ(check(schema, R"("a")"), "arguments: expected string of 2 to 3 characters, got a string of 1 character");
  EXPECT_EQ(check(schema, R"("abcd")"),
            "arguments: expected string of 2 to 3 characters, got a string of 4 characters");
  EXPECT_EQ(check(R"({"type": "string", "minLength": 1})", R"("")"),
            "arguments: expected string of at least 1 character, got a string of 0 characters");
  EXPECT_EQ(check(R"({"type": "string", "maxLength": 2})", R"("abc")"),
            "arguments: expected string of at most 2 characters, got a string of 3 characters");
}

TEST(JsonSchema, Pattern) {
  const char* schema = R"({"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$"})";
  EXPECT_EQ(check(schema, R"("kebab-case")"), "");
  EXPECT_EQ(check(schema, R"("Not Kebab")"),
            "arguments: expected string matching pattern '^[a-z]+(-[a-z]+)*$', got \"Not Kebab\"");
  // Unanchored, as JSON Schema specifies.
  EXPECT_EQ(check(R"({"type": "string", "pattern": "[0-9]"})", R"("abc1")"), "");
  EXPECT_FALSE(check_schema(schema_of(R"({"pattern": "(unclosed"})")).ok());
}

TEST(JsonSchema, ArrayItemsAndCounts) {
  const char* schema = R"({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2})";
  EXPECT_EQ(check(schema, R"(["a"])"), "");
  EXPECT_EQ(check(schema, R"(["a", "b"])"), "");
  EXPECT_EQ(check(schema, "[]"), "arguments: expected array of at least 1 item, got 0 items");
  EXPECT_EQ(check(schema, R"(["a", "b", "c"])"), "arguments: expected array of at most 2 items, got 3 items");
  const char* in_object = R"({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}})";
  EXPECT_EQ(check(in_object, R"({"tags": ["x", 5]})"), "argument 'tags[1]': expected string, got integer 5");
  const char* nested = R"({"type": "object", "properties": {"rows": {"type": "array",
      "items": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}}}})";
  EXPECT_EQ(check(nested, R"({"rows": [{"n": 1}, {"n": -1}]})"), "argument 'rows[1].n': expected integer >= 0, got -1");
  EXPECT_EQ(check(nested, R"({"rows": [{}]})"), "missing required argument 'rows[0].n'");
}

TEST(JsonSchema, LongValuesAreAbbreviated) {
  std::string long_text(500, 'x');
  std::string message = check(json{{"type", "integer"}}, json(long_text));
  EXPECT_LT(message.size(), 120u);
  EXPECT_NE(message.find("..."), std::string::npos);
}

TEST(JsonSchema, CheckSchemaRejectsUnsupportedAndMalformed) {
  EXPECT_TRUE(check_schema(schema_of(R"({"type": "object", "description": "x", "title": "t",
      "properties": {"a": {"type": "string", "default": "q", "format": "date"}}})")).ok());
  const char* bad[] = {
      R"({"type": "strng"})",
      R"({"type": []})",
      R"({"anyOf": [{"type": "string"}]})",
      R"({"properties": {"a": {"oneOf": []}}})",
      R"({"$ref": "#/defs/x"})",
      R"({"required": "a"})",
      R"({"minimum": "1"})",
      R"({"exclusiveMinimum": true})",
      R"({"minLength": -1})",
      R"({"items": [{"type": "string"}]})",
      R"({"enum": []})",
      R"({"properties": []})",
      R"({"uniqueItems": true})",
      R"("string")",
  };
  for (const char* text : bad) EXPECT_FALSE(check_schema(schema_of(text)).ok()) << text;
  Status nested = check_schema(schema_of(R"({"properties": {"a": {"properties": {"b": {"type": 5}}}}})"));
  EXPECT_NE(nested.message().find("/properties/a/properties/b/type"), std::string::npos) << nested.message();
}

TEST(JsonSchema, BooleanSchemas) {
  EXPECT_EQ(check(json(true), json(5)), "");
  EXPECT_EQ(check(json(false), json(5)), "arguments: no value is allowed here");
}

}  // namespace
}  // namespace kazeia::agent
