#include "models/model_state.h"

#include <algorithm>

namespace kazeia {

ModelState::ModelState(const ModelConfig& config, const StateOptions& options) : options_(options) {
  kv_row_ = config.n_head_kv * std::max(config.head_dim_k, config.head_dim_v);
  const size_t n = static_cast<size_t>(options.n_ctx * kv_row_);
  for (LayerKind kind : config.layers) {
    if (kind == LayerKind::kGatedDeltaNet) {
      kv_index_.push_back(-1);
      rec_index_.push_back(static_cast<int64_t>(recurrent_.size()));
      RecurrentLayer r;
      const int64_t channels = 2 * config.ssm_n_k_heads * config.ssm_head_dim + config.ssm_inner;
      r.s.assign(static_cast<size_t>(config.ssm_n_v_heads * config.ssm_head_dim * config.ssm_head_dim), 0.0f);
      r.conv.assign(static_cast<size_t>((config.ssm_conv_kernel - 1) * channels), 0.0f);
      recurrent_.push_back(std::move(r));
    } else {
      rec_index_.push_back(-1);
      kv_index_.push_back(static_cast<int64_t>(kv_.size()));
      KvLayer l;
      if (options.kv_type == KvType::kF32) {
        l.k = std::make_unique_for_overwrite<float[]>(n);
        l.v = std::make_unique_for_overwrite<float[]>(n);
      } else {
        l.k16 = std::make_unique_for_overwrite<uint16_t[]>(n);
        l.v16 = std::make_unique_for_overwrite<uint16_t[]>(n);
      }
      kv_.push_back(std::move(l));
    }
  }
}

Status ModelState::check_room(int64_t n) const {
  if (n < 0 || n_past_ + n > options_.n_ctx)
    return OutOfRange("context full: " + std::to_string(n_past_) + " positions used + " + std::to_string(n) +
                      " new > context size " + std::to_string(options_.n_ctx));
  return OkStatus();
}

void ModelState::reset() {
  n_past_ = 0;
  for (auto& r : recurrent_) {
    std::fill(r.s.begin(), r.s.end(), 0.0f);
    std::fill(r.conv.begin(), r.conv.end(), 0.0f);
  }
}

Status ModelState::truncate(int64_t n_past) {
  if (n_past < 0 || n_past > n_past_)
    return OutOfRange("truncate to " + std::to_string(n_past) + ": state holds " + std::to_string(n_past_));
  if (!recurrent_.empty() && n_past != n_past_)
    return Unsupported("recurrent state cannot be truncated; restore a checkpoint instead");
  n_past_ = n_past;
  return OkStatus();
}

uint64_t ModelState::memory_bytes() const {
  const uint64_t elem = options_.kv_type == KvType::kF32 ? 4 : 2;
  uint64_t total = kv_.size() * 2 * static_cast<uint64_t>(options_.n_ctx * kv_row_) * elem;
  for (const auto& r : recurrent_) total += (r.s.size() + r.conv.size()) * sizeof(float);
  return total;
}

}  // namespace kazeia
