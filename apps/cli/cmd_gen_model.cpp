// kazeia gen-model --preset NAME | --arch A [sizes...] --type T --seed S [--tokenizer-from F] [--mtp] -o OUT
// kazeia gen-model --list-presets
#include <cstdio>
#include <memory>
#include <sstream>

#include "commands.h"
#include "kazeia/gen_model.h"

namespace kazeia::cli {

namespace {

// "11,11,10,0" -> {11, 11, 10, 0}
bool parse_sections(const std::string& text, std::array<int32_t, 4>* out) {
  std::stringstream ss(text);
  std::string item;
  size_t n = 0;
  while (std::getline(ss, item, ',')) {
    if (n == 4 || item.empty()) return false;
    try {
      size_t used = 0;
      (*out)[n++] = std::stoi(item, &used);
      if (used != item.size()) return false;
    } catch (...) {
      return false;
    }
  }
  return n == 4;
}

void setup_gen_model(CLI::App& app, std::function<int()>* run) {
  struct Options {
    GenModelOptions gen;
    std::string out;
    std::string sections;
    bool untied = false;
    bool list = false;
    bool dry_run = false;
  };
  auto opts = std::make_shared<Options>();
  GenModelOptions& g = opts->gen;
  CLI::App* cmd = app.add_subcommand(
      "gen-model", "Write a deterministic random-weight GGUF model (llama / qwen3 / qwen35) for tests and benchmarks");
  cmd->add_flag("--list-presets", opts->list, "List the presets and file types, then exit");
  cmd->add_flag("--dry-run", opts->dry_run, "Print the exact file size and counts without generating");
  cmd->add_option("--preset", g.preset, "Named shapes (see --list-presets)");
  cmd->add_option("--arch", g.arch, "llama | qwen3 | qwen35 (without --preset: start from its tiny shapes)");
  cmd->add_option("-o,--output", opts->out, "Output GGUF file");
  cmd->add_option("--type", g.type, "f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q4_k_m q5_k_m q6_k")->capture_default_str();
  cmd->add_option("--seed", g.seed, "Weight seed")->capture_default_str();
  cmd->add_option("--scale", g.weight_scale, "Multiplier of every matrix's standard deviation")->capture_default_str();
  cmd->add_option("--tokenizer-from", g.tokenizer_from, "Copy every tokenizer.* key from this GGUF (sets the vocabulary size)");
  cmd->add_option("--tokenizer", g.tokenizer, "Synthetic tokenizer: bpe (Qwen style) or spm (llama style); default by arch");
  cmd->add_flag("--mtp", g.mtp, "qwen35: append one multi-token-prediction block (as real Qwen3.5 files have)");
  cmd->add_option("--name", g.name, "general.name (default: {preset}-random-seed{seed})");
  cmd->add_option("--threads", g.n_threads, "Worker threads (0: all cores; the file does not depend on it)");
  cmd->add_option("--embd", g.n_embd, "Embedding length");
  cmd->add_option("--layers", g.n_layer, "Trunk layers");
  cmd->add_option("--ff", g.n_ff, "Feed-forward length");
  cmd->add_option("--heads", g.n_head, "Attention query heads");
  cmd->add_option("--heads-kv", g.n_head_kv, "Attention key/value heads");
  cmd->add_option("--head-dim", g.head_dim, "Attention head dimension (key_length = value_length)");
  cmd->add_option("--vocab", g.n_vocab, "Vocabulary size (synthetic tokenizers pad with [PAD{id}] tokens)");
  cmd->add_option("--ctx", g.context_length, "context_length");
  cmd->add_option("--rope-base", g.rope_freq_base, "rope.freq_base");
  cmd->add_option("--rope-dims", g.rope_dims, "Rotary dims per head (partial rotary)");
  cmd->add_option("--rope-sections", opts->sections, "qwen35 rope.dimension_sections, e.g. 11,11,10,0");
  cmd->add_option("--rms-eps", g.rms_eps, "RMSNorm epsilon");
  cmd->add_flag("--untied", opts->untied, "Write a separate output.weight");
  cmd->add_option("--ssm-conv", g.ssm_conv_kernel, "qwen35 ssm.conv_kernel");
  cmd->add_option("--ssm-state", g.ssm_state_size, "qwen35 ssm.state_size (DeltaNet head dim)");
  cmd->add_option("--ssm-groups", g.ssm_group_count, "qwen35 ssm.group_count (DeltaNet key heads)");
  cmd->add_option("--ssm-dt-rank", g.ssm_time_step_rank, "qwen35 ssm.time_step_rank (DeltaNet value heads)");
  cmd->add_option("--attn-interval", g.full_attention_interval, "qwen35 full_attention_interval");
  cmd->add_option("--layer-pattern", g.layer_pattern, "qwen35 explicit layers: R = DeltaNet, A = attention, e.g. RRRA");
  cmd->callback([run, opts] {
    *run = [opts] {
      if (opts->list) {
        std::printf("presets:\n");
        for (const std::string& p : test_model_presets())
          std::printf("  %-14s %s\n", p.c_str(), test_model_preset_description(p).c_str());
        std::printf("types:");
        for (const std::string& t : test_model_file_types()) std::printf(" %s", t.c_str());
        std::printf("\n");
        return 0;
      }
      if (opts->gen.preset.empty() && opts->gen.arch.empty()) return fail("gen-model: give --preset or --arch");
      if (opts->out.empty() && !opts->dry_run) return fail("gen-model: give -o OUT.gguf");
      if (!opts->sections.empty()) {
        std::array<int32_t, 4> s{};
        if (!parse_sections(opts->sections, &s)) return fail("--rope-sections: expected four integers, e.g. 11,11,10,0");
        opts->gen.rope_sections = s;
      }
      if (opts->untied) opts->gen.tied_output = false;
      if (opts->dry_run) {
        auto d = describe_test_model(opts->gen);
        if (!d.ok()) return fail(d.status().to_string());
        std::printf("would write %llu bytes, %llu tensors, %llu parameters, vocab %u\n",
                    static_cast<unsigned long long>(d->file_bytes), static_cast<unsigned long long>(d->n_tensors),
                    static_cast<unsigned long long>(d->n_parameters), d->n_vocab);
        return 0;
      }
      auto r = generate_test_model_report(opts->gen, opts->out);
      if (!r.ok()) return fail(r.status().to_string());
      std::printf("wrote %s: %llu bytes, %llu tensors, %llu parameters, vocab %u, %.2f s\n", opts->out.c_str(),
                  static_cast<unsigned long long>(r->file_bytes), static_cast<unsigned long long>(r->n_tensors),
                  static_cast<unsigned long long>(r->n_parameters), r->n_vocab, r->seconds);
      return 0;
    };
  });
}

const CommandRegistration kGenModelRegistration("gen-model", setup_gen_model);
}  // namespace

}  // namespace kazeia::cli
