// Tokenizer throughput (google-benchmark): encode and decode of English text
// with the vocabularies of the shared test models (skipped when absent).
//
//   build/bench/bench_tokenizer [--benchmark_filter=Encode]
//
// The text is a built-in English passage repeated to 1 MiB, so nothing is
// downloaded; bytes_per_second is the figure to read (one thread).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "text/detokenizer.h"
#include "text/tokenizer.h"

namespace {

using kazeia::text::Tokenizer;

constexpr const char* kPassage =
    "The old lighthouse keeper had lived on the island for almost forty years, and in all that time "
    "he had never once missed lighting the lamp at dusk. Every evening he climbed the hundred and "
    "twelve steps of the spiral staircase, polished the great lens until it gleamed, and watched the "
    "first beam sweep out across the water. Ships passed in the night, their crews unaware of the man "
    "who kept them safe; he preferred it that way.\n\n"
    "In the spring of that year, however, a letter arrived from the mainland. The authorities had "
    "decided that the light would be automated, and that his services would no longer be required "
    "after the end of the summer. He read the letter twice, folded it carefully, and put it in the "
    "drawer of his writing desk, next to his logbooks and a photograph of his late wife.\n\n"
    "\"It's progress,\" the young engineer told him when he came to install the new equipment. "
    "\"You'll be able to retire, see the world, do whatever you've always wanted to do.\" The keeper "
    "nodded politely, but he didn't say what he was thinking: that he had already seen the world, "
    "every night, in the patient turning of the light over the dark sea. In 1987 a storm had torn "
    "the roof off the boathouse; in 2003 a fishing boat ran aground on the northern rocks, and he "
    "rowed out alone to bring its three sailors home. Those were the days he remembered.\n\n";

const std::string& english_text() {
  static const std::string text = [] {
    std::string t;
    while (t.size() < (1u << 20)) t += kPassage;
    return t;
  }();
  return text;
}

std::string model_path(const std::string& name) {
  const char* env = std::getenv("KAZEIA_TEST_DATA");
  const std::string dir = env && *env ? env : std::string(KAZEIA_SOURCE_DIR) + "/../shared";
  return dir + "/models/" + name;
}

// Loaded once per model; nullptr when the file is missing.
const Tokenizer* tokenizer_for(const std::string& model) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto it = cache.find(model);
  if (it != cache.end()) return it->second.get();
  std::unique_ptr<Tokenizer> tok;
  if (std::filesystem::exists(model_path(model))) {
    auto loaded = Tokenizer::load(model_path(model));
    if (loaded.ok()) tok = std::make_unique<Tokenizer>(std::move(loaded).value());
  }
  return cache.emplace(model, std::move(tok)).first->second.get();
}

void BM_Encode(benchmark::State& state, const std::string& model) {
  const Tokenizer* tok = tokenizer_for(model);
  if (!tok) {
    state.SkipWithError(("model not found: " + model_path(model)).c_str());
    return;
  }
  const std::string& text = english_text();
  size_t n_tokens = 0;
  for (auto _ : state) {
    auto ids = tok->encode(text, /*parse_special=*/true, /*add_special=*/false);
    n_tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(n_tokens);
}

// Short inputs one after the other: per-call overhead (special-token scan,
// regex setup) instead of bulk throughput.
void BM_EncodeLines(benchmark::State& state, const std::string& model) {
  const Tokenizer* tok = tokenizer_for(model);
  if (!tok) {
    state.SkipWithError(("model not found: " + model_path(model)).c_str());
    return;
  }
  const std::string text = std::string(kPassage);
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('.', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  for (auto _ : state) {
    for (const std::string& line : lines) benchmark::DoNotOptimize(tok->encode(line, true, false).data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_Decode(benchmark::State& state, const std::string& model) {
  const Tokenizer* tok = tokenizer_for(model);
  if (!tok) {
    state.SkipWithError(("model not found: " + model_path(model)).c_str());
    return;
  }
  const std::string& text = english_text();
  const std::vector<int32_t> ids = tok->encode(text, true, false);
  for (auto _ : state) {
    kazeia::text::StreamingDetokenizer stream(*tok);
    std::string out;
    out.reserve(text.size());
    for (int32_t id : ids) stream.push(id, out);
    out += stream.flush();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

BENCHMARK_CAPTURE(BM_Encode, qwen3, std::string("qwen3-tiny-f32.gguf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, qwen35, std::string("qwen35-chat-q8_0.gguf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, qwen3kq, std::string("qwen3-kq-q4_k_m.gguf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, stories260K_spm, std::string("stories260K.gguf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeLines, qwen3, std::string("qwen3-tiny-f32.gguf"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decode, qwen3, std::string("qwen3-tiny-f32.gguf"))->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
