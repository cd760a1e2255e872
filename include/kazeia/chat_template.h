// Rendering chat requests into prompts with a model's own chat template
// (`kazeia template`).
//
// A request is an OpenAI-style JSON object: `messages` (system / user /
// assistant / tool; assistant `reasoning_content` and `tool_calls`, whose
// `arguments` may be an object or a JSON string; content as a string or a
// list of {"type": "text", "text": ...} parts), optional `tools`,
// `add_generation_prompt` (default true) and `chat_template_kwargs` (e.g.
// {"enable_thinking": false}). The result is exactly the prompt llama.cpp
// renders from the Jinja template stored in the GGUF, including its request
// preprocessing and its prefill rule for a final assistant message (see
// src/text/chat_template.h for the details).
//
// A model without a usable template gets a ChatML template instead; info()
// reports it and why.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

struct ChatTemplateInfo {
  // "qwen3", "qwen35" (XML tool calls), "chatml", "llama3" or "unknown".
  std::string family;
  bool fallback = false;              // the model's template was absent or unusable: ChatML is used
  std::vector<std::string> warnings;  // why, when fallback
  std::string bos_token;
  std::string eos_token;
  std::string source;                 // the template text in use
};

class ChatTemplateRenderer {
 public:
  // Reads the template and the BOS/EOS texts from a GGUF file (header only).
  static Result<ChatTemplateRenderer> from_model(const std::string& model_path);
  // A template given as text; never fails (an unparsable one falls back).
  static ChatTemplateRenderer from_source(const std::string& source, const std::string& bos_token = {},
                                          const std::string& eos_token = {});

  // request_json: the request as JSON text. Errors: InvalidArgument for a
  // malformed request or one the template refuses (raise_exception),
  // Unsupported for non-text content parts, OutOfRange when rendering
  // exceeds its resource limits.
  Result<std::string> render(const std::string& request_json) const;

  ChatTemplateInfo info() const;

  ~ChatTemplateRenderer();
  ChatTemplateRenderer(const ChatTemplateRenderer&);
  ChatTemplateRenderer& operator=(const ChatTemplateRenderer&);
  ChatTemplateRenderer(ChatTemplateRenderer&&) noexcept;
  ChatTemplateRenderer& operator=(ChatTemplateRenderer&&) noexcept;

 private:
  struct Impl;
  explicit ChatTemplateRenderer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

// One-shot: from_model(model_path) then render(request_json).
Result<std::string> render_chat_template(const std::string& model_path, const std::string& request_json);

}  // namespace kazeia
