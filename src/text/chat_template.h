// Chat templates: an OpenAI-style chat request -> the prompt text the
// model's Jinja template produces, the way llama.cpp prepares it.
//
// Request (JSON object):
//   messages               [{role, content, reasoning_content?, tool_calls?, tool_call_id?, name?}]
//                          content: a string, null, or a list of {"type": "text", "text": ...}
//   tools                  optional list, passed to the template unchanged
//   add_generation_prompt  optional bool, default true
//   chat_template_kwargs   optional object; each key becomes a template variable
//                          (enable_thinking: bool, default true)
//
// Preprocessing, as llama.cpp does before rendering:
//   - messages are rebuilt as {role, content, reasoning_content (when non-empty),
//     name, tool_call_id, tool_calls: [{type, function: {name, arguments}, id}]};
//     other message fields are dropped, missing/null content becomes "";
//   - tool-call `arguments` given as a JSON string are parsed into an object
//     (kept as the string when it is not valid JSON);
//   - a list of text parts is passed as a list when the template renders
//     such lists, otherwise joined with "\n" into a string;
//   - variables: messages, tools (only when non-empty), add_generation_prompt,
//     enable_thinking, bos_token, eos_token, then the other kwargs;
//   - the vocabulary's BOS is removed from the front of the result when the
//     tokenizer adds one itself (add_bos_token), likewise EOS at the end.
//
// Prefill: with add_generation_prompt false and an assistant message last,
// that message is continued, not closed: the other messages are rendered
// with the generation prompt, then for templates that use <think> tags,
// "<think>\n" (unless the generation prompt already ends with it) +
// reasoning, then — unless the message has reasoning only — "\n</think>\n\n"
// + content; without <think> tags, just the content. Reasoning is
// reasoning_content or a leading <think>...</think> of the content. With
// thinking disabled (the prompt ends with an empty think block) only the
// content is appended. Tool calls of the prefilled message are not
// rendered. Two assistant messages at the end are an error.
//
// Fallback: when the model has no template or it does not parse, a
// built-in ChatML template is used and warnings() says why (also logged).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"
#include "kazeia/status.h"
#include "text/jinja.h"

namespace kazeia::text {

// The template's family, recognised from its text; the tool-call parser
// picks its format from it.
enum class ChatTemplateFamily {
  kUnknown,
  kChatML,  // <|im_start|> turns without a known tool-call form (SmolLM, ...)
  kQwen3,   // ChatML + <tool_call>{"name": ..., "arguments": ...}</tool_call> (Qwen2.5/Qwen3/Hermes)
  kQwen35,  // ChatML + XML tool calls <tool_call><function=...><parameter=...> (Qwen3.5, Qwen3-Coder)
  kLlama3,  // <|start_header_id|>role<|end_header_id|> turns
};

const char* chat_template_family_name(ChatTemplateFamily family);
ChatTemplateFamily detect_chat_template_family(std::string_view source);

struct ChatRenderOptions {
  std::optional<bool> add_generation_prompt;  // overrides the request's value
  std::optional<bool> enable_thinking;        // overrides chat_template_kwargs.enable_thinking
  jinja::RenderLimits limits;
};

class ChatTemplate {
 public:
  // The model's tokenizer.chat_template with its BOS/EOS texts; falls back
  // to ChatML (with a warning) when the key is absent or the text is unusable.
  static ChatTemplate from_gguf(const gguf::File& file);
  // A template given as text; add_bos/add_eos say whether the tokenizer adds
  // those tokens itself (then they are stripped from the rendered prompt).
  static ChatTemplate from_source(std::string source, std::string bos_token = {}, std::string eos_token = {},
                                  bool add_bos = false, bool add_eos = false);
  // The built-in ChatML template used as the fallback.
  static const char* chatml_source();

  Result<std::string> render(const nlohmann::ordered_json& request, const ChatRenderOptions& options = {}) const;
  // The same from JSON text (InvalidArgument when it does not parse).
  Result<std::string> render_json(std::string_view request_json, const ChatRenderOptions& options = {}) const;

  ChatTemplateFamily family() const { return family_; }
  bool is_fallback() const { return fallback_; }
  const std::string& source() const { return source_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  bool supports_typed_content() const { return typed_content_; }
  // Whether the template writes the request's `tools` into the prompt
  // (probed at load). When it does not, a caller that offers tools has to
  // describe them itself (the agent loop does; see agent/tool_prompt.h).
  bool renders_tools() const { return renders_tools_; }
  const std::string& bos_token() const { return bos_; }
  const std::string& eos_token() const { return eos_; }

 private:
  ChatTemplate() = default;
  void use_fallback(const std::string& why);
  Result<std::string> render_messages(nlohmann::ordered_json messages, const nlohmann::ordered_json& request,
                                      bool add_generation_prompt, bool enable_thinking,
                                      const ChatRenderOptions& options) const;

  std::shared_ptr<const jinja::Template> tmpl_;
  std::string source_;
  std::string bos_, eos_;
  bool add_bos_ = false, add_eos_ = false;
  ChatTemplateFamily family_ = ChatTemplateFamily::kUnknown;
  bool fallback_ = false;
  bool typed_content_ = false;
  bool renders_tools_ = false;
  bool uses_think_tags_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace kazeia::text
