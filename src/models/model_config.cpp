#include "models/model_config.h"

#include <cmath>

namespace kazeia {

namespace {

// Hyper-parameters past this are a corrupt file, not a model: they would
// overflow the size arithmetic long before they could be allocated.
constexpr int64_t kMaxDim = int64_t{1} << 24;

Status positive(const std::string& key, int64_t value) {
  if (value <= 0 || value > kMaxDim)
    return InvalidFile("key '" + key + "': expected 1.." + std::to_string(kMaxDim) + ", found " +
                       std::to_string(value));
  return OkStatus();
}

}  // namespace

bool ModelConfig::has_recurrent_layers() const {
  for (LayerKind k : layers)
    if (k == LayerKind::kGatedDeltaNet) return true;
  return false;
}

int64_t ModelConfig::n_attention_layers() const {
  int64_t n = 0;
  for (LayerKind k : layers) n += (k != LayerKind::kGatedDeltaNet);
  return n;
}

Status ModelConfig::validate() const {
  const std::string p = arch + ".";
  KZ_RETURN_IF_ERROR(positive(p + "embedding_length", n_embd));
  KZ_RETURN_IF_ERROR(positive(p + "block_count", n_layer));
  KZ_RETURN_IF_ERROR(positive(p + "feed_forward_length", n_ff));
  KZ_RETURN_IF_ERROR(positive(p + "attention.head_count", n_head));
  KZ_RETURN_IF_ERROR(positive(p + "attention.head_count_kv", n_head_kv));
  KZ_RETURN_IF_ERROR(positive(p + "attention.key_length", head_dim_k));
  KZ_RETURN_IF_ERROR(positive(p + "attention.value_length", head_dim_v));
  KZ_RETURN_IF_ERROR(positive("tokenizer.ggml.tokens (vocabulary size)", n_vocab));
  if (n_head % n_head_kv != 0)
    return InvalidFile("key '" + p + "attention.head_count' (" + std::to_string(n_head) +
                       ") must be a multiple of attention.head_count_kv (" + std::to_string(n_head_kv) + ")");
  if (n_rot <= 0 || n_rot > head_dim_k || n_rot % 2 != 0)
    return InvalidFile("key '" + p + "rope.dimension_count': expected an even number in 2.." +
                       std::to_string(head_dim_k) + ", found " + std::to_string(n_rot));
  if (!(rope_freq_base > 0.0f) || !std::isfinite(rope_freq_base))
    return InvalidFile("key '" + p + "rope.freq_base': expected a positive number, found " +
                       std::to_string(rope_freq_base));
  if (!(rms_eps > 0.0f) || rms_eps > 1.0f)
    return InvalidFile("key '" + p + "attention.layer_norm_rms_epsilon': expected a value in (0, 1], found " +
                       std::to_string(rms_eps));
  if (static_cast<int64_t>(layers.size()) != n_layer)
    return Internal("layer kinds (" + std::to_string(layers.size()) + ") != trunk layers (" +
                    std::to_string(n_layer) + ")");
  if (has_recurrent_layers()) {
    KZ_RETURN_IF_ERROR(positive(p + "ssm.conv_kernel", ssm_conv_kernel));
    KZ_RETURN_IF_ERROR(positive(p + "ssm.state_size", ssm_head_dim));
    KZ_RETURN_IF_ERROR(positive(p + "ssm.group_count", ssm_n_k_heads));
    KZ_RETURN_IF_ERROR(positive(p + "ssm.time_step_rank", ssm_n_v_heads));
    if (ssm_n_v_heads % ssm_n_k_heads != 0)
      return InvalidFile("key '" + p + "ssm.time_step_rank' (" + std::to_string(ssm_n_v_heads) +
                         ") must be a multiple of ssm.group_count (" + std::to_string(ssm_n_k_heads) + ")");
    if (ssm_inner != ssm_n_v_heads * ssm_head_dim)
      return InvalidFile("key '" + p + "ssm.inner_size': expected time_step_rank * state_size = " +
                         std::to_string(ssm_n_v_heads * ssm_head_dim) + ", found " + std::to_string(ssm_inner));
  }
  return OkStatus();
}

Result<int64_t> HParams::require_int(std::string_view suffix) const {
  const std::string k = key(suffix);
  const gguf::Value* v = file_.find(k);
  if (v == nullptr) return NotFound("required key '" + k + "' is missing");
  auto i = v->as_int();
  if (!i) return InvalidFile("key '" + k + "': expected an integer, found " + std::string(gguf::value_type_name(v->type())));
  return *i;
}

Result<int64_t> HParams::int_or(std::string_view suffix, int64_t fallback) const {
  if (!has(suffix)) return fallback;
  return require_int(suffix);
}

Result<float> HParams::float_or(std::string_view suffix, float fallback) const {
  return file_.get_f32_or(key(suffix), fallback);
}

Result<ModelConfig> read_common_config(const gguf::File& file, std::string_view arch) {
  HParams hp(file, std::string(arch));
  ModelConfig c;
  c.arch = std::string(arch);
  if (const auto* v = file.find("general.name"); v && v->as_string()) c.name = *v->as_string();
  KZ_ASSIGN_OR_RETURN(c.n_embd, hp.require_int("embedding_length"));
  KZ_ASSIGN_OR_RETURN(int64_t n_block, hp.require_int("block_count"));
  KZ_ASSIGN_OR_RETURN(c.n_nextn, hp.int_or("nextn_predict_layers", 0));
  if (c.n_nextn < 0 || c.n_nextn >= n_block)
    return InvalidFile("key '" + hp.key("nextn_predict_layers") + "': expected 0.." + std::to_string(n_block - 1) +
                       " (block_count " + std::to_string(n_block) + "), found " + std::to_string(c.n_nextn));
  c.n_layer = n_block - c.n_nextn;
  KZ_ASSIGN_OR_RETURN(c.n_ctx_train, hp.int_or("context_length", 4096));
  KZ_ASSIGN_OR_RETURN(c.n_ff, hp.require_int("feed_forward_length"));
  KZ_ASSIGN_OR_RETURN(c.n_head, hp.require_int("attention.head_count"));
  KZ_ASSIGN_OR_RETURN(c.n_head_kv, hp.int_or("attention.head_count_kv", c.n_head));
  if (c.n_head <= 0) return InvalidFile("key '" + hp.key("attention.head_count") + "' must be positive");
  const int64_t default_head_dim = c.n_embd / c.n_head;
  KZ_ASSIGN_OR_RETURN(c.head_dim_k, hp.int_or("attention.key_length", default_head_dim));
  KZ_ASSIGN_OR_RETURN(c.head_dim_v, hp.int_or("attention.value_length", default_head_dim));
  KZ_ASSIGN_OR_RETURN(c.n_rot, hp.int_or("rope.dimension_count", c.head_dim_k));
  KZ_ASSIGN_OR_RETURN(c.rope_freq_base, hp.float_or("rope.freq_base", 10000.0f));
  KZ_ASSIGN_OR_RETURN(c.rms_eps, hp.float_or("attention.layer_norm_rms_epsilon", 1e-5f));

  const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
  if (embd == nullptr) return NotFound("tensor 'token_embd.weight' is missing");
  if (embd->dims.size() != 2)
    return InvalidFile("tensor 'token_embd.weight': expected 2 dimensions, found " + std::to_string(embd->dims.size()));
  c.n_vocab = static_cast<int64_t>(embd->dims[1]);
  c.tied_output = file.find_tensor("output.weight") == nullptr;
  return c;
}

}  // namespace kazeia
