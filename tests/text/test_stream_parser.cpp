// Stream parser unit tests: what is held back and when it is released,
// UTF-8 at chunk edges, ids, value typing, JSON output, and a randomized
// chunking check over generated model-like outputs.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "text/stream_parser.h"
#include "text/stream_parser_calls.h"

namespace kazeia::text {
namespace {

using ordered_json = nlohmann::ordered_json;

StreamEvent text_event(StreamEventType type, std::string text) {
  StreamEvent e;
  e.type = type;
  e.text = std::move(text);
  return e;
}
StreamEvent answer(std::string text) { return text_event(StreamEventType::kAnswer, std::move(text)); }
StreamEvent think(std::string text) { return text_event(StreamEventType::kThink, std::move(text)); }

// The events one chunk produced, merged.
std::vector<StreamEvent> feed(StreamParser& parser, std::string_view chunk) {
  std::vector<StreamEvent> out;
  parser.feed(chunk, out);
  return merge_text_events(out);
}

std::vector<StreamEvent> finish(StreamParser& parser) {
  std::vector<StreamEvent> out;
  parser.finish(out);
  return out;
}

std::vector<StreamEvent> parse_whole(std::string_view text, ToolCallFormat format = ToolCallFormat::kHermes,
                                     StreamParserOptions options = {}) {
  StreamParser parser(format, std::move(options));
  std::vector<StreamEvent> out;
  parser.feed(text, out);
  parser.finish(out);
  return merge_text_events(out);
}

TEST(StreamParser, PlainTextIsEmittedAtOnce) {
  StreamParser parser(ToolCallFormat::kHermes);
  EXPECT_EQ(feed(parser, "Hello wor"), std::vector<StreamEvent>{answer("Hello wor")});
  EXPECT_EQ(feed(parser, "ld"), std::vector<StreamEvent>{answer("ld")});
  EXPECT_TRUE(finish(parser).empty());
}

TEST(StreamParser, HoldsOnlyWhatCouldStillBeATag) {
  StreamParser parser(ToolCallFormat::kHermes);
  // " <tool_" could start a call: the space (trailing whitespace) and the
  // tag prefix wait; the text before goes out.
  EXPECT_EQ(feed(parser, "Sure <tool_"), std::vector<StreamEvent>{answer("Sure")});
  // "<tool_x" is no tag: everything is released.
  EXPECT_EQ(feed(parser, "x> ok"), std::vector<StreamEvent>{answer(" <tool_x> ok")});
  // "<" alone waits; "< b" is decided.
  EXPECT_EQ(feed(parser, " a <"), std::vector<StreamEvent>{answer(" a")});
  EXPECT_EQ(feed(parser, " b"), std::vector<StreamEvent>{answer(" < b")});
}

TEST(StreamParser, ThinkCloseSplitAcrossChunks) {
  StreamParser parser(ToolCallFormat::kQwen35, {.starts_in_think = true, .known_tools = {}});
  EXPECT_EQ(feed(parser, "reasoning</thi"), std::vector<StreamEvent>{think("reasoning")});
  EXPECT_TRUE(parser.in_think());
  EXPECT_TRUE(feed(parser, "nk>\n\n").empty());
  EXPECT_FALSE(parser.in_think());
  EXPECT_EQ(feed(parser, "Answer"), std::vector<StreamEvent>{answer("Answer")});
}

TEST(StreamParser, ToolCallOpenSplitAtEveryByte) {
  const std::string text = "Hi<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    StreamParser parser(ToolCallFormat::kHermes);
    std::vector<StreamEvent> out;
    parser.feed(std::string_view(text).substr(0, cut), out);
    parser.feed(std::string_view(text).substr(cut), out);
    parser.finish(out);
    out = merge_text_events(out);
    ASSERT_EQ(out.size(), 2u) << cut;
    EXPECT_EQ(out[0], answer("Hi"));
    EXPECT_EQ(out[1].type, StreamEventType::kToolCall);
    EXPECT_EQ(out[1].name, "f");
  }
}

TEST(StreamParser, ToolCallIsReportedAsSoonAsItCloses) {
  StreamParser parser(ToolCallFormat::kHermes);
  EXPECT_TRUE(feed(parser, "<tool_call>{\"name\": \"f\"}</tool_call").empty());
  auto out = feed(parser, ">");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, StreamEventType::kToolCall);
  EXPECT_EQ(out[0].id, "call_0");
  EXPECT_EQ(out[0].arguments, ordered_json::object());
}

TEST(StreamParser, TrailingWhitespaceWaitsForWhatFollows) {
  StreamParser parser(ToolCallFormat::kHermes);
  EXPECT_EQ(feed(parser, "abc \n"), std::vector<StreamEvent>{answer("abc")});
  EXPECT_EQ(feed(parser, "def"), std::vector<StreamEvent>{answer(" \ndef")});
  EXPECT_TRUE(feed(parser, "\n\n").empty());
  EXPECT_TRUE(finish(parser).empty());  // trailing whitespace of the stream is dropped
}

TEST(StreamParser, IncompleteUtf8IsHeldUntilComplete) {
  StreamParser parser(ToolCallFormat::kHermes);
  EXPECT_EQ(feed(parser, "caf\xC3"), std::vector<StreamEvent>{answer("caf")});
  EXPECT_EQ(feed(parser, "\xA9 \xF0\x9F"), std::vector<StreamEvent>{answer("\xC3\xA9")});
  EXPECT_EQ(feed(parser, "\x98\x80!"), std::vector<StreamEvent>{answer(" \xF0\x9F\x98\x80!")});
}

TEST(StreamParser, InvalidUtf8PassesThroughUnchanged) {
  const std::string text = "\xFF\xFE ok \xC3<think>\x80x</think>\xE4\xB8";
  EXPECT_EQ(parse_whole(text),
            (std::vector<StreamEvent>{answer("\xFF\xFE ok \xC3"), think("\x80x"), answer("\xE4\xB8")}));
}

TEST(StreamParser, CallIdsCountErrorsAndContinueAfterFinish) {
  StreamParser parser(ToolCallFormat::kHermes);
  std::vector<StreamEvent> out;
  parser.feed("<tool_call>{\"name\": \"a\"}</tool_call><tool_call>oops</tool_call><tool_call>{\"name\": \"b\"}", out);
  parser.finish(out);
  parser.feed("<tool_call>{\"name\": \"c\"}</tool_call>", out);
  parser.finish(out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].id, "call_0");
  EXPECT_EQ(out[1].id, "call_1");
  EXPECT_EQ(out[1].type, StreamEventType::kError);
  EXPECT_EQ(out[2].id, "call_2");
  EXPECT_EQ(out[2].type, StreamEventType::kError);  // unclosed at finish
  EXPECT_EQ(out[2].name, "b");
  EXPECT_EQ(out[3].id, "call_3");
  EXPECT_EQ(out[3].name, "c");
}

TEST(StreamParser, FinishStartsANewStream) {
  StreamParser parser(ToolCallFormat::kQwen35, {.starts_in_think = true, .known_tools = {}});
  std::vector<StreamEvent> out;
  parser.feed("a</think>b<tool_ca", out);
  parser.finish(out);
  EXPECT_TRUE(parser.in_think());
  parser.feed("c</think>d", out);
  parser.finish(out);
  EXPECT_EQ(merge_text_events(out),
            (std::vector<StreamEvent>{think("a"), answer("b<tool_ca"), think("c"), answer("d")}));
}

TEST(StreamParser, UnclosedCallErrorTeachesTheFormat) {
  auto events = parse_whole("<tool_call>\n<function=f>", ToolCallFormat::kQwen35);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, StreamEventType::kError);
  EXPECT_NE(events[0].message.find("<function=NAME>"), std::string::npos);
  EXPECT_EQ(events[0].raw, "<tool_call>\n<function=f>");
  events = parse_whole("<tool_call>{", ToolCallFormat::kHermes);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].message.find("\"arguments\": <args-json-object>"), std::string::npos);
}

TEST(StreamParser, UnknownFunctionKeepsNameAndArguments) {
  StreamParserOptions options;
  options.known_tools = std::map<std::string, nlohmann::json>{{"a", nullptr}, {"b", nullptr}};
  auto events = parse_whole("<tool_call>{\"name\": \"c\", \"arguments\": {\"x\": 1}}</tool_call>",
                            ToolCallFormat::kHermes, options);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, StreamEventType::kError);
  EXPECT_EQ(events[0].name, "c");
  EXPECT_EQ(events[0].arguments, ordered_json::parse(R"({"x": 1})"));
  EXPECT_EQ(events[0].message, "Unknown function \"c\": the call was not made. Call one of the available "
                               "functions: a, b.");
}

TEST(StreamParser, LongInputsByteByByteStayLinear) {
  // 400 KB inside one call and 400 KB of text with many '<', fed byte by byte.
  std::string body(400000, 'x');
  std::string text = "<tool_call>{\"name\": \"f\", \"arguments\": {\"s\": \"" + body + "\"}}</tool_call>";
  for (int i = 0; i < 100000; ++i) text += "a<b ";
  const auto start = std::chrono::steady_clock::now();
  StreamParser parser(ToolCallFormat::kHermes);
  std::vector<StreamEvent> out;
  for (char c : text) parser.feed(std::string_view(&c, 1), out);
  parser.finish(out);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out = merge_text_events(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].arguments["s"].get<std::string>().size(), body.size());
  EXPECT_EQ(out[1].text.size(), 100000u * 4 - 1);
  EXPECT_LT(seconds, 20.0);  // quadratic behaviour would take minutes
}

TEST(StreamParser, MergeJoinsOnlyNeighboursOfTheSameKind) {
  StreamEvent call;
  call.type = StreamEventType::kToolCall;
  call.id = "call_0";
  std::vector<StreamEvent> events = {think("a"), think("b"), answer("c"), answer("d"), call, answer("e"),
                                     think("f"), answer("g"), answer("h")};
  EXPECT_EQ(merge_text_events(events),
            (std::vector<StreamEvent>{think("ab"), answer("cd"), call, answer("e"), think("f"), answer("gh")}));
}

TEST(StreamParser, EventJsonShape) {
  EXPECT_EQ(stream_event_to_json(think("x")).dump(), R"({"type":"think","text":"x"})");
  auto events = parse_whole("<tool_call>{\"name\": \"f\", \"arguments\": {\"b\": 1, \"a\": [2]}}</tool_call>");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(stream_event_to_json(events[0]).dump(),
            R"({"type":"tool_call","id":"call_0","name":"f","arguments":{"b":1,"a":[2]},"in_think":false})");
  events = parse_whole("<think><tool_call>[]</tool_call>");
  ASSERT_EQ(events.size(), 1u);
  const ordered_json j = stream_event_to_json(events[0]);
  EXPECT_EQ(j["type"], "error");
  EXPECT_EQ(j["id"], "call_0");
  EXPECT_EQ(j["raw"], "<tool_call>[]</tool_call>");
  EXPECT_EQ(j["in_think"], true);
  EXPECT_FALSE(j.contains("name"));
  EXPECT_TRUE(j["message"].is_string());
}

// ---- value typing --------------------------------------------------------

ordered_json typed(std::string_view raw, const char* schema_json) {
  if (!schema_json) return type_parameter_value(raw, nullptr);
  const nlohmann::json schema = nlohmann::json::parse(schema_json);
  return type_parameter_value(raw, &schema);
}

TEST(TypeParameterValue, StringSchemaKeepsTextMinusOneFramingNewline) {
  EXPECT_EQ(typed("\nParis\n", R"({"type": "string"})"), "Paris");
  EXPECT_EQ(typed("\n\nParis\n\n", R"({"type": "string"})"), "\nParis\n");
  EXPECT_EQ(typed(" 42 ", R"({"type": "string"})"), " 42 ");
  EXPECT_EQ(typed("\ntrue\n", R"({"type": "string"})"), "true");
  EXPECT_EQ(typed("\n\"q\"\n", R"({"type": "string"})"), "\"q\"");
  EXPECT_EQ(typed("", R"({"type": "string"})"), "");
}

TEST(TypeParameterValue, TypedFromSchema) {
  EXPECT_EQ(typed("\n42\n", R"({"type": "integer"})"), 42);
  EXPECT_TRUE(typed("\n42\n", R"({"type": "integer"})").is_number_integer());
  EXPECT_EQ(typed("\n-7.0\n", R"({"type": "integer"})"), -7);
  EXPECT_EQ(typed("\n7.5\n", R"({"type": "integer"})"), "7.5");
  EXPECT_EQ(typed("\n1e400\n", R"({"type": "integer"})"), "1e400");
  EXPECT_EQ(typed("\n2.5\n", R"({"type": "number"})"), 2.5);
  EXPECT_EQ(typed("\nTrue\n", R"({"type": "boolean"})"), true);
  EXPECT_EQ(typed("\nfalse\n", R"({"type": "boolean"})"), false);
  EXPECT_EQ(typed("\n1\n", R"({"type": "boolean"})"), "1");
  EXPECT_EQ(typed("\nNone\n", R"({"type": "null"})"), nullptr);
  EXPECT_EQ(typed("\n{\"a\": [1]}\n", R"({"type": "object"})"), ordered_json::parse(R"({"a": [1]})"));
  EXPECT_EQ(typed("\n[1, 2]\n", R"({"type": "object"})"), "[1, 2]");
  EXPECT_EQ(typed("\n[1, 2]\n", R"({"type": "array"})"), ordered_json::parse("[1, 2]"));
  EXPECT_EQ(typed("\n{broken\n", R"({"type": "object"})"), "{broken");
  EXPECT_EQ(typed("\nNone\n", R"({"type": ["string", "null"]})"), nullptr);
  EXPECT_EQ(typed("\nabc\n", R"({"type": ["string", "null"]})"), "abc");
  EXPECT_EQ(typed("\n5\n", R"({"anyOf": [{"type": "integer"}, {"type": "string"}]})"), 5);
  EXPECT_EQ(typed("\n5\n", R"({"oneOf": [{"type": "string"}]})"), "5");
  EXPECT_EQ(typed("\n2\n", R"({"enum": [1, 2, 3]})"), 2);
  EXPECT_EQ(typed("\n2\n", R"({"enum": ["1", "2"]})"), "2");
  EXPECT_EQ(typed("\n2\n", R"({"const": 2})"), 2);
}

TEST(TypeParameterValue, UntypedParsesOnlyJsonLiterals) {
  EXPECT_EQ(typed("\n42\n", nullptr), 42);
  EXPECT_EQ(typed("\n-0.5\n", nullptr), -0.5);
  EXPECT_EQ(typed("\ntrue\n", nullptr), true);
  EXPECT_EQ(typed("\nnull\n", nullptr), nullptr);
  EXPECT_EQ(typed("\n[1, \"a\"]\n", nullptr), ordered_json::parse(R"([1, "a"])"));
  EXPECT_EQ(typed("\nTrue\n", nullptr), "True");
  EXPECT_EQ(typed("\nNone\n", nullptr), "None");
  EXPECT_EQ(typed("\n\"Paris\"\n", nullptr), "\"Paris\"");
  EXPECT_EQ(typed("\nParis\n", nullptr), "Paris");
  EXPECT_EQ(typed("\n007\n", nullptr), "007");
  // A schema that names no type behaves as untyped.
  EXPECT_EQ(typed("\n42\n", R"({"description": "anything"})"), 42);
}

TEST(TypeParameterValue, KeyOrderOfObjectsIsKept) {
  EXPECT_EQ(typed("{\"z\": 1, \"a\": 2}", nullptr).dump(), R"({"z":1,"a":2})");
}

// ---- randomized chunking -------------------------------------------------

// Model-like output built from fragments that stress the tag matcher.
std::string random_output(std::mt19937& rng) {
  static const std::vector<std::string> fragments = {
      "<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_calls>", "</tool_calls>", "<", "</", "<tool_",
      "</tool_call", "<thi", "\n", "\n\n", " ", "\t", "Hello", " world", "é", "\xF0\x9F\x98\x80", "\xE4\xB8",
      "{\"name\": \"f\", \"arguments\": {\"a\": 1}}", "{\"name\": ", "\"g\"", "}", "<function=get_weather>",
      "<parameter=city>", "\nParis\n", "</parameter>", "</function>", "a < b", "<b>", "x"};
  std::uniform_int_distribution<size_t> count(0, 40), pick(0, fragments.size() - 1);
  std::string out;
  for (size_t n = count(rng); n > 0; --n) out += fragments[pick(rng)];
  return out;
}

TEST(StreamParser, RandomOutputsAndChunkingsAgree) {
  std::mt19937 rng(2024);
  for (int round = 0; round < 3000; ++round) {
    const std::string text = random_output(rng);
    const ToolCallFormat format = round % 2 ? ToolCallFormat::kQwen35 : ToolCallFormat::kHermes;
    StreamParserOptions options;
    options.starts_in_think = round % 3 == 0;
    if (round % 5 == 0) options.known_tools = std::map<std::string, nlohmann::json>{{"f", nullptr}};
    const auto whole = parse_whole(text, format, options);
    StreamParser parser(format, options);
    std::vector<StreamEvent> out;
    std::uniform_int_distribution<size_t> step(1, 6);
    for (size_t pos = 0; pos < text.size();) {
      const size_t n = std::min(step(rng), text.size() - pos);
      parser.feed(std::string_view(text).substr(pos, n), out);
      pos += n;
    }
    parser.finish(out);
    for (const StreamEvent& e : out) {
      if (e.type == StreamEventType::kThink || e.type == StreamEventType::kAnswer) {
        ASSERT_FALSE(e.text.empty());
      }
    }
    ASSERT_EQ(merge_text_events(out), whole) << "round " << round << " text: " << text;
  }
}

}  // namespace
}  // namespace kazeia::text
