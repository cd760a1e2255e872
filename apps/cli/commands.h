// Each `kazeia <verb>` lives in its own cmd_<verb>.cpp and registers itself
// with a static CommandRegistration, so adding a verb touches no other file.
// A command's setup function adds its subcommand and sets *run to the
// handler, which returns the process exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace kazeia::cli {

using CommandSetup = void (*)(CLI::App& app, std::function<int()>* run);

std::vector<CommandSetup>& command_registry();

struct CommandRegistration {
  explicit CommandRegistration(CommandSetup setup) { command_registry().push_back(setup); }
};

// Prints "error: <message>" to stderr and returns exit code 1.
int fail(const std::string& message);

}  // namespace kazeia::cli
