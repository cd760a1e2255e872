// Per-sequence state of a model: the KV cache of attention layers and the
// recurrent state (S matrices + conv window) of Gated DeltaNet layers.
//
// Positions are committed in one place (commit()) after a forward pass
// succeeded. A KV cache rolls back by truncation; recurrent state cannot:
// take a checkpoint (save_checkpoint) where you may want to come back, and
// restore it (restore_checkpoint) instead of truncating.
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "base/huge_page_buffer.h"
#include "kazeia/status.h"
#include "models/blocks/delta_rule.h"
#include "models/model_config.h"

namespace kazeia {

class ThreadPool;

enum class KvType { kF32, kF16 };

struct StateOptions {
  int64_t n_ctx = 4096;
  KvType kv_type = KvType::kF32;
  // Positions per span of the KV cache (KvLayout below): 0 picks about 2
  // MiB of one layer's K; else a multiple of kKvTile (tests use one tile
  // to cross many spans on small models). Where positions sit, not what
  // is computed: the logits do not depend on it.
  int64_t kv_span = 0;
};

// InvalidArgument naming the field for options no state can take: a
// context size that is not positive, a span that is not a whole number of
// K tiles; OutOfRange for a KV cache or recurrent state of config's shapes
// past 2^48 bytes (sizes computed with overflow checks).
Status check_state_options(const ModelConfig& config, const StateOptions& options);

// Positions per K tile of the cache.
inline constexpr int64_t kKvTile = 64;

// K and V of one attention layer (f32, or f16 stored as uint16).
// Positions are grouped in spans of KvLayout::span positions (a multiple of
// kKvTile), and each KV head has a region of its own in every span,
// head_stride values, so a decoded token's attention reads a head's K and V
// tile after tile as sequential runs (span * head dim values). (Tile-major
// regions, all heads of a tile together, put a head's tiles a tile of all
// heads apart; with that layout, decode at 256 positions spent ~8 % of its
// time in attention, most of it waiting for these reads.)
// Inside a head's run, a tile of kKvTile positions holds its K and V in
// panels of kKvPanel columns, the layout the attention's products read:
//  - K is stored transposed in panels of kKvPanel positions (the score
//    products Q K^T run across positions): a panel is head_dim_k rows of
//    kKvPanel positions; value d of position p is kv_k_at(p, .., d).
//  - V is stored in panels of kKvPanel values of a row (the products P V
//    run across values): a tile's panel c is its kKvTile positions' values
//    kKvPanel c .. kKvPanel (c + 1) - 1, rows of kv_panel_width(c, head
//    dim) values (only the last panel of a head dim that is not a multiple
//    of kKvPanel is narrower); value i of position p is kv_v_at(p, .., i).
// Why panels: a decoded token's products walk B one register tile of
// columns at a time, row after row, and a panel's rows are one line of f16
// each, so every product reads one sequential run of memory, which the
// kernels prefetch a fixed distance ahead, past the panel's end into the
// next panel and tile. With whole-tile rows (128 bytes of K, 256 of V in
// f16) each pass of a product took every other line or worse: a strided
// walk the hardware prefetchers follow poorly, so each tile had to be read
// into the cache first.
//
// Why spans: the buffers sit on 2 MiB pages where the OS gives them
// (HugePageBuffer), and a span of one layer's K (or V) is about 2 MiB, so
// the pages fill as the context grows, span by span. Without spans a head's
// region covers the whole context, and a 2 MiB page touched by the first
// token would commit several heads' regions at once. On 4 KiB pages every
// 16 KB tile a decoded token reads spans four pages: Qwen3-0.6B Q4_0 on Zen
// 2, 2 threads, tg32 after 2048 tokens, 1.075x the speed with the cache on
// 2 MiB pages (median of 11 interleaved pairs: 47.4 against 44.2 t/s).
// The buffers are allocated for n_ctx positions (rounded up to a whole
// tile: the last span holds only what is left) but left uninitialised, so
// the OS commits pages only as positions are written: memory grows with
// the context actually used - on 2 MiB pages a span at a time, up to one
// span (Qwen3-0.6B f16: 1024 positions, 112 MB over its 28 layers) ahead of
// the positions written, and never past the n_ctx positions allocated.
struct KvLayout {
  int64_t span = kKvTile;      // positions per span
  int64_t head_stride = 0;     // values per head in a span: span * the larger head dim
  int64_t span_stride = 0;     // values per span: n_head_kv * head_stride
  int64_t n_spans = 0;         // spans allocated
  int64_t n_heads = 0;         // KV heads
  int64_t last_head_stride = 0;  // the last span's: it holds only the rest of the context
  // The stride between the heads of the span that holds position pos.
  int64_t head_stride_at(int64_t pos) const { return pos / span == n_spans - 1 ? last_head_stride : head_stride; }
  int64_t values() const { return (n_spans - 1) * span_stride + n_heads * last_head_stride; }
};
// Columns per panel of a KV tile (above): one 64-byte line of f16.
inline constexpr int64_t kKvPanel = 32;
// The width of panel c of n columns: kKvPanel, or what is left in the last.
inline int64_t kv_panel_width(int64_t c, int64_t n) { return std::min(kKvPanel, n - c * kKvPanel); }
// Where head `head`'s run of the span holding pos begins.
inline int64_t kv_head_run(int64_t pos, const KvLayout& l, int64_t head) {
  return (pos / l.span) * l.span_stride + head * l.head_stride_at(pos);
}
// Value d of position pos's K (head dim head_dim_k); row d of a K panel is
// d * kKvPanel values after its row 0.
inline size_t kv_k_at(int64_t pos, const KvLayout& l, int64_t head, int64_t head_dim_k, int64_t d) {
  const int64_t q = pos % l.span;
  return static_cast<size_t>(kv_head_run(pos, l, head) + (q / kKvPanel) * kKvPanel * head_dim_k + d * kKvPanel +
                             q % kKvPanel);
}
// Value i of position pos's V (head dim head_dim_v); a tile's panel c
// starts at kv_v_at(tile start, .., c * kKvPanel).
inline size_t kv_v_at(int64_t pos, const KvLayout& l, int64_t head, int64_t head_dim_v, int64_t i) {
  const int64_t q = pos % l.span, c = i / kKvPanel;
  return static_cast<size_t>(kv_head_run(pos, l, head) + (q / kKvTile) * kKvTile * head_dim_v +
                             c * kKvTile * kKvPanel + (q % kKvTile) * kv_panel_width(c, head_dim_v) + i % kKvPanel);
}

// n values of a sequence's state (one layer's K or V, every recurrent
// layer's S) on 2 MiB pages where the OS gives them, uninitialised; none
// for n = 0. Throws std::bad_alloc when they cannot be mapped, as the
// allocations it replaces did.
template <class T>
class StateBuffer {
 public:
  StateBuffer() = default;
  explicit StateBuffer(size_t n) {
    if (n == 0) return;
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    mem_ = std::make_unique<HugePageBuffer>(n * sizeof(T));
    if (mem_->data() == nullptr) throw std::bad_alloc();
  }
  T* get() const { return mem_ != nullptr ? reinterpret_cast<T*>(mem_->data()) : nullptr; }

 private:
  std::unique_ptr<HugePageBuffer> mem_;
};

struct KvLayer {
  StateBuffer<float> k, v;          // kF32
  StateBuffer<uint16_t> k16, v16;   // kF16
};

// Gated DeltaNet state of one layer. The delta rule runs in chunks at fixed
// positions (delta_rule.h): s is S at the last chunk boundary, tail the
// rows since (empty at a boundary). Every layer's S sits in one buffer of
// the ModelState on 2 MiB pages where the OS gives them: a decoded token
// reads and writes all of them (18.9 MB at Qwen3.5-0.8B shapes), 4 KiB pages
// at a time otherwise (Qwen3.5-0.8B Q4_0 on Zen 2, 2 threads, tg128: 1.018x,
// median of 11 interleaved pairs).
struct RecurrentLayer {
  std::span<float> s;        // n_v_heads x head_dim(k) x head_dim(v), in the state's buffer
  std::vector<float> conv;   // (conv_kernel - 1) x channels: the last inputs
  DeltaRuleTail tail;
  uint64_t memory_bytes() const { return (s.size() + conv.size()) * sizeof(float) + tail.memory_bytes(); }
};

// A recurrent layer as a checkpoint keeps it: copies of S, the conv window
// and the packed tail.
struct RecurrentCopy {
  std::vector<float> s, conv;
  DeltaRuleTail tail;
  uint64_t memory_bytes() const { return (s.size() + conv.size()) * sizeof(float) + tail.memory_bytes(); }
};

// The inputs of one recurrent layer's tokens since ModelState's recording
// began: what a rollback needs to rebuild S and the conv window at any of
// those positions from a checkpoint, without a state copy per token.
struct RecurrentLog {
  int64_t tokens = 0;
  std::vector<float> conv_in;  // tokens x channels: the rows entering the causal conv
  std::vector<float> kv;       // tokens x (n_k_heads + n_v_heads) x head_dim: k, v after conv and norms
  std::vector<float> beta, g;  // tokens x n_v_heads
  void clear();
  void keep(int64_t n, int64_t channels, int64_t kv_row, int64_t n_v_heads);  // the first n tokens
  uint64_t memory_bytes() const;
};

// A sequence's state at n_past positions, in memory: a copy of every
// recurrent layer (S matrices + conv window, ~1 MB per layer at Qwen3.5-0.8B
// shapes, plus up to ~0.54 MB of chunk tail when n_past is not a multiple of
// the chunk size) but not of the KV cache, which is restored by truncation. That is
// valid while the cache rows below n_past are the ones the checkpoint saw,
// i.e. until the state is rewound below n_past and written again;
// restore_checkpoint checks this and refuses a stale checkpoint.
struct StateCheckpoint {
  int64_t n_past = -1;  // -1: empty
  uint64_t owner = 0;   // the ModelState it was taken from
  uint64_t epoch = 0;   // that state's rewind count when it was taken
  std::vector<RecurrentCopy> recurrent;
  uint64_t memory_bytes() const;
};

class ModelState {
 public:
  ModelState(const ModelConfig& config, const StateOptions& options);

  int64_t n_past() const { return n_past_; }
  int64_t n_ctx() const { return options_.n_ctx; }
  KvType kv_type() const { return options_.kv_type; }
  const KvLayout& kv_layout() const { return kv_layout_; }  // where positions sit in a layer's K / V (kv_k_at, kv_v_at)
  // Positions the KV buffers hold: n_ctx rounded up to whole K tiles.
  int64_t padded_ctx() const { return (options_.n_ctx + kKvTile - 1) / kKvTile * kKvTile; }

  // OutOfRange naming both numbers when n more positions do not fit.
  Status check_room(int64_t n) const;
  void commit(int64_t n) { n_past_ += n; }
  // Forgets everything (positions 0..).
  void reset();
  // Drops positions >= n_past from the KV cache. Only valid for models
  // without recurrent layers (they need a checkpoint instead).
  Status truncate(int64_t n_past);

  // Copies the current state into `out` (reusing its buffers).
  void save_checkpoint(StateCheckpoint& out) const;
  // Back to the checkpoint's position: recurrent layers copied back, KV
  // cache truncated. InvalidArgument for a checkpoint of another state or
  // an empty one; OutOfRange when it is stale (positions below its n_past
  // were rewound and rewritten since it was taken). The checkpoint stays
  // valid and can be restored again.
  Status restore_checkpoint(const StateCheckpoint& checkpoint);

  // Rollback (speculative decoding): begin_recording() at the position of
  // a checkpoint; every forward pass then logs each recurrent layer's
  // per-token inputs (~ (2 n_k + 2 n_v) head_dim floats per token and
  // layer). rollback(cp, n) returns to any position n between the
  // checkpoint and n_past(): it restores cp, replays the logged inputs of
  // the kept tokens through the delta rule (state only, no outputs) and the
  // conv window, and truncates the KV cache - giving the state, bit for
  // bit, of forward passes over just the kept tokens, however they were
  // split (delta-rule chunks sit at fixed positions). Recording goes on
  // from there. reset, truncate and restore_checkpoint stop it.
  void begin_recording();
  void stop_recording();
  bool recording() const { return recording_; }
  int64_t recording_base() const { return record_base_; }
  RecurrentLog* recurrent_log(int64_t ri) { return recording_ ? &logs_[static_cast<size_t>(ri)] : nullptr; }
  Status rollback(const StateCheckpoint& cp, int64_t n_past, ThreadPool* pool = nullptr);
  uint64_t log_bytes() const;

  std::vector<KvLayer>& kv() { return kv_; }
  std::vector<RecurrentLayer>& recurrent() { return recurrent_; }
  const std::vector<KvLayer>& kv() const { return kv_; }
  const std::vector<RecurrentLayer>& recurrent() const { return recurrent_; }
  // Index into kv() / recurrent() of trunk layer il (-1 if it has none).
  int64_t kv_index(int64_t il) const { return kv_index_[static_cast<size_t>(il)]; }
  int64_t recurrent_index(int64_t il) const { return rec_index_[static_cast<size_t>(il)]; }
  uint64_t memory_bytes() const;

 private:
  // Records that n_past_ drops to `floor` (reset, truncate, restore).
  void rewind_to(int64_t floor);
  Status restore_impl(const StateCheckpoint& checkpoint);

  StateOptions options_;
  uint64_t id_ = 0;  // unique per ModelState, ties checkpoints to their state
  int64_t n_past_ = 0;
  // Rewinds, as a stack of (rewind count, floor) with floors increasing
  // upwards: a new rewind pops every entry whose floor is not below its
  // own. The lowest floor among the rewinds since rewind count e is then
  // the floor of the first entry at or after e (bounded by n_ctx entries).
  uint64_t epoch_ = 0;
  std::vector<std::pair<uint64_t, int64_t>> rewinds_;
  KvLayout kv_layout_;
  std::vector<KvLayer> kv_;
  std::vector<RecurrentLayer> recurrent_;
  StateBuffer<float> recurrent_s_;  // every layer's S (RecurrentLayer::s)
  std::vector<int64_t> kv_index_, rec_index_;
  // Recurrent shapes (for rollback's replay).
  int64_t ssm_nk_ = 0, ssm_nv_ = 0, ssm_d_ = 0, ssm_hist_ = 0, ssm_channels_ = 0;
  bool recording_ = false;
  int64_t record_base_ = 0;
  std::vector<RecurrentLog> logs_;
};

}  // namespace kazeia
