// The generic x86 strip kernel: kRows weight rows (one per 32-bit SIMD lane)
// times any number of tokens, for every quantized weight type.
//
// "Rows in lanes": a decoder (strip_legacy.h, strip_kquants.h) loads 16
// bytes of every row of the strip and transposes them (Isa::load_t4), so
// that a vector holds in lane r the 4 weight quants of row r that meet one
// 4-byte word of activations. That word, broadcast, then feeds kRows dot
// products at once (vpdpbusd / vpmaddubsw); the integer block sums come out
// one per lane with no horizontal reduction, and the scales are applied per
// lane in float - for every (row, token) the same sequence of float
// operations, block after block, whatever the batch.
//
// Decoders push, consumers pull nothing: Dec::unpack(rows, b, sink) produces
// the vectors of unit b (a block or a group of blocks) in a fixed order and
// hands each to the sink at once:
//   sink.scale<J>(VF)   float scales (block scales d, dmin ...)
//   sink.iscale<J>(VI)  integer scales (sub-block scales, mins)
//   sink.w<I>(VI)       weight quants, I = the activation word they meet
//   sink.end()          after the last vector of the unit
// The sink is either the decoder's Compute<C> (the dot products for C
// tokens, so unpacked weights stay in registers) or a Store into a panel.
// Ordering contract, relied on by the Computes: a scale arrives before the
// last w of the block that uses it; the w of one scale unit arrive together,
// in increasing I; 32-element blocks arrive in increasing order.
//
// Weights are reused across tokens:
//  - up to kFusedMax tokens (decode): unpack unit b straight into
//    Compute<C>, move on - the weights stream through once;
//  - more tokens (prefill): unpack the whole strip once into the thread's
//    scratch (a panel, L2-resident) and replay it into tiles of kTile
//    tokens (all scales first, then every w in increasing I).
// Both give identical bits: per (row, token) the arithmetic is the same.
//
// Included only from per-ISA files; unnamed namespace (see simd_avx512.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include <immintrin.h>

#include "kernels/dispatch.h"
#include "kernels/x86/static_for.h"

namespace kazeia::kernels::x86 {
namespace {

// The rows of one strip: row r at p[r]. Rows past the real count repeat the
// last real row (computed, never stored), so kernels need no row tests.
// idx: byte offsets p[r] - p[0], for gathers.
template <class Isa>
struct Rows {
  const uint8_t* p[Isa::kRows];
  typename Isa::VI idx;
};

// One token: its quantized activation row and its aux row.
struct TokenRef {
  const uint8_t* q;
  const uint8_t* aux;
};

// Integer dot chains of one token. vpdpbusd has a latency of ~6 cycles:
// with one or two tokens in flight a single chain per block would leave the
// vector units idle, so the words of a block rotate over kChains
// accumulators (integer sums: the grouping does not change the result).
template <class Isa, int kChains>
struct Chains {
  using VI = typename Isa::VI;
  VI s[kChains];
  // Word `k` (0-based within the unit) of the current unit: dot(acc)
  // computes acc + the word's dot product; word 0 starts the unit from
  // init() (a bias correction or zero).
  template <int k, class Init, class Dot>
  [[gnu::always_inline]] void add(Init init, Dot dot) {
    constexpr int c = k % kChains;
    if constexpr (k == 0) {
      s[c] = dot(init());
    } else if constexpr (k < kChains) {
      s[c] = dot(Isa::zero_i());
    } else {
      s[c] = dot(s[c]);
    }
  }
  // The unit's total after n words.
  template <int n>
  [[gnu::always_inline]] VI total() const {
    constexpr int used = n < kChains ? n : kChains;
    VI t = s[0];
    static_for<used - 1>([&](auto i) __attribute__((always_inline)) { t = Isa::add32(t, s[i + 1]); });
    return t;
  }
};

// What every decoder's Compute holds: the unit index, its C tokens and
// their accumulators (lane r = row r).
template <class Isa>
struct ComputeBase {
  int64_t b;
  const TokenRef* tok;
  typename Isa::VF* acc;
  ComputeBase(int64_t b_, const TokenRef* tok_, typename Isa::VF* acc_) : b(b_), tok(tok_), acc(acc_) {}
};

template <class Isa, class Dec>
struct StripRunner {
  using VI = typename Isa::VI;
  using VF = typename Isa::VF;
  using Panel = typename Dec::Panel;
  static constexpr int kRows = Isa::kRows;
  static constexpr int kFusedMax = 4;
  // Chains per token: fewer tokens in flight, more chains.
  template <int C>
  static constexpr int kChains = C == 1 ? 4 : (C < 4 ? 2 : 1);
  // Tokens per tile over a panel: as many accumulators as registers allow
  // (32 vector registers with AVX-512, 16 with AVX2).
  static constexpr int kTile = kRows == 16 ? Dec::kTile512 : Dec::kTile256;

  struct Store {
    Panel& p;
    template <int J>
    [[gnu::always_inline]] void scale(VF v) { p.f[J] = v; }
    template <int J>
    [[gnu::always_inline]] void iscale(VI v) { p.i[J] = v; }
    template <int I>
    [[gnu::always_inline]] void w(VI v) { p.w[I] = v; }
    void end() {}
  };

  template <class Sink>
  [[gnu::always_inline]] static void replay(const Panel& p, Sink& sink) {
    static_for<Dec::kF>([&](auto j) __attribute__((always_inline)) { sink.template scale<j>(p.f[j]); });
    static_for<Dec::kIs>([&](auto j) __attribute__((always_inline)) { sink.template iscale<j>(p.i[j]); });
    static_for<Dec::kW>([&](auto i) __attribute__((always_inline)) { sink.template w<i>(p.w[i]); });
    sink.end();
  }

  static Rows<Isa> make_rows(const uint8_t* w, size_t stride, int64_t n_rows) {
    Rows<Isa> rows;
    for (int r = 0; r < kRows; ++r) {
      const int64_t rr = r < n_rows ? r : n_rows - 1;
      rows.p[r] = w + static_cast<size_t>(rr) * stride;
    }
    rows.idx = Isa::row_offsets(stride, n_rows);
    return rows;
  }

  // C tokens over all units; units unpacked on the fly or replayed from the
  // panel.
  // flatten: every lambda and helper of the decoder is inlined here, so the
  // unpacked vectors stay in registers (left alone, GCC outlines some of the
  // static_for lambdas and the vectors go through memory).
  // Prefetch: while a strip streams through (decode), the next stretch of
  // the matrix is requested, `lines` cache lines per unit from `next`. A
  // strip reads 16 short rows side by side - too little of each for the
  // hardware streamers to ramp up - so without this the loads wait on
  // memory latency with only the line-fill buffers in flight (~10 GB/s per
  // core here instead of the ~20 GB/s the memory gives two cores). Into L2
  // (T1): measured best against T0, T2 and a strip further ahead.
  struct Prefetch {
    const uint8_t* next = nullptr;
    int lines = 0;
    size_t lane_ahead = 0;  // lane streams: bytes ahead in every lane's own rows
    size_t unit_bytes = 0;  // bytes of one unit of one row
  };
  // y's rows go out as whole cache lines with non-temporal stores
  // (StripArgs::stream_y; AVX-512 only, where 16 rows are a line).
  static bool can_stream(const StripArgs& a) {
    if constexpr (requires(float* y, VF v) { Isa::stream_rows(y, v); }) return Isa::kRows == 16 && a.stream_lines();
    return false;
  }
  // Out of line on purpose: inside the flattened pass, the loop pushed GCC
  // past its growth limits and it outlined the decoders' lambdas instead
  // (the unpacked vectors then went through memory). The empty volatile asm
  // keeps the call: a function of nothing but prefetches has no side effect
  // GCC knows of, so it inferred it "const" and deleted every call - the
  // decode strips ran without this prefetch from fdfff8f on.
  [[gnu::noinline]] static void prefetch_lines(const uint8_t* p, int n) {
    for (int i = 0; i < n; ++i) _mm_prefetch(reinterpret_cast<const char*>(p + 64 * i), _MM_HINT_T1);
    asm volatile("");
  }

  // Lane streams: the decoder's sink, wrapped so that the unit's prefetches
  // go out among its own instructions - a quarter of the rows after each
  // quarter of its weight vectors (Dec::kW of them). Unit b of a row asks for
  // lines first, first + 64, ... (n of them) past every lane's row start,
  // first = lane_ahead + 64 * j0 with j0 .. j0 + n the lines j where
  // b * unit_bytes <= 64 j < (b + 1) * unit_bytes (the last unit rounds its
  // end up): a line of every stream once, whatever the rows' alignment, with
  // no alignment arithmetic, and the same trip count in every lane. Rounding
  // the last unit down left a line of each row unread ahead where rows are
  // not whole lines (Q6_K at 1024: 840 bytes; the output matrix 6.8 % slower
  // cold). A call per unit that asked each lane for the lines starting in
  // the unit's bytes spent as much again in loop control as in the
  // prefetches (cache-resident Q4_0 mat-vec: 20 % of its time); the same
  // prefetches issued as one burst at the unit's start made decode 4-10 %
  // slower: spread out, they do not hold up the loads.
  template <class Comp>
  struct LaneSink : Comp {
    static constexpr int kGroups = 4;
    static_assert(Dec::kW >= kGroups && kRows % kGroups == 0);
    static constexpr int kStep = Dec::kW / kGroups;
    const Rows<Isa>& rows;
    size_t first;
    int n;
    LaneSink(Comp c, const Rows<Isa>& rows_, size_t first_, int n_) : Comp(c), rows(rows_), first(first_), n(n_) {}
    template <int I>
    [[gnu::always_inline]] void w(VI v) {
      Comp::template w<I>(v);
      if constexpr (I % kStep == 0 && I / kStep < kGroups) {
        static_for<kRows / kGroups>([&](auto rr) __attribute__((always_inline)) {
          const uint8_t* p = rows.p[(I / kStep) * (kRows / kGroups) + rr] + first;
          for (int j = 0; j < n; ++j) _mm_prefetch(reinterpret_cast<const char*>(p + 64 * j), _MM_HINT_T1);
        });
      }
    }
  };

  // kLanes: the lane-stream prefetches ride in the decoder's sink. A pass
  // of its own: in the same function as the plain unit loop, GCC kept the
  // two copies' values in spilled registers and the plain loop ran 27 %
  // slower (cache-resident Q4_0 mat-vec).
  template <int C, bool kPanel, bool kLanes = false>
  [[gnu::noinline, gnu::flatten]] static void pass(const Rows<Isa>& rows, const Panel* panel, int64_t nb,
                                     const TokenRef* tok, float* y, size_t ldy, int n_rows,
                                     Prefetch pf = {}, bool stream = false) {
    VF acc[C];
    static_for<C>([&](auto c) __attribute__((always_inline)) { acc[c] = Isa::zero_f(); });
    for (int64_t b = 0; b < nb; ++b) {
      // (Lane streams have no `next`: no call at all - an empty call per
      // unit was ~1 % of a decode's samples.)
      if (!kPanel && pf.lines != 0) prefetch_lines(pf.next + static_cast<size_t>(b) * static_cast<size_t>(pf.lines) * 64, pf.lines);
      using Comp = typename Dec::template Compute<C, kChains<C>>;
      if constexpr (kLanes) {
        const size_t j0 = static_cast<size_t>(b) * pf.unit_bytes / 64;
        const size_t j1 = (static_cast<size_t>(b + 1) * pf.unit_bytes + (b + 1 == nb ? 63 : 0)) / 64;
        LaneSink<Comp> sink(Comp(b, tok, acc), rows, pf.lane_ahead + 64 * j0, static_cast<int>(j1 - j0));
        Dec::unpack(rows, b, sink);
        sink.end();
        continue;
      }
      Comp comp(b, tok, acc);
      if constexpr (kPanel && requires { Dec::kCustomReplay; }) {
        Dec::replay(panel[b], comp);
        comp.end();
      } else if constexpr (kPanel) {
        replay(panel[b], comp);
      } else {
        Dec::unpack(rows, b, comp);
        comp.end();
      }
    }
    static_for<C>([&](auto c) __attribute__((always_inline)) {
      float* yc = y + static_cast<size_t>(c) * ldy;
      if constexpr (requires { Isa::stream_rows(yc, acc[c]); }) {
        if (stream) return Isa::stream_rows(yc, acc[c]);
      }
      Isa::store_rows(yc, acc[c], n_rows);
    });
  }

  // A decode pass with lane-stream prefetches, when asked for, else the plain one.
  template <int C, bool kPanel>
  static void pass_pf(const Rows<Isa>& rows, const Panel* panel, int64_t nb, const TokenRef* tok, float* y,
                      size_t ldy, int n_rows, Prefetch pf, bool st) {
    if constexpr (!kPanel) {
      if (pf.lane_ahead != 0) return pass<C, false, true>(rows, panel, nb, tok, y, ldy, n_rows, pf, st);
    }
    pass<C, kPanel>(rows, panel, nb, tok, y, ldy, n_rows, pf, st);
  }

  template <bool kPanel>
  static void pass_n(int n, const Rows<Isa>& rows, const Panel* panel, int64_t nb,
                     const TokenRef* tok, float* y, size_t ldy, int n_rows, Prefetch pf = {}, bool st = false) {
    switch (n) {
      case 1: return pass_pf<1, kPanel>(rows, panel, nb, tok, y, ldy, n_rows, pf, st);
      case 2: return pass_pf<2, kPanel>(rows, panel, nb, tok, y, ldy, n_rows, pf, st);
      case 3: return pass_pf<3, kPanel>(rows, panel, nb, tok, y, ldy, n_rows, pf, st);
      case 4: return pass_pf<4, kPanel>(rows, panel, nb, tok, y, ldy, n_rows, pf, st);
      default: break;
    }
    if constexpr (kPanel && kTile >= 8) {
      if (n < 8) {
        pass<4, true>(rows, panel, nb, tok, y, ldy, n_rows, {}, st);
        return pass_n<true>(n - 4, rows, panel, nb, tok + 4, y + 4 * ldy, ldy, n_rows, {}, st);
      }
      if (n == 8) return pass<8, true>(rows, panel, nb, tok, y, ldy, n_rows, {}, st);
    }
    if constexpr (kPanel && kTile >= 16) {
      if (n < 16) {
        pass<8, true>(rows, panel, nb, tok, y, ldy, n_rows, {}, st);
        return pass_n<true>(n - 8, rows, panel, nb, tok + 8, y + 8 * ldy, ldy, n_rows, {}, st);
      }
      return pass<16, true>(rows, panel, nb, tok, y, ldy, n_rows, {}, st);
    }
  }

  [[gnu::noinline, gnu::flatten]] static void pack(const Rows<Isa>& rows, int64_t nb, Panel* panel) {
    for (int64_t b = 0; b < nb; ++b) {
      Store store{panel[b]};
      Dec::unpack(rows, b, store);
      store.end();
    }
  }

  static size_t scratch_bytes(int64_t n_in) {
    return static_cast<size_t>(n_in / Dec::kBlockElems) * sizeof(Panel);
  }

  static void strip(const StripArgs& a) {
    const Rows<Isa> rows = make_rows(a.w, a.w_stride, a.n_rows);
    const int64_t nb = a.n_in / Dec::kBlockElems;
    const int n_rows = static_cast<int>(a.n_rows);
    const int64_t n_tok = a.x.n_tokens;
    TokenRef tok[kTile > kFusedMax ? kTile : kFusedMax];
    auto tokens = [&](int64_t t0, int n) {
      for (int c = 0; c < n; ++c) {
        const size_t t = static_cast<size_t>(t0 + c);
        tok[c].q = a.x.q + t * a.x.q_stride;
        tok[c].aux = a.x.aux != nullptr ? a.x.aux + t * a.x.aux_stride : nullptr;
      }
    };
    if (n_tok <= kFusedMax) {
      tokens(0, static_cast<int>(n_tok));
      // What the caller reads next, spread over the units.
      Prefetch pf;
      pf.next = a.prefetch;
      pf.lines = static_cast<int>(a.prefetch_lines_per(nb));
      if (a.lane_prefetch != 0 && nb > 0) {
        pf.lane_ahead = a.lane_prefetch;
        pf.unit_bytes = a.w_row_bytes / static_cast<size_t>(nb);
      }
      pass_n<false>(static_cast<int>(n_tok), rows, nullptr, nb, tok, a.y, a.ldy, n_rows, pf);
      return;
    }
    Panel* panel = reinterpret_cast<Panel*>(a.scratch);
    pack(rows, nb, panel);
    // A strip writes one line of y per token, a row of y apart: plain stores
    // fetch every line from memory first when y is not cached.
    const bool stream = can_stream(a);
    for (int64_t t0 = 0; t0 < n_tok; t0 += kTile) {
      const int n = static_cast<int>(n_tok - t0 < kTile ? n_tok - t0 : kTile);
      tokens(t0, n);
      pass_n<true>(n, rows, panel, nb, tok, a.y + static_cast<size_t>(t0) * a.ldy, a.ldy, n_rows, {}, stream);
    }
    if (stream) _mm_sfence();  // visible to whoever reads y after this returns
  }

  // One row times one token (ref::VecDotFn): the strip with every lane on
  // the same row. Correct and bit-identical to matmul's result, but it does
  // kRows times the work: matmul never calls it; tests and odd callers do.
  static float dot(int64_t n, const uint8_t* w_row, const void* x_row) {
    const auto* xq = static_cast<const uint8_t*>(x_row);
    const size_t aux_bytes = Dec::aux_bytes(n);
    alignas(64) uint8_t local[4096];
    uint8_t* aux = aux_bytes <= sizeof(local) ? local : static_cast<uint8_t*>(std::malloc(aux_bytes));
    if (aux_bytes > 0) Dec::aux(n, xq, aux);
    const Rows<Isa> rows = make_rows(w_row, 0, 1);
    const TokenRef tok{xq, aux};
    alignas(64) float y[kRows];
    pass<1, false>(rows, nullptr, n / Dec::kBlockElems, &tok, y, 0, 1);
    if (aux != local) std::free(aux);
    return y[0];
  }
};

// A table slot, filled with one decoder's runner.
template <class Isa, class Dec>
void set_strip(KernelTable& table, TensorType type, const char* isa) {
  using Runner = StripRunner<Isa, Dec>;
  WeightKernels& k = table.weights[static_cast<int>(type)];
  k.dot = &Runner::dot;
  k.strip = &Runner::strip;
  k.strip_rows = Isa::kRows;
  k.aux_bytes = Dec::aux_bytes;
  k.aux = Dec::aux;
  k.scratch_bytes = &Runner::scratch_bytes;
  k.isa = isa;
}

// Two decoders for one type: `Main` when the row length is a multiple of its
// unit, `Any` (unit = one block) otherwise. Both must give the same bits.
template <class Isa, class Main, class Any>
struct SplitStrip {
  using RMain = StripRunner<Isa, Main>;
  using RAny = StripRunner<Isa, Any>;
  static bool main(int64_t n) { return n % Main::kBlockElems == 0; }
  static void strip(const StripArgs& a) { main(a.n_in) ? RMain::strip(a) : RAny::strip(a); }
  static float dot(int64_t n, const uint8_t* w, const void* x) {
    return main(n) ? RMain::dot(n, w, x) : RAny::dot(n, w, x);
  }
  static size_t aux_bytes(int64_t n) { return main(n) ? Main::aux_bytes(n) : Any::aux_bytes(n); }
  static void aux(int64_t n, const uint8_t* q, uint8_t* out) {
    main(n) ? Main::aux(n, q, out) : Any::aux(n, q, out);
  }
  static size_t scratch_bytes(int64_t n) { return main(n) ? RMain::scratch_bytes(n) : RAny::scratch_bytes(n); }
};

template <class Isa, class Main, class Any>
void set_split_strip(KernelTable& table, TensorType type, const char* isa) {
  using S = SplitStrip<Isa, Main, Any>;
  WeightKernels& k = table.weights[static_cast<int>(type)];
  k.dot = &S::dot;
  k.strip = &S::strip;
  k.strip_rows = Isa::kRows;
  k.aux_bytes = &S::aux_bytes;
  k.aux = &S::aux;
  k.scratch_bytes = &S::scratch_bytes;
  k.isa = isa;
}

}  // namespace
}  // namespace kazeia::kernels::x86
