// kazeia chat -m M [--no-think] [--max-think N] [--system TEXT]: interactive multi-turn chat
// through the model's chat template. Each turn re-renders the conversation;
// the session reuses the prefix it already evaluated, so a turn costs about
// its new tokens.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cmd_common.h"

namespace kazeia::cli {
namespace {

void setup_chat(CLI::App& app, std::function<int()>* run) {
  struct Options {
    ModelFlags model;
    GenerateOptions gen;
    bool no_think = false;
    bool verbose = false;
    std::string system;
  };
  auto o = std::make_shared<Options>();
  o->gen.max_tokens = -1;
  CLI::App* cmd = app.add_subcommand("chat", "Interactive chat (type /exit or end input to quit, /reset to start over)");
  o->model.add_to(cmd);
  cmd->add_flag("--no-think", o->no_think, "Render prompts with thinking off");
  cmd->add_option("--system", o->system, "System message");
  cmd->add_option("-n,--n-predict", o->gen.max_tokens, "Max tokens per answer (-1: until EOS)")->capture_default_str();
  add_sampling_flags(cmd, o->gen.sampling);
  cmd->add_option("--max-think", o->gen.max_think_tokens,
                  "Reasoning budget: tokens inside <think> before </think> is inserted (-1: none)")
      ->capture_default_str();
  cmd->add_flag("-v,--verbose", o->verbose, "Print timings after each answer");
  cmd->callback([run, o] {
    *run = [o] {
      auto engine = o->model.load();
      if (!engine.ok()) return fail(engine.status().to_string());
      auto session = (*engine)->new_session();
      if (!session.ok()) return fail(session.status().to_string());
      nlohmann::ordered_json messages = nlohmann::ordered_json::array();
      auto start = [&] {
        messages = nlohmann::ordered_json::array();
        if (!o->system.empty()) messages.push_back({{"role", "system"}, {"content", o->system}});
      };
      start();
      std::fprintf(stderr, "kazeia chat — %s (%s template). /exit to quit, /reset to start over.\n",
                   (*engine)->architecture().c_str(), (*engine)->chat_template_family().c_str());
      std::string line;
      while (true) {
        std::fputs("\n> ", stdout);
        std::fflush(stdout);
        if (!std::getline(std::cin, line) || line == "/exit") break;
        if (line == "/reset") {
          start();
          (*session)->reset();
          continue;
        }
        if (line.empty()) continue;
        messages.push_back({{"role", "user"}, {"content", line}});
        nlohmann::ordered_json request{{"messages", messages}};
        if (o->no_think) request["chat_template_kwargs"] = {{"enable_thinking", false}};
        auto rendered = (*engine)->render_chat(request.dump());
        if (!rendered.ok()) return fail(rendered.status().to_string());
        auto ids = (*engine)->tokenize_chat_prompt(*rendered);
        if (!ids.ok()) return fail(ids.status().to_string());
        auto result = (*session)->generate(*ids, o->gen, [](std::string_view piece) {
          std::fwrite(piece.data(), 1, piece.size(), stdout);
          std::fflush(stdout);
          return true;
        });
        if (!result.ok()) return fail(result.status().to_string());
        std::fputc('\n', stdout);
        messages.push_back({{"role", "assistant"}, {"content", result->text}});
        if (o->verbose)
          std::fprintf(stderr, "[%lld new prompt tokens, %lld reused, %.2f s; %zu generated, %.1f t/s, stop: %s]\n",
                       static_cast<long long>(result->prompt_tokens), static_cast<long long>(result->reused_tokens),
                       result->prompt_seconds, result->tokens.size(),
                       result->tokens.size() / std::max(result->generate_seconds, 1e-9), result->stop_reason.c_str());
        if (result->stop_reason == "context") {
          std::fprintf(stderr, "context full: /reset to start over\n");
        }
      }
      return 0;
    };
  });
}

const CommandRegistration kChatRegistration("chat", setup_chat);

}  // namespace
}  // namespace kazeia::cli
