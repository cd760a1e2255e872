// The pre-norm decoder stack shared by llama and qwen3:
//   x += attn(rms(x)); x += ffn(rms(x)); logits = out(rms(x)).
// The architecture files differ only in how they fill the weights and the
// config (rotary pairing, q/k norms); the loop lives here once.
#pragma once

#include <vector>

#include "models/blocks/attention.h"
#include "models/blocks/ffn.h"
#include "models/model.h"
#include "models/weights.h"

namespace kazeia {

struct DenseLayer {
  const float* attn_norm = nullptr;
  AttentionWeights attn;
  const float* ffn_norm = nullptr;
  FfnWeights ffn;
};

class DenseTransformer : public Model {
 public:
  Result<std::unique_ptr<ModelState>> new_state(const StateOptions& options) const override;
  Status forward(ModelState& state, const ForwardRequest& request) const override;
  uint64_t weight_bytes_per_token() const override;

 protected:
  // Binds token_embd, output_norm, output (or the tied embedding) and, per
  // layer, the attention and FFN weights; q/k norms when `qk_norm`.
  Status bind_weights(const gguf::File& file, bool qk_norm);

  kernels::MatrixView token_embd_;
  kernels::MatrixView output_;
  const float* output_norm_ = nullptr;
  std::vector<DenseLayer> layers_;
};

// Embedding lookup + final norm + output projection, shared by every
// architecture's forward pass.
Status embed_tokens(const kernels::MatrixView& token_embd, std::span<const int32_t> tokens, int64_t n_vocab, float* out);
Status project_logits(const ModelConfig& c, const kernels::MatrixView& output, const float* output_norm, const float* x,
                      const ForwardRequest& request, ThreadPool* pool);
uint64_t matrix_bytes(const kernels::MatrixView& m);

}  // namespace kazeia
