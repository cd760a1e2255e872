// kazeia run -m M (-p TEXT | --tokens IDS) [-n N] [--temp T] [--seed S] ...
// Streams the generated text to stdout as it is produced.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cmd_common.h"

namespace kazeia::cli {
namespace {

void setup_run(CLI::App& app, std::function<int()>* run) {
  struct Options {
    ModelFlags model;
    std::string prompt, tokens;
    GenerateOptions gen;
    bool print_ids = false;
    bool no_special = false;
    bool verbose = false;
    bool chat = false;
    bool verbose_prompt = false;
    bool no_think = false;
    std::string system;
  };
  auto o = std::make_shared<Options>();
  o->gen.max_tokens = 128;
  CLI::App* cmd = app.add_subcommand("run", "Generate text from a prompt");
  o->model.add_to(cmd);
  auto* p = cmd->add_option("-p,--prompt", o->prompt, "Prompt text");
  auto* t = cmd->add_option("--tokens", o->tokens, "Prompt as token ids: 1,2,3");
  p->excludes(t);
  cmd->add_option("-n,--n-predict", o->gen.max_tokens, "Tokens to generate (-1: until EOS)")->capture_default_str();
  add_sampling_flags(cmd, o->gen.sampling);
  cmd->add_option("--max-think", o->gen.max_think_tokens,
                  "Reasoning budget: tokens inside <think> before </think> is inserted (-1: none)")
      ->capture_default_str();
  cmd->add_option("--stop", o->gen.stop, "Stop string (repeatable)");
  cmd->add_flag("--ignore-eos", o->gen.ignore_eos, "Do not stop at end-of-generation tokens");
  cmd->add_flag("--print-ids", o->print_ids, "Print the generated ids as a JSON array at the end");
  cmd->add_flag("--no-special", o->no_special, "Do not parse special tokens in the prompt text");
  cmd->add_flag("-v,--verbose", o->verbose, "Print timings to stderr");
  cmd->add_flag("--verbose-prompt", o->verbose_prompt, "Print the prompt's token ids to stderr");
  cmd->add_flag("--chat", o->chat, "Wrap the prompt as a user message in the model's chat template");
  cmd->add_option("--system", o->system, "With --chat: a system message");
  cmd->add_flag("--no-think", o->no_think, "With --chat: render the prompt with thinking off");
  cmd->callback([run, o] {
    *run = [o] {
      if (o->prompt.empty() && o->tokens.empty()) return fail("give a prompt with -p TEXT or --tokens IDS");
      auto engine = o->model.load();
      if (!engine.ok()) return fail(engine.status().to_string());
      std::vector<int32_t> prompt;
      if (!o->tokens.empty()) {
        auto ids = parse_token_list(o->tokens);
        if (!ids.ok()) return fail(ids.status().to_string());
        prompt = std::move(*ids);
      } else if (o->chat) {
        nlohmann::ordered_json request;
        request["messages"] = nlohmann::ordered_json::array();
        if (!o->system.empty()) request["messages"].push_back({{"role", "system"}, {"content", o->system}});
        request["messages"].push_back({{"role", "user"}, {"content", o->prompt}});
        if (o->no_think) request["chat_template_kwargs"] = {{"enable_thinking", false}};
        auto rendered = (*engine)->render_chat(request.dump());
        if (!rendered.ok()) return fail(rendered.status().to_string());
        auto ids = (*engine)->tokenize_chat_prompt(*rendered);
        if (!ids.ok()) return fail(ids.status().to_string());
        prompt = std::move(*ids);
      } else {
        auto ids = (*engine)->tokenize(o->prompt, !o->no_special, true);
        if (!ids.ok()) return fail(ids.status().to_string());
        prompt = std::move(*ids);
      }
      if (o->verbose_prompt) {
        std::string ids = "[";
        for (size_t i = 0; i < prompt.size(); ++i) ids += (i ? "," : "") + std::to_string(prompt[i]);
        std::fprintf(stderr, "prompt: %zu tokens %s]\n", prompt.size(), ids.c_str());
      }
      auto session = (*engine)->new_session();
      if (!session.ok()) return fail(session.status().to_string());
      auto result = (*session)->generate(prompt, o->gen, [](std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        return true;
      });
      if (!result.ok()) return fail(result.status().to_string());
      std::fputc('\n', stdout);
      if (o->print_ids) {
        std::string ids = "[";
        for (size_t i = 0; i < result->tokens.size(); ++i) ids += (i ? ", " : "") + std::to_string(result->tokens[i]);
        std::printf("%s]\n", ids.c_str());
      }
      if (o->verbose) {
        const double pp = result->prompt_tokens / std::max(result->prompt_seconds, 1e-9);
        const double tg = result->tokens.size() / std::max(result->generate_seconds, 1e-9);
        std::fprintf(stderr, "prompt: %lld tokens, %.1f t/s | generated: %zu tokens, %.1f t/s | stop: %s\n",
                     static_cast<long long>(result->prompt_tokens), pp, result->tokens.size(), tg,
                     result->stop_reason.c_str());
      }
      return 0;
    };
  });
}

const CommandRegistration kRunRegistration("run", setup_run);

}  // namespace
}  // namespace kazeia::cli
