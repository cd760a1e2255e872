// Hand-written transcripts (tests/text/transcripts/*.txt) through the stream
// parser: the events must match the expectations, and every chunking (two
// pieces at each byte offset, byte by byte, random pieces) must give the same
// merged events as feeding the text whole.
//
// Transcript file format:
//   # comment (outside a transcript's input)
//   === NAME                       starts a transcript (NAME: [A-Za-z0-9_])
//   format: hermes | qwen35
//   starts_in_think: true          (optional)
//   tools: SET                     (optional; a set of tools.json)
//   --- input
//   the model output, line by line: the lines are joined with "\n" and the
//   line break before "--- expect" is not part of it (an empty line there
//   makes the text end with a newline)
//   --- expect
//   one JSON object per expected (merged) event, in order:
//     {"type": "think" | "answer", "text": ...}
//     {"type": "tool_call", "id", "name", "arguments", ["in_think"], ["raw"]}
//     {"type": "error", "id", "raw", "message_contains", ["name"], ["in_think"]}
//   absent "name" means empty, absent "in_think" means false.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/stream_parser.h"

namespace kazeia::text {
namespace {

using ordered_json = nlohmann::ordered_json;

const std::string kTranscriptDir = std::string(KAZEIA_SOURCE_DIR "/tests/text/transcripts");

struct Transcript {
  std::string file;
  int line = 0;
  std::string name;
  ToolCallFormat format = ToolCallFormat::kHermes;
  bool starts_in_think = false;
  std::string tools;  // tool set name, "" for no tool list
  std::string input;
  std::vector<ordered_json> expect;
  std::string load_error;  // set when the file could not be read as a transcript
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

void parse_transcript_file(const std::string& path, std::vector<Transcript>& out) {
  enum class State { kOutside, kHeader, kInput, kExpect } state = State::kOutside;
  const std::string file = std::filesystem::path(path).filename().string();
  std::vector<std::string> input_lines;
  auto fail = [&](int line, const std::string& what) {
    Transcript t;
    t.file = file;
    t.line = line;
    t.name = "load_error_" + std::to_string(out.size());
    t.load_error = file + ":" + std::to_string(line) + ": " + what;
    out.push_back(std::move(t));
  };
  const std::vector<std::string> lines = split_lines(read_text(path));
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const int line_no = static_cast<int>(i + 1);
    if (state != State::kInput && line.rfind("=== ", 0) == 0) {
      Transcript t;
      t.file = file;
      t.line = line_no;
      t.name = line.substr(4);
      out.push_back(std::move(t));
      state = State::kHeader;
      continue;
    }
    switch (state) {
      case State::kOutside:
        if (!line.empty() && line[0] != '#') fail(line_no, "text outside a transcript");
        break;
      case State::kHeader: {
        if (line.empty() || line[0] == '#') break;
        if (line == "--- input") {
          state = State::kInput;
          input_lines.clear();
          break;
        }
        const size_t colon = line.find(": ");
        if (colon == std::string::npos) {
          fail(line_no, "expected 'key: value'");
          break;
        }
        const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
        Transcript& t = out.back();
        if (key == "format" && value == "hermes") t.format = ToolCallFormat::kHermes;
        else if (key == "format" && value == "qwen35") t.format = ToolCallFormat::kQwen35;
        else if (key == "starts_in_think") t.starts_in_think = value == "true";
        else if (key == "tools") t.tools = value;
        else fail(line_no, "unknown header '" + line + "'");
        break;
      }
      case State::kInput:
        if (line == "--- expect") {
          std::string joined;
          for (size_t k = 0; k < input_lines.size(); ++k) joined += (k ? "\n" : "") + input_lines[k];
          out.back().input = joined;
          state = State::kExpect;
        } else {
          input_lines.push_back(line);
        }
        break;
      case State::kExpect: {
        if (line.empty() || line[0] == '#') break;
        ordered_json j = ordered_json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object()) fail(line_no, "expected event is not a JSON object");
        else out.back().expect.push_back(std::move(j));
        break;
      }
    }
  }
  if (state == State::kHeader || state == State::kInput) fail(static_cast<int>(lines.size()), "transcript not finished");
}

const std::vector<Transcript>& all_transcripts() {
  static const std::vector<Transcript> transcripts = [] {
    std::vector<std::string> files;
    if (std::filesystem::is_directory(kTranscriptDir))
      for (const auto& entry : std::filesystem::directory_iterator(kTranscriptDir))
        if (entry.path().extension() == ".txt") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    std::vector<Transcript> out;
    for (const std::string& f : files) parse_transcript_file(f, out);
    return out;
  }();
  return transcripts;
}

const std::map<std::string, std::map<std::string, nlohmann::json>>& tool_sets() {
  static const auto sets = [] {
    std::map<std::string, std::map<std::string, nlohmann::json>> out;
    const nlohmann::json j = nlohmann::json::parse(read_text(kTranscriptDir + "/tools.json"), nullptr, false);
    if (j.is_object())
      for (const auto& [set, tools] : j.items())
        for (const auto& [name, schema] : tools.items()) out[set][name] = schema;
    // A set may be empty ("none"): make sure it exists.
    if (j.is_object())
      for (const auto& [set, tools] : j.items()) out[set];
    return out;
  }();
  return sets;
}

StreamParser make_parser(const Transcript& t) {
  StreamParserOptions options;
  options.starts_in_think = t.starts_in_think;
  if (!t.tools.empty()) {
    auto it = tool_sets().find(t.tools);
    EXPECT_NE(it, tool_sets().end()) << "unknown tool set " << t.tools;
    options.known_tools = it != tool_sets().end() ? it->second : std::map<std::string, nlohmann::json>{};
  }
  return StreamParser(t.format, options);
}

// Feeds `text` cut at the given offsets (sorted), then finishes.
std::vector<StreamEvent> parse_pieces(const Transcript& t, const std::string& text, const std::vector<size_t>& cuts,
                                      std::vector<StreamEvent>* raw_events = nullptr) {
  StreamParser parser = make_parser(t);
  std::vector<StreamEvent> events;
  size_t from = 0;
  for (size_t cut : cuts) {
    parser.feed(std::string_view(text).substr(from, cut - from), events);
    from = cut;
  }
  parser.feed(std::string_view(text).substr(from), events);
  parser.finish(events);
  if (raw_events) *raw_events = events;
  return merge_text_events(events);
}

std::string dump_events(const std::vector<StreamEvent>& events) {
  std::string s;
  for (const StreamEvent& e : events) {
    ordered_json j = stream_event_to_json(e);
    if (e.type == StreamEventType::kToolCall) j["raw"] = e.raw;
    s += "  " + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return s.empty() ? "  (no events)\n" : s;
}

// Checks one event against its expectation; returns "" or what differs.
std::string check_event(const StreamEvent& got, const ordered_json& want) {
  const std::string type = want.value("type", "");
  if (type != stream_event_type_name(got.type)) return "type " + std::string(stream_event_type_name(got.type));
  if (type == "think" || type == "answer") {
    if (got.text != want.value("text", std::string("\x01missing"))) return "text";
    return "";
  }
  if (got.id != want.value("id", "")) return "id";
  if (got.name != want.value("name", "")) return "name";
  if (got.in_think != want.value("in_think", false)) return "in_think";
  if (want.contains("raw") && got.raw != want["raw"].get<std::string>()) return "raw";
  if (type == "tool_call") {
    if (!want.contains("arguments")) return "expectation lacks arguments";
    if (got.arguments != want["arguments"]) return "arguments";
    if (!got.message.empty()) return "message should be empty";
  } else {
    if (!want.contains("raw")) return "expectation lacks raw";
    if (!want.contains("message_contains")) return "expectation lacks message_contains";
    if (got.message.find(want["message_contains"].get<std::string>()) == std::string::npos) return "message";
  }
  return "";
}

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const Transcript& t, std::ostream* os) { *os << t.file << ":" << t.line << " " << t.name; }

class TranscriptTest : public ::testing::TestWithParam<Transcript> {};

TEST_P(TranscriptTest, MatchesHandWrittenEvents) {
  const Transcript& t = GetParam();
  ASSERT_TRUE(t.load_error.empty()) << t.load_error;
  std::vector<StreamEvent> raw_events;
  const std::vector<StreamEvent> got = parse_pieces(t, t.input, {}, &raw_events);
  std::string problem;
  if (got.size() != t.expect.size()) problem = "expected " + std::to_string(t.expect.size()) + " events";
  for (size_t i = 0; problem.empty() && i < got.size(); ++i) {
    std::string what = check_event(got[i], t.expect[i]);
    if (!what.empty()) problem = "event " + std::to_string(i) + ": " + what;
  }
  EXPECT_TRUE(problem.empty()) << t.file << ":" << t.line << " " << t.name << ": " << problem << "\ngot:\n"
                               << dump_events(got);
  // Raw stream: no empty text pieces.
  for (const StreamEvent& e : raw_events) {
    if (e.type == StreamEventType::kThink || e.type == StreamEventType::kAnswer) {
      EXPECT_FALSE(e.text.empty());
    }
  }
}

TEST_P(TranscriptTest, EveryTwoPieceSplitGivesTheSameEvents) {
  const Transcript& t = GetParam();
  ASSERT_TRUE(t.load_error.empty()) << t.load_error;
  const std::vector<StreamEvent> whole = parse_pieces(t, t.input, {});
  for (size_t cut = 0; cut <= t.input.size(); ++cut) {
    const std::vector<StreamEvent> split = parse_pieces(t, t.input, {cut});
    ASSERT_EQ(split, whole) << t.name << ": split at byte " << cut << "\nwhole:\n"
                            << dump_events(whole) << "split:\n"
                            << dump_events(split);
  }
}

TEST_P(TranscriptTest, ByteByByteGivesTheSameEvents) {
  const Transcript& t = GetParam();
  ASSERT_TRUE(t.load_error.empty()) << t.load_error;
  std::vector<size_t> cuts;
  for (size_t i = 1; i < t.input.size(); ++i) cuts.push_back(i);
  std::vector<StreamEvent> raw_events;
  const std::vector<StreamEvent> bytewise = parse_pieces(t, t.input, cuts, &raw_events);
  EXPECT_EQ(bytewise, parse_pieces(t, t.input, {})) << t.name << "\nbyte by byte:\n" << dump_events(bytewise);
  for (const StreamEvent& e : raw_events) {
    if (e.type == StreamEventType::kThink || e.type == StreamEventType::kAnswer) {
      EXPECT_FALSE(e.text.empty());
    }
  }
}

TEST_P(TranscriptTest, RandomPiecesGiveTheSameEvents) {
  const Transcript& t = GetParam();
  ASSERT_TRUE(t.load_error.empty()) << t.load_error;
  const std::vector<StreamEvent> whole = parse_pieces(t, t.input, {});
  std::mt19937 rng(12345);
  for (int round = 0; round < 50 && !t.input.empty(); ++round) {
    std::uniform_int_distribution<size_t> pick(0, t.input.size());
    std::vector<size_t> cuts(1 + round % 7);
    for (size_t& c : cuts) c = pick(rng);
    std::sort(cuts.begin(), cuts.end());
    ASSERT_EQ(parse_pieces(t, t.input, cuts), whole) << t.name << ": round " << round;
  }
}

TEST_P(TranscriptTest, ReusedParserGivesTheSameEventsWithLaterIds) {
  const Transcript& t = GetParam();
  ASSERT_TRUE(t.load_error.empty()) << t.load_error;
  StreamParser parser = make_parser(t);
  std::vector<StreamEvent> first, second;
  parser.feed(t.input, first);
  parser.finish(first);
  parser.feed(t.input, second);
  parser.finish(second);
  ASSERT_EQ(first.size(), second.size());
  size_t calls = 0;
  for (const StreamEvent& e : first) calls += e.type == StreamEventType::kToolCall || e.type == StreamEventType::kError;
  for (size_t i = 0; i < first.size(); ++i) {
    StreamEvent expected = first[i];
    if (!expected.id.empty()) expected.id = "call_" + std::to_string(std::stoul(expected.id.substr(5)) + calls);
    EXPECT_EQ(second[i], expected) << t.name << ": event " << i;
  }
}

std::string transcript_name(const ::testing::TestParamInfo<Transcript>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Transcripts, TranscriptTest, ::testing::ValuesIn(all_transcripts()), transcript_name);

TEST(TranscriptFiles, AtLeastSixtyUniquelyNamedTranscriptsCoveringBothFormats) {
  const auto& transcripts = all_transcripts();
  std::set<std::string> names;
  size_t hermes = 0, qwen35 = 0, with_expected_events = 0;
  for (const Transcript& t : transcripts) {
    EXPECT_TRUE(t.load_error.empty()) << t.load_error;
    EXPECT_TRUE(names.insert(t.name).second) << "duplicate transcript name " << t.name;
    (t.format == ToolCallFormat::kHermes ? hermes : qwen35)++;
    with_expected_events += !t.expect.empty();
  }
  EXPECT_GE(transcripts.size(), 60u);
  EXPECT_GE(hermes, 20u);
  EXPECT_GE(qwen35, 20u);
  EXPECT_GE(with_expected_events, transcripts.size() - 5);
}

}  // namespace
}  // namespace kazeia::text
