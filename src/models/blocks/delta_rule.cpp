#include "models/blocks/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/kernels.h"

namespace kazeia {

namespace {

Status check_batch(const DeltaRuleBatch& b, const float* state, const char* what) {
  const std::string w(what);
  if (b.n_tokens < 0) return InvalidArgument(w + ": n_tokens = " + std::to_string(b.n_tokens));
  if (b.n_k_heads <= 0 || b.n_v_heads <= 0 || b.n_v_heads % b.n_k_heads != 0)
    return InvalidArgument(w + ": need n_v_heads a positive multiple of n_k_heads, got " +
                           std::to_string(b.n_v_heads) + " and " + std::to_string(b.n_k_heads));
  if (b.d_k <= 0 || b.d_v <= 0)
    return InvalidArgument(w + ": head dims must be positive, got " + std::to_string(b.d_k) + " and " +
                           std::to_string(b.d_v));
  // q and out are read and written only together; null both: state only.
  const bool outputs = b.out != nullptr;
  if (b.k_stride < b.n_k_heads * b.d_k || b.v_stride < b.n_v_heads * b.d_v ||
      (outputs && (b.q_stride < b.n_k_heads * b.d_k || b.out_stride < b.n_v_heads * b.d_v)))
    return InvalidArgument(w + ": a row stride is shorter than its row");
  if (state == nullptr) return InvalidArgument(w + ": null state");
  if (b.n_tokens > 0 && (b.k == nullptr || b.v == nullptr || b.beta == nullptr || b.g == nullptr ||
                         (outputs && b.q == nullptr)))
    return InvalidArgument(w + ": null input");
  return OkStatus();
}

// fn(h) for every value head, spread over the pool: one head per claim (the
// heads cost the same, and there are few of them), or with
// run_per_thread one run of heads per thread, claimed once - for a decoded
// token's heads, a few microseconds each, where every claim moves the
// pool's line between the cores (~230 ns each way on a cloud host's two
// vCPUs; Qwen3.5-0.8B Q4_0 tg128, Zen 2, 2 threads: 1.013-1.018x). First
// error wins.
template <class Fn>
Status for_each_head(int64_t n_heads, ThreadPool* pool, Fn&& fn, bool run_per_thread = false) {
  const int chunks = run_per_thread && pool != nullptr ? pool->size() : static_cast<int>(n_heads);
  return parallel_for_status(pool, 0, n_heads, [&](int64_t h0, int64_t h1, int) {
    for (int64_t h = h0; h < h1; ++h) KZ_RETURN_IF_ERROR(fn(h));
    return OkStatus();
  }, 1, chunks);
}

// Batches of up to this many tokens (decode) take one run of heads per
// thread (for_each_head).
constexpr int64_t kDecodeTokens = 4;

// Per-thread scratch, kept between calls so a prefill does not allocate
// (and page-fault in) ~0.5 MB per head and layer.
float* thread_scratch(size_t n) {
  thread_local std::vector<float> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// e^x for a (cumulative) log decay x <= 0, flushed to 0 below e^-40: strong
// decays over a chunk reach e^-100 and beyond, and products with such
// factors land in the subnormal range, where SIMD multiplies take microcode
// assists (a 512-token prefill of fast-decaying heads ran 2.5x slower).
// Terms 4e-18 times smaller than the ones they are summed with cannot
// change an f32 result.
constexpr double kNegligibleLogDecay = -40.0;
float decay_factor(double x) { return x < kNegligibleLogDecay ? 0.0f : std::exp(static_cast<float>(x)); }

// Zeroes entries below `limit` in magnitude, for the same reason: a value
// 1e-20 times the largest of its matrix is invisible in f32 sums, but feeds
// subnormal products into every later product it takes part in.
constexpr float kTinyRelative = 1e-20f;
void flush_tiny(float* x, int64_t n, float limit) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::fabs(x[i]) < limit ? 0.0f : x[i];
}

// max |x[i]| over 8 independent lanes (a single running max is one long
// serial dependency), NaNs skipped. GCC keeps it scalar: kernels::abs_range
// is the fast form, this one is for a state holding NaNs.
float max_abs(const float* x, int64_t n) {
  float m[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) m[l] = std::max(m[l], std::fabs(x[i + l]));
  for (; i < n; ++i) m[0] = std::max(m[0], std::fabs(x[i]));
  float r = 0.0f;
  for (float v : m) r = std::max(r, v);
  return r;
}

// ----------------------------------------------------------- recurrent form

void recurrent_head(const DeltaRuleBatch& b, int64_t h, float* s, float* delta) {
  const int64_t dk = b.d_k, dv = b.d_v, hk = h % b.n_k_heads;
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  for (int64_t t = 0; t < b.n_tokens; ++t) {
    const float* kh = b.k + t * b.k_stride + hk * dk;
    const float* vh = b.v + t * b.v_stride + h * dv;
    const float beta = b.beta[t * b.n_v_heads + h];
    const float decay = std::exp(b.g[t * b.n_v_heads + h]);
    for (int64_t i = 0; i < dk * dv; ++i) s[i] *= decay;
    std::fill(delta, delta + dv, 0.0f);
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) delta[j] += s[i * dv + j] * kh[i];
    for (int64_t j = 0; j < dv; ++j) delta[j] = beta * (vh[j] - delta[j]);
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) s[i * dv + j] += kh[i] * delta[j];
    if (b.out == nullptr) continue;
    const float* qh = b.q + t * b.q_stride + hk * dk;
    float* oh = b.out + t * b.out_stride + h * dv;
    std::fill(oh, oh + dv, 0.0f);
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) oh[j] += s[i * dv + j] * qh[i];
    for (int64_t j = 0; j < dv; ++j) oh[j] *= q_scale;
  }
}

// ------------------------------------------------------------- chunked form

// out (m x n, ld ldo) = A (m x k, ld lda) B (k x n, ld ldb) with
// kernels::gemm_f32: each entry is the same FMA chain over k (from 0)
// whatever m, n and the leading dimensions.
void product(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* out,
             int64_t ldo) {
  kernels::gemm_f32(m, n, k, a, static_cast<size_t>(lda), b, static_cast<size_t>(ldb), out, static_cast<size_t>(ldo));
}

// W's entries are sums of T-weighted beta e^G k with unit-norm keys,
// beta <= 1 and decays <= 1: O(1) at most. Rows of strongly decayed tokens
// are tiny; below this they are zeroed (see flush_tiny). An absolute bound,
// so that a row's value does not depend on the other rows of its chunk.
constexpr float kTinyW = 1e-20f;

// One value head's part of a DeltaRuleTail (layout in delta_rule.h).
struct TailHead {
  double* G;
  float *beta, *kt, *xw, *xu, *d, *tri;
  TailHead(float* base, int64_t c, int64_t dk, int64_t dv) {
    float* p0 = base;
    auto take = [&](int64_t n) { float* r = p0; p0 += n; return r; };
    G = reinterpret_cast<double*>(take(2 * c));  // first: head blocks are 16-float aligned
    beta = take(c);
    kt = take(dk * c);
    xw = take(c * dk);
    xu = take(c * dv);
    d = take(c * dv);
    tri = take(c * c);
  }
};

// Per-thread scratch of one call's rows (n <= C of them).
// W and Q share one buffer (W's n rows, then Q's), and so do W S and Q S:
// one product reads S once for both (decode reads every S once per token).
struct RowScratch {
  float* wq;          // 2n x d_k (W rows, then q rows)
  float *kk, *p, *e;  // n x C: k.k, q.k, e^{G_t - G_s}
  float *wsqs, *pd;   // 2n x d_v (W S, then Q S), n x d_v (P D)
  float* kd_t;        // d_k x C: (e^{G_last - G_s} K)^T
  float* kd;          // C: e^{G_last - G_s}
  static size_t floats(int64_t c, int64_t dk, int64_t dv) {
    return static_cast<size_t>(2 * c * dk + 3 * c * dv + 3 * c * c + dk * c + c);
  }
  RowScratch(float* base, int64_t c, int64_t dk, int64_t dv) {
    float* p0 = base;
    auto take = [&](int64_t n) { float* r = p0; p0 += n; return r; };
    wq = take(2 * c * dk);
    kk = take(c * c); p = take(c * c); e = take(c * c);
    wsqs = take(2 * c * dv); pd = take(c * dv);
    kd_t = take(dk * c);
    kd = take(c);
  }
};

// Rows [m, m + n) of head h's current chunk (chunk size C, m + n <= C) for
// batch tokens t_first ..: the rows < m are in `th`; the new ones are added
// to it and their outputs written. s = S at the chunk's start.
void chunk_rows(const DeltaRuleBatch& b, int64_t h, int64_t t_first, int64_t m, int64_t n, int64_t C, const float* s,
                bool state_zero, const TailHead& th, const RowScratch& c) {
  const int64_t dk = b.d_k, dv = b.d_v, hk = h % b.n_k_heads, nv = b.n_v_heads, end = m + n;
  const bool outputs = b.out != nullptr;
  float* const w = c.wq;            // n x d_k
  float* const q = c.wq + n * dk;   // n x d_k
  float* const ws = c.wsqs;         // n x d_v
  float* const qs = c.wsqs + n * dv;  // n x d_v
  double acc = m > 0 ? th.G[m - 1] : 0.0;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t tt = t_first + j, i = m + j;
    if (outputs) std::copy_n(b.q + tt * b.q_stride + hk * dk, dk, q + j * dk);
    th.beta[i] = b.beta[tt * nv + h];
    acc += static_cast<double>(b.g[tt * nv + h]);
    th.G[i] = acc;
  }
  kernels::transpose_f32(b.k + t_first * b.k_stride + hk * dk, static_cast<size_t>(b.k_stride), n, dk, th.kt + m,
                         static_cast<size_t>(C));
  // Decay ratios e^{G_t - G_s} (s <= t) from differences, never as a
  // quotient of two e^{G}: those underflow to 0 / 0 when decays are strong.
  for (int64_t j = 0; j < n; ++j)
    for (int64_t s2 = 0; s2 <= m + j; ++s2) c.e[j * C + s2] = decay_factor(th.G[m + j] - th.G[s2]);

  // kk[t][s] = k_t . k_s,  p[t][s] = q_t . k_s.
  // K and V rows are read where they are, in the batch (rows k_stride /
  // v_stride apart).
  const float* const k_rows = b.k + t_first * b.k_stride + hk * dk;
  const float* const v_rows = b.v + t_first * b.v_stride + h * dv;
  product(n, end, dk, k_rows, b.k_stride, th.kt, C, c.kk, C);
  if (outputs) product(n, end, dk, q, dk, th.kt, C, c.p, C);

  // T = (I + A)^-1 by forward substitution over rows:
  // (I + A) T = I  =>  T_t = e_t - sum_{r<t} A[t][r] T_r, and T_r is zero past column r.
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i = m + j;
    float* row = th.tri + i * C;
    std::fill_n(row, end, 0.0f);
    row[i] = 1.0f;
    for (int64_t r = 0; r < i; ++r) {
      const float a = th.beta[i] * c.e[j * C + r] * c.kk[j * C + r];
      const float* tr = th.tri + r * C;
      for (int64_t col = 0; col <= r; ++col) row[col] -= a * tr[col];
    }
    flush_tiny(row, i, kTinyRelative);  // relative to the unit diagonal
  }
  // W = T diag(beta e^G) K, U = T diag(beta) V: independent of the state.
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i = m + j;
    const float bw = th.beta[i] * decay_factor(th.G[i]);
    kernels::scale(k_rows + j * b.k_stride, bw, dk, th.xw + i * dk);
    kernels::scale(v_rows + j * b.v_stride, th.beta[i], dv, th.xu + i * dv);
  }
  const float* t_rows = th.tri + m * C;
  product(n, dk, end, t_rows, C, th.xw, dk, w, dk);
  flush_tiny(w, n * dk, kTinyW);
  float* const d = th.d + m * dv;  // U, then D in place
  product(n, dv, end, t_rows, C, th.xu, dv, d, dv);

  // Deltas D = U - W S_0 and the inter-chunk part of the outputs, Q S_0
  // (nothing to multiply at the start of a sequence).
  if (!state_zero) {
    product(outputs ? 2 * n : n, dv, dk, c.wq, dk, s, dv, c.wsqs, dv);
    kernels::scale_add(ws, -1.0f, d, n * dv, d);  // d - ws, exactly
  }
  if (!outputs) return;
  if (state_zero) std::fill_n(qs, n * dv, 0.0f);

  // Intra-chunk attention P = (Q K^T o decay ratios), causal incl. the diagonal.
  for (int64_t j = 0; j < n; ++j) {
    float* row = c.p + j * C;
    for (int64_t s2 = 0; s2 <= m + j; ++s2) row[s2] *= c.e[j * C + s2];
    std::fill(row + m + j + 1, row + end, 0.0f);
  }
  product(n, dv, end, c.p, C, th.d, dv, c.pd, dv);
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  for (int64_t j = 0; j < n; ++j) {
    const float gt = decay_factor(th.G[m + j]);
    float* o = b.out + (t_first + j) * b.out_stride + h * dv;
    kernels::scale_add(qs + j * dv, gt, c.pd + j * dv, dv, o);  // (gt qs + pd) q_scale
    kernels::scale(o, q_scale, dv, o);
  }
}

// S <- S after the chunk's first `rows` rows:
// S_n = e^{G_n} S_0 + sum_s e^{G_n - G_s} k_s D_s^T: S is scaled in place and
// the products accumulate onto it (each entry: e^{G_n} S_0[i][j], then the
// fma chain over s of Kd[s][i] D[s][j]). Every path (batch, pieces, one
// token at a time, rollback) folds here, so they keep giving the same bits.
// Returns whether the new state is all zero.
bool fold_rows(float* s, int64_t rows, int64_t C, int64_t dk, int64_t dv, const TailHead& th, const RowScratch& c) {
  // Kd^T: row i of K^T scaled column by column by e^{G_n - G_t}.
  for (int64_t t = 0; t < rows; ++t) c.kd[t] = decay_factor(th.G[rows - 1] - th.G[t]);
  for (int64_t i = 0; i < dk; ++i)
    for (int64_t t = 0; t < rows; ++t) c.kd_t[i * C + t] = c.kd[t] * th.kt[i * C + t];
  // S = e^{G_n} S + Kd D in one pass over S, which also gives the min and
  // max |S| for the flush below. The flush pass runs only when some entry
  // is below its limit (zeros stay zeros). A NaN shows as peak = NaN: then
  // the peak over the other entries, and every entry is checked.
  float lo, peak;
  kernels::gemm_f32_scaled_acc(dk, dv, rows, c.kd_t, static_cast<size_t>(C), th.d, static_cast<size_t>(dv), s,
                               static_cast<size_t>(dv), decay_factor(th.G[rows - 1]), &lo, &peak);
  if (std::isnan(peak)) lo = 0.0f, peak = max_abs(s, dk * dv);
  const float limit = peak * kTinyRelative;
  if (lo < limit) flush_tiny(s, dk * dv, limit);
  return peak == 0.0f;
}

// Head h over the batch, starting with m rows in its tail.
void chunked_head(const DeltaRuleBatch& b, int64_t h, int64_t C, int64_t m, float* s, float* tail_base) {
  const int64_t dk = b.d_k, dv = b.d_v;
  const RowScratch c(thread_scratch(RowScratch::floats(C, dk, dv)), C, dk, dv);
  const TailHead th(tail_base, C, dk, dv);
  // A zero state skips the products with it. Only checked at a chunk
  // boundary (decode would read every S once more per token): mid-chunk
  // the products run, and with a zero S they give +0, which changes no bit
  // of D or of the outputs.
  // (A state holding a NaN is not zero: its products run.)
  float lo = 0.0f, peak = 0.0f;
  if (m == 0) kernels::abs_range(s, dk * dv, &lo, &peak);
  bool state_zero = m == 0 && peak == 0.0f;
  for (int64_t t = 0; t < b.n_tokens;) {
    const int64_t n = std::min(C - m, b.n_tokens - t);
    chunk_rows(b, h, t, m, n, C, s, state_zero, th, c);
    m += n;
    t += n;
    if (m == C) {
      state_zero = fold_rows(s, C, C, dk, dv, th, c);
      m = 0;
    }
  }
}

}  // namespace

Status delta_rule_recurrent(const DeltaRuleBatch& b, float* state, ThreadPool* pool) {
  KZ_RETURN_IF_ERROR(check_batch(b, state, "delta_rule_recurrent"));
  if (b.n_tokens == 0) return OkStatus();
  return for_each_head(b.n_v_heads, pool, [&](int64_t h) {
    recurrent_head(b, h, state + h * b.d_k * b.d_v, thread_scratch(static_cast<size_t>(b.d_v)));
    return OkStatus();
  });
}

namespace {

// Floats of one head's rows: G (2 per double), beta, K^T, beta e^G K,
// beta V, D, T.
size_t head_rows_floats(int64_t rows, int64_t d_k, int64_t d_v) {
  return static_cast<size_t>(3 * rows + 2 * d_k * rows + 2 * rows * d_v + rows * rows);
}

// Shape fields (everything but the data).
void copy_tail_shape(const DeltaRuleTail& from, DeltaRuleTail& to, bool packed) {
  to.chunk = from.chunk;
  to.rows = from.rows;
  to.n_v_heads = from.n_v_heads;
  to.d_k = from.d_k;
  to.d_v = from.d_v;
  to.packed = packed;
}

}  // namespace

size_t DeltaRuleTail::head_floats(int64_t chunk, int64_t d_k, int64_t d_v) {
  return (head_rows_floats(chunk, d_k, d_v) + 15) / 16 * 16;  // 64-byte blocks: G's doubles stay aligned
}

Status check_delta_rule_tail(const DeltaRuleTail& tail, int64_t chunk_size, int64_t n_v_heads, int64_t d_k,
                             int64_t d_v) {
  if (tail.packed) return InvalidArgument("delta rule: the tail is packed (a checkpoint's copy); unpack it first");
  if (tail.rows > 0 && (tail.chunk != chunk_size || tail.n_v_heads != n_v_heads || tail.d_k != d_k || tail.d_v != d_v))
    return InvalidArgument("delta rule: the tail holds " + std::to_string(tail.rows) + " rows of chunk size " +
                           std::to_string(tail.chunk) + ", heads " + std::to_string(tail.n_v_heads) + " x " +
                           std::to_string(tail.d_k) + " x " + std::to_string(tail.d_v) + "; this call has chunk size " +
                           std::to_string(chunk_size) + ", heads " + std::to_string(n_v_heads) + " x " +
                           std::to_string(d_k) + " x " + std::to_string(d_v));
  return OkStatus();
}

Status delta_rule_chunked(const DeltaRuleBatch& b, int64_t chunk_size, float* state, ThreadPool* pool,
                          DeltaRuleTail* tail) {
  KZ_RETURN_IF_ERROR(check_batch(b, state, "delta_rule_chunked"));
  if (chunk_size <= 0 || chunk_size > kDeltaRuleMaxChunk)
    return InvalidArgument("delta_rule_chunked: chunk size must be in [1, " + std::to_string(kDeltaRuleMaxChunk) +
                           "], got " + std::to_string(chunk_size));
  if (tail != nullptr) KZ_RETURN_IF_ERROR(check_delta_rule_tail(*tail, chunk_size, b.n_v_heads, b.d_k, b.d_v));
  if (b.n_tokens == 0) return OkStatus();
  // Without a tail the batch is the whole sequence: a chunk longer than it
  // is one partial chunk (same result, smaller buffers).
  DeltaRuleTail local;
  DeltaRuleTail& t = tail != nullptr ? *tail : local;
  const int64_t C = tail != nullptr ? chunk_size : std::min(chunk_size, b.n_tokens);
  t.chunk = C;
  t.n_v_heads = b.n_v_heads;
  t.d_k = b.d_k;
  t.d_v = b.d_v;
  const size_t per_head = DeltaRuleTail::head_floats(C, b.d_k, b.d_v);
  if (t.data.size() != per_head * static_cast<size_t>(b.n_v_heads)) t.data.resize(per_head * static_cast<size_t>(b.n_v_heads));
  const int64_t m0 = t.rows;
  KZ_RETURN_IF_ERROR(for_each_head(b.n_v_heads, pool, [&](int64_t h) {
    chunked_head(b, h, C, m0, state + h * b.d_k * b.d_v, t.data.data() + static_cast<size_t>(h) * per_head);
    return OkStatus();
  }, /*run_per_thread=*/b.n_tokens <= kDecodeTokens));
  t.rows = (m0 + b.n_tokens) % C;
  if (tail == nullptr) delta_rule_fold_tail(state, t, pool);
  return OkStatus();
}

namespace {

// The used parts of every head's block, as (live offset, packed offset,
// floats) runs: live blocks are chunk-sized (TailHead), packed ones sized
// by the rows.
template <class Run>
void for_each_tail_run(const DeltaRuleTail& t, Run&& run) {
  const size_t c = static_cast<size_t>(t.chunk), m = static_cast<size_t>(t.rows);
  const size_t dk = static_cast<size_t>(t.d_k), dv = static_cast<size_t>(t.d_v);
  const size_t live = DeltaRuleTail::head_floats(t.chunk, t.d_k, t.d_v);
  const size_t packed = head_rows_floats(t.rows, t.d_k, t.d_v);
  for (size_t h = 0; h < static_cast<size_t>(t.n_v_heads); ++h) {
    size_t lo = h * live, po = h * packed;
    run(lo, po, 2 * m);  // G (doubles)
    lo += 2 * c; po += 2 * m;
    run(lo, po, m);  // beta
    lo += c; po += m;
    for (size_t x = 0; x < dk; ++x) run(lo + x * c, po + x * m, m);  // K^T columns
    lo += dk * c; po += dk * m;
    run(lo, po, m * dk);  // beta e^G K
    lo += c * dk; po += m * dk;
    run(lo, po, m * dv);  // beta V
    lo += c * dv; po += m * dv;
    run(lo, po, m * dv);  // D
    lo += c * dv; po += m * dv;
    for (size_t r = 0; r < m; ++r) run(lo + r * c, po + r * m, m);  // T rows
  }
}

}  // namespace

void delta_rule_pack_tail(const DeltaRuleTail& from, DeltaRuleTail& to) {
  copy_tail_shape(from, to, true);
  to.data.resize(head_rows_floats(from.rows, from.d_k, from.d_v) * static_cast<size_t>(from.n_v_heads));
  for_each_tail_run(from, [&](size_t lo, size_t po, size_t n) {
    std::memcpy(to.data.data() + po, from.data.data() + lo, n * sizeof(float));
  });
}

void delta_rule_unpack_tail(const DeltaRuleTail& from, DeltaRuleTail& to) {
  copy_tail_shape(from, to, false);
  if (from.rows == 0) return;
  const size_t live = DeltaRuleTail::head_floats(from.chunk, from.d_k, from.d_v) * static_cast<size_t>(from.n_v_heads);
  if (to.data.size() != live) to.data.resize(live);
  for_each_tail_run(from, [&](size_t lo, size_t po, size_t n) {
    std::memcpy(to.data.data() + lo, from.data.data() + po, n * sizeof(float));
  });
}

void delta_rule_fold_tail(float* state, DeltaRuleTail& tail, ThreadPool* pool) {
  if (tail.rows == 0) return;
  const int64_t C = tail.chunk, dk = tail.d_k, dv = tail.d_v;
  const size_t per_head = DeltaRuleTail::head_floats(C, dk, dv);
  (void)for_each_head(tail.n_v_heads, pool, [&](int64_t h) {
    const RowScratch c(thread_scratch(RowScratch::floats(C, dk, dv)), C, dk, dv);
    const TailHead th(tail.data.data() + static_cast<size_t>(h) * per_head, C, dk, dv);
    fold_rows(state + h * dk * dv, tail.rows, C, dk, dv, th, c);
    return OkStatus();
  });
  tail.rows = 0;
}

}  // namespace kazeia
