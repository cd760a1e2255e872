// Chat-template request handling with small inline templates: runs without
// the shared reference data.
#include <gtest/gtest.h>

#include <string>

#include "format/gguf.h"
#include "text/chat_template.h"

namespace kazeia::text {
namespace {

using json = nlohmann::ordered_json;

std::string render(const ChatTemplate& t, const std::string& request, const ChatRenderOptions& o = {}) {
  auto out = t.render_json(request, o);
  return out.ok() ? *out : "ERROR: " + out.status().to_string();
}

Status render_status(const ChatTemplate& t, const std::string& request) {
  auto out = t.render_json(request);
  return out.ok() ? OkStatus() : out.status();
}

// A Qwen3-like template that shows the variables it receives.
const char* kThinkTemplate =
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}";

TEST(ChatTemplate, FamilyFromTemplateText) {
  EXPECT_EQ(detect_chat_template_family("<|im_start|>{{ x }}<tool_call>"), ChatTemplateFamily::kQwen3);
  EXPECT_EQ(detect_chat_template_family("<|im_start|><tool_call>\n<function=f>\n<parameter=p>"),
            ChatTemplateFamily::kQwen35);
  EXPECT_EQ(detect_chat_template_family("{{ '<|im_start|>' + role }}"), ChatTemplateFamily::kChatML);
  EXPECT_EQ(detect_chat_template_family("<|start_header_id|>user<|end_header_id|>"), ChatTemplateFamily::kLlama3);
  EXPECT_EQ(detect_chat_template_family("[INST] {{ m }} [/INST]"), ChatTemplateFamily::kUnknown);
  EXPECT_STREQ(chat_template_family_name(ChatTemplateFamily::kQwen35), "qwen35");
}

TEST(ChatTemplate, UnparsableTemplateFallsBackToChatML) {
  const ChatTemplate t = ChatTemplate::from_source("{% if messages %}never closed");
  EXPECT_TRUE(t.is_fallback());
  EXPECT_EQ(t.family(), ChatTemplateFamily::kChatML);
  ASSERT_EQ(t.warnings().size(), 1u);
  EXPECT_NE(t.warnings()[0].find("does not parse"), std::string::npos) << t.warnings()[0];
  EXPECT_EQ(render(t, R"({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]})"),
            "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render(t, R"({"messages": [{"role": "user", "content": "q"},
      {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{\"a\":1}"}}]},
      {"role": "tool", "content": "r"}], "add_generation_prompt": true})"),
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": "
            "{\"a\": 1}}\n</tool_call><|im_end|>\n<|im_start|>tool\nr<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, ProbesWhetherTheTemplateWritesTheToolList) {
  // SmolLM2-Instruct's template (as published with the model): ChatML, no tools.
  const ChatTemplate smol = ChatTemplate::from_source(
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
      "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
      "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
      "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}");
  EXPECT_FALSE(smol.is_fallback());
  EXPECT_FALSE(smol.renders_tools());
  EXPECT_FALSE(ChatTemplate::from_source(kThinkTemplate).renders_tools());
  EXPECT_FALSE(ChatTemplate::from_source("{% if messages %}never closed").renders_tools());  // the fallback
  const ChatTemplate with_tools = ChatTemplate::from_source(
      "{% if tools %}<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools>{% endif %}"
      "{% for m in messages %}{{ m.content }}{% endfor %}");
  EXPECT_TRUE(with_tools.renders_tools());
  // Mentioning tools without writing them does not count.
  EXPECT_FALSE(ChatTemplate::from_source("{% if tools %}You have tools.{% endif %}{{ messages[0].content }}")
                   .renders_tools());
}

TEST(ChatTemplate, FromGgufInMemory) {
  gguf::Writer w;
  w.set("general.architecture", "test");
  w.set("tokenizer.ggml.model", "gpt2");
  w.set("tokenizer.ggml.tokens", gguf::Array{gguf::ValueType::kString, {gguf::Value("<s>"), gguf::Value("</s>")}});
  w.set("tokenizer.ggml.bos_token_id", uint32_t{0});
  w.set("tokenizer.ggml.eos_token_id", uint32_t{1});
  w.set("tokenizer.ggml.add_bos_token", true);
  w.set("tokenizer.chat_template",
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}");
  const std::vector<uint8_t> bytes = w.to_bytes();
  auto file = gguf::File::parse(bytes);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const ChatTemplate t = ChatTemplate::from_gguf(*file);
  EXPECT_FALSE(t.is_fallback());
  EXPECT_EQ(t.bos_token(), "<s>");
  EXPECT_EQ(t.eos_token(), "</s>");
  // add_bos_token: the tokenizer adds BOS itself, so the leading one is dropped.
  EXPECT_EQ(render(t, R"({"messages": [{"role": "user", "content": "hi"}]})"), "[user]hi</s>");

  gguf::Writer bare;
  bare.set("general.architecture", "test");
  const std::vector<uint8_t> bare_bytes = bare.to_bytes();
  auto bare_file = gguf::File::parse(bare_bytes);
  ASSERT_TRUE(bare_file.ok());
  const ChatTemplate fallback = ChatTemplate::from_gguf(*bare_file);
  EXPECT_TRUE(fallback.is_fallback());
  ASSERT_FALSE(fallback.warnings().empty());
  EXPECT_NE(fallback.warnings()[0].find("no tokenizer.chat_template"), std::string::npos);
}

TEST(ChatTemplate, MessagesAreNormalizedLikeLlamaCpp) {
  const ChatTemplate t = ChatTemplate::from_source("{{ messages | tojson }}");
  EXPECT_EQ(render(t, R"({"messages": [
      {"role": "user", "content": null, "extra": 1},
      {"role": "assistant", "content": "x", "reasoning_content": "",
       "tool_calls": [{"id": "c1", "type": "function", "function": {"arguments": "{\"b\":1,\"a\":[1,2]}", "name": "f"}}]},
      {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "r"},
      {"role": "assistant", "reasoning_content": "why", "tool_calls": [{"function": {"name": "g", "arguments": "not json"}}]}]})"),
            R"([{"role": "user", "content": ""}, )"
            R"({"role": "assistant", "content": "x", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"b": 1, "a": [1, 2]}}, "id": "c1"}]}, )"
            R"({"role": "tool", "content": "r", "name": "f", "tool_call_id": "c1"}, )"
            R"({"role": "assistant", "content": "", "reasoning_content": "why", "tool_calls": [{"type": "function", "function": {"name": "g", "arguments": "not json"}}]}])");
}

TEST(ChatTemplate, TextPartsFollowWhatTheTemplateRenders) {
  const std::string request =
      R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]})";
  // Prints lists: the parts are passed as a list.
  const ChatTemplate lists = ChatTemplate::from_source(
      "{% for m in messages %}{% for p in m.content %}({{ p.text }}){% endfor %}{% endfor %}");
  EXPECT_TRUE(lists.supports_typed_content());
  EXPECT_EQ(render(lists, request), "(a)(b)");
  // String content only: the parts are joined with "\n" first.
  const ChatTemplate strings = ChatTemplate::from_source("{% for m in messages %}[{{ m.content + '' }}]{% endfor %}");
  EXPECT_FALSE(strings.supports_typed_content());
  EXPECT_EQ(render(strings, request), "[a\nb]");
  EXPECT_EQ(render_status(strings, R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})").code(),
            ErrorCode::kUnsupported);
}

TEST(ChatTemplate, VariablesPassedToTheTemplate) {
  const ChatTemplate t = ChatTemplate::from_source(
      "{{ add_generation_prompt }}|{{ enable_thinking }}|{{ tools is defined }}|{{ custom }}|{{ bos_token }}{{ eos_token }}",
      "<B>", "<E>");
  EXPECT_EQ(render(t, R"({"messages": []})"), "True|True|False||<B><E>");
  EXPECT_EQ(render(t, R"({"messages": [], "tools": [], "add_generation_prompt": false,
                          "chat_template_kwargs": {"enable_thinking": false, "custom": 7}})"),
            "False|False|False|7|<B><E>");
  EXPECT_EQ(render(t, R"({"messages": [], "tools": [{"type": "function", "function": {"name": "f"}}]})"),
            "True|True|True||<B><E>");
  ChatRenderOptions o;
  o.add_generation_prompt = false;
  o.enable_thinking = false;
  EXPECT_EQ(render(t, R"({"messages": []})", o), "False|False|False||<B><E>");
}

TEST(ChatTemplate, FinalAssistantMessageIsPrefilled) {
  const ChatTemplate t = ChatTemplate::from_source(kThinkTemplate);
  const std::string head = "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n";
  auto req = [](const std::string& assistant, const std::string& extra = "") {
    return R"({"add_generation_prompt": false, "messages": [{"role": "user", "content": "q"}, )" + assistant + "]" +
           extra + "}";
  };
  EXPECT_EQ(render(t, req(R"({"role": "assistant", "content": "Hi"})")), head + "<think>\n\n</think>\n\nHi");
  EXPECT_EQ(render(t, req(R"({"role": "assistant", "content": "", "reasoning_content": "R"})")), head + "<think>\nR");
  EXPECT_EQ(render(t, req(R"({"role": "assistant", "content": "C", "reasoning_content": "R"})")),
            head + "<think>\nR\n</think>\n\nC");
  EXPECT_EQ(render(t, req(R"({"role": "assistant", "content": "<think>\nR\n</think>\n\nC"})")),
            head + "<think>\nR\n</think>\n\nC");
  EXPECT_EQ(render(t, req(R"({"role": "assistant", "content": "<think>\nstill thinking"})")),
            head + "<think>\nstill thinking");
  EXPECT_EQ(render(t, req(R"({"role": "assistant", "content": "C", "reasoning_content": "R"})",
                          R"(, "chat_template_kwargs": {"enable_thinking": false})")),
            head + "<think>\n\n</think>\n\nC");
  // Without <think> in the template only the content is continued.
  const ChatTemplate plain = ChatTemplate::from_source(
      "{% for m in messages %}<{{ m.role }}>{{ m.content }}</s>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}");
  EXPECT_EQ(render(plain, req(R"({"role": "assistant", "content": "Hi", "reasoning_content": "R"})")),
            "<user>q</s><assistant>Hi");
  // A user message last is rendered as is.
  EXPECT_EQ(render(plain, R"({"add_generation_prompt": false, "messages": [{"role": "user", "content": "q"}]})"),
            "<user>q</s>");
  Status two = render_status(t, req(R"({"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"})"));
  EXPECT_EQ(two.code(), ErrorCode::kInvalidArgument);
}

TEST(ChatTemplate, BadRequestsAreErrors) {
  const ChatTemplate t = ChatTemplate::from_source(kThinkTemplate);
  for (const char* bad : {"[]", "{}", R"({"messages": {}})", R"({"messages": [1]})", R"({"messages": [{"content": "x"}]})",
                          R"({"messages": [], "add_generation_prompt": "yes"})",
                          R"({"messages": [], "chat_template_kwargs": {"enable_thinking": "false"}})",
                          R"({"messages": [], "chat_template_kwargs": []})", R"({"messages": [], "tools": {}})",
                          R"({"messages": [{"role": "user", "content": 5}]})",
                          R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]})",
                          R"({"messages": [{"role": "assistant", "tool_calls": "x"}]})", "not json"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(render_status(t, bad).code(), ErrorCode::kInvalidArgument);
  }
  // Hostile nesting inside arguments: refused, no crash.
  std::string deep = std::string(2000, '[') + std::string(2000, ']');
  json request = {{"messages", json::array({json{{"role", "assistant"}, {"content", ""},
                                                 {"tool_calls", json::array({json{{"function", {{"name", "f"}, {"arguments", deep}}}}})}}})}};
  EXPECT_FALSE(t.render(request).ok());
}

TEST(ChatTemplate, TemplateErrorsPropagate) {
  const ChatTemplate t = ChatTemplate::from_source("{{ raise_exception('Conversation roles must alternate') }}");
  EXPECT_FALSE(t.is_fallback());  // it parses; it refuses at render time
  Status st = render_status(t, R"({"messages": []})");
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("Conversation roles must alternate"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace kazeia::text
