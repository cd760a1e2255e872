#include "models/dense_transformer.h"

#include <algorithm>

#include "base/scratch.h"
#include "models/blocks/residual.h"

namespace kazeia {

using namespace kernels;

uint64_t matrix_bytes(const kernels::MatrixView& m) { return static_cast<uint64_t>(m.row_bytes) * static_cast<uint64_t>(m.n_out); }

Status embed_tokens(const kernels::MatrixView& token_embd, std::span<const int32_t> tokens, int64_t n_vocab, float* out) {
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= n_vocab)
      return OutOfRange("token id " + std::to_string(tokens[i]) + " at batch index " + std::to_string(i) +
                        " is outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
  return get_rows(token_embd, tokens.data(), static_cast<int64_t>(tokens.size()), out);
}

Status project_logits(const ModelConfig& c, const kernels::MatrixView& output, const float* output_norm, const float* x,
                      const ForwardRequest& request, ThreadPool* pool) {
  const int64_t n_tokens = static_cast<int64_t>(request.tokens.size());
  if (request.rows == LogitsRows::kNone) return OkStatus();
  if (request.logits == nullptr) return InvalidArgument("logits requested but no output buffer given");
  const int64_t first = request.rows == LogitsRows::kLast ? n_tokens - 1 : 0;
  const int64_t rows = n_tokens - first;
  ScratchFloats normed(static_cast<size_t>(rows * c.n_embd));
  for (int64_t t = 0; t < rows; ++t)
    rms_norm(x + (first + t) * c.n_embd, output_norm, c.n_embd, c.rms_eps, normed.data() + t * c.n_embd);
  return matmul(output, normed.data(), rows, request.logits, pool);
}

Status DenseTransformer::bind_weights(const gguf::File& file, bool qk_norm) {
  const ModelConfig& c = config_;
  WeightBinder b(file);
  KZ_ASSIGN_OR_RETURN(token_embd_, b.matrix("token_embd.weight", c.n_embd, c.n_vocab));
  KZ_ASSIGN_OR_RETURN(output_norm_, b.f32("output_norm.weight", {c.n_embd}));
  if (c.tied_output) {
    output_ = token_embd_;
  } else {
    KZ_ASSIGN_OR_RETURN(output_, b.matrix("output.weight", c.n_embd, c.n_vocab));
  }
  layers_.resize(static_cast<size_t>(c.n_layer));
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    DenseLayer& l = layers_[static_cast<size_t>(il)];
    KZ_ASSIGN_OR_RETURN(l.attn_norm, b.f32(p + "attn_norm.weight", {c.n_embd}));
    KZ_ASSIGN_OR_RETURN(l.attn.wq, b.matrix(p + "attn_q.weight", c.n_embd, c.n_head * c.head_dim_k));
    KZ_ASSIGN_OR_RETURN(l.attn.wk, b.matrix(p + "attn_k.weight", c.n_embd, c.n_head_kv * c.head_dim_k));
    KZ_ASSIGN_OR_RETURN(l.attn.wv, b.matrix(p + "attn_v.weight", c.n_embd, c.n_head_kv * c.head_dim_v));
    KZ_ASSIGN_OR_RETURN(l.attn.wo, b.matrix(p + "attn_output.weight", c.n_head * c.head_dim_v, c.n_embd));
    if (qk_norm) {
      KZ_ASSIGN_OR_RETURN(l.attn.q_norm, b.f32(p + "attn_q_norm.weight", {c.head_dim_k}));
      KZ_ASSIGN_OR_RETURN(l.attn.k_norm, b.f32(p + "attn_k_norm.weight", {c.head_dim_k}));
    }
    KZ_ASSIGN_OR_RETURN(l.ffn_norm, b.f32(p + "ffn_norm.weight", {c.n_embd}));
    KZ_ASSIGN_OR_RETURN(l.ffn.gate, b.matrix(p + "ffn_gate.weight", c.n_embd, c.n_ff));
    KZ_ASSIGN_OR_RETURN(l.ffn.up, b.matrix(p + "ffn_up.weight", c.n_embd, c.n_ff));
    KZ_ASSIGN_OR_RETURN(l.ffn.down, b.matrix(p + "ffn_down.weight", c.n_ff, c.n_embd));
  }
  return OkStatus();
}

Result<std::unique_ptr<ModelState>> DenseTransformer::new_state(const StateOptions& options) const {
  KZ_RETURN_IF_ERROR(check_state_options(config_, options));
  return std::make_unique<ModelState>(config_, options);
}

Status DenseTransformer::forward(ModelState& state, const ForwardRequest& request) const {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(request.tokens.size());
  if (n == 0) return OkStatus();
  KZ_RETURN_IF_ERROR(state.check_room(n));
  ScratchFloats x(static_cast<size_t>(n * c.n_embd)), h(x.size()), y(x.size());
  KZ_RETURN_IF_ERROR(embed_tokens(token_embd_, request.tokens, c.n_vocab, x.data()));
  const RopeTable rope(c, state.n_past(), n);
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const DenseLayer& l = layers_[static_cast<size_t>(il)];
    // x += the previous layer's feed-forward output (none before layer 0).
    add_and_norm_rows(x.data(), il > 0 ? y.data() : nullptr, l.attn_norm, n, c.n_embd, c.rms_eps, h.data(), request.pool);
    KvLayer& kv = state.kv()[static_cast<size_t>(state.kv_index(il))];
    KZ_RETURN_IF_ERROR(attention_forward(c, l.attn, kv, state.kv_type(), state.kv_layout(), state.n_past(), rope,
                                         h.data(), n, y.data(), request.pool));
    add_and_norm_rows(x.data(), y.data(), l.ffn_norm, n, c.n_embd, c.rms_eps, h.data(), request.pool);
    KZ_RETURN_IF_ERROR(ffn_forward(l.ffn, h.data(), n, y.data(), request.pool));
  }
  add_and_norm_rows(x.data(), y.data(), nullptr, n, c.n_embd, c.rms_eps, nullptr, request.pool);
  KZ_RETURN_IF_ERROR(project_logits(c, output_, output_norm_, x.data(), request, request.pool));
  state.commit(n);
  return OkStatus();
}

uint64_t DenseTransformer::weight_bytes_per_token() const {
  uint64_t total = matrix_bytes(output_) + static_cast<uint64_t>(token_embd_.row_bytes);
  for (const auto& l : layers_)
    total += matrix_bytes(l.attn.wq) + matrix_bytes(l.attn.wk) + matrix_bytes(l.attn.wv) + matrix_bytes(l.attn.wo) +
             matrix_bytes(l.ffn.gate) + matrix_bytes(l.ffn.up) + matrix_bytes(l.ffn.down);
  return total;
}

}  // namespace kazeia
