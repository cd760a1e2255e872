// Typed hyper-parameters of a model, read from GGUF metadata only.
//
// Every architecture fills one ModelConfig from its `{arch}.*` keys; nothing
// is taken from presets. validate() rejects values no forward pass could use
// and names the key with the expected and the actual value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"
#include "kazeia/status.h"

namespace kazeia {

// How rotary embedding pairs dimensions. Fixed by the architecture, not by a
// GGUF key: llama rotates adjacent pairs (2i, 2i+1); qwen3 / qwen35 rotate
// NEOX pairs (i, i + n_rot/2).
enum class RopePairing { kAdjacent, kNeox };

enum class LayerKind { kAttention, kGatedAttention, kGatedDeltaNet };

struct ModelConfig {
  std::string arch;
  std::string name;
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;         // trunk layers (block_count - nextn_predict_layers)
  int64_t n_nextn = 0;         // multi-token-prediction blocks after the trunk
  int64_t n_ff = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim_k = 0;      // attention.key_length
  int64_t head_dim_v = 0;      // attention.value_length
  int64_t n_rot = 0;           // rotary dims per head (rope.dimension_count)
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-6f;
  RopePairing rope_pairing = RopePairing::kNeox;
  bool tied_output = false;    // no output.weight: the output is token_embd
  std::vector<LayerKind> layers;  // one per trunk layer

  // Gated DeltaNet (qwen35); zero elsewhere.
  int64_t ssm_conv_kernel = 0;
  int64_t ssm_head_dim = 0;    // ssm.state_size: key head dim = value head dim
  int64_t ssm_n_k_heads = 0;   // ssm.group_count
  int64_t ssm_n_v_heads = 0;   // ssm.time_step_rank
  int64_t ssm_inner = 0;       // ssm.inner_size = n_v_heads * head_dim

  bool has_recurrent_layers() const;
  int64_t n_attention_layers() const;
  Status validate() const;
};

// Reads `{arch}.suffix` keys with errors that name the full key.
class HParams {
 public:
  HParams(const gguf::File& file, std::string arch) : file_(file), arch_(std::move(arch)) {}
  std::string key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }
  Result<int64_t> require_int(std::string_view suffix) const;
  Result<int64_t> int_or(std::string_view suffix, int64_t fallback) const;
  Result<float> float_or(std::string_view suffix, float fallback) const;
  bool has(std::string_view suffix) const { return file_.find(key(suffix)) != nullptr; }
  const gguf::File& file() const { return file_; }

 private:
  const gguf::File& file_;
  std::string arch_;
};

// Fills the fields every transformer shares (sizes, heads, rope, eps, vocab,
// tied output) from the file. Architecture files add their own.
Result<ModelConfig> read_common_config(const gguf::File& file, std::string_view arch);

}  // namespace kazeia
