#include "agent/tool_prompt.h"

#include <string>

namespace kazeia::agent {

using ojson = nlohmann::ordered_json;

namespace {

std::string dump(const ojson& value) { return value.dump(-1, ' ', false, ojson::error_handler_t::replace); }

std::string text_of(const ojson& content) { return content.is_string() ? content.get<std::string>() : std::string(); }

}  // namespace

std::string hermes_tool_instructions(const ojson& tools) {
  std::string out =
      "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
      "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
  for (const ojson& tool : tools) out += "\n" + dump(tool);
  out +=
      "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
      "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
      "<args-json-object>}\n</tool_call>";
  return out;
}

ojson inline_tools_in_messages(const ojson& messages, const ojson& tools) {
  ojson out = ojson::array();
  const std::string instructions = hermes_tool_instructions(tools);
  if (messages.empty() || messages[0].value("role", "") != "system") {
    out.push_back({{"role", "system"}, {"content", instructions}});
  }
  bool after_tool_response = false;  // out.back() is a user message of tool responses
  for (const ojson& m : messages) {
    const std::string role = m.value("role", "");
    if (role == "tool") {
      const std::string block = "<tool_response>\n" + text_of(m.value("content", ojson())) + "\n</tool_response>";
      if (after_tool_response) {
        out.back()["content"] = out.back()["content"].get<std::string>() + "\n" + block;
      } else {
        out.push_back({{"role", "user"}, {"content", block}});
      }
      after_tool_response = true;
      continue;
    }
    after_tool_response = false;
    if (role == "system" && out.empty()) {
      ojson system = m;
      const std::string text = text_of(m.value("content", ojson()));
      system["content"] = text.empty() ? instructions : text + "\n\n" + instructions;
      out.push_back(std::move(system));
    } else if (role == "assistant" && m.contains("tool_calls")) {
      ojson assistant = m;
      std::string content = text_of(m.value("content", ojson()));
      for (const ojson& call : m["tool_calls"]) {
        const ojson& fn = call.value("function", ojson::object());
        ojson body{{"name", fn.value("name", "")}, {"arguments", fn.value("arguments", ojson::object())}};
        content += (content.empty() ? "" : "\n") + std::string("<tool_call>\n") + dump(body) + "\n</tool_call>";
      }
      assistant.erase("tool_calls");
      assistant["content"] = content;
      out.push_back(std::move(assistant));
    } else {
      out.push_back(m);
    }
  }
  return out;
}

}  // namespace kazeia::agent
