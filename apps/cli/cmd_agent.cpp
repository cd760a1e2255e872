// kazeia agent -m M [--tools calculator,timer,clock,memory,web_search]
//   [--memory FILE.db] [--search-cache FILE.jsonl] [--max-rounds N]
//   [--max-think N] [--no-think] [--prompt TEXT] [--json]
// An agent that thinks, calls tools and remembers. Interactive by default
// (one user message per line on stdin; /exit, /reset); --prompt runs one turn.
// Events print as readable text (reasoning dimmed on a terminal, calls and
// results marked) or, with --json, as one JSON object per line.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cmd_common.h"
#include "kazeia/agent.h"

namespace kazeia::cli {
namespace {

// Ctrl-C during a turn stops that turn (at the next event); at the prompt it
// ends the program as usual.
std::atomic<bool> g_in_turn{false};
std::atomic<bool> g_interrupted{false};

void on_sigint(int) {
  if (!g_in_turn.load()) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  g_interrupted.store(true);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Readable event printer: keeps track of what it printed last so kinds of
// output are separated by a line break, and dims reasoning on a terminal.
class EventPrinter {
 public:
  explicit EventPrinter(bool json) : json_(json), tty_(isatty(fileno(stdout)) != 0) {}

  bool print(const AgentEvent& e) {
    if (json_) {
      const std::string line = agent_event_to_json(e);
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
      return true;
    }
    switch (e.type) {
      case AgentEventType::kThink:
        if (last_ != AgentEventType::kThink) start_block(tty_ ? "\x1b[2m" : "[think] ");
        put(e.text);
        break;
      case AgentEventType::kAnswer:
        if (last_ != AgentEventType::kAnswer) start_block("");
        put(e.text);
        break;
      case AgentEventType::kToolCall:
        start_block("");
        put(mark("-> ") + e.name + " " + e.arguments_json + "\n");
        break;
      case AgentEventType::kToolResult:
        start_block("");
        put(mark(e.ok ? "<- " : "<- error ") + e.name + ": " + e.text + "\n");
        break;
      case AgentEventType::kError:
        start_block("");
        put(mark("!! ") + e.text + "\n");
        break;
      case AgentEventType::kDone: {
        start_block("");
        std::fflush(stdout);  // the usage line goes to stderr, after the answer
        const AgentUsage& u = e.usage;
        std::fprintf(stderr,
                     "[%d round(s), %lld prompt tokens (+%lld reused), %lld generated (%lld thinking), "
                     "%.2f s generating, %.2f s in tools, stop: %s]\n",
                     u.rounds, static_cast<long long>(u.prompt_tokens), static_cast<long long>(u.reused_tokens),
                     static_cast<long long>(u.generated_tokens), static_cast<long long>(u.think_tokens),
                     u.generation_seconds, u.tool_seconds, u.stop_reason.c_str());
        break;
      }
    }
    last_ = e.type;
    std::fflush(stdout);
    return true;
  }

 private:
  std::string mark(const std::string& m) const { return tty_ ? "\x1b[1m" + m + "\x1b[0m" : m; }
  void start_block(const char* prefix) {
    if (last_ == AgentEventType::kThink && tty_) put("\x1b[0m");
    if (!at_line_start_) put("\n");
    put(prefix);
  }
  void put(const std::string& s) {
    if (s.empty()) return;
    std::fwrite(s.data(), 1, s.size(), stdout);
    at_line_start_ = s.back() == '\n';
  }

  bool json_;
  bool tty_;
  AgentEventType last_ = AgentEventType::kDone;
  bool at_line_start_ = true;
};

void setup_agent(CLI::App& app, std::function<int()>* run) {
  struct Options {
    ModelFlags model;
    AgentOptions agent;
    std::string tools = "calculator,timer,clock";
    std::string prompt;
    bool no_think = false;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("agent", "Agent with tools and memory (interactive; /exit, /reset)");
  o->model.add_to(cmd);
  cmd->add_option("--tools", o->tools, "Tools: calculator,timer,clock,memory,web_search (\"\" for none)")
      ->capture_default_str();
  cmd->add_option("--memory", o->agent.memory_path, "Memory database (SQLite); needed by the memory tools");
  cmd->add_option("--search-cache", o->agent.web_search_cache, "Offline web_search cache (JSONL)");
  cmd->add_option("--max-rounds", o->agent.max_rounds, "Generation rounds per user message")->capture_default_str();
  cmd->add_option("--max-think", o->agent.max_think_tokens, "Reasoning budget in tokens per round (-1: none)")
      ->capture_default_str();
  cmd->add_flag("--no-think", o->no_think, "Render prompts with thinking off");
  cmd->add_option("-n,--n-predict", o->agent.max_tokens_per_round, "Max tokens per round (-1: until EOS)")
      ->capture_default_str();
  cmd->add_option("--system", o->agent.system_prompt, "System prompt");
  cmd->add_option("-p,--prompt", o->prompt, "Run one turn with this message and exit");
  cmd->add_flag("--json", o->json, "Print events as JSON lines");
  add_sampling_flags(cmd, o->agent.sampling);
  cmd->callback([run, o] {
    *run = [o] {
      o->agent.tools = split_list(o->tools);
      o->agent.enable_thinking = !o->no_think;
      if (!o->json && o->prompt.empty())
        o->agent.on_timer_fired = [](const std::string& notice) { std::fprintf(stderr, "\n%s", notice.c_str()); };
      auto engine = o->model.load();
      if (!engine.ok()) return fail(engine.status().to_string());
      auto agent = Agent::create(**engine, o->agent);
      if (!agent.ok()) return fail(agent.status().to_string());
      EventPrinter printer(o->json);
      auto turn = [&](const std::string& message) {
        g_interrupted = false;
        g_in_turn = true;
        auto reply = (*agent)->run(message, [&](const AgentEvent& e) { return printer.print(e) && !g_interrupted; });
        g_in_turn = false;
        return reply.ok() ? 0 : fail(reply.status().to_string());
      };
      static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");
      std::signal(SIGINT, on_sigint);
      int rc = 0;
      if (!o->prompt.empty()) {
        rc = turn(o->prompt);
      } else {
        if (!o->json) {
          std::string tools;
          for (const auto& t : (*agent)->tool_names()) tools += (tools.empty() ? "" : ", ") + t;
          std::fprintf(stderr, "kazeia agent — %s (%s template); tools: %s. /exit to quit, /reset to start over.\n",
                       (*engine)->architecture().c_str(), (*engine)->chat_template_family().c_str(),
                       tools.empty() ? "none" : tools.c_str());
        }
        std::string line;
        while (true) {
          if (!o->json) {
            std::fputs("\n> ", stdout);
            std::fflush(stdout);
          }
          if (!std::getline(std::cin, line) || line == "/exit") break;
          if (line == "/reset") {
            (*agent)->reset();
            continue;
          }
          if (line.empty()) continue;
          rc = turn(line);  // a failed turn is reported; the conversation goes on
        }
      }
      // A tool that timed out may still be running: give it a moment.
      (*agent)->wait_tools_idle(2000);
      return rc;
    };
  });
}

const CommandRegistration kAgentRegistration("agent", setup_agent);

}  // namespace
}  // namespace kazeia::cli
