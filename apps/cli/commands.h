// Each `kazeia <verb>` lives in its own cmd_<verb>.cpp and registers itself
// with a static CommandRegistration, so adding a verb touches no other file.
// A command's setup function adds its subcommand and sets *run to the
// handler, which returns the process exit code. The registry is keyed by
// verb, so `kazeia --help` lists the verbs in order whatever order the
// registrations ran in (static initialisation order across files is not
// defined).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <string>

namespace kazeia::cli {

using CommandSetup = void (*)(CLI::App& app, std::function<int()>* run);

std::map<std::string, CommandSetup>& command_registry();

struct CommandRegistration {
  CommandRegistration(const char* verb, CommandSetup setup) { command_registry().emplace(verb, setup); }
};

// Prints "error: <message>" to stderr and returns exit code 1.
int fail(const std::string& message);

}  // namespace kazeia::cli
