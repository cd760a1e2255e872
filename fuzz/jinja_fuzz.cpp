// libFuzzer target for the Jinja interpreter and the chat-template layer.
//
// The input is template text (hostile, as a model file's chat template is):
// it is parsed and rendered against a fixed small chat context, then used
// as a model's chat template for a fixed request, once with the generation
// prompt and once as a prefill. Nothing may crash, hang or grow without
// bound: every render runs under small RenderLimits.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/log.h"
#include "text/chat_template.h"
#include "text/jinja.h"

namespace {

using json = nlohmann::ordered_json;

const json& context() {
  static const json ctx = json::parse(R"({
    "messages": [
      {"role": "system", "content": "  Be brief. "},
      {"role": "user", "content": [{"type": "text", "text": "Hé 😀"}, {"type": "text", "text": "two"}]},
      {"role": "assistant", "content": "<think>\nr\n</think>\n\nok", "reasoning_content": "r",
       "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1, "b": [true, null, 2.5]}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "{\"x\": 1}"},
      {"role": "user", "content": "last"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
    "add_generation_prompt": true, "enable_thinking": false, "bos_token": "<s>", "eos_token": "</s>"})");
  return ctx;
}

const json& request() {
  static const json req = [] {
    json r = context();
    r.erase("bos_token");
    r.erase("eos_token");
    r.erase("enable_thinking");
    r["messages"].push_back(json{{"role", "assistant"}, {"content", "partial"}});
    r["messages"][2]["function"] = "ignored";
    r["messages"][2]["tool_calls"][0]["function"]["arguments"] = "{\"a\": 1, \"s\": \"x\"}";
    return r;
  }();
  return req;
}

kazeia::jinja::RenderLimits small_limits() {
  kazeia::jinja::RenderLimits limits;
  limits.max_steps = 200'000;
  limits.max_output_bytes = size_t{1} << 20;
  limits.max_items = 10'000;
  return limits;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kazeia;
  static const bool quiet = [] {
    set_log_level(LogLevel::kOff);  // fallback warnings would flood the run
    return true;
  }();
  (void)quiet;
  if (size > 64 * 1024) return 0;
  const std::string source(reinterpret_cast<const char*>(data), size);

  auto tmpl = jinja::Template::parse(source);
  // A template that does not parse gives every chat-template step below
  // the same built-in fallback, whatever the input (test_chat_template
  // covers that path): rendering it anyway held this target to ~30 inputs
  // a second.
  if (!tmpl.ok()) return 0;
  (void)tmpl->render(context(), small_limits());

  const text::ChatTemplate chat = text::ChatTemplate::from_source(source, "<s>", "</s>", true, true);
  text::ChatRenderOptions options;
  options.limits = small_limits();
  options.add_generation_prompt = true;
  (void)chat.render(request(), options);
  options.add_generation_prompt = false;  // the final assistant message is continued
  (void)chat.render(request(), options);
  return 0;
}
