// Helpers shared by the commands that load a model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "kazeia/engine.h"

namespace kazeia::cli {

inline const char* kv_type_name(KvCacheType t) { return t == KvCacheType::kF16 ? "f16" : "f32"; }

// --kv-type f16|f32 (llama.cpp's -ctk/-ctv f16 is its default too).
inline void add_kv_type_option(CLI::App* cmd, KvCacheType& kv_type) {
  std::map<std::string, KvCacheType> names;
  for (KvCacheType t : {KvCacheType::kF16, KvCacheType::kF32}) names[kv_type_name(t)] = t;
  cmd->add_option("--kv-type", kv_type, "KV cache element type: f16 (half the memory) or f32 (logits of an f32 cache)")
      ->transform(CLI::CheckedTransformer(names, CLI::ignore_case))
      ->default_str(kv_type_name(kv_type));
}

// --no-huge-pages: EngineOptions::huge_pages off.
inline void add_huge_pages_flag(CLI::App* cmd, bool& no_huge_pages) {
  cmd->add_flag("--no-huge-pages", no_huge_pages,
                "Do not read the weights in at load onto 2 MiB pages (nor reread a file cached in small pages)");
}

struct ModelFlags {
  std::string model;
  int threads = 0;
  int64_t ctx = 4096;
  KvCacheType kv_type = EngineOptions{}.kv_type;
  int64_t ubatch = EngineOptions{}.n_ubatch;
  bool no_huge_pages = false;

  void add_to(CLI::App* cmd, int64_t default_ctx = 4096) {
    ctx = default_ctx;
    cmd->add_option("-m,--model", model, "GGUF model file")->required();
    cmd->add_option("-t,--threads", threads, "Threads (default: physical cores)");
    cmd->add_option("-c,--ctx-size", ctx, "Context size in tokens")->capture_default_str();
    add_kv_type_option(cmd, kv_type);
    cmd->add_option("--ubatch-size,--ub", ubatch, "Tokens per forward pass (longer prompts run in micro-batches)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    add_huge_pages_flag(cmd, no_huge_pages);
  }
  Result<std::unique_ptr<Engine>> load() const {
    EngineOptions o;
    o.n_threads = threads;
    o.n_ctx = ctx;
    o.kv_type = kv_type;
    o.n_ubatch = ubatch;
    o.huge_pages = !no_huge_pages;
    return Engine::load(model, o);
  }
};

// --temp, --top-k, --top-p, --min-p, the penalties and -s/--seed.
inline void add_sampling_flags(CLI::App* cmd, SamplingOptions& s) {
  cmd->add_option("--temp", s.temperature, "Temperature (0: greedy)")->capture_default_str();
  cmd->add_option("--top-k", s.top_k, "Top-k (0: off)")->capture_default_str();
  cmd->add_option("--top-p", s.top_p, "Top-p (1: off)")->capture_default_str();
  cmd->add_option("--min-p", s.min_p, "Min-p (0: off)")->capture_default_str();
  cmd->add_option("--repeat-penalty", s.repeat_penalty, "Repetition penalty (1: off)")->capture_default_str();
  cmd->add_option("--repeat-last-n", s.repeat_last_n, "Tokens the penalties look at")->capture_default_str();
  cmd->add_option("--presence-penalty", s.presence_penalty, "Presence penalty")->capture_default_str();
  cmd->add_option("--frequency-penalty", s.frequency_penalty, "Frequency penalty")->capture_default_str();
  cmd->add_option("-s,--seed", s.seed, "Sampling seed")->capture_default_str();
}

// "1,2,3" or "[1, 2, 3]" -> ids; an error names the bad item.
Result<std::vector<int32_t>> parse_token_list(const std::string& text);

// Reads a whole file; an error names the path.
Result<std::string> read_file(const std::string& path);

}  // namespace kazeia::cli
