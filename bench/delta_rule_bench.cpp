// The gated delta rule on Qwen3.5-0.8B's DeltaNet shapes (16 key / 16 value
// heads of 128), one thread, one layer: a 512-token prefill through the
// token-by-token recurrence vs the chunkwise WY/UT form (BM_DeltaRule), and
// 512 tokens decoded one at a time through the recurrence vs one row of
// the chunk form each (BM_DeltaRuleDecode, what the model runs). Decay
// regimes matter: fast-decaying heads push products towards the subnormal
// range.
//   bench_delta_rule [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "models/blocks/delta_rule.h"

namespace kazeia {
namespace {

constexpr int64_t kHeads = 16, kDim = 128;

struct Problem {
  int64_t n, stride = 3 * kHeads * kDim;
  std::vector<float> qkv, beta, g, out, state;
  Problem(int64_t n_tokens, float g_lo, float g_hi) : n(n_tokens) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> ub(0.05f, 0.95f), ug(g_lo, g_hi);
    qkv.resize(static_cast<size_t>(n * stride));
    for (float& x : qkv) x = normal(rng);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t h = 0; h < 2 * kHeads; ++h) {  // unit q and k per head, as the model feeds them
        float* v = qkv.data() + t * stride + h * kDim;
        double ss = 0;
        for (int64_t i = 0; i < kDim; ++i) ss += double(v[i]) * v[i];
        for (int64_t i = 0; i < kDim; ++i) v[i] = static_cast<float>(v[i] / std::sqrt(ss));
      }
    beta.resize(static_cast<size_t>(n * kHeads));
    g.resize(beta.size());
    for (float& b : beta) b = ub(rng);
    for (float& x : g) x = ug(rng);
    out.resize(static_cast<size_t>(n * kHeads * kDim));
    state.assign(static_cast<size_t>(kHeads * kDim * kDim), 0.0f);
  }
  DeltaRuleBatch batch(int64_t t0 = 0, int64_t len = -1) {
    DeltaRuleBatch b;
    b.n_tokens = len < 0 ? n : len;
    b.n_k_heads = b.n_v_heads = kHeads;
    b.d_k = b.d_v = kDim;
    b.q = qkv.data() + t0 * stride;
    b.k = b.q + kHeads * kDim;
    b.v = b.k + kHeads * kDim;
    b.q_stride = b.k_stride = b.v_stride = stride;
    b.beta = beta.data() + t0 * kHeads;
    b.g = g.data() + t0 * kHeads;
    b.out = out.data() + t0 * kHeads * kDim;
    b.out_stride = kHeads * kDim;
    return b;
  }
};

// Arg 0: chunk size (0 = recurrence); arg 1: decay regime (0: g in [-1, 0], 1: g in [-12, -0.05]).
void BM_DeltaRule(benchmark::State& st) {
  const int64_t chunk = st.range(0);
  Problem p(512, st.range(1) == 0 ? -1.0f : -12.0f, st.range(1) == 0 ? 0.0f : -0.05f);
  for (auto _ : st) {
    std::fill(p.state.begin(), p.state.end(), 0.0f);
    Status s = chunk == 0 ? delta_rule_recurrent(p.batch(), p.state.data(), nullptr)
                          : delta_rule_chunked(p.batch(), chunk, p.state.data(), nullptr);
    if (!s.ok()) st.SkipWithError(s.to_string().c_str());
    benchmark::DoNotOptimize(p.out.data());
  }
  st.counters["tok/s"] = benchmark::Counter(static_cast<double>(p.n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DeltaRule)->ArgsProduct({{0, 16, 32, 64}, {0, 1}})->Unit(benchmark::kMillisecond);

// Arg 0: 0 = recurrence, else the chunk size of the row-at-a-time chunk form.
void BM_DeltaRuleDecode(benchmark::State& st) {
  const int64_t chunk = st.range(0);
  Problem p(512, -1.0f, 0.0f);
  DeltaRuleTail tail;
  for (auto _ : st) {
    std::fill(p.state.begin(), p.state.end(), 0.0f);
    tail.rows = 0;
    for (int64_t t = 0; t < p.n; ++t) {
      Status s = chunk == 0 ? delta_rule_recurrent(p.batch(t, 1), p.state.data(), nullptr)
                            : delta_rule_chunked(p.batch(t, 1), chunk, p.state.data(), nullptr, &tail);
      if (!s.ok()) st.SkipWithError(s.to_string().c_str());
    }
    benchmark::DoNotOptimize(p.out.data());
  }
  st.counters["tok/s"] = benchmark::Counter(static_cast<double>(p.n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DeltaRuleDecode)->Arg(0)->Arg(16)->Arg(32)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kazeia

BENCHMARK_MAIN();
