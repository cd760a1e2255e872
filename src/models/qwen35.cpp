// qwen35 (Qwen3.5): hybrid stack of Gated DeltaNet layers and gated
// full-attention layers (3:1 in real files), tied embeddings.
//
//   every layer: x += mixer(rms(x, attn_norm)); x += ffn(rms(x, post_attention_norm))
//
// Layer i is Gated DeltaNet when attention.recurrent_layers[i]. Files may end
// with `nextn_predict_layers` multi-token-prediction blocks: they are not
// trunk layers (trunk depth = block_count - nextn), and are not run here.
#include "base/scratch.h"
#include "models/architectures.h"
#include "models/blocks/gated_delta_net.h"
#include "models/blocks/residual.h"
#include "models/dense_transformer.h"

namespace kazeia {

using namespace kernels;

namespace {

struct Qwen35Layer {
  LayerKind kind = LayerKind::kGatedDeltaNet;
  const float* attn_norm = nullptr;
  const float* post_attention_norm = nullptr;
  AttentionWeights attn;   // gated attention layers
  DeltaNetWeights delta;   // Gated DeltaNet layers
  std::vector<float> conv_taps;  // the file's conv taps transposed (delta.conv_taps points here)
  FfnWeights ffn;
};

class Qwen35Model final : public Model {
 public:
  Status init(const gguf::File& file);
  Result<std::unique_ptr<ModelState>> new_state(const StateOptions& options) const override {
    KZ_RETURN_IF_ERROR(check_state_options(config_, options));
    return std::make_unique<ModelState>(config_, options);
  }
  Status forward(ModelState& state, const ForwardRequest& request) const override;
  uint64_t weight_bytes_per_token() const override;

 private:
  Status read_layer_kinds(const gguf::File& file);
  kernels::MatrixView token_embd_, output_;
  const float* output_norm_ = nullptr;
  std::vector<Qwen35Layer> layers_;
};

Status Qwen35Model::read_layer_kinds(const gguf::File& file) {
  ModelConfig& c = config_;
  HParams hp(file, "qwen35");
  const std::string key = hp.key("attention.recurrent_layers");
  c.layers.clear();
  if (const gguf::Value* v = file.find(key)) {
    const gguf::Array* a = v->as_array();
    if (a == nullptr || a->element_type != gguf::ValueType::kBool)
      return InvalidFile("key '" + key + "': expected an array of bool, found " +
                         std::string(gguf::value_type_name(v->type())));
    if (static_cast<int64_t>(a->items.size()) != c.n_layer + c.n_nextn)
      return InvalidFile("key '" + key + "': expected one entry per block (" + std::to_string(c.n_layer + c.n_nextn) +
                         "), found " + std::to_string(a->items.size()));
    for (int64_t i = 0; i < c.n_layer; ++i)
      c.layers.push_back(std::get<bool>(a->items[static_cast<size_t>(i)].v) ? LayerKind::kGatedDeltaNet
                                                                            : LayerKind::kGatedAttention);
    return OkStatus();
  }
  // llama.cpp's fallback when the key is absent: every interval-th layer is attention.
  KZ_ASSIGN_OR_RETURN(int64_t interval, hp.int_or("full_attention_interval", 4));
  if (interval <= 0) return InvalidFile("key '" + hp.key("full_attention_interval") + "' must be positive");
  for (int64_t i = 0; i < c.n_layer; ++i)
    c.layers.push_back((i + 1) % interval != 0 ? LayerKind::kGatedDeltaNet : LayerKind::kGatedAttention);
  return OkStatus();
}

Status Qwen35Model::init(const gguf::File& file) {
  KZ_ASSIGN_OR_RETURN(config_, read_common_config(file, "qwen35"));
  ModelConfig& c = config_;
  c.rope_pairing = RopePairing::kNeox;
  HParams hp(file, "qwen35");
  KZ_ASSIGN_OR_RETURN(c.ssm_conv_kernel, hp.require_int("ssm.conv_kernel"));
  KZ_ASSIGN_OR_RETURN(c.ssm_head_dim, hp.require_int("ssm.state_size"));
  KZ_ASSIGN_OR_RETURN(c.ssm_n_k_heads, hp.require_int("ssm.group_count"));
  KZ_ASSIGN_OR_RETURN(c.ssm_n_v_heads, hp.require_int("ssm.time_step_rank"));
  KZ_ASSIGN_OR_RETURN(c.ssm_inner, hp.require_int("ssm.inner_size"));
  KZ_RETURN_IF_ERROR(read_layer_kinds(file));
  KZ_RETURN_IF_ERROR(c.validate());

  WeightBinder b(file);
  KZ_ASSIGN_OR_RETURN(token_embd_, b.matrix("token_embd.weight", c.n_embd, c.n_vocab));
  KZ_ASSIGN_OR_RETURN(output_norm_, b.f32("output_norm.weight", {c.n_embd}));
  if (c.tied_output) {
    output_ = token_embd_;
  } else {
    KZ_ASSIGN_OR_RETURN(output_, b.matrix("output.weight", c.n_embd, c.n_vocab));
  }
  const int64_t nk = c.ssm_n_k_heads, nv = c.ssm_n_v_heads, d = c.ssm_head_dim;
  const int64_t channels = 2 * nk * d + nv * d;
  layers_.resize(static_cast<size_t>(c.n_layer));
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    Qwen35Layer& l = layers_[static_cast<size_t>(il)];
    l.kind = c.layers[static_cast<size_t>(il)];
    KZ_ASSIGN_OR_RETURN(l.attn_norm, b.f32(p + "attn_norm.weight", {c.n_embd}));
    KZ_ASSIGN_OR_RETURN(l.post_attention_norm, b.f32(p + "post_attention_norm.weight", {c.n_embd}));
    KZ_ASSIGN_OR_RETURN(l.ffn.gate, b.matrix(p + "ffn_gate.weight", c.n_embd, c.n_ff));
    KZ_ASSIGN_OR_RETURN(l.ffn.up, b.matrix(p + "ffn_up.weight", c.n_embd, c.n_ff));
    KZ_ASSIGN_OR_RETURN(l.ffn.down, b.matrix(p + "ffn_down.weight", c.n_ff, c.n_embd));
    if (l.kind == LayerKind::kGatedDeltaNet) {
      DeltaNetWeights& w = l.delta;
      KZ_ASSIGN_OR_RETURN(w.qkv, b.matrix(p + "attn_qkv.weight", c.n_embd, channels));
      KZ_ASSIGN_OR_RETURN(w.gate, b.matrix(p + "attn_gate.weight", c.n_embd, nv * d));
      KZ_ASSIGN_OR_RETURN(w.beta, b.matrix(p + "ssm_beta.weight", c.n_embd, nv));
      KZ_ASSIGN_OR_RETURN(w.alpha, b.matrix(p + "ssm_alpha.weight", c.n_embd, nv));
      KZ_ASSIGN_OR_RETURN(w.out, b.matrix(p + "ssm_out.weight", nv * d, c.n_embd));
      KZ_ASSIGN_OR_RETURN(const float* conv, b.f32(p + "ssm_conv1d.weight", {c.ssm_conv_kernel, channels}));
      l.conv_taps.resize(static_cast<size_t>(c.ssm_conv_kernel * channels));
      transpose_conv_taps(conv, c.ssm_conv_kernel, channels, l.conv_taps.data());
      w.conv_taps = l.conv_taps.data();
      KZ_ASSIGN_OR_RETURN(w.dt_bias, b.f32(p + "ssm_dt.bias", {nv}));
      KZ_ASSIGN_OR_RETURN(w.a, b.f32(p + "ssm_a", {nv}));
      KZ_ASSIGN_OR_RETURN(w.norm, b.f32(p + "ssm_norm.weight", {d}));
    } else {
      AttentionWeights& a = l.attn;
      a.gated = true;
      KZ_ASSIGN_OR_RETURN(a.wq, b.matrix(p + "attn_q.weight", c.n_embd, 2 * c.n_head * c.head_dim_k));
      KZ_ASSIGN_OR_RETURN(a.wk, b.matrix(p + "attn_k.weight", c.n_embd, c.n_head_kv * c.head_dim_k));
      KZ_ASSIGN_OR_RETURN(a.wv, b.matrix(p + "attn_v.weight", c.n_embd, c.n_head_kv * c.head_dim_v));
      KZ_ASSIGN_OR_RETURN(a.wo, b.matrix(p + "attn_output.weight", c.n_head * c.head_dim_v, c.n_embd));
      KZ_ASSIGN_OR_RETURN(a.q_norm, b.f32(p + "attn_q_norm.weight", {c.head_dim_k}));
      KZ_ASSIGN_OR_RETURN(a.k_norm, b.f32(p + "attn_k_norm.weight", {c.head_dim_k}));
    }
  }
  return OkStatus();
}

Status Qwen35Model::forward(ModelState& state, const ForwardRequest& request) const {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(request.tokens.size());
  if (n == 0) return OkStatus();
  KZ_RETURN_IF_ERROR(state.check_room(n));
  ScratchFloats x(static_cast<size_t>(n * c.n_embd)), h(x.size()), y(x.size());
  KZ_RETURN_IF_ERROR(embed_tokens(token_embd_, request.tokens, c.n_vocab, x.data()));
  const RopeTable rope(c, state.n_past(), n);
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const Qwen35Layer& l = layers_[static_cast<size_t>(il)];
    // x += the previous layer's feed-forward output (none before layer 0).
    add_and_norm_rows(x.data(), il > 0 ? y.data() : nullptr, l.attn_norm, n, c.n_embd, c.rms_eps, h.data(), request.pool);
    if (l.kind == LayerKind::kGatedDeltaNet) {
      const int64_t ri = state.recurrent_index(il);
      RecurrentLayer& r = state.recurrent()[static_cast<size_t>(ri)];
      KZ_RETURN_IF_ERROR(gated_delta_net_forward(c, l.delta, r, h.data(), n, y.data(), request.pool,
                                                 kDeltaRuleDefaultChunk, state.recurrent_log(ri)));
    } else {
      KvLayer& kv = state.kv()[static_cast<size_t>(state.kv_index(il))];
      KZ_RETURN_IF_ERROR(attention_forward(c, l.attn, kv, state.kv_type(), state.kv_layout(), state.n_past(), rope,
                                           h.data(), n, y.data(), request.pool));
    }
    add_and_norm_rows(x.data(), y.data(), l.post_attention_norm, n, c.n_embd, c.rms_eps, h.data(), request.pool);
    KZ_RETURN_IF_ERROR(ffn_forward(l.ffn, h.data(), n, y.data(), request.pool));
  }
  add_and_norm_rows(x.data(), y.data(), nullptr, n, c.n_embd, c.rms_eps, nullptr, request.pool);
  KZ_RETURN_IF_ERROR(project_logits(c, output_, output_norm_, x.data(), request, request.pool));
  state.commit(n);
  return OkStatus();
}

uint64_t Qwen35Model::weight_bytes_per_token() const {
  uint64_t total = matrix_bytes(output_) + static_cast<uint64_t>(token_embd_.row_bytes);
  for (const auto& l : layers_) {
    total += matrix_bytes(l.ffn.gate) + matrix_bytes(l.ffn.up) + matrix_bytes(l.ffn.down);
    if (l.kind == LayerKind::kGatedDeltaNet)
      total += matrix_bytes(l.delta.qkv) + matrix_bytes(l.delta.gate) + matrix_bytes(l.delta.beta) +
               matrix_bytes(l.delta.alpha) + matrix_bytes(l.delta.out);
    else
      total += matrix_bytes(l.attn.wq) + matrix_bytes(l.attn.wk) + matrix_bytes(l.attn.wv) + matrix_bytes(l.attn.wo);
  }
  return total;
}

}  // namespace

Result<std::unique_ptr<Model>> load_qwen35(const gguf::File& file) {
  auto model = std::make_unique<Qwen35Model>();
  KZ_RETURN_IF_ERROR(model->init(file));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace kazeia
