// Deterministic random-weight GGUF models for tests and benchmarks.
//
// Tests and benchmarks must never need a download, so this writes models of
// the real architectures (llama, qwen3, qwen35 incl. its MTP block) with the
// exact tensor names, shapes, per-tensor types and metadata key types that
// llama.cpp's converter and llama-quantize produce, filled with seeded
// pseudo-random weights. The same config gives a byte-identical file on any
// platform and with any thread count: the PRNG is our own and the float math
// is exact integer arithmetic plus one rounding.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/tensor_types.h"
#include "kazeia/status.h"

namespace kazeia::gen {

enum class GenArch { kLlama, kQwen3, kQwen35 };
std::string_view gen_arch_name(GenArch arch);
std::optional<GenArch> gen_arch_from_name(std::string_view name);

// File types: llama.cpp's ftype mixes (the name llama-quantize takes).
enum class GenFileType { kF32, kF16, kBF16, kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kQ4_K_M, kQ5_K_M, kQ6_K };

struct GenFileTypeInfo {
  GenFileType type;
  std::string_view name;  // "q4_k_m"
  uint32_t ftype;         // general.file_type (llama_ftype)
  TensorType base;        // the type of an ordinary 2-D weight
};
const GenFileTypeInfo& gen_file_type_info(GenFileType type);
std::optional<GenFileType> gen_file_type_from_name(std::string_view name);  // case-insensitive
std::vector<std::string_view> gen_file_type_names();

enum class GenTokenizer {
  kAuto,           // llama: SentencePiece; qwen3 / qwen35: byte-level BPE
  kByteBpe,
  kSentencePiece,
};

struct GenModelConfig {
  GenArch arch = GenArch::kQwen3;
  std::string name;              // general.name; empty: "{preset or arch}-random-seed{seed}"
  std::string preset;            // informative: the preset this came from

  uint32_t n_embd = 64;
  uint32_t n_layer = 2;          // trunk layers; MTP blocks come on top
  uint32_t n_ff = 128;
  uint32_t n_head = 4;
  uint32_t n_head_kv = 2;
  uint32_t head_dim = 16;        // attention.key_length = value_length
  uint32_t n_vocab = 4096;       // ignored with tokenizer_from (the file decides)
  uint32_t context_length = 4096;
  float rope_freq_base = 1e6f;
  uint32_t rope_dims = 0;        // rotary dims per head; 0: all of head_dim
  std::array<int32_t, 4> rope_sections{};  // qwen35; all zero: derived from rope_dims
  float rms_eps = 1e-6f;
  bool tied_output = true;       // no output.weight: token_embd is the output

  // qwen35 (Gated DeltaNet layers). Key head dim = value head dim = state_size.
  uint32_t ssm_conv_kernel = 4;
  uint32_t ssm_state_size = 16;
  uint32_t ssm_group_count = 2;     // linear-attention key heads
  uint32_t ssm_time_step_rank = 4;  // linear-attention value heads
  uint32_t ssm_inner_size = 0;      // 0: time_step_rank * state_size (must equal it)
  uint32_t full_attention_interval = 4;
  std::vector<bool> recurrent_layers;  // explicit trunk pattern; empty: from the interval
  uint32_t nextn_predict_layers = 0;   // MTP blocks after the trunk

  GenFileType file_type = GenFileType::kF32;
  uint64_t seed = 1;
  float weight_scale = 1.0f;     // multiplies the standard deviation of every matrix
  GenTokenizer tokenizer = GenTokenizer::kAuto;
  std::string tokenizer_from;    // copy every tokenizer.* key from this GGUF file
  unsigned n_threads = 0;        // 0: all available cores; the output does not depend on it
};

// ---- Presets -----------------------------------------------------------------

struct GenPreset {
  std::string_view name;
  std::string_view description;
};
const std::vector<GenPreset>& gen_presets();
std::optional<GenModelConfig> gen_preset_config(std::string_view name);

// ---- Plan ------------------------------------------------------------------

// How a tensor's values are drawn (see generate_tensor_rows).
enum class WeightInit {
  kMatrix,     // N(0, (weight_scale / sqrt(ne0))^2): outputs keep the scale of inputs
  kNorm,       // 1 + N(0, 0.05^2): RMSNorm multipliers near 1
  kSsmA,       // -(A), A uniform in [1/16, 16): DeltaNet decay, always negative
  kDtBias,     // N(0, 0.1^2): small time-step bias
  kConv,       // N(0, 1/kernel): depthwise causal conv taps
};

struct TensorPlan {
  std::string name;
  std::vector<uint64_t> dims;  // ne0 first
  TensorType type = TensorType::F32;
  WeightInit init = WeightInit::kMatrix;
  int block = -1;              // blk.N index, -1 for global tensors
};

// Checks the config for shapes no model (or no block size) allows; names the
// field, the expected and the actual value.
Status validate_gen_config(const GenModelConfig& config);

// The config with derived values filled in: ssm_inner_size, rope_dims,
// rope_sections, the recurrent pattern, and n_vocab from tokenizer_from.
Result<GenModelConfig> resolve_gen_config(const GenModelConfig& config);

// Every tensor of the model in file order, with its type chosen the way
// llama-quantize chooses it for the file type. Expects a resolved config.
std::vector<TensorPlan> plan_tensors(const GenModelConfig& resolved);

// The type llama-quantize gives one tensor (exposed for tests).
TensorType choose_tensor_type(const GenModelConfig& resolved, const TensorPlan& tensor);

// The float values of rows [row_begin, row_end) of a tensor (ne0 values per
// row) into out. Any row range gives the same values as the whole tensor.
void generate_tensor_rows(const GenModelConfig& resolved, const TensorPlan& tensor, uint64_t row_begin,
                          uint64_t row_end, float* out);
std::vector<float> generate_tensor_values(const GenModelConfig& resolved, const TensorPlan& tensor);

// ---- Writing ---------------------------------------------------------------

struct GenModelSummary {
  uint64_t file_bytes = 0;
  uint64_t n_tensors = 0;
  uint64_t n_parameters = 0;
  uint32_t n_vocab = 0;
  double seconds = 0.0;
};

// What write_test_model would write (exact file size, counts) without
// generating any weights: cheap even for the largest presets.
Result<GenModelSummary> describe_test_model(const GenModelConfig& config);

// Resolves, validates, generates, quantizes and writes the model.
Result<GenModelSummary> write_test_model(const GenModelConfig& config, const std::string& path);

}  // namespace kazeia::gen
