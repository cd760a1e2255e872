// Chat templates; see chat_template.h.
#include "text/chat_template.h"

#include "base/log.h"
#include "text/jinja_pystr.h"

namespace kazeia::text {
namespace {

using json = nlohmann::ordered_json;

// ChatML with Hermes-style tool calls: a neutral choice most instruction
// models understand when their own template is missing.
constexpr const char* kChatMLSource =
    "{%- for message in messages -%}\n"
    "{{- '<|im_start|>' + message.role + '\\n' -}}\n"
    "{%- if message.content is string -%}{{- message.content -}}\n"
    "{%- else -%}{%- for part in message.content -%}{%- if part.text is defined -%}{{- part.text -}}"
    "{%- endif -%}{%- endfor -%}{%- endif -%}\n"
    "{%- for call in message.tool_calls or [] -%}\n"
    "{{- '\\n<tool_call>\\n{\"name\": \"' + call.function.name + '\", \"arguments\": ' + "
    "(call.function.arguments if call.function.arguments is string else call.function.arguments | tojson) + "
    "'}\\n</tool_call>' -}}\n"
    "{%- endfor -%}\n"
    "{{- '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n";

constexpr const char* kProbeMarker = "KZ_TYPED_CONTENT_PROBE";
constexpr const char* kToolsProbeMarker = "KZ_TOOLS_PROBE";

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string where(size_t index, const char* field) {
  return "messages[" + std::to_string(index) + "]." + field;
}

// content: string, null/absent -> "", or a list of text parts (kept as a
// list when the template renders lists, else joined with "\n").
Result<json> normalize_content(const json& msg, size_t index, bool typed_content) {
  auto it = msg.find("content");
  if (it == msg.end() || it->is_null()) return json("");
  if (it->is_string()) return *it;
  if (!it->is_array()) return InvalidArgument(where(index, "content") + " must be a string, null or a list of parts");
  json parts = json::array();
  std::string joined;
  for (size_t k = 0; k < it->size(); ++k) {
    const json& part = (*it)[k];
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      return InvalidArgument(where(index, "content") + "[" + std::to_string(k) + "] must be an object with a type");
    }
    const std::string type = part["type"].get<std::string>();
    if (type != "text") {
      return Unsupported(where(index, "content") + "[" + std::to_string(k) + "]: content part type '" + type +
                         "' is not supported (text only)");
    }
    if (!part.contains("text") || !part["text"].is_string()) {
      return InvalidArgument(where(index, "content") + "[" + std::to_string(k) + "].text must be a string");
    }
    const std::string text = part["text"].get<std::string>();
    parts.push_back(json{{"type", "text"}, {"text", text}});
    if (k) joined += '\n';
    joined += text;
  }
  if (typed_content) return parts;
  return json(joined);
}

Result<json> normalize_tool_calls(const json& calls, size_t index) {
  json out = json::array();
  for (size_t k = 0; k < calls.size(); ++k) {
    const std::string at = where(index, "tool_calls") + "[" + std::to_string(k) + "]";
    const json& call = calls[k];
    if (!call.is_object()) return InvalidArgument(at + " must be an object");
    if (call.contains("type") && call["type"] != "function") {
      return Unsupported(at + ": tool call type " + call["type"].dump() + " is not supported");
    }
    auto fn = call.find("function");
    if (fn == call.end() || !fn->is_object()) return InvalidArgument(at + ".function must be an object");
    if (!fn->contains("name") || !(*fn)["name"].is_string()) return InvalidArgument(at + ".function.name must be a string");
    json arguments = json::object();
    if (auto a = fn->find("arguments"); a != fn->end() && !a->is_null()) {
      arguments = *a;
      if (a->is_string()) {
        // A JSON string is parsed into an object; text that is not JSON stays as it is.
        json parsed = json::parse(a->get<std::string>(), nullptr, /*allow_exceptions=*/false);
        if (!parsed.is_discarded()) arguments = std::move(parsed);
      }
    }
    json norm = {{"type", "function"}, {"function", {{"name", (*fn)["name"]}, {"arguments", std::move(arguments)}}}};
    if (auto id = call.find("id"); id != call.end() && id->is_string()) norm["id"] = *id;
    out.push_back(std::move(norm));
  }
  return out;
}

Result<json> normalize_message(const json& msg, size_t index, bool typed_content) {
  if (!msg.is_object()) return InvalidArgument("messages[" + std::to_string(index) + "] must be an object");
  auto role = msg.find("role");
  if (role == msg.end() || !role->is_string()) return InvalidArgument(where(index, "role") + " must be a string");
  json out = json::object();
  out["role"] = *role;
  KZ_ASSIGN_OR_RETURN(out["content"], normalize_content(msg, index, typed_content));
  if (auto r = msg.find("reasoning_content"); r != msg.end() && !r->is_null()) {
    if (!r->is_string()) return InvalidArgument(where(index, "reasoning_content") + " must be a string");
    if (!r->get<std::string>().empty()) out["reasoning_content"] = *r;
  }
  for (const char* key : {"name", "tool_call_id"}) {
    if (auto v = msg.find(key); v != msg.end() && !v->is_null()) {
      if (!v->is_string()) return InvalidArgument(where(index, key) + " must be a string");
      out[key] = *v;
    }
  }
  if (auto calls = msg.find("tool_calls"); calls != msg.end() && !calls->is_null()) {
    if (!calls->is_array()) return InvalidArgument(where(index, "tool_calls") + " must be a list");
    if (!calls->empty()) {
      KZ_ASSIGN_OR_RETURN(out["tool_calls"], normalize_tool_calls(*calls, index));
    }
  }
  return out;
}

// The text of a (normalized) message's content: parts joined with nothing,
// as llama.cpp appends a prefilled message's parts.
std::string content_text(const json& msg) {
  const json& c = msg["content"];
  if (c.is_string()) return c.get<std::string>();
  std::string out;
  for (const auto& part : c) out += part["text"].get<std::string>();
  return out;
}

// What follows the generation prompt when the last assistant message is
// continued (see the header).
std::string prefill_text(std::string_view prompt, const json& last, bool uses_think_tags) {
  std::string content = content_text(last);
  std::string reasoning = last.contains("reasoning_content") ? last["reasoning_content"].get<std::string>() : "";
  if (reasoning.empty()) {
    const size_t close = content.find("</think>");
    const std::string lead = jinja::py::strip(content, std::nullopt, true, false);
    if (close != std::string::npos) {
      std::string before = jinja::py::strip(content.substr(0, close), std::string("\n"), false, true);
      const size_t open = before.rfind("<think>");
      if (open != std::string::npos) before = before.substr(open + 7);
      reasoning = jinja::py::strip(before, std::string("\n"), true, false);
      content = jinja::py::strip(content.substr(close + 8), std::string("\n"), true, false);
    } else if (lead.rfind("<think>", 0) == 0) {
      reasoning = jinja::py::strip(lead.substr(7), std::string("\n"), true, false);
      content.clear();
    }
  }
  if (!uses_think_tags || ends_with(prompt, "</think>\n\n")) return content;
  std::string out;
  if (!ends_with(prompt, "<think>\n")) out += "<think>\n";
  out += reasoning;
  if (!content.empty() || reasoning.empty()) out += "\n</think>\n\n" + content;
  return out;
}

}  // namespace

const char* chat_template_family_name(ChatTemplateFamily family) {
  switch (family) {
    case ChatTemplateFamily::kChatML: return "chatml";
    case ChatTemplateFamily::kQwen3: return "qwen3";
    case ChatTemplateFamily::kQwen35: return "qwen35";
    case ChatTemplateFamily::kLlama3: return "llama3";
    case ChatTemplateFamily::kUnknown: break;
  }
  return "unknown";
}

ChatTemplateFamily detect_chat_template_family(std::string_view source) {
  if (contains(source, "<function=") && contains(source, "<parameter=")) return ChatTemplateFamily::kQwen35;
  if (contains(source, "<|start_header_id|>")) return ChatTemplateFamily::kLlama3;
  if (contains(source, "<|im_start|>")) {
    return contains(source, "<tool_call>") ? ChatTemplateFamily::kQwen3 : ChatTemplateFamily::kChatML;
  }
  return ChatTemplateFamily::kUnknown;
}

const char* ChatTemplate::chatml_source() { return kChatMLSource; }

void ChatTemplate::use_fallback(const std::string& why) {
  auto parsed = jinja::Template::parse(kChatMLSource);
  tmpl_ = std::make_shared<const jinja::Template>(std::move(parsed).value());
  source_ = kChatMLSource;
  family_ = ChatTemplateFamily::kChatML;
  fallback_ = true;
  typed_content_ = true;
  renders_tools_ = false;
  uses_think_tags_ = false;
  warnings_.push_back(why + "; using the built-in ChatML template");
  KZ_LOG_WARN("chat template: %s", warnings_.back().c_str());
}

ChatTemplate ChatTemplate::from_source(std::string source, std::string bos_token, std::string eos_token,
                                       bool add_bos, bool add_eos) {
  ChatTemplate t;
  t.bos_ = std::move(bos_token);
  t.eos_ = std::move(eos_token);
  t.add_bos_ = add_bos;
  t.add_eos_ = add_eos;
  auto parsed = jinja::Template::parse(source);
  if (!parsed.ok()) {
    t.use_fallback("the model's chat template does not parse (" + parsed.status().message() + ")");
    return t;
  }
  t.tmpl_ = std::make_shared<const jinja::Template>(std::move(parsed).value());
  t.family_ = detect_chat_template_family(source);
  t.uses_think_tags_ = contains(source, "<think>");
  t.source_ = std::move(source);
  // Like llama.cpp's capability probe: does the template print the text of
  // a content given as a list of parts?
  json probe = {{"role", "user"}, {"content", json::array({json{{"type", "text"}, {"text", kProbeMarker}}})}};
  json ctx = {{"messages", json::array({probe})}, {"add_generation_prompt", true}, {"bos_token", t.bos_},
              {"eos_token", t.eos_}, {"enable_thinking", true}};
  // A real template needs a few thousand steps for this; a hostile one
  // must not stall loading.
  jinja::RenderLimits probe_limits;
  probe_limits.max_steps = 500'000;
  probe_limits.max_output_bytes = size_t{1} << 20;
  auto out = t.tmpl_->render(ctx, probe_limits);
  t.typed_content_ = out.ok() && contains(*out, kProbeMarker);
  // Does it write the tool list? (SmolLM2's ChatML template, for one, does not.)
  ctx["messages"] = json::array({json{{"role", "user"}, {"content", "x"}}});
  ctx["tools"] = json::array({json{{"type", "function"},
                                   {"function", {{"name", kToolsProbeMarker},
                                                 {"description", kToolsProbeMarker},
                                                 {"parameters", {{"type", "object"}, {"properties", json::object()}}}}}}});
  out = t.tmpl_->render(ctx, probe_limits);
  t.renders_tools_ = out.ok() && contains(*out, kToolsProbeMarker);
  return t;
}

ChatTemplate ChatTemplate::from_gguf(const gguf::File& file) {
  std::string bos, eos;
  const gguf::Array* tokens = nullptr;
  if (const auto* v = file.find("tokenizer.ggml.tokens")) tokens = v->as_array();
  auto token_text = [&](const char* key) -> std::string {
    const gguf::Value* id = file.find(key);
    if (id == nullptr || tokens == nullptr) return {};
    auto i = id->as_int();
    if (!i || *i < 0 || static_cast<uint64_t>(*i) >= tokens->items.size()) return {};
    const std::string* s = tokens->items[static_cast<size_t>(*i)].as_string();
    return s ? *s : std::string();
  };
  bos = token_text("tokenizer.ggml.bos_token_id");
  eos = token_text("tokenizer.ggml.eos_token_id");
  // llama.cpp's defaults: SentencePiece vocabularies add BOS, BPE ones do not.
  bool spm = false;
  if (const auto* m = file.find("tokenizer.ggml.model"); m && m->as_string()) spm = *m->as_string() == "llama";
  const bool add_bos = file.get_bool_or("tokenizer.ggml.add_bos_token", spm).value_or(spm);
  const bool add_eos = file.get_bool_or("tokenizer.ggml.add_eos_token", false).value_or(false);

  auto source = file.get_string("tokenizer.chat_template");
  if (!source.ok()) {
    ChatTemplate t;
    t.bos_ = std::move(bos);
    t.eos_ = std::move(eos);
    t.add_bos_ = add_bos;
    t.add_eos_ = add_eos;
    t.use_fallback(source.status().code() == ErrorCode::kNotFound
                       ? std::string("the model has no tokenizer.chat_template")
                       : "tokenizer.chat_template is unusable (" + source.status().message() + ")");
    return t;
  }
  return from_source(std::move(source).value(), std::move(bos), std::move(eos), add_bos, add_eos);
}

Result<std::string> ChatTemplate::render_json(std::string_view request_json, const ChatRenderOptions& options) const {
  json request = json::parse(request_json.begin(), request_json.end(), nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) return InvalidArgument("the chat request is not valid JSON");
  return render(request, options);
}

Result<std::string> ChatTemplate::render(const json& request, const ChatRenderOptions& options) const {
  if (!request.is_object()) return InvalidArgument("the chat request must be a JSON object");
  auto messages_it = request.find("messages");
  if (messages_it == request.end() || !messages_it->is_array()) {
    return InvalidArgument("the chat request needs a 'messages' list");
  }
  bool add_generation_prompt = true;
  if (auto g = request.find("add_generation_prompt"); g != request.end() && !g->is_null()) {
    if (!g->is_boolean()) return InvalidArgument("add_generation_prompt must be a boolean");
    add_generation_prompt = g->get<bool>();
  }
  if (options.add_generation_prompt) add_generation_prompt = *options.add_generation_prompt;
  bool enable_thinking = true;
  if (auto k = request.find("chat_template_kwargs"); k != request.end() && !k->is_null()) {
    if (!k->is_object()) return InvalidArgument("chat_template_kwargs must be an object");
    if (auto e = k->find("enable_thinking"); e != k->end()) {
      if (!e->is_boolean()) return InvalidArgument("invalid type for \"enable_thinking\" (expected boolean)");
      enable_thinking = e->get<bool>();
    }
  }
  if (options.enable_thinking) enable_thinking = *options.enable_thinking;

  json messages = json::array();
  for (size_t i = 0; i < messages_it->size(); ++i) {
    KZ_ASSIGN_OR_RETURN(json m, normalize_message((*messages_it)[i], i, typed_content_));
    messages.push_back(std::move(m));
  }

  const bool prefill = !add_generation_prompt && !messages.empty() && messages.back()["role"] == "assistant";
  if (!prefill) return render_messages(std::move(messages), request, add_generation_prompt, enable_thinking, options);
  if (messages.size() >= 2 && messages[messages.size() - 2]["role"] == "assistant") {
    return InvalidArgument("cannot have 2 or more assistant messages at the end of the list");
  }
  json last = messages.back();
  messages.erase(messages.size() - 1);
  KZ_ASSIGN_OR_RETURN(std::string prompt,
                      render_messages(std::move(messages), request, /*add_generation_prompt=*/true, enable_thinking,
                                      options));
  prompt += prefill_text(prompt, last, uses_think_tags_);
  return prompt;
}

Result<std::string> ChatTemplate::render_messages(json messages, const json& request, bool add_generation_prompt,
                                                  bool enable_thinking, const ChatRenderOptions& options) const {
  json ctx = json::object();
  ctx["messages"] = std::move(messages);
  if (auto tools = request.find("tools"); tools != request.end() && !tools->is_null()) {
    if (!tools->is_array()) return InvalidArgument("tools must be a list");
    if (!tools->empty()) ctx["tools"] = *tools;
  }
  ctx["add_generation_prompt"] = add_generation_prompt;
  ctx["enable_thinking"] = enable_thinking;
  ctx["bos_token"] = bos_;
  ctx["eos_token"] = eos_;
  if (auto k = request.find("chat_template_kwargs"); k != request.end() && k->is_object()) {
    for (const auto& [key, value] : k->items()) {
      if (key != "enable_thinking") ctx[key] = value;
    }
  }
  KZ_ASSIGN_OR_RETURN(std::string out, tmpl_->render(ctx, options.limits));
  if (add_bos_ && !bos_.empty() && out.rfind(bos_, 0) == 0) out.erase(0, bos_.size());
  if (add_eos_ && !eos_.empty() && ends_with(out, eos_)) out.resize(out.size() - eos_.size());
  return out;
}

}  // namespace kazeia::text
