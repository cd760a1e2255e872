#include "models/blocks/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <mutex>
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
  if (b.q_stride < b.n_k_heads * b.d_k || b.k_stride < b.n_k_heads * b.d_k || b.v_stride < b.n_v_heads * b.d_v ||
      b.out_stride < b.n_v_heads * b.d_v)
    return InvalidArgument(w + ": a row stride is shorter than its row");
  if (state == nullptr) return InvalidArgument(w + ": null state");
  if (b.n_tokens > 0 && (b.q == nullptr || b.k == nullptr || b.v == nullptr || b.beta == nullptr ||
                         b.g == nullptr || b.out == nullptr))
    return InvalidArgument(w + ": null input or output");
  return OkStatus();
}

// fn(h) for every value head, spread over the pool (one head per claim: the
// heads cost the same, and there are few of them). First error wins.
template <class Fn>
Status for_each_head(int64_t n_heads, ThreadPool* pool, Fn&& fn) {
  std::mutex mu;
  Status first;
  auto run = [&](int64_t h0, int64_t h1, int) {
    for (int64_t h = h0; h < h1; ++h) {
      Status s = fn(h);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first.ok()) first = std::move(s);
        return;
      }
    }
  };
  if (pool != nullptr && n_heads > 1) {
    pool->parallel_for(0, n_heads, run, 1, static_cast<int>(n_heads));
  } else {
    run(0, n_heads, 0);
  }
  return first;
}

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

// max |x[i]| over 8 independent lanes: a single running max is a serial
// dependency the compiler may not reorder; eight of them vectorise.
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
    const float* qh = b.q + t * b.q_stride + hk * dk;
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
    float* oh = b.out + t * b.out_stride + h * dv;
    std::fill(oh, oh + dv, 0.0f);
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) oh[j] += s[i * dv + j] * qh[i];
    for (int64_t j = 0; j < dv; ++j) oh[j] *= q_scale;
  }
}

// ------------------------------------------------------------- chunked form

// Scratch of one head's chunk loop; C = chunk size, n <= C the current
// chunk's length. Every product below is C += A B on row-major matrices
// (kernels::gemm_f32_acc); the state stays in its own layout, d_k x d_v.
struct ChunkBuffers {
  float *q, *k, *v;         // n x d_k, n x d_k, n x d_v (gathered rows)
  float *k_t;               // d_k x n: K^T
  float *kk, *p, *tri, *e;  // n x n: K K^T -> A, Q K^T -> P, T = (I + A)^-1, e^{G_t - G_s}
  float *xw, *xu;           // n x d_k, n x d_v: beta e^G K, beta V
  float *w, *u;             // n x d_k, n x d_v
  float* upd;               // d_k x d_v: the state's update
  float *ws, *qs, *pd;      // n x d_v: W S -> deltas, Q S, P deltas
  float* kd_t;              // d_k x n: (e^{G_n - G_s} K)^T
  float* beta;              // n
  double* G;                // n: cumulative log decay (double: long sums of g)

  static size_t floats(int64_t c, int64_t dk, int64_t dv) {
    return static_cast<size_t>(6 * c * dk + 6 * c * dv + 4 * c * c + dk * dv + 3 * c);  // G: 2 floats per double
  }
  ChunkBuffers(float* base, int64_t c, int64_t dk, int64_t dv) {
    float* p0 = base;
    auto take = [&](int64_t n) { float* r = p0; p0 += n; return r; };
    G = reinterpret_cast<double*>(take(2 * c));  // first: the buffer start is aligned for doubles
    q = take(c * dk); k = take(c * dk); v = take(c * dv); k_t = take(dk * c);
    kk = take(c * c); p = take(c * c); tri = take(c * c); e = take(c * c);
    xw = take(c * dk); xu = take(c * dv);
    w = take(c * dk); u = take(c * dv);
    upd = take(dk * dv);
    ws = take(c * dv); qs = take(c * dv); pd = take(c * dv);
    kd_t = take(dk * c);
    beta = take(c);
  }
};

// out (m x n) = A (m x k) B (k x n), all row-major and packed.
void product(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* out) {
  std::fill_n(out, m * n, 0.0f);
  kernels::gemm_f32_acc(m, n, k, a, static_cast<size_t>(k), b, static_cast<size_t>(n), out, static_cast<size_t>(n));
}

Status chunked_head(const DeltaRuleBatch& b, int64_t h, int64_t chunk, float* s) {
  const int64_t dk = b.d_k, dv = b.d_v, hk = h % b.n_k_heads, nv = b.n_v_heads;
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  ChunkBuffers c(thread_scratch(ChunkBuffers::floats(chunk, dk, dv)), chunk, dk, dv);
  bool state_zero = max_abs(s, dk * dv) == 0.0f;

  for (int64_t t0 = 0; t0 < b.n_tokens; t0 += chunk) {
    const int64_t n = std::min(chunk, b.n_tokens - t0);
    double acc = 0.0;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t tt = t0 + t;
      std::copy_n(b.q + tt * b.q_stride + hk * dk, dk, c.q + t * dk);
      std::copy_n(b.k + tt * b.k_stride + hk * dk, dk, c.k + t * dk);
      std::copy_n(b.v + tt * b.v_stride + h * dv, dv, c.v + t * dv);
      for (int64_t i = 0; i < dk; ++i) c.k_t[i * n + t] = c.k[t * dk + i];
      c.beta[t] = b.beta[tt * nv + h];
      acc += static_cast<double>(b.g[tt * nv + h]);
      c.G[t] = acc;
    }
    // Decay ratios e^{G_t - G_s} (s <= t) from differences, never as a
    // quotient of two e^{G}: those underflow to 0 / 0 when decays are strong.
    for (int64_t t = 0; t < n; ++t)
      for (int64_t s2 = 0; s2 <= t; ++s2) c.e[t * n + s2] = decay_factor(c.G[t] - c.G[s2]);

    // kk[t][s] = k_t . k_s,  p[t][s] = q_t . k_s.
    product(n, n, dk, c.k, c.k_t, c.kk);
    product(n, n, dk, c.q, c.k_t, c.p);

    // T = (I + A)^-1 by forward substitution over rows:
    // (I + A) T = I  =>  T_t = e_t - sum_{r<t} A[t][r] T_r, and T_r is zero past column r.
    std::fill_n(c.tri, n * n, 0.0f);
    for (int64_t t = 0; t < n; ++t) {
      float* row = c.tri + t * n;
      row[t] = 1.0f;
      for (int64_t r = 0; r < t; ++r) {
        const float a = c.beta[t] * c.e[t * n + r] * c.kk[t * n + r];
        const float* tr = c.tri + r * n;
        for (int64_t col = 0; col <= r; ++col) row[col] -= a * tr[col];
      }
      flush_tiny(row, t, kTinyRelative);  // relative to the unit diagonal
    }
    // W = T diag(beta e^G) K, U = T diag(beta) V: independent of the state.
    for (int64_t t = 0; t < n; ++t) {
      const float bw = c.beta[t] * decay_factor(c.G[t]);
      for (int64_t i = 0; i < dk; ++i) c.xw[t * dk + i] = bw * c.k[t * dk + i];
      for (int64_t j = 0; j < dv; ++j) c.xu[t * dv + j] = c.beta[t] * c.v[t * dv + j];
    }
    product(n, dk, n, c.tri, c.xw, c.w);
    // Row t of W carries e^{G_t}: rows of strongly decayed tokens are tiny.
    flush_tiny(c.w, n * dk, max_abs(c.w, n * dk) * kTinyRelative);
    product(n, dv, n, c.tri, c.xu, c.u);

    // Deltas D = U - W S_0 (into u) and the inter-chunk part of the
    // outputs, Q S_0 (nothing to multiply at the start of a sequence).
    if (state_zero) {
      std::fill_n(c.qs, n * dv, 0.0f);
    } else {
      product(n, dv, dk, c.w, s, c.ws);
      product(n, dv, dk, c.q, s, c.qs);
      for (int64_t i = 0; i < n * dv; ++i) c.u[i] -= c.ws[i];
    }
    const float* d = c.u;

    // Intra-chunk attention P = (Q K^T o decay ratios), causal incl. the diagonal.
    for (int64_t t = 0; t < n; ++t) {
      float* row = c.p + t * n;
      for (int64_t s2 = 0; s2 <= t; ++s2) row[s2] *= c.e[t * n + s2];
      std::fill(row + t + 1, row + n, 0.0f);
    }
    product(n, dv, n, c.p, d, c.pd);
    for (int64_t t = 0; t < n; ++t) {
      const float gt = decay_factor(c.G[t]);
      float* o = b.out + (t0 + t) * b.out_stride + h * dv;
      for (int64_t j = 0; j < dv; ++j) o[j] = (gt * c.qs[t * dv + j] + c.pd[t * dv + j]) * q_scale;
    }

    // S_n = e^{G_n} S_0 + sum_s e^{G_n - G_s} k_s D_s^T:
    // upd[i][j] = sum_s Kd[s][i] D[s][j].
    for (int64_t t = 0; t < n; ++t) {
      const float kd = decay_factor(c.G[n - 1] - c.G[t]);
      for (int64_t i = 0; i < dk; ++i) c.kd_t[i * n + t] = kd * c.k[t * dk + i];
    }
    product(dk, dv, n, c.kd_t, d, c.upd);
    const float total = decay_factor(c.G[n - 1]);
    for (int64_t i = 0; i < dk * dv; ++i) s[i] = total * s[i] + c.upd[i];
    const float peak = max_abs(s, dk * dv);
    flush_tiny(s, dk * dv, peak * kTinyRelative);
    state_zero = peak == 0.0f;
  }
  return OkStatus();
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

Status delta_rule_chunked(const DeltaRuleBatch& b, int64_t chunk_size, float* state, ThreadPool* pool) {
  KZ_RETURN_IF_ERROR(check_batch(b, state, "delta_rule_chunked"));
  if (chunk_size <= 0 || chunk_size > kDeltaRuleMaxChunk)
    return InvalidArgument("delta_rule_chunked: chunk size must be in [1, " + std::to_string(kDeltaRuleMaxChunk) +
                           "], got " + std::to_string(chunk_size));
  if (b.n_tokens == 0) return OkStatus();
  const int64_t chunk = std::min(chunk_size, b.n_tokens);
  return for_each_head(b.n_v_heads, pool,
                       [&](int64_t h) { return chunked_head(b, h, chunk, state + h * b.d_k * b.d_v); });
}

}  // namespace kazeia
