#include "models/model_state.h"

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <optional>
#include <string>

#include "base/checked_math.h"
#include "base/scratch.h"
#include "models/blocks/delta_rule.h"

namespace kazeia {

namespace {
std::atomic<uint64_t> g_next_state_id{1};

int64_t kv_elem_bytes(KvType t) { return t == KvType::kF32 ? 4 : 2; }

// A span: as many whole tiles as one layer's K (all heads) fits in 2 MiB,
// at least one tile and at most the context (model_state.h), unless the
// options name one.
KvLayout kv_layout_for(const ModelConfig& config, const StateOptions& options, int64_t positions) {
  const int64_t d = std::max(config.head_dim_k, config.head_dim_v);
  const int64_t elem = kv_elem_bytes(options.kv_type);
  const int64_t per_position = std::max<int64_t>(1, config.n_head_kv * d * elem);
  constexpr int64_t kHugePage = int64_t{2} << 20;
  KvLayout l;
  l.span = options.kv_span > 0 ? options.kv_span : std::clamp(kHugePage / per_position / kKvTile * kKvTile, kKvTile, positions);
  l.head_stride = l.span * d;
  l.span_stride = config.n_head_kv * l.head_stride;
  l.n_spans = (positions + l.span - 1) / l.span;
  l.n_heads = config.n_head_kv;
  l.last_head_stride = (positions - (l.n_spans - 1) * l.span) * d;
  return l;
}
}  // namespace

Status check_state_options(const ModelConfig& config, const StateOptions& options) {
  if (options.n_ctx <= 0) return InvalidArgument("context size must be positive, got " + std::to_string(options.n_ctx));
  if (options.kv_span < 0 || options.kv_span % kKvTile != 0)
    return InvalidArgument("kv_span must be 0 or a multiple of " + std::to_string(kKvTile) + " positions, got " +
                           std::to_string(options.kv_span));
  // The state's sizes, checked: each dimension of a file is bounded
  // (ModelConfig::validate), but not their products, and a context size
  // comes from the caller. Whatever could not exist in a 48-bit address
  // space is refused here, before the index arithmetic (int64) could wrap.
  constexpr uint64_t kMaxStateBytes = uint64_t{1} << 48;
  const int64_t n_attention = config.n_attention_layers();
  const int64_t n_recurrent = static_cast<int64_t>(config.layers.size()) - n_attention;
  const int64_t d = std::max(config.head_dim_k, config.head_dim_v);
  // `first` times the product of `factors` (negatives as 0), or nullopt past 64 bits.
  auto bytes_of = [](uint64_t first, std::initializer_list<int64_t> factors) -> std::optional<uint64_t> {
    std::optional<uint64_t> p = first;
    for (int64_t f : factors)
      if (p) p = checked_mul(*p, static_cast<uint64_t>(std::max<int64_t>(f, 0)));
    return p;
  };
  const auto positions = checked_align_up(static_cast<uint64_t>(options.n_ctx), kKvTile);
  const auto kv = positions ? bytes_of(*positions, {config.n_head_kv, d, kv_elem_bytes(options.kv_type), 2, n_attention})
                            : std::nullopt;  // K and V
  if (!kv || *kv > kMaxStateBytes)
    return OutOfRange("KV cache for n_ctx " + std::to_string(options.n_ctx) + " (" +
                      std::to_string(config.n_head_kv) + " KV heads of " + std::to_string(d) + " values, " +
                      std::to_string(n_attention) + " layers): more than 2^48 bytes");
  const auto s = bytes_of(sizeof(float), {config.ssm_n_v_heads, config.ssm_head_dim, config.ssm_head_dim, n_recurrent});
  if (!s || *s > kMaxStateBytes)
    return OutOfRange("recurrent state (" + std::to_string(config.ssm_n_v_heads) + " heads of " +
                      std::to_string(config.ssm_head_dim) + " x " + std::to_string(config.ssm_head_dim) + ", " +
                      std::to_string(n_recurrent) + " layers): more than 2^48 bytes");
  return OkStatus();
}

ModelState::ModelState(const ModelConfig& config, const StateOptions& options)
    : options_(options), id_(g_next_state_id.fetch_add(1, std::memory_order_relaxed)) {
  kv_layout_ = kv_layout_for(config, options, padded_ctx());
  ssm_nk_ = config.ssm_n_k_heads, ssm_nv_ = config.ssm_n_v_heads, ssm_d_ = config.ssm_head_dim;
  ssm_hist_ = config.ssm_conv_kernel - 1;
  ssm_channels_ = 2 * config.ssm_n_k_heads * config.ssm_head_dim + config.ssm_inner;
  const size_t n = static_cast<size_t>(kv_layout_.values());
  for (LayerKind kind : config.layers) {
    if (kind == LayerKind::kGatedDeltaNet) {
      kv_index_.push_back(-1);
      rec_index_.push_back(static_cast<int64_t>(recurrent_.size()));
      RecurrentLayer r;
      r.conv.assign(static_cast<size_t>(ssm_hist_ * ssm_channels_), 0.0f);
      recurrent_.push_back(std::move(r));
      logs_.emplace_back();
    } else {
      rec_index_.push_back(-1);
      kv_index_.push_back(static_cast<int64_t>(kv_.size()));
      KvLayer l;
      if (options.kv_type == KvType::kF32) {
        l.k = StateBuffer<float>(n);
        l.v = StateBuffer<float>(n);
      } else {
        l.k16 = StateBuffer<uint16_t>(n);
        l.v16 = StateBuffer<uint16_t>(n);
      }
      kv_.push_back(std::move(l));
    }
  }
  // Every layer's S in one buffer, zeroed: the state of an empty sequence.
  const size_t per_layer = static_cast<size_t>(ssm_nv_ * ssm_d_ * ssm_d_);
  if (!recurrent_.empty() && per_layer > SIZE_MAX / recurrent_.size()) throw std::bad_alloc();
  recurrent_s_ = StateBuffer<float>(recurrent_.size() * per_layer);
  float* at = recurrent_s_.get();
  std::fill(at, at + recurrent_.size() * per_layer, 0.0f);
  for (RecurrentLayer& r : recurrent_) {
    r.s = std::span<float>(at, per_layer);
    at += per_layer;
  }
}

Status ModelState::check_room(int64_t n) const {
  if (n < 0 || n_past_ + n > options_.n_ctx)
    return OutOfRange("context full: " + std::to_string(n_past_) + " positions used + " + std::to_string(n) +
                      " new > context size " + std::to_string(options_.n_ctx));
  return OkStatus();
}

void ModelState::rewind_to(int64_t floor) {
  while (!rewinds_.empty() && rewinds_.back().second >= floor) rewinds_.pop_back();
  rewinds_.emplace_back(epoch_, floor);
  ++epoch_;
  n_past_ = floor;
}

void ModelState::reset() {
  stop_recording();
  rewind_to(0);
  for (auto& r : recurrent_) {
    std::fill(r.s.begin(), r.s.end(), 0.0f);
    std::fill(r.conv.begin(), r.conv.end(), 0.0f);
    r.tail.rows = 0;
  }
}

Status ModelState::truncate(int64_t n_past) {
  if (n_past < 0 || n_past > n_past_)
    return OutOfRange("truncate to " + std::to_string(n_past) + ": state holds " + std::to_string(n_past_));
  if (!recurrent_.empty() && n_past != n_past_)
    return Unsupported("recurrent state cannot be truncated; restore a checkpoint instead");
  if (n_past != n_past_) {
    stop_recording();
    rewind_to(n_past);
  }
  return OkStatus();
}

void ModelState::save_checkpoint(StateCheckpoint& out) const {
  out.n_past = n_past_;
  out.owner = id_;
  out.epoch = epoch_;
  out.recurrent.resize(recurrent_.size());
  for (size_t i = 0; i < recurrent_.size(); ++i) {
    out.recurrent[i].s.assign(recurrent_[i].s.begin(), recurrent_[i].s.end());
    out.recurrent[i].conv.assign(recurrent_[i].conv.begin(), recurrent_[i].conv.end());
    delta_rule_pack_tail(recurrent_[i].tail, out.recurrent[i].tail);
  }
}

Status ModelState::restore_checkpoint(const StateCheckpoint& cp) {
  KZ_RETURN_IF_ERROR(restore_impl(cp));
  stop_recording();
  return OkStatus();
}

Status ModelState::restore_impl(const StateCheckpoint& cp) {
  if (cp.n_past < 0) return InvalidArgument("restore_checkpoint: empty checkpoint");
  if (cp.owner != id_) return InvalidArgument("restore_checkpoint: the checkpoint belongs to another state");
  if (cp.recurrent.size() != recurrent_.size()) return InvalidArgument("restore_checkpoint: layer count differs");
  // Rewinds since the checkpoint: the first stack entry at or after its
  // epoch holds their lowest floor. Below cp.n_past, cache rows it relies on
  // may have been rewritten.
  auto it = std::lower_bound(rewinds_.begin(), rewinds_.end(), cp.epoch,
                             [](const std::pair<uint64_t, int64_t>& r, uint64_t e) { return r.first < e; });
  if ((it != rewinds_.end() && it->second < cp.n_past) || cp.n_past > n_past_)
    return OutOfRange("restore_checkpoint: stale checkpoint at " + std::to_string(cp.n_past) +
                      " positions: the state was rewound below it and rewritten since");
  for (size_t i = 0; i < recurrent_.size(); ++i) {
    if (cp.recurrent[i].s.size() != recurrent_[i].s.size() || cp.recurrent[i].conv.size() != recurrent_[i].conv.size())
      return InvalidArgument("restore_checkpoint: recurrent layer shapes differ");
  }
  for (size_t i = 0; i < recurrent_.size(); ++i) {
    std::copy(cp.recurrent[i].s.begin(), cp.recurrent[i].s.end(), recurrent_[i].s.begin());
    std::copy(cp.recurrent[i].conv.begin(), cp.recurrent[i].conv.end(), recurrent_[i].conv.begin());
    delta_rule_unpack_tail(cp.recurrent[i].tail, recurrent_[i].tail);
  }
  if (cp.n_past != n_past_) rewind_to(cp.n_past);
  return OkStatus();
}

void RecurrentLog::clear() {
  tokens = 0;
  conv_in.clear();
  kv.clear();
  beta.clear();
  g.clear();
}

void RecurrentLog::keep(int64_t n, int64_t channels, int64_t kv_row, int64_t n_v_heads) {
  tokens = std::min(tokens, n);
  conv_in.resize(static_cast<size_t>(tokens * channels));
  kv.resize(static_cast<size_t>(tokens * kv_row));
  beta.resize(static_cast<size_t>(tokens * n_v_heads));
  g.resize(static_cast<size_t>(tokens * n_v_heads));
}

uint64_t RecurrentLog::memory_bytes() const {
  return (conv_in.capacity() + kv.capacity() + beta.capacity() + g.capacity()) * sizeof(float);
}

void ModelState::begin_recording() {
  for (auto& l : logs_) l.clear();
  recording_ = true;
  record_base_ = n_past_;
}

void ModelState::stop_recording() {
  recording_ = false;
  for (auto& l : logs_) l.clear();
}

uint64_t ModelState::log_bytes() const {
  uint64_t n = 0;
  for (const auto& l : logs_) n += l.memory_bytes();
  return n;
}

Status ModelState::rollback(const StateCheckpoint& cp, int64_t n_past, ThreadPool* pool) {
  if (!recording_) return InvalidArgument("rollback: the state is not recording (begin_recording at the checkpoint)");
  if (cp.n_past != record_base_)
    return InvalidArgument("rollback: the checkpoint is at position " + std::to_string(cp.n_past) +
                           ", the recording began at " + std::to_string(record_base_));
  if (n_past < record_base_ || n_past > n_past_)
    return OutOfRange("rollback to " + std::to_string(n_past) + ": recorded positions are " +
                      std::to_string(record_base_) + " .. " + std::to_string(n_past_));
  const int64_t logged = n_past_ - record_base_, keep = n_past - record_base_;
  for (size_t i = 0; i < logs_.size(); ++i)
    if (logs_[i].tokens != logged)
      return InvalidArgument("rollback: recurrent layer " + std::to_string(i) + " logged " +
                             std::to_string(logs_[i].tokens) + " tokens, expected " + std::to_string(logged));
  KZ_RETURN_IF_ERROR(restore_impl(cp));
  const int64_t kv_row = (ssm_nk_ + ssm_nv_) * ssm_d_;
  for (size_t i = 0; i < logs_.size() && keep > 0; ++i) {
    RecurrentLog& log = logs_[i];
    RecurrentLayer& r = recurrent_[i];
    DeltaRuleBatch b;
    b.n_tokens = keep;
    b.n_k_heads = ssm_nk_;
    b.n_v_heads = ssm_nv_;
    b.d_k = b.d_v = ssm_d_;
    b.k = log.kv.data();  // no q, no out: the state only
    b.v = log.kv.data() + ssm_nk_ * ssm_d_;
    b.k_stride = b.v_stride = kv_row;
    b.beta = log.beta.data();
    b.g = log.g.data();
    KZ_RETURN_IF_ERROR(delta_rule_chunked(b, kDeltaRuleDefaultChunk, r.s.data(), pool, &r.tail));
    // The conv window: the last hist rows of (window at the checkpoint,
    // then the kept tokens' inputs).
    const size_t ch = static_cast<size_t>(ssm_channels_), hist = static_cast<size_t>(ssm_hist_);
    ScratchFloats ext((hist + static_cast<size_t>(keep)) * ch);
    std::copy(r.conv.begin(), r.conv.end(), ext.begin());
    std::copy(log.conv_in.begin(), log.conv_in.begin() + static_cast<std::ptrdiff_t>(keep * ssm_channels_),
              ext.begin() + hist * ch);
    std::copy(ext.end() - static_cast<std::ptrdiff_t>(hist * ch), ext.end(), r.conv.begin());
  }
  for (auto& l : logs_) l.keep(keep, ssm_channels_, kv_row, ssm_nv_);
  n_past_ = n_past;
  return OkStatus();
}

uint64_t StateCheckpoint::memory_bytes() const {
  uint64_t total = 0;
  for (const auto& r : recurrent) total += r.memory_bytes();
  return total;
}

uint64_t ModelState::memory_bytes() const {
  const auto elem = static_cast<uint64_t>(kv_elem_bytes(options_.kv_type));
  uint64_t total = kv_.size() * 2 * static_cast<uint64_t>(kv_layout_.values()) * elem;
  for (const auto& r : recurrent_) total += r.memory_bytes();
  return total;
}

}  // namespace kazeia
