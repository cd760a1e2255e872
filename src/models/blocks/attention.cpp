#include "models/blocks/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/scratch.h"
#include "base/thread_pool.h"
#include "kernels/transpose.h"
#include "tensor/quant.h"

namespace kazeia {

using namespace kernels;

namespace {

// Positions per K/V tile and queries per block of the tiled attention: the
// cache's K tiles (model_state.h).
constexpr int64_t kTile = kKvTile;

// Queries per sub-block of a diagonal tile's products (below).
constexpr int64_t kSubQueries = 16;

// Query rows (queries x heads per KV head) up to which a task multiplies
// the f16 cache's tiles directly (gemm_f32_f16b): each B vector is then
// converted once per register tile of rows, so few rows convert no more
// than a separate pass would, and skip its writes and re-reads.
constexpr int64_t kMaxRowsOnHalfTiles = 8;

// Tokens per chunk when a batch prepares its q / k rows on every thread (a
// batch within one tile, a decoded token's, prepares them in the attention
// tasks instead: below).
constexpr int64_t kPrepareGrain = 4;

// Token t's rotation (its angles from the table) on n_heads heads.
Status apply_rope(const ModelConfig& c, const RopeTable& rope, int64_t t, float* heads, int64_t n_heads) {
  if (c.rope_pairing == RopePairing::kNeox)
    return rope_neox_angles(heads, n_heads, c.head_dim_k, c.n_rot, rope.cos_at(t), rope.sin_at(t));
  return rope_norm_angles(heads, n_heads, c.head_dim_k, c.n_rot, rope.cos_at(t), rope.sin_at(t));
}

}  // namespace

RopeTable::RopeTable(const ModelConfig& c, int64_t first_pos, int64_t n_tokens)
    : first_pos_(first_pos),
      n_tokens_(n_tokens),
      half_(std::max<int64_t>(0, c.n_rot / 2)),
      values_(static_cast<size_t>(n_tokens * 2 * half_)) {
  for (int64_t t = 0; t < n_tokens; ++t)
    rope_angles(first_pos + t, 2 * half_, c.rope_freq_base, values_.data() + t * 2 * half_,
                values_.data() + t * 2 * half_ + half_);
}

Status attention_forward(const ModelConfig& c, const AttentionWeights& w, KvLayer& kv, KvType kv_type,
                         const KvLayout& kv_layout, int64_t n_past, const RopeTable& rope, const float* x,
                         int64_t n_tokens, float* out, ThreadPool* pool) {
  if (rope.first_pos() != n_past || rope.n_tokens() != n_tokens)
    return InvalidArgument("attention: rotary angles of positions " + std::to_string(rope.first_pos()) + " + " +
                           std::to_string(rope.n_tokens()) + " for a batch at " + std::to_string(n_past) + " + " +
                           std::to_string(n_tokens));
  const int64_t dk = c.head_dim_k, dv = c.head_dim_v;
  const int64_t n_head = c.n_head, n_kv = c.n_head_kv;
  const int64_t q_width = n_head * dk * (w.gated ? 2 : 1);
  ScratchFloats qg(static_cast<size_t>(n_tokens * q_width));
  ScratchFloats k(static_cast<size_t>(n_tokens * n_kv * dk));
  ScratchFloats v(static_cast<size_t>(n_tokens * n_kv * dv));
  const MatmulJob qkv[] = {{&w.wq, qg.data()}, {&w.wk, k.data()}, {&w.wv, v.data()}};
  KZ_RETURN_IF_ERROR(matmul_many(qkv, x, n_tokens, pool));

  // Per-head norm and rotary on q and k; K/V rows go to the cache.
  ScratchFloats q(static_cast<size_t>(n_tokens * n_head * dk));
  ScratchFloats gate(w.gated ? static_cast<size_t>(n_tokens * n_head * dk) : 0);
  const int64_t first_block = n_past / kTile;
  const int64_t n_blocks = (n_past + n_tokens - 1) / kTile - first_block + 1;
  // K and V of tokens [t0, t1), KV head g, into their panels
  // (model_state.h). The cache keeps K transposed per panel, so K is
  // written channel by channel: the tokens' values of a channel are
  // consecutive floats of one row of the panel. (Token by token, every K
  // value was a store to a line of its own: ~2 % of a prefill.)
  auto store_kv = [&](int64_t t0, int64_t t1, int64_t g) {
    const bool f32 = kv_type == KvType::kF32;
    thread_local std::vector<uint16_t> k16;
    if (!f32) k16.resize(static_cast<size_t>((t1 - t0) * dk));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t pos = n_past + t;
      const float* v_src = v.data() + (t * n_kv + g) * dv;
      if (!f32) fp32_to_fp16_row(k.data() + (t * n_kv + g) * dk, dk, k16.data() + (t - t0) * dk);
      // V: the row's pieces, one per panel.
      for (int64_t c = 0; c * kKvPanel < dv; ++c) {
        const int64_t i0 = c * kKvPanel, width = kv_panel_width(c, dv);
        const size_t at = kv_v_at(pos, kv_layout, g, dv, i0);
        if (f32)
          std::copy(v_src + i0, v_src + i0 + width, kv.v.get() + at);
        else
          fp32_to_fp16_row(v_src + i0, width, kv.v16.get() + at);
      }
    }
    // K: per panel, the tokens' rows transposed into the panel's channel
    // rows (kKvPanel apart).
    for (int64_t ta = t0; ta < t1;) {
      const int64_t tb = std::min(t1, (n_past + ta) / kKvPanel * kKvPanel + kKvPanel - n_past);
      const size_t at = kv_k_at(n_past + ta, kv_layout, g, dk, 0);
      if (f32) {
        transpose_f32(k.data() + (ta * n_kv + g) * dk, static_cast<size_t>(n_kv * dk), tb - ta, dk, kv.k.get() + at,
                      static_cast<size_t>(kKvPanel));
      } else {
        transpose_blocked(k16.data() + (ta - t0) * dk, static_cast<size_t>(dk), tb - ta, dk, kv.k16.get() + at,
                          static_cast<size_t>(kKvPanel));
      }
      ta = tb;
    }
  };
  // Per-head norm and rotary of tokens [t0, t1) on the query heads of KV
  // heads [g0, g1) (and their gates) and on those K heads.
  const int64_t group = n_head / n_kv;
  auto prepare = [&](int64_t t0, int64_t t1, int64_t g0, int64_t g1) -> Status {
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t h = g0 * group; h < g1 * group; ++h) {
        const float* src = qg.data() + t * q_width + h * dk * (w.gated ? 2 : 1);
        float* dst = q.data() + (t * n_head + h) * dk;
        if (w.q_norm)
          rms_norm(src, w.q_norm, dk, c.rms_eps, dst);
        else
          std::copy(src, src + dk, dst);
        if (w.gated) std::copy(src + dk, src + 2 * dk, gate.data() + (t * n_head + h) * dk);
      }
      KZ_RETURN_IF_ERROR(apply_rope(c, rope, t, q.data() + (t * n_head + g0 * group) * dk, (g1 - g0) * group));
      float* kt = k.data() + (t * n_kv + g0) * dk;
      if (w.k_norm) rms_norm_heads(kt, w.k_norm, g1 - g0, dk, c.rms_eps, kt);
      KZ_RETURN_IF_ERROR(apply_rope(c, rope, t, kt, g1 - g0));
    }
    return OkStatus();
  };
  // When every new token falls in one block (decode), the task of KV head g
  // is the only one reading head g's tiles and its group's queries: it
  // prepares them and stores head g's new rows itself, so that work runs on
  // every thread instead of between two parallel regions, the line fetches
  // of the stores are spread over the threads, and the rows are in cache
  // when its scores read them.
  const bool store_in_tasks = n_blocks == 1;
  // Else tokens are independent here: a batch splits them over the threads.
  if (!store_in_tasks) {
    KZ_RETURN_IF_ERROR(parallel_for_status(pool, 0, n_tokens, [&](int64_t t0, int64_t t1, int) -> Status {
      KZ_RETURN_IF_ERROR(prepare(t0, t1, 0, n_kv));
      for (int64_t g = 0; g < n_kv; ++g) store_kv(t0, t1, g);
      return OkStatus();
    }, kPrepareGrain));
  }

  // Scores, softmax and the weighted sum of V, tiled (flash-attention
  // style): a task is one KV head and a block of up to kTile queries (times
  // the heads sharing it); it walks the cached positions in tiles of kTile
  // with an online softmax.
  // Query blocks and position tiles are aligned to absolute positions
  // (multiples of kTile), so a query sees the same tiles, the same dot
  // products and the same float operations whether it arrives alone (decode) or inside
  // a prefill batch: chunked and one-batch prefill give identical logits.
  // Positions past a query's own are masked to exactly zero weight, which
  // leaves every sum unchanged. The products go through gemm_f32(_acc), whose
  // per-element fma chains do not depend on the shapes either.
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  ScratchFloats attn(static_cast<size_t>(n_tokens * n_head * dv));
  const bool f16 = kv_type == KvType::kF16;
  // A decoded token (one query block) reads each KV head's tiles cold from
  // memory - the weights streamed through the caches since. Its jobs run as
  // one run of consecutive heads per thread.
  const bool decode_jobs = n_blocks == 1;
  const size_t elem = f16 ? sizeof(uint16_t) : sizeof(float);
  // KV head g's tile at position j0 into L2: its K panels and its V
  // panels, one run each.
  auto prefetch_tile = [&](int64_t g, int64_t j0) {
    const size_t kn = kv_k_at(j0, kv_layout, g, dk, 0), vn = kv_v_at(j0, kv_layout, g, dv, 0);
    prefetch_to_l2(f16 ? static_cast<const void*>(kv.k16.get() + kn) : kv.k.get() + kn,
                   static_cast<size_t>(dk * kTile) * elem);
    prefetch_to_l2(f16 ? static_cast<const void*>(kv.v16.get() + vn) : kv.v.get() + vn,
                   static_cast<size_t>(dv * kTile) * elem);
  };
  auto blocks = [&](int64_t begin, int64_t end, int) -> Status {
    const int64_t max_rows = kTile * group;
    ScratchFloats qm(static_cast<size_t>(max_rows * dk)), kf(f16 ? static_cast<size_t>(kTile * dk) : 0),
        vf(f16 ? static_cast<size_t>(kTile * dv) : 0), s(static_cast<size_t>(max_rows * kTile)),
        p(static_cast<size_t>(max_rows * kTile)), o(static_cast<size_t>(max_rows * dv)),
        m(static_cast<size_t>(max_rows)), l(static_cast<size_t>(max_rows));
    for (int64_t job = begin; job < end; ++job) {
      // Later blocks have more tiles: they go first (job order is claim
      // order), so the short ones fill the gaps at the end.
      const int64_t b = first_block + n_blocks - 1 - job / n_kv, g = job % n_kv;
      const int64_t q0 = std::max(n_past, b * kTile), q1 = std::min(n_past + n_tokens, (b + 1) * kTile);
      if (store_in_tasks) {
        KZ_RETURN_IF_ERROR(prepare(0, n_tokens, g, g + 1));
        store_kv(0, n_tokens, g);
      }
      const int64_t rows = (q1 - q0) * group;  // row r: position q0 + r / group, head g * group + r % group
      // Scores S = Q K^T, vectorised across a tile's positions (the cache
      // keeps K transposed per tile): a score is the fma chain over d of
      // q[d] * k[d], whatever the number of queries.
      for (int64_t r = 0; r < rows; ++r) {
        const float* src = q.data() + ((q0 - n_past + r / group) * n_head + g * group + r % group) * dk;
        std::copy(src, src + dk, qm.data() + r * dk);
      }
      std::fill(o.begin(), o.begin() + rows * dv, 0.0f);
      std::fill(m.begin(), m.begin() + rows, -INFINITY);
      std::fill(l.begin(), l.begin() + rows, 0.0f);
      for (int64_t j0 = 0; j0 < q1; j0 += kTile) {
        const int64_t n_k = std::min(kTile, q1 - j0);
        const size_t k_tile = kv_k_at(j0, kv_layout, g, dk, 0);
        const size_t v_tile = kv_v_at(j0, kv_layout, g, dv, 0);
        // A few query rows (decode) multiply the f16 tiles as they are; more
        // convert them once and reuse the floats. The same bits either way.
        const bool half_tiles = f16 && rows <= kMaxRowsOnHalfTiles;
        // What is read next, asked for while this tile is multiplied:
        //  - a decoded token's products on the f16 tiles as they are walk
        //    each panel as one run and prefetch ahead of themselves into
        //    the next panel and tile (model_state.h), so only the first tile
        //    of the next head, elsewhere, is asked for, during this head's
        //    last;
        //  - an f32 cache's panel rows are two lines each, and there the
        //    products' prefetches lost to reading the tile's lines first
        //    (kernels::read_into_cache), as every tile did before the
        //    panels: Qwen3-0.6B Q4_0 on Zen 2, 2 threads, tg32 after 2048
        //    tokens with an f32 cache, 4 alternating pairs: 36.5-37.5
        //    against 34.2-34.9 t/s (8 KiB ahead: no better; f32 panels of
        //    16 columns, one line a row, without the reads: 35.2-35.7
        //    against 36.3-37.9);
        //  - otherwise (converted tiles, prefill) the next tile of this
        //    head: it follows this one in the cache, but the hardware
        //    prefetchers ramp up too slowly over a few pages (tg512 +1.7 %).
        const bool last_tile = j0 + kTile >= q1;
        const bool products_prefetch = decode_jobs && half_tiles;
        if (decode_jobs && !f16) {
          read_into_cache(kv.k.get() + k_tile, static_cast<size_t>(dk * kTile) * elem, kv.v.get() + v_tile,
                          static_cast<size_t>(dv * kTile) * elem);
        } else if (!last_tile && !products_prefetch) {
          prefetch_tile(g, j0 + kTile);
        } else if (last_tile && decode_jobs && job + 1 < end) {
          prefetch_tile((job + 1) % n_kv, 0);
        }
        const uint16_t* kt16 = f16 ? kv.k16.get() + k_tile : nullptr;
        const uint16_t* vr16 = f16 ? kv.v16.get() + v_tile : nullptr;
        const float* kt = f16 ? kf.data() : kv.k.get() + k_tile;
        const float* vr = f16 ? vf.data() : kv.v.get() + v_tile;
        if (f16 && !half_tiles) {
          // Into floats, panel by panel (the same layout): a full K panel
          // is one run, a partial one (the last tile) row by row; a V
          // panel's first n_k rows are one run.
          for (int64_t c = 0; c * kKvPanel < n_k; ++c) {
            const size_t at = static_cast<size_t>(c * kKvPanel * dk);
            const int64_t width = std::min(kKvPanel, n_k - c * kKvPanel);
            if (width == kKvPanel) {
              fp16_to_fp32_row(kt16 + at, kKvPanel * dk, kf.data() + at);
            } else {
              for (int64_t d = 0; d < dk; ++d)
                fp16_to_fp32_row(kt16 + at + static_cast<size_t>(d * kKvPanel), width,
                                 kf.data() + at + static_cast<size_t>(d * kKvPanel));
            }
          }
          for (int64_t c = 0; c * kKvPanel < dv; ++c) {
            const size_t at = static_cast<size_t>(c * kTile * kKvPanel);
            fp16_to_fp32_row(vr16 + at, n_k * kv_panel_width(c, dv), vf.data() + at);
          }
        }
        // C (+)= A B over the panel of B at offset `at` of a tile: the f16
        // tile (b16) as it is (few rows), else its floats (b32: the
        // converted tile or an f32 cache's).
        auto product = [&](bool acc, int64_t m_rows, int64_t n, int64_t k_len, const float* a, int64_t lda,
                           const uint16_t* b16, const float* b32, size_t at, int64_t ldb, float* c, int64_t ldc) {
          const auto la = static_cast<size_t>(lda), lb = static_cast<size_t>(ldb), lc = static_cast<size_t>(ldc);
          if (half_tiles && acc) gemm_f32_f16b_acc(m_rows, n, k_len, a, la, b16 + at, lb, c, lc);
          else if (half_tiles) gemm_f32_f16b(m_rows, n, k_len, a, la, b16 + at, lb, c, lc);
          else if (acc) gemm_f32_acc(m_rows, n, k_len, a, la, b32 + at, lb, c, lc);
          else gemm_f32(m_rows, n, k_len, a, la, b32 + at, lb, c, lc);
        };
        // Rows in sub-blocks of kSubQueries queries, each multiplied only
        // up to the last position its last query sees: on the diagonal tile
        // the rest is masked, so a prefill skips ~3/8 of that tile's work
        // (decode, one query, already stops at its position). Masked
        // positions carry exact zeros, so the bits do not change.
        const bool diagonal = j0 + n_k > q0 + 1;  // some query sees fewer than n_k positions
        const int64_t sub_rows = diagonal ? kSubQueries * group : rows;
        auto sub_width = [&](int64_t r1) { return std::min(n_k, q0 + (r1 - 1) / group - j0 + 1); };
        // Scores panel by panel of positions. (Scores past a sub-block's
        // width are left as they were: the softmax reads only a row's
        // `valid` ones.)
        for (int64_t r0 = 0; r0 < rows; r0 += sub_rows) {
          const int64_t r1 = std::min(rows, r0 + sub_rows), width = sub_width(r1);
          for (int64_t c = 0; c * kKvPanel < width; ++c) {
            const int64_t n = std::min(kKvPanel, width - c * kKvPanel);
            const size_t at = static_cast<size_t>(c * kKvPanel * dk);
            product(false, r1 - r0, n, dk, qm.data() + r0 * dk, dk, kt16, kt, at, kKvPanel,
                    s.data() + r0 * n_k + c * kKvPanel, n_k);
          }
        }
        // Online softmax: p = exp(score - m_new), o *= exp(m_old - m_new).
        for (int64_t r = 0; r < rows; ++r) {
          const float* sr = s.data() + static_cast<size_t>(r) * static_cast<size_t>(n_k);
          const int64_t valid = std::min(n_k, q0 + r / group - j0 + 1);
          float alpha;
          const float sum = softmax_online_row(sr, valid, n_k, scale, &m[static_cast<size_t>(r)], &alpha, p.data() + r * n_k);
          l[static_cast<size_t>(r)] = l[static_cast<size_t>(r)] * alpha + sum;
          // alpha is exactly 1 while the row's maximum stays put (most
          // tiles after the first): x * 1 is x, so the pass is skipped.
          if (alpha != 1.0f) kernels::scale(o.data() + r * dv, alpha, dv, o.data() + r * dv);
        }
        // Weighted sums of V, panel by panel of values.
        for (int64_t r0 = 0; r0 < rows; r0 += sub_rows) {
          const int64_t r1 = std::min(rows, r0 + sub_rows), width = sub_width(r1);
          for (int64_t c = 0; c * kKvPanel < dv; ++c) {
            const int64_t n = kv_panel_width(c, dv);
            const size_t at = static_cast<size_t>(c * kTile * kKvPanel);
            product(true, r1 - r0, n, width, p.data() + r0 * n_k, n_k, vr16, vr, at, n,
                    o.data() + r0 * dv + c * kKvPanel, dv);
          }
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t t = q0 - n_past + r / group, h = g * group + r % group;
        float* dst = attn.data() + (t * n_head + h) * dv;
        kernels::scale(o.data() + r * dv, 1.0f / l[static_cast<size_t>(r)], dv, dst);
        if (w.gated) {
          const float* gh = gate.data() + (t * n_head + h) * dk;
          sigmoid_mul(gh, dst, dv, dst);
        }
      }
    }
    return OkStatus();
  };
  // Causal prefill: later blocks cost more, so many small chunks, claimed
  // dynamically, balance the work. Decode: one run of heads per thread.
  const int64_t n_jobs = n_blocks * n_kv;
  KZ_RETURN_IF_ERROR(
      parallel_for_status(pool, 0, n_jobs, blocks, 1, (decode_jobs ? 1 : 16) * (pool != nullptr ? pool->size() : 1)));
  return matmul(w.wo, attn.data(), n_tokens, out, pool);
}

}  // namespace kazeia
