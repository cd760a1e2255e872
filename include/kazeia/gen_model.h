// Generating deterministic random-weight GGUF models (`kazeia gen-model`).
//
// Tests and benchmarks use these instead of downloads. A model is a preset
// (named shapes, see test_model_presets()) or an architecture plus sizes;
// the same options give a byte-identical file on every platform. Weights are
// random (the output is gibberish by design) but scaled so forward passes
// stay numerically tame; tensor names, shapes, per-tensor quantization types
// and metadata follow llama.cpp's converter and llama-quantize.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

struct GenModelOptions {
  // Start from a preset, or (when empty) from the smallest shapes of `arch`.
  std::string preset;
  std::string arch;              // "llama" | "qwen3" | "qwen35"; ignored with a preset

  // Overrides; unset keeps the preset's value.
  std::optional<uint32_t> n_embd, n_layer, n_ff, n_head, n_head_kv, head_dim;
  std::optional<uint32_t> n_vocab;          // ignored with tokenizer_from
  std::optional<uint32_t> context_length;
  std::optional<float> rope_freq_base;
  std::optional<uint32_t> rope_dims;        // partial rotary: dims per head
  std::optional<std::array<int32_t, 4>> rope_sections;  // qwen35
  std::optional<float> rms_eps;
  std::optional<bool> tied_output;
  // qwen35 (Gated DeltaNet): key/value head dim, key heads, value heads.
  std::optional<uint32_t> ssm_conv_kernel, ssm_state_size, ssm_group_count, ssm_time_step_rank;
  std::optional<uint32_t> full_attention_interval;
  // Explicit trunk layer pattern: 'R' recurrent (DeltaNet), 'A' attention,
  // one letter per layer, e.g. "RRRARRRA"; overrides the interval.
  std::string layer_pattern;
  bool mtp = false;              // qwen35: append one multi-token-prediction block

  std::string type = "f32";      // f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q4_k_m q5_k_m q6_k
  uint64_t seed = 1;
  float weight_scale = 1.0f;
  std::string tokenizer;         // "" (auto) | "bpe" | "spm"
  std::string tokenizer_from;    // copy every tokenizer.* key from this GGUF file
  std::string name;              // general.name; empty: "{preset}-random-seed{seed}"
  unsigned n_threads = 0;        // 0: all cores; never changes the output
};

// What was written (for the command's report).
struct GenModelResult {
  uint64_t file_bytes = 0;
  uint64_t n_tensors = 0;
  uint64_t n_parameters = 0;
  uint32_t n_vocab = 0;
  double seconds = 0.0;
};

Status generate_test_model(const GenModelOptions& options, const std::string& out_path);
Result<GenModelResult> generate_test_model_report(const GenModelOptions& options, const std::string& out_path);
// The exact size and counts of what would be written, without generating.
Result<GenModelResult> describe_test_model(const GenModelOptions& options);

// Preset names, and a one-line description of one ("" when unknown).
std::vector<std::string> test_model_presets();
std::string test_model_preset_description(const std::string& preset);
// The accepted `type` names.
std::vector<std::string> test_model_file_types();

}  // namespace kazeia
