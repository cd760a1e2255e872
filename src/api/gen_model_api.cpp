// Public entry points of the test-model generator: options -> config.
#include "kazeia/gen_model.h"

#include "models/test_model_generator.h"

namespace kazeia {
namespace {

// The preset (or the arch's tiny shapes) with the options applied on top.
Result<gen::GenModelConfig> config_from_options(const GenModelOptions& o) {
  std::optional<gen::GenModelConfig> base;
  if (!o.preset.empty()) {
    base = gen::gen_preset_config(o.preset);
    if (!base) return InvalidArgument("unknown preset '" + o.preset + "' (see --list-presets)");
  } else {
    auto arch = gen::gen_arch_from_name(o.arch);
    if (!arch) return InvalidArgument("unknown or missing architecture '" + o.arch + "': expected llama, qwen3 or qwen35");
    base = gen::gen_preset_config(*arch == gen::GenArch::kLlama ? "tiny-llama"
                                  : *arch == gen::GenArch::kQwen3 ? "tiny-qwen3" : "tiny-qwen35");
    base->preset.clear();  // named after the arch, not the preset it started from
  }
  gen::GenModelConfig c = *base;
  const auto apply = [](auto& field, const auto& value) { if (value) field = *value; };
  apply(c.n_embd, o.n_embd);
  apply(c.n_layer, o.n_layer);
  apply(c.n_ff, o.n_ff);
  apply(c.n_head, o.n_head);
  apply(c.n_head_kv, o.n_head_kv);
  apply(c.head_dim, o.head_dim);
  apply(c.n_vocab, o.n_vocab);
  apply(c.context_length, o.context_length);
  apply(c.rope_freq_base, o.rope_freq_base);
  apply(c.rope_dims, o.rope_dims);
  apply(c.rope_sections, o.rope_sections);
  apply(c.rms_eps, o.rms_eps);
  apply(c.tied_output, o.tied_output);
  apply(c.ssm_conv_kernel, o.ssm_conv_kernel);
  apply(c.ssm_state_size, o.ssm_state_size);
  apply(c.ssm_group_count, o.ssm_group_count);
  apply(c.ssm_time_step_rank, o.ssm_time_step_rank);
  apply(c.full_attention_interval, o.full_attention_interval);
  // Derived values of the preset must follow the overridden sizes.
  if (o.head_dim && !o.rope_dims) {
    // qwen35 rotates a quarter of each head (partial_rotary_factor 0.25), the others all of it.
    c.rope_dims = c.arch == gen::GenArch::kQwen35 ? (c.head_dim / 4) & ~1u : 0;
  }
  if ((o.head_dim || o.rope_dims) && !o.rope_sections) c.rope_sections = {};
  c.ssm_inner_size = 0;
  if (o.n_layer || o.full_attention_interval) c.recurrent_layers.clear();
  if (!o.layer_pattern.empty()) {
    c.recurrent_layers.clear();
    for (char ch : o.layer_pattern) {
      if (ch != 'R' && ch != 'A' && ch != 'r' && ch != 'a')
        return InvalidArgument("layer pattern '" + o.layer_pattern + "': use R (recurrent) and A (attention)");
      c.recurrent_layers.push_back(ch == 'R' || ch == 'r');
    }
    if (!o.n_layer) c.n_layer = static_cast<uint32_t>(c.recurrent_layers.size());
  }
  if (o.mtp) c.nextn_predict_layers = 1;

  auto type = gen::gen_file_type_from_name(o.type);
  if (!type) {
    std::string names;
    for (auto n : gen::gen_file_type_names()) names += (names.empty() ? "" : ", ") + std::string(n);
    return InvalidArgument("unknown file type '" + o.type + "': expected one of " + names);
  }
  c.file_type = *type;
  c.seed = o.seed;
  c.weight_scale = o.weight_scale;
  if (o.tokenizer == "bpe") c.tokenizer = gen::GenTokenizer::kByteBpe;
  else if (o.tokenizer == "spm") c.tokenizer = gen::GenTokenizer::kSentencePiece;
  else if (!o.tokenizer.empty()) return InvalidArgument("unknown tokenizer '" + o.tokenizer + "': expected bpe or spm");
  c.tokenizer_from = o.tokenizer_from;
  c.name = o.name;
  c.n_threads = o.n_threads;
  return c;
}

GenModelResult to_result(const gen::GenModelSummary& s) {
  GenModelResult r;
  r.file_bytes = s.file_bytes;
  r.n_tensors = s.n_tensors;
  r.n_parameters = s.n_parameters;
  r.n_vocab = s.n_vocab;
  r.seconds = s.seconds;
  return r;
}

}  // namespace

Result<GenModelResult> generate_test_model_report(const GenModelOptions& options, const std::string& out_path) {
  if (out_path.empty()) return InvalidArgument("no output path");
  KZ_ASSIGN_OR_RETURN(gen::GenModelConfig config, config_from_options(options));
  KZ_ASSIGN_OR_RETURN(gen::GenModelSummary s, gen::write_test_model(config, out_path));
  return to_result(s);
}

Result<GenModelResult> describe_test_model(const GenModelOptions& options) {
  KZ_ASSIGN_OR_RETURN(gen::GenModelConfig config, config_from_options(options));
  KZ_ASSIGN_OR_RETURN(gen::GenModelSummary s, gen::describe_test_model(config));
  return to_result(s);
}

Status generate_test_model(const GenModelOptions& options, const std::string& out_path) {
  auto r = generate_test_model_report(options, out_path);
  return r.ok() ? OkStatus() : r.status();
}

std::vector<std::string> test_model_presets() {
  std::vector<std::string> names;
  for (const auto& p : gen::gen_presets()) names.emplace_back(p.name);
  return names;
}

std::string test_model_preset_description(const std::string& preset) {
  for (const auto& p : gen::gen_presets())
    if (p.name == preset) return std::string(p.description);
  return "";
}

std::vector<std::string> test_model_file_types() {
  std::vector<std::string> names;
  for (auto n : gen::gen_file_type_names()) names.emplace_back(n);
  return names;
}

}  // namespace kazeia
