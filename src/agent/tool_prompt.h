// Tools for models whose chat template does not write them.
//
// Some instruction templates (SmolLM2's ChatML, for one) ignore the request's
// `tools`, the assistant's `tool_calls` and print a tool message as just
// another turn: offered tools would silently never reach the model. For
// those the agent loop rewrites the conversation before rendering, in the
// Hermes form the stream parser reads (Qwen2.5's wording):
//   - the tool list and the call format go at the end of the system message
//     (a system message is added when there is none);
//   - an assistant message's tool calls are appended to its content as
//     <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>;
//   - each run of tool messages becomes one user message of
//     <tool_response>\n...\n</tool_response> blocks.
// Everything else is copied unchanged.
#pragma once

#include <nlohmann/json.hpp>

namespace kazeia::agent {

// The system-prompt block describing `tools` (OpenAI-style tool list).
std::string hermes_tool_instructions(const nlohmann::ordered_json& tools);

// `messages` (OpenAI-style) rewritten as above.
nlohmann::ordered_json inline_tools_in_messages(const nlohmann::ordered_json& messages,
                                                const nlohmann::ordered_json& tools);

}  // namespace kazeia::agent
