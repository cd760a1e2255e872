// kazeia parse-stream --format hermes|qwen35 [--starts-in-think] [--chunk N]
//                     [--tools FILE] [--merge]
// Reads model output on stdin, feeds it to the stream parser N bytes at a
// time and prints one JSON line per event as soon as it is known.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cmd_common.h"
#include "commands.h"
#include "kazeia/stream_parser.h"

namespace kazeia::cli {

namespace {

void print_events(const std::vector<StreamEvent>& events) {
  for (const StreamEvent& event : events) {
    std::string line = stream_event_to_json(event);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  std::fflush(stdout);
}

int run_parse_stream(const std::string& format_name, bool starts_in_think, size_t chunk, const std::string& tools_path,
                     bool merge) {
  auto format = parse_tool_call_format(format_name);
  if (!format.ok()) return fail(format.status().to_string());
  StreamParserOptions options;
  options.starts_in_think = starts_in_think;
  if (!tools_path.empty()) {
    auto text = read_file(tools_path);
    if (!text.ok()) return fail(text.status().to_string());
    auto tools = tools_from_json(*text);
    if (!tools.ok()) return fail(tools.status().with_context(tools_path).to_string());
    options.known_tools = std::move(*tools);
  }
  auto parser = StreamParser::create(*format, options);
  if (!parser.ok()) return fail(parser.status().to_string());

  std::vector<char> buffer(chunk);
  std::vector<StreamEvent> events;   // this chunk's events (all of them with --merge)
  for (;;) {
    const size_t n = std::fread(buffer.data(), 1, buffer.size(), stdin);
    if (n == 0) break;
    parser->feed(std::string_view(buffer.data(), n), events);
    if (!merge) {
      print_events(events);
      events.clear();
    }
  }
  if (std::ferror(stdin)) return fail("reading stdin failed");
  parser->finish(events);
  print_events(merge ? merge_text_events(events) : events);
  return 0;
}

void setup_parse_stream(CLI::App& app, std::function<int()>* run) {
  struct Options {
    std::string format;
    bool starts_in_think = false;
    size_t chunk = 4096;
    std::string tools;
    bool merge = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "parse-stream", "Split model output (stdin) into think / answer / tool_call / error events (JSON lines)");
  cmd->add_option("--format", opts->format, "Tool-call syntax: hermes (Qwen3, JSON) or qwen35 (XML parameters)")
      ->required();
  cmd->add_flag("--starts-in-think", opts->starts_in_think, "The prompt already opened <think>");
  cmd->add_option("--chunk", opts->chunk, "Feed the parser N bytes at a time")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 30));
  cmd->add_option("--tools", opts->tools,
                  "OpenAI-style tools JSON array: unknown functions become errors, XML values are typed");
  cmd->add_flag("--merge", opts->merge, "Join consecutive text pieces (prints everything at the end)");
  cmd->callback([run, opts] {
    *run = [opts] { return run_parse_stream(opts->format, opts->starts_in_think, opts->chunk, opts->tools, opts->merge); };
  });
}

const CommandRegistration kParseStreamRegistration("parse-stream", setup_parse_stream);

}  // namespace

}  // namespace kazeia::cli
