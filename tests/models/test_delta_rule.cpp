// The chunkwise (WY/UT) gated delta rule against the token-by-token
// recurrence: same outputs and final state within 1e-4 (relative to the
// largest reference magnitude, f32) on random inputs, over lengths around
// the chunk size, chunk sizes, decay and beta extremes, non-zero initial
// states, and continuation over several calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "base/thread_pool.h"
#include "models/blocks/delta_rule.h"

namespace kazeia {
namespace {

struct Shape {
  int64_t nk, nv, dk, dv;
};

struct Range {
  float lo, hi;
};

// Random inputs laid out as the model's conv buffer is: one row per token
// with q | k | v (q and k L2-normalised per head, as the model feeds them).
struct Inputs {
  Shape sh;
  int64_t n = 0, stride = 0;
  std::vector<float> qkv, beta, g;

  Inputs(Shape s, int64_t n_tokens, Range beta_range, Range g_range, uint32_t seed, float key_correlation = 0.0f)
      : sh(s), n(n_tokens), stride(2 * s.nk * s.dk + s.nv * s.dv) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> ub(beta_range.lo, beta_range.hi), ug(g_range.lo, g_range.hi);
    qkv.resize(static_cast<size_t>(n * stride));
    std::vector<float> base_key(static_cast<size_t>(s.dk));
    for (float& x : base_key) x = normal(rng);
    for (int64_t t = 0; t < n; ++t) {
      float* row = qkv.data() + t * stride;
      for (int64_t i = 0; i < stride; ++i) row[i] = normal(rng);
      // Correlated keys (k ~ a shared direction) make A far from zero: the
      // hard case for the triangular solve.
      for (int64_t h = 0; h < s.nk; ++h)
        for (int64_t i = 0; i < s.dk; ++i) {
          float& x = row[s.nk * s.dk + h * s.dk + i];
          x = key_correlation * base_key[static_cast<size_t>(i)] + (1.0f - key_correlation) * x;
        }
      for (int64_t h = 0; h < 2 * s.nk; ++h) {
        float* v = row + h * s.dk;
        double ss = 0;
        for (int64_t i = 0; i < s.dk; ++i) ss += double(v[i]) * v[i];
        const float inv = 1.0f / std::max(std::sqrt(static_cast<float>(ss)), 1e-6f);
        for (int64_t i = 0; i < s.dk; ++i) v[i] *= inv;
      }
    }
    beta.resize(static_cast<size_t>(n * s.nv));
    g.resize(beta.size());
    for (float& b : beta) b = ub(rng);
    for (float& x : g) x = ug(rng);
  }

  DeltaRuleBatch batch(int64_t t0, int64_t len, float* out) const {
    DeltaRuleBatch b;
    b.n_tokens = len;
    b.n_k_heads = sh.nk;
    b.n_v_heads = sh.nv;
    b.d_k = sh.dk;
    b.d_v = sh.dv;
    b.q = qkv.data() + t0 * stride;
    b.k = b.q + sh.nk * sh.dk;
    b.v = b.k + sh.nk * sh.dk;
    b.q_stride = b.k_stride = b.v_stride = stride;
    b.beta = beta.data() + t0 * sh.nv;
    b.g = g.data() + t0 * sh.nv;
    b.out = out + t0 * sh.nv * sh.dv;
    b.out_stride = sh.nv * sh.dv;
    return b;
  }
};

std::vector<float> random_state(Shape s, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> st(static_cast<size_t>(s.nv * s.dk * s.dv));
  for (float& x : st) x = normal(rng);
  return st;
}

// max |a - b| / max(max |b|, 1e-30)
double rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, mag = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    mag = std::max(mag, std::fabs(double(b[i])));
  }
  return diff / std::max(mag, 1e-30);
}

struct Outcome {
  double out_err, state_err;
};

// Runs `in` in pieces of `piece` tokens (0: one call) through both forms,
// from the same initial state.
Outcome compare(const Inputs& in, int64_t chunk, const std::vector<float>& s0, int64_t piece = 0,
                ThreadPool* pool = nullptr) {
  const size_t out_n = static_cast<size_t>(in.n * in.sh.nv * in.sh.dv);
  std::vector<float> ref_out(out_n, -1.0f), out(out_n, -2.0f), ref_s = s0, s = s0;
  if (piece <= 0) piece = std::max<int64_t>(in.n, 1);
  for (int64_t t0 = 0; t0 < in.n; t0 += piece) {
    const int64_t len = std::min(piece, in.n - t0);
    Status a = delta_rule_recurrent(in.batch(t0, len, ref_out.data()), ref_s.data(), nullptr);
    Status b = delta_rule_chunked(in.batch(t0, len, out.data()), chunk, s.data(), pool);
    EXPECT_TRUE(a.ok()) << a.to_string();
    EXPECT_TRUE(b.ok()) << b.to_string();
  }
  for (float x : out) EXPECT_TRUE(std::isfinite(x));
  return {in.n > 0 ? rel_error(out, ref_out) : 0.0, rel_error(s, ref_s)};
}

constexpr double kTol = 1e-4;

// Worst errors seen, printed at the end of a test (how much margin kTol has).
struct Worst {
  double out = 0, state = 0;
  void add(const Outcome& o) {
    out = std::max(out, o.out_err);
    state = std::max(state, o.state_err);
  }
  void print(const char* what) const {
    std::printf("[delta rule] %-40s worst relative error: outputs %.2g, state %.2g\n", what, out, state);
  }
};

struct Regime {
  const char* name;
  Range beta, g;
  float key_correlation = 0.0f;
};

const Regime kRegimes[] = {
    {"typical", {0.05f, 0.95f}, {-2.0f, -0.01f}},
    {"decay~1 beta~1", {0.999f, 1.0f}, {-1e-4f, 0.0f}},
    {"decay~1 beta~0", {0.0f, 1e-3f}, {-1e-4f, 0.0f}},
    {"decay~0 beta~1", {0.999f, 1.0f}, {-40.0f, -15.0f}},
    {"decay~0 beta~0", {0.0f, 1e-3f}, {-40.0f, -15.0f}},
    {"decay mixed", {0.0f, 1.0f}, {-30.0f, 0.0f}},
    {"correlated keys, decay~1 beta~1", {0.999f, 1.0f}, {-1e-4f, 0.0f}, 0.9f},
};

TEST(DeltaRuleChunked, MatchesRecurrenceAroundTheChunkSize) {
  const Shape sh{2, 4, 16, 16};
  Worst worst;
  for (int64_t C : {64, 16, 5}) {
    for (int64_t n : {int64_t{1}, C - 1, C, C + 1, 3 * C + 5}) {
      if (n <= 0) continue;
      for (const Regime& r : kRegimes) {
        SCOPED_TRACE(std::string(r.name) + " C=" + std::to_string(C) + " n=" + std::to_string(n));
        Inputs in(sh, n, r.beta, r.g, static_cast<uint32_t>(1000 * C + n), r.key_correlation);
        for (float s_scale : {0.0f, 0.5f}) {
          Outcome o = compare(in, C, random_state(sh, 7, s_scale));
          worst.add(o);
          EXPECT_LE(o.out_err, kTol) << "outputs, initial state scale " << s_scale;
          EXPECT_LE(o.state_err, kTol) << "final state, initial state scale " << s_scale;
        }
      }
    }
  }
  worst.print("lengths 1, C-1, C, C+1, 3C+5 x regimes");
}

TEST(DeltaRuleChunked, ChunkSizesAndShapes) {
  // d_k != d_v, one key head shared by several value heads, and the real
  // Qwen3.5 head dim.
  Worst worst;
  for (Shape sh : {Shape{1, 3, 24, 8}, Shape{2, 2, 128, 128}}) {
    Inputs in(sh, 77, {0.05f, 0.95f}, {-1.0f, -0.001f}, 42);
    const std::vector<float> s0 = random_state(sh, 3, 0.3f);
    for (int64_t C : {1, 2, 3, 8, 16, 32, 64, 77, 200}) {
      SCOPED_TRACE("dk=" + std::to_string(sh.dk) + " dv=" + std::to_string(sh.dv) + " C=" + std::to_string(C));
      Outcome o = compare(in, C, s0);
      worst.add(o);
      EXPECT_LE(o.out_err, kTol);
      EXPECT_LE(o.state_err, kTol);
    }
  }
  worst.print("chunk sizes 1..200, d_k != d_v, d = 128");
}

TEST(DeltaRuleChunked, ContinuesAcrossCallsAndThreads) {
  const Shape sh{2, 4, 16, 16};
  Inputs in(sh, 150, {0.05f, 0.95f}, {-1.0f, -0.001f}, 9);
  const std::vector<float> s0 = random_state(sh, 5, 0.2f);
  ThreadPool pool(2);
  for (int64_t piece : {1, 7, 64}) {
    SCOPED_TRACE("pieces of " + std::to_string(piece));
    Outcome o = compare(in, 16, s0, piece, &pool);
    EXPECT_LE(o.out_err, kTol);
    EXPECT_LE(o.state_err, kTol);
  }
  // The pool only spreads heads: identical bits with and without it.
  const size_t out_n = static_cast<size_t>(in.n * sh.nv * sh.dv);
  std::vector<float> a(out_n), b(out_n), sa = s0, sb = s0;
  ASSERT_TRUE(delta_rule_chunked(in.batch(0, in.n, a.data()), 64, sa.data(), nullptr).ok());
  ASSERT_TRUE(delta_rule_chunked(in.batch(0, in.n, b.data()), 64, sb.data(), &pool).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(sa, sb);
}

// With a tail, chunks sit at fixed positions: the outputs and the state
// (folded) after any split of the tokens are the bits of one batch, and
// within kTol of the recurrence.
struct TailRun {
  std::vector<float> out, state;
};
TailRun run_with_tail(const Inputs& in, int64_t chunk, const std::vector<float>& s0, const std::vector<int64_t>& cuts,
                      ThreadPool* pool) {
  TailRun r{std::vector<float>(static_cast<size_t>(in.n * in.sh.nv * in.sh.dv), -3.0f), s0};
  DeltaRuleTail tail;
  int64_t t0 = 0;
  auto feed = [&](int64_t len) {
    Status st = delta_rule_chunked(in.batch(t0, len, r.out.data()), chunk, r.state.data(), pool, &tail);
    EXPECT_TRUE(st.ok()) << st.to_string();
    t0 += len;
    EXPECT_EQ(tail.rows, t0 % chunk);
  };
  for (int64_t len : cuts)
    if (t0 < in.n) feed(std::min(len, in.n - t0));
  if (t0 < in.n) feed(in.n - t0);
  delta_rule_fold_tail(r.state.data(), tail, pool);
  EXPECT_EQ(tail.rows, 0);
  return r;
}

TEST(DeltaRuleChunked, TailMakesAnySplitGiveTheBitsOfOneBatch) {
  ThreadPool pool(2);
  Worst worst;
  for (Shape sh : {Shape{2, 4, 16, 16}, Shape{1, 3, 24, 8}}) {
    for (int64_t C : {16, 64}) {
      for (const Regime& r : kRegimes) {
        SCOPED_TRACE(std::string(r.name) + " C=" + std::to_string(C) + " dk=" + std::to_string(sh.dk));
        Inputs in(sh, 3 * C + 5, r.beta, r.g, static_cast<uint32_t>(77 * C + sh.dk), r.key_correlation);
        // From a zero state too: its first chunk skips the products with S
        // when it starts at a boundary, not when it continues mid-chunk.
        for (float s_scale : {0.0f, 0.3f}) {
          SCOPED_TRACE("initial state scale " + std::to_string(s_scale));
          const std::vector<float> s0 = random_state(sh, 11, s_scale);
          const TailRun one = run_with_tail(in, C, s0, {}, nullptr);
          const Outcome ref = compare(in, C, s0);  // the recurrence, and the tail-less form
          std::vector<float> ref_out(one.out.size()), ref_s = s0;
          ASSERT_TRUE(delta_rule_recurrent(in.batch(0, in.n, ref_out.data()), ref_s.data(), nullptr).ok());
          const Outcome o{rel_error(one.out, ref_out), rel_error(one.state, ref_s)};
          worst.add(o);
          EXPECT_LE(o.out_err, kTol);
          EXPECT_LE(o.state_err, kTol);
          EXPECT_LE(ref.out_err, kTol);
          // Token by token, pieces of 7, pieces ending on and just past chunk
          // boundaries, uneven pieces; with the pool (one batch ran without).
          std::vector<std::vector<int64_t>> splits;
          for (int64_t piece : {int64_t{1}, int64_t{7}, C - 1, C, C + 1})
            splits.emplace_back(static_cast<size_t>((in.n + piece - 1) / piece), piece);
          splits.push_back({13, 2, 40, 1, 64, 3});
          for (const auto& cuts : splits) {
            SCOPED_TRACE("first piece " + std::to_string(cuts[0]));
            const TailRun split = run_with_tail(in, C, s0, cuts, &pool);
            EXPECT_EQ(split.out, one.out);
            EXPECT_EQ(split.state, one.state);
          }
        }
      }
    }
  }
  worst.print("with a tail (fixed chunk positions)");
}

TEST(DeltaRuleChunked, StateOnlyRunAndTailChecks) {
  const Shape sh{2, 4, 16, 16};
  Inputs in(sh, 40, {0.05f, 0.95f}, {-1.0f, -0.001f}, 5);
  const std::vector<float> s0 = random_state(sh, 2, 0.2f);
  std::vector<float> out(static_cast<size_t>(in.n * sh.nv * sh.dv)), sa = s0, sb = s0;
  DeltaRuleTail ta, tb;
  ASSERT_TRUE(delta_rule_chunked(in.batch(0, in.n, out.data()), 16, sa.data(), nullptr, &ta).ok());
  DeltaRuleBatch state_only = in.batch(0, in.n, out.data());
  state_only.q = nullptr;
  state_only.out = nullptr;
  ASSERT_TRUE(delta_rule_chunked(state_only, 16, sb.data(), nullptr, &tb).ok());
  EXPECT_EQ(sa, sb);
  EXPECT_EQ(ta.rows, 8);
  EXPECT_EQ(ta.data, tb.data);
  // A tail with rows refuses another chunk size or head shape, untouched.
  const std::vector<float> s_before = sa;
  const std::vector<float> t_before = ta.data;
  EXPECT_EQ(delta_rule_chunked(in.batch(0, 4, out.data()), 32, sa.data(), nullptr, &ta).code(),
            ErrorCode::kInvalidArgument);
  Shape other{2, 4, 16, 8};
  Inputs in2(other, 4, {0.1f, 0.9f}, {-1.0f, 0.0f}, 1);
  std::vector<float> out2(static_cast<size_t>(4 * other.nv * other.dv));
  EXPECT_EQ(delta_rule_chunked(in2.batch(0, 4, out2.data()), 16, sa.data(), nullptr, &ta).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(sa, s_before);
  EXPECT_EQ(ta.data, t_before);
  EXPECT_EQ(ta.rows, 8);
  // q without out is fine (outputs skipped); out without q is not.
  DeltaRuleBatch bad = in.batch(0, 4, out.data());
  bad.q = nullptr;
  EXPECT_EQ(delta_rule_chunked(bad, 16, sa.data(), nullptr, &ta).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(delta_rule_recurrent(bad, sa.data(), nullptr).code(), ErrorCode::kInvalidArgument);
}

TEST(DeltaRuleChunked, PackedTailRestoresTheSameContinuation) {
  const Shape sh{2, 4, 24, 16};
  Inputs in(sh, 70, {0.05f, 0.95f}, {-1.0f, -0.001f}, 21);
  const size_t out_n = static_cast<size_t>(in.n * sh.nv * sh.dv);
  std::vector<float> out_a(out_n), out_b(out_n), s = random_state(sh, 4, 0.2f);
  DeltaRuleTail live;
  ASSERT_TRUE(delta_rule_chunked(in.batch(0, 37, out_a.data()), 32, s.data(), nullptr, &live).ok());
  ASSERT_EQ(live.rows, 5);
  DeltaRuleTail packed;
  delta_rule_pack_tail(live, packed);
  EXPECT_TRUE(packed.packed);
  EXPECT_LT(packed.data.size() * 4, live.data.size());  // 5 rows of 32
  // A packed tail is not a live one.
  std::vector<float> s_copy = s;
  EXPECT_EQ(delta_rule_chunked(in.batch(37, 1, out_b.data()), 32, s_copy.data(), nullptr, &packed).code(),
            ErrorCode::kInvalidArgument);
  DeltaRuleTail restored;
  delta_rule_unpack_tail(packed, restored);
  ASSERT_TRUE(delta_rule_chunked(in.batch(37, 33, out_a.data()), 32, s.data(), nullptr, &live).ok());
  ASSERT_TRUE(delta_rule_chunked(in.batch(37, 33, out_b.data()), 32, s_copy.data(), nullptr, &restored).ok());
  EXPECT_EQ(std::vector<float>(out_a.begin() + 37 * sh.nv * sh.dv, out_a.end()),
            std::vector<float>(out_b.begin() + 37 * sh.nv * sh.dv, out_b.end()));
  EXPECT_EQ(s, s_copy);
  EXPECT_EQ(restored.rows, live.rows);
  // An empty tail packs to nothing.
  DeltaRuleTail empty, empty_packed;
  delta_rule_pack_tail(empty, empty_packed);
  EXPECT_TRUE(empty_packed.data.empty());
}

TEST(DeltaRuleChunked, RejectsBadArguments) {
  const Shape sh{2, 4, 16, 16};
  Inputs in(sh, 4, {0.1f, 0.9f}, {-1.0f, 0.0f}, 1);
  std::vector<float> out(static_cast<size_t>(4 * sh.nv * sh.dv)), s = random_state(sh, 1, 0.1f);
  const std::vector<float> s_before = s;
  DeltaRuleBatch b = in.batch(0, 4, out.data());
  EXPECT_EQ(delta_rule_chunked(b, 0, s.data(), nullptr).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(delta_rule_chunked(b, -3, s.data(), nullptr).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(delta_rule_chunked(b, kDeltaRuleMaxChunk + 1, s.data(), nullptr).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(delta_rule_chunked(b, 64, nullptr, nullptr).code(), ErrorCode::kInvalidArgument);
  DeltaRuleBatch bad = b;
  bad.n_v_heads = 3;  // not a multiple of n_k_heads
  EXPECT_EQ(delta_rule_chunked(bad, 64, s.data(), nullptr).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(delta_rule_recurrent(bad, s.data(), nullptr).code(), ErrorCode::kInvalidArgument);
  bad = b;
  bad.out_stride = 8;  // shorter than a row
  EXPECT_EQ(delta_rule_chunked(bad, 64, s.data(), nullptr).code(), ErrorCode::kInvalidArgument);
  bad = b;
  bad.beta = nullptr;
  EXPECT_EQ(delta_rule_recurrent(bad, s.data(), nullptr).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s, s_before);  // rejected calls leave the state alone
  bad = b;
  bad.n_tokens = 0;  // empty batch: nothing to do
  EXPECT_TRUE(delta_rule_chunked(bad, 64, s.data(), nullptr).ok());
  EXPECT_EQ(s, s_before);
}

}  // namespace
}  // namespace kazeia
