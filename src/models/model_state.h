// Per-sequence state of a model: the KV cache of attention layers and the
// recurrent state (S matrices + conv window) of Gated DeltaNet layers.
//
// Positions are committed in one place (commit()) after a forward pass
// succeeded, so a failed batch leaves the state untouched. A KV cache rolls
// back by truncation; recurrent state cannot, which is why checkpoints live
// in the runtime layer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kazeia/status.h"
#include "models/model_config.h"

namespace kazeia {

enum class KvType { kF32, kF16 };

struct StateOptions {
  int64_t n_ctx = 4096;
  KvType kv_type = KvType::kF32;
};

// K and V rows of one attention layer, position-major: row p holds the
// n_head_kv * head_dim values of position p (f32, or f16 stored as uint16).
// The buffers are allocated for n_ctx positions but left uninitialised, so
// the OS commits pages only as positions are written: memory grows with the
// context actually used.
struct KvLayer {
  std::unique_ptr<float[]> k, v;          // kF32
  std::unique_ptr<uint16_t[]> k16, v16;   // kF16
};

// Gated DeltaNet state of one layer.
struct RecurrentLayer {
  std::vector<float> s;      // n_v_heads x head_dim(k) x head_dim(v)
  std::vector<float> conv;   // (conv_kernel - 1) x channels: the last inputs
};

class ModelState {
 public:
  ModelState(const ModelConfig& config, const StateOptions& options);

  int64_t n_past() const { return n_past_; }
  int64_t n_ctx() const { return options_.n_ctx; }
  KvType kv_type() const { return options_.kv_type; }
  int64_t kv_row() const { return kv_row_; }  // floats per position per layer

  // OutOfRange naming both numbers when n more positions do not fit.
  Status check_room(int64_t n) const;
  void commit(int64_t n) { n_past_ += n; }
  // Forgets everything (positions 0..).
  void reset();
  // Drops positions >= n_past from the KV cache. Only valid for models
  // without recurrent layers (they need a checkpoint instead).
  Status truncate(int64_t n_past);

  std::vector<KvLayer>& kv() { return kv_; }
  std::vector<RecurrentLayer>& recurrent() { return recurrent_; }
  const std::vector<KvLayer>& kv() const { return kv_; }
  const std::vector<RecurrentLayer>& recurrent() const { return recurrent_; }
  // Index into kv() / recurrent() of trunk layer il (-1 if it has none).
  int64_t kv_index(int64_t il) const { return kv_index_[static_cast<size_t>(il)]; }
  int64_t recurrent_index(int64_t il) const { return rec_index_[static_cast<size_t>(il)]; }
  uint64_t memory_bytes() const;

 private:
  StateOptions options_;
  int64_t n_past_ = 0;
  int64_t kv_row_ = 0;
  std::vector<KvLayer> kv_;
  std::vector<RecurrentLayer> recurrent_;
  std::vector<int64_t> kv_index_, rec_index_;
};

}  // namespace kazeia
