// Named shapes for generated models, and the arch / file-type name tables.
//
// A preset fixes every number that matters for speed (so anyone can
// reproduce a benchmark from its name); only the seed, file type and
// tokenizer are chosen at generation time.
#include <algorithm>
#include <cctype>

#include "models/test_model_generator.h"

namespace kazeia::gen {
namespace {

constexpr GenFileTypeInfo kFileTypes[] = {
    // ftype ids: llama.cpp's enum llama_ftype (LLAMA_FTYPE_ALL_F32 = 0, ...).
    {GenFileType::kF32, "f32", 0, TensorType::F32},
    {GenFileType::kF16, "f16", 1, TensorType::F16},
    {GenFileType::kBF16, "bf16", 32, TensorType::BF16},
    {GenFileType::kQ4_0, "q4_0", 2, TensorType::Q4_0},
    {GenFileType::kQ4_1, "q4_1", 3, TensorType::Q4_1},
    {GenFileType::kQ5_0, "q5_0", 8, TensorType::Q5_0},
    {GenFileType::kQ5_1, "q5_1", 9, TensorType::Q5_1},
    {GenFileType::kQ8_0, "q8_0", 7, TensorType::Q8_0},
    {GenFileType::kQ4_K_M, "q4_k_m", 15, TensorType::Q4_K},
    {GenFileType::kQ5_K_M, "q5_k_m", 17, TensorType::Q5_K},
    {GenFileType::kQ6_K, "q6_k", 18, TensorType::Q6_K},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ---- Test-sized shapes -----------------------------------------------------
// The tiny presets copy the dimensions of the shared reference files
// (../shared/models/README.md) so generated and shared files can be compared
// tensor by tensor; the "-k" variants have every ne0 a multiple of 256 so
// K-quant file types need no fallback types.

GenModelConfig tiny_llama() {
  GenModelConfig c;  // stories260K-like: adjacent-pair rope, untied output
  c.arch = GenArch::kLlama;
  c.n_embd = 64;
  c.n_layer = 4;
  c.n_ff = 192;  // stories260K has 172; 192 keeps ne0 of ffn_down a multiple of 32
  c.n_head = 8;
  c.n_head_kv = 4;
  c.head_dim = 8;
  c.n_vocab = 512;
  c.context_length = 2048;
  c.rope_freq_base = 10000.0f;
  c.rms_eps = 1e-5f;
  c.tied_output = false;
  return c;
}

GenModelConfig tiny_llama_k() {
  GenModelConfig c = tiny_llama();
  c.n_embd = 256;
  c.n_ff = 768;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 64;
  c.n_vocab = 1024;
  return c;
}

GenModelConfig tiny_qwen3() {  // qwen3-tiny's shapes with a 4,096-token vocabulary
  GenModelConfig c;
  c.arch = GenArch::kQwen3;
  c.n_embd = 64;
  c.n_layer = 2;
  c.n_ff = 128;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 16;
  c.n_vocab = 4096;
  c.context_length = 4096;
  c.rope_freq_base = 1e6f;
  return c;
}

GenModelConfig tiny_qwen3_k() {  // exactly qwen3-kq's shapes
  GenModelConfig c = tiny_qwen3();
  c.n_embd = 256;
  c.n_ff = 768;
  c.head_dim = 64;
  return c;
}

GenModelConfig tiny_qwen35() {  // qwen35-tiny's shapes (= qwen35-mtp's trunk) with 4,096 tokens
  GenModelConfig c;
  c.arch = GenArch::kQwen35;
  c.n_embd = 64;
  c.n_layer = 4;
  c.n_ff = 128;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 32;
  c.n_vocab = 4096;
  c.context_length = 4096;
  c.rope_freq_base = 1e7f;
  c.rope_dims = 8;
  c.rope_sections = {2, 1, 1, 0};
  c.ssm_conv_kernel = 4;
  c.ssm_state_size = 16;
  c.ssm_group_count = 2;
  c.ssm_time_step_rank = 4;
  c.full_attention_interval = 4;
  return c;
}

GenModelConfig tiny_qwen35_k() {
  GenModelConfig c = tiny_qwen35();
  c.n_embd = 256;
  c.n_ff = 768;
  c.head_dim = 64;
  c.rope_dims = 16;
  c.rope_sections = {3, 3, 2, 0};
  c.ssm_state_size = 64;  // attn_qkv [256, 512], ssm_out [256, 256]
  return c;
}

// ---- Real shapes -----------------------------------------------------------
// Qwen3: the Hugging Face config.json of Qwen/Qwen3-0.6B and Qwen/Qwen3-4B
// (hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
// head_dim, intermediate_size, vocab_size 151936, tie_word_embeddings true,
// rope_theta 1e6, max_position_embeddings 40960, rms_norm_eps 1e-6).

GenModelConfig qwen3_06b() {
  GenModelConfig c = tiny_qwen3();
  c.n_embd = 1024;
  c.n_layer = 28;
  c.n_ff = 3072;
  c.n_head = 16;
  c.n_head_kv = 8;
  c.head_dim = 128;
  c.n_vocab = 151936;
  c.context_length = 40960;
  return c;
}

GenModelConfig qwen3_4b() {
  GenModelConfig c = qwen3_06b();
  c.n_embd = 2560;
  c.n_layer = 36;
  c.n_ff = 9728;
  c.n_head = 32;
  c.n_head_kv = 8;
  return c;
}

// Qwen3.5: the text_config of Qwen/Qwen3.5-0.8B and Qwen/Qwen3.5-4B as quoted
// by public code (config fixtures and loaders found by search, not the
// Hugging Face page itself): head_dim 256, rope_theta 1e7,
// partial_rotary_factor 0.25 (64 rotary dims), mrope_section [11, 11, 10],
// linear_key_head_dim = linear_value_head_dim = 128, linear_conv_kernel_dim 4,
// full_attention_interval 4, vocab_size 248320, max_position_embeddings
// 262144, mtp_num_hidden_layers 1.
//   0.8B: hidden 1024, 24 layers, 8 q / 2 kv heads, intermediate 3584,
//         linear_num_key_heads 16, linear_num_value_heads 16, tied.
//   4B:   hidden 2560, 32 layers, 16 q / 4 kv heads, intermediate 9216,
//         linear_num_key_heads 16, linear_num_value_heads 32; tied per our
//         brief (not confirmed from a config.json).

GenModelConfig qwen35_08b() {
  GenModelConfig c = tiny_qwen35();
  c.n_embd = 1024;
  c.n_layer = 24;
  c.n_ff = 3584;
  c.n_head = 8;
  c.n_head_kv = 2;
  c.head_dim = 256;
  c.n_vocab = 248320;
  c.context_length = 262144;
  c.rope_dims = 64;
  c.rope_sections = {11, 11, 10, 0};
  c.ssm_state_size = 128;
  c.ssm_group_count = 16;
  c.ssm_time_step_rank = 16;
  return c;
}

GenModelConfig qwen35_4b() {
  GenModelConfig c = qwen35_08b();
  c.n_embd = 2560;
  c.n_layer = 32;
  c.n_ff = 9216;
  c.n_head = 16;
  c.n_head_kv = 4;
  c.ssm_time_step_rank = 32;
  return c;
}

struct PresetEntry {
  GenPreset info;
  GenModelConfig (*make)();
};

const std::vector<PresetEntry>& preset_entries() {
  static const std::vector<PresetEntry> entries = {
      {{"tiny-llama", "llama, 64 embd, 4 layers, 8/4 heads x 8, FFN 192, SentencePiece vocab 512, untied"}, tiny_llama},
      {{"tiny-llama-k", "llama, 256 embd, 4 layers, 4/2 heads x 64, FFN 768, vocab 1024, untied (K-quant ready)"}, tiny_llama_k},
      {{"tiny-qwen3", "qwen3, qwen3-tiny shapes: 64 embd, 2 layers, 4/2 heads x 16, FFN 128, vocab 4096, tied"}, tiny_qwen3},
      {{"tiny-qwen3-k", "qwen3, qwen3-kq shapes: 256 embd, 2 layers, 4/2 heads x 64, FFN 768, vocab 4096 (K-quant ready)"}, tiny_qwen3_k},
      {{"tiny-qwen35", "qwen35, qwen35-tiny shapes: 64 embd, 3 DeltaNet + 1 attention, vocab 4096 (--mtp: + MTP block)"}, tiny_qwen35},
      {{"tiny-qwen35-k", "qwen35, 256 embd, 3 DeltaNet + 1 attention, heads x 64, vocab 4096 (K-quant ready)"}, tiny_qwen35_k},
      {{"qwen3-0.6b", "Qwen3-0.6B shapes: 1024 embd, 28 layers, 16/8 heads x 128, FFN 3072, vocab 151936, tied"}, qwen3_06b},
      {{"qwen3-4b", "Qwen3-4B shapes: 2560 embd, 36 layers, 32/8 heads x 128, FFN 9728, vocab 151936, tied"}, qwen3_4b},
      {{"qwen35-0.8b", "Qwen3.5-0.8B shapes: 1024 embd, 24 layers (3:1 DeltaNet:attention), FFN 3584, vocab 248320"}, qwen35_08b},
      {{"qwen35-4b", "Qwen3.5-4B shapes: 2560 embd, 32 layers (3:1 DeltaNet:attention), FFN 9216, vocab 248320"}, qwen35_4b},
  };
  return entries;
}

}  // namespace

std::string_view gen_arch_name(GenArch arch) {
  switch (arch) {
    case GenArch::kLlama: return "llama";
    case GenArch::kQwen3: return "qwen3";
    case GenArch::kQwen35: return "qwen35";
  }
  return "?";
}

std::optional<GenArch> gen_arch_from_name(std::string_view name) {
  const std::string n = lower(name);
  if (n == "llama") return GenArch::kLlama;
  if (n == "qwen3") return GenArch::kQwen3;
  if (n == "qwen35") return GenArch::kQwen35;
  return std::nullopt;
}

const GenFileTypeInfo& gen_file_type_info(GenFileType type) {
  for (const auto& info : kFileTypes)
    if (info.type == type) return info;
  return kFileTypes[0];
}

std::optional<GenFileType> gen_file_type_from_name(std::string_view name) {
  const std::string n = lower(name);
  for (const auto& info : kFileTypes)
    if (info.name == n) return info.type;
  return std::nullopt;
}

std::vector<std::string_view> gen_file_type_names() {
  std::vector<std::string_view> names;
  for (const auto& info : kFileTypes) names.push_back(info.name);
  return names;
}

const std::vector<GenPreset>& gen_presets() {
  static const std::vector<GenPreset> presets = [] {
    std::vector<GenPreset> out;
    for (const auto& e : preset_entries()) out.push_back(e.info);
    return out;
  }();
  return presets;
}

std::optional<GenModelConfig> gen_preset_config(std::string_view name) {
  const std::string n = lower(name);
  for (const auto& e : preset_entries()) {
    if (e.info.name != n) continue;
    GenModelConfig c = e.make();
    c.preset = std::string(e.info.name);
    return c;
  }
  return std::nullopt;
}

}  // namespace kazeia::gen
