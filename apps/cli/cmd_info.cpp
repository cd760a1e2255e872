// kazeia info -m FILE [--json] [--full]
#include <cstdio>

#include "commands.h"
#include "kazeia/model_info.h"

namespace kazeia::cli {

namespace {
void setup_info(CLI::App& app, std::function<int()>* run) {
  struct Options {
    std::string model;
    bool json = false;
    bool full = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("info", "Describe a GGUF model: architecture, sizes, tensors, tokenizer");
  cmd->add_option("-m,--model", opts->model, "GGUF file")->required();
  cmd->add_flag("--json", opts->json, "Print JSON for scripts");
  cmd->add_flag("--full", opts->full, "With --json: print long metadata arrays in full");
  cmd->callback([run, opts] {
    *run = [opts] {
      InspectOptions io;
      io.full_metadata = opts->full;
      auto info = inspect_model(opts->model, io);
      if (!info.ok()) return fail(info.status().to_string());
      std::string out = opts->json ? format_model_info_json(*info) : format_model_info_table(*info);
      std::fwrite(out.data(), 1, out.size(), stdout);
      return 0;
    };
  });
}

const CommandRegistration kInfoRegistration("info", setup_info);
}  // namespace

}  // namespace kazeia::cli
