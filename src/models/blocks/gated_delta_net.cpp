#include "models/blocks/gated_delta_net.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/scratch.h"
#include "base/thread_pool.h"

namespace kazeia {

using namespace kernels;

namespace {

// fn(t0, t1, h0, h1) over n token rows x `heads` heads on the pool: a batch
// splits by tokens, a few tokens (decode) by heads, so that both cores
// work either way. Heads are independent, so the bits do not depend on the
// split.
// Whether it splits by tokens: then no call but the last sees every token.
bool splits_by_tokens(int64_t n, ThreadPool* pool) { return pool != nullptr && pool->size() > 1 && n >= 4; }

template <class Fn>
void for_rows_or_heads(int64_t n, int64_t heads, ThreadPool* pool, Fn&& fn) {
  if (pool == nullptr || pool->size() == 1) {
    fn(int64_t{0}, n, int64_t{0}, heads);
  } else if (splits_by_tokens(n, pool)) {
    pool->parallel_for(0, n, [&](int64_t t0, int64_t t1, int) { fn(t0, t1, int64_t{0}, heads); }, 4);
  } else {
    pool->parallel_for(0, heads, [&](int64_t h0, int64_t h1, int) { fn(int64_t{0}, n, h0, h1); });
  }
}

}  // namespace

void transpose_conv_taps(const float* conv, int64_t kernel, int64_t channels, float* out) {
  transpose_f32(conv, static_cast<size_t>(kernel), channels, kernel, out, static_cast<size_t>(channels));
}

Status gated_delta_net_forward(const ModelConfig& c, const DeltaNetWeights& w, RecurrentLayer& state,
                               const float* x, int64_t n_tokens, float* out, ThreadPool* pool, int64_t chunk_size,
                               RecurrentLog* log) {
  const int64_t nk = c.ssm_n_k_heads, nv = c.ssm_n_v_heads, d = c.ssm_head_dim;
  const int64_t kernel = c.ssm_conv_kernel, hist = kernel - 1;
  const int64_t channels = 2 * nk * d + nv * d;
  const int64_t inner = nv * d;
  // Checked before the state is touched, so a bad call leaves it as it was.
  if (n_tokens < 0) return InvalidArgument("gated_delta_net: n_tokens = " + std::to_string(n_tokens));
  if (n_tokens == 0) return OkStatus();
  if (chunk_size <= 0 || chunk_size > kDeltaRuleMaxChunk)
    return InvalidArgument("gated_delta_net: chunk size must be in [1, " + std::to_string(kDeltaRuleMaxChunk) +
                           "], got " + std::to_string(chunk_size));
  if (state.conv.size() != static_cast<size_t>(hist * channels) || state.s.size() != static_cast<size_t>(nv * d * d))
    return InvalidArgument("gated_delta_net: recurrent state does not match the layer's shapes");
  KZ_RETURN_IF_ERROR(check_delta_rule_tail(state.tail, chunk_size, nv, d, d));

  // ext = the conv window (hist rows, oldest first) followed by this batch's
  // q|k|v rows: the causal conv of token t reads rows t .. t + hist. The
  // window rows are read where they are, in the state (ext_row): ext holds
  // only the batch's rows, after room for the window.
  ScratchFloats ext(static_cast<size_t>((hist + n_tokens) * channels));
  auto ext_row = [&](int64_t j) -> const float* {
    return (j < hist ? state.conv.data() : ext.data()) + j * channels;
  };
  ScratchFloats z(static_cast<size_t>(n_tokens * inner));
  ScratchFloats beta(static_cast<size_t>(n_tokens * nv)), alpha(static_cast<size_t>(n_tokens * nv));
  const MatmulJob projections[] = {
      {&w.qkv, ext.data() + hist * channels}, {&w.gate, z.data()}, {&w.beta, beta.data()}, {&w.alpha, alpha.data()}};
  KZ_RETURN_IF_ERROR(matmul_many(projections, x, n_tokens, pool));
  // beta = sigmoid(.), g = a * softplus(. + dt_bias): per token and value head.
  sigmoid(beta.data(), n_tokens * nv, beta.data());
  for (int64_t t = 0; t < n_tokens; ++t) {
    float* g = alpha.data() + t * nv;
    add(g, w.dt_bias, nv, g);
    softplus(g, nv, g);
    mul(g, w.a, nv, g);
  }

  // Causal depthwise conv over the whole batch, then silu (one kernel,
  // vectorised across channels): with the taps transposed to [K][channels]
  // (done once, at load) each tap is one contiguous multiply-add over a
  // row. Same summation order as one token at a time (0 + tap_0 x_0 + .. +
  // tap_{K-1} x_{K-1}), so the results are identical.
  const float* taps = w.conv_taps;
  ScratchFloats conv(static_cast<size_t>(n_tokens * channels));
  // The new window: the last hist rows of ext (older window rows included
  // when the batch is shorter than the window: those move down, each read
  // before it is overwritten), for channels [c0, c1).
  auto shift_window = [&](int64_t c0, int64_t c1) {
    for (int64_t j = 0; j < hist; ++j) {
      const float* src = ext_row(n_tokens + j);
      std::copy(src + c0, src + c1, state.conv.data() + j * channels + c0);
    }
  };
  // Unless the conv splits by tokens, each task covers every token of its
  // channel heads: it has read their window when its conv is done, and
  // moves that part of it while the rows are in its core's cache. (Decode
  // on one thread after the conv read lines the other core held: 14 us of
  // a 0.8B layer's ~50 outside the matmuls.)
  const bool shift_in_tasks = !splits_by_tokens(n_tokens, pool);
  // Channel heads: q and k (nk each), then v (nv), d channels apiece.
  for_rows_or_heads(n_tokens, 2 * nk + nv, pool, [&](int64_t t0, int64_t t1, int64_t h0, int64_t h1) {
    const int64_t c0 = h0 * d, c1 = h1 * d;
    // The K input rows of a token (kept per thread: no allocation per call).
    thread_local std::vector<const float*> rows;
    rows.resize(static_cast<size_t>(kernel));
    for (int64_t t = t0; t < t1; ++t) {
      float* o = conv.data() + t * channels;
      for (int64_t k = 0; k < kernel; ++k) rows[static_cast<size_t>(k)] = ext_row(t + k) + c0;
      conv_silu(rows.data(), taps + c0, static_cast<size_t>(channels), kernel, c1 - c0, o + c0);
      // L2-normalised q and k per key head.
      for (int64_t h = h0; h < std::min(h1, 2 * nk); ++h) l2_norm(o + h * d, d, c.rms_eps, o + h * d);
    }
    if (shift_in_tasks) shift_window(c0, c1);
  });
  if (!shift_in_tasks) shift_window(0, channels);

  if (log != nullptr) {  // the inputs a rollback replays (model_state.h)
    const float* in = ext.data() + hist * channels;
    log->conv_in.insert(log->conv_in.end(), in, in + n_tokens * channels);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* kv = conv.data() + t * channels + nk * d;  // k | v
      log->kv.insert(log->kv.end(), kv, kv + (nk + nv) * d);
    }
    log->beta.insert(log->beta.end(), beta.data(), beta.data() + n_tokens * nv);
    log->g.insert(log->g.end(), alpha.data(), alpha.data() + n_tokens * nv);
    log->tokens += n_tokens;
  }

  ScratchFloats o(static_cast<size_t>(n_tokens * inner));
  DeltaRuleBatch b;
  b.n_tokens = n_tokens;
  b.n_k_heads = nk;
  b.n_v_heads = nv;
  b.d_k = b.d_v = d;
  b.q = conv.data();
  b.k = conv.data() + nk * d;
  b.v = conv.data() + 2 * nk * d;
  b.q_stride = b.k_stride = b.v_stride = channels;
  b.beta = beta.data();
  b.g = alpha.data();
  b.out = o.data();
  b.out_stride = inner;
  // Chunks at fixed positions, the unfinished one in state.tail: a batch and
  // a token at a time (decode: one row of the chunk form) give the same bits.
  KZ_RETURN_IF_ERROR(delta_rule_chunked(b, chunk_size, state.s.data(), pool, &state.tail));

  // Gated RMSNorm per value head, rms(o) * ssm_norm, then o *= silu(z).
  for_rows_or_heads(n_tokens, nv, pool, [&](int64_t t0, int64_t t1, int64_t h0, int64_t h1) {
    const int64_t c0 = h0 * d, width = (h1 - h0) * d;
    for (int64_t t = t0; t < t1; ++t) {
      float* ot = o.data() + t * inner;
      for (int64_t h = h0; h < h1; ++h) rms_norm(ot + h * d, w.norm, d, c.rms_eps, ot + h * d);
      // o * silu(z) as swiglu(z, o): the same two roundings, one pass.
      const float* zt = z.data() + t * inner;
      swiglu(zt + c0, ot + c0, width, ot + c0);
    }
  });
  return matmul(w.out, o.data(), n_tokens, out, pool);
}

}  // namespace kazeia
