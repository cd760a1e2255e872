// The `kazeia` command: one binary, one verb per task (see commands.h).
#include <cstdio>
#include <functional>

#include "commands.h"
#include "kazeia/version.h"

namespace kazeia::cli {

std::map<std::string, CommandSetup>& command_registry() {
  static std::map<std::string, CommandSetup> registry;
  return registry;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

}  // namespace kazeia::cli

int main(int argc, char** argv) {
  CLI::App app{"kazeia — on-device LLM inference and agents"};
  app.set_version_flag("--version", std::string("kazeia ") + kazeia::version_string());
  app.require_subcommand(1);
  std::function<int()> run;
  for (const auto& [verb, setup] : kazeia::cli::command_registry()) setup(app, &run);
  CLI11_PARSE(app, argc, argv);
  return run ? run() : 1;
}
