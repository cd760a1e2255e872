// kazeia template -m MODEL --request FILE.json [--info]
//
// Prints the prompt the model's chat template makes of one request. FILE
// holds the request object ({"messages": [...], ...}), or a line of the
// golden chat_template/*.jsonl files (an object with a "request" key);
// "-" reads standard input. The prompt is written as is, without an added
// newline, so it can be compared byte for byte.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "kazeia/chat_template.h"

namespace kazeia::cli {

namespace {

bool read_all(const std::string& path, std::string* out) {
  if (path == "-") {
    out->assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

void setup_template(CLI::App& app, std::function<int()>* run) {
  struct Options {
    std::string model;
    std::string request;
    bool info = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("template", "Render a chat request with the model's chat template");
  cmd->add_option("-m,--model", opts->model, "GGUF file")->required();
  cmd->add_option("--request", opts->request, "JSON file with the request (or a golden line with \"request\"); - for stdin")
      ->required();
  cmd->add_flag("--info", opts->info, "Also print the template family and any fallback warning to stderr");
  cmd->callback([run, opts] {
    *run = [opts] {
      std::string text;
      if (!read_all(opts->request, &text)) return fail("cannot read " + opts->request);
      auto doc = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded()) return fail(opts->request + ": not valid JSON");
      if (doc.is_object() && !doc.contains("messages") && doc.contains("request")) text = doc["request"].dump();

      auto renderer = ChatTemplateRenderer::from_model(opts->model);
      if (!renderer.ok()) return fail(renderer.status().to_string());
      const ChatTemplateInfo info = renderer->info();
      if (opts->info) {
        // Fallback warnings are also logged (KAZEIA_LOG); --info repeats them next to the family.
        std::fprintf(stderr, "template family: %s%s\n", info.family.c_str(), info.fallback ? " (fallback)" : "");
        for (const auto& w : info.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
      }
      auto prompt = renderer->render(text);
      if (!prompt.ok()) return fail(prompt.status().to_string());
      std::fwrite(prompt->data(), 1, prompt->size(), stdout);
      return 0;
    };
  });
}

const CommandRegistration kTemplateRegistration("template", setup_template);

}  // namespace

}  // namespace kazeia::cli
