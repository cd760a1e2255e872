// Tools for templates that do not write them: the conversation the loop
// renders instead (expected texts written out by hand).
#include <gtest/gtest.h>

#include "agent/tool_prompt.h"

namespace kazeia::agent {
namespace {

using ojson = nlohmann::ordered_json;

const ojson kTools = ojson::parse(R"([
  {"type": "function", "function": {"name": "calculator", "description": "Evaluate.",
   "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}}
])");

const std::string kInstructions =
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    R"({"type":"function","function":{"name":"calculator","description":"Evaluate.","parameters":)"
    R"({"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}}})"
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n"
    R"({"name": <function-name>, "arguments": <args-json-object>})"
    "\n</tool_call>";

TEST(ToolPrompt, InstructionsListEveryTool) { EXPECT_EQ(hermes_tool_instructions(kTools), kInstructions); }

TEST(ToolPrompt, AddsASystemMessageWhenThereIsNone) {
  const ojson in = ojson::parse(R"([{"role": "user", "content": "What's 2+2?"}])");
  const ojson out = inline_tools_in_messages(in, kTools);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (ojson{{"role", "system"}, {"content", kInstructions}}));
  EXPECT_EQ(out[1], in[0]);
}

TEST(ToolPrompt, CallsAndResultsBecomeText) {
  const ojson in = ojson::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "2+2 and 3*3?"},
    {"role": "assistant", "content": "Computing.", "reasoning_content": "easy",
     "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "calculator", "arguments": {"expression": "2+2"}}},
                    {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": {"expression": "3*3"}}}]},
    {"role": "tool", "tool_call_id": "call_0", "name": "calculator", "content": "4"},
    {"role": "tool", "tool_call_id": "call_1", "name": "calculator", "content": "9"},
    {"role": "assistant", "content": "4 and 9."},
    {"role": "user", "content": "Thanks"}
  ])");
  const ojson out = inline_tools_in_messages(in, kTools);
  const ojson expected = {
      {{"role", "system"}, {"content", "Be brief.\n\n" + kInstructions}},
      in[1],
      {{"role", "assistant"},
       {"content",
        "Computing.\n<tool_call>\n{\"name\":\"calculator\",\"arguments\":{\"expression\":\"2+2\"}}\n</tool_call>\n"
        "<tool_call>\n{\"name\":\"calculator\",\"arguments\":{\"expression\":\"3*3\"}}\n</tool_call>"},
       {"reasoning_content", "easy"}},
      {{"role", "user"}, {"content", "<tool_response>\n4\n</tool_response>\n<tool_response>\n9\n</tool_response>"}},
      in[5],
      in[6],
  };
  ASSERT_EQ(out.size(), expected.size()) << out.dump(1);
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(out[i], expected[i]) << "message " << i;
}

TEST(ToolPrompt, CallWithoutContentStartsWithTheTag) {
  const ojson in = ojson::parse(R"([{"role": "user", "content": "q"},
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}])");
  const ojson out = inline_tools_in_messages(in, kTools);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2]["content"], "<tool_call>\n{\"name\":\"f\",\"arguments\":{}}\n</tool_call>");
}

}  // namespace
}  // namespace kazeia::agent
