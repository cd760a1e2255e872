// Decoders of the K-quants (256-element super-blocks x Q8_K) for the strip
// runner (strip_runner.h): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
//
// Per super-block and (row, token) two exact integers:
//   I1 = sum over scale units u of  sc_u * (sum over the unit of q_i * x_i)
//   I2 = sum over units of  m_u * (sum of the unit's x_i)   (formats with mins)
// where q_i is the stored quant minus the format's offset (Q3_K 4, Q6_K 32:
// the unit's dot chain starts at -offset * sum(x), the aux word), sc_u the
// unit's integer scale (Q3_K minus 32) and m_u its min. These are the
// reference's integers; the reference then splits I1 over 8 float lanes by
// element index mod 8, which 4-byte dot products cannot follow. Here:
//   acc = fma(d_w * d_x, float(I1), acc)
//   acc = fnma(dmin_w * d_x, float(I2), acc)       (formats with mins)
// per super-block - one rounding of each product, the same on every x86
// level and batch size; within 1e-5 of sum |w_i x_i| of the reference.
//
// Unsigned quants enter vpdpbusd directly (at most 63: no vpmaddubsw
// saturation on AVX2). Unit scales are multiplied in with vpmulld per unit;
// the mins term is vpdpwssd / vpmaddwd of (m_2p, m_2p+1) int16 pairs with
// the activations' sub-block sums. Scales and mins are unpacked with
// in-lane byte shuffles, one per unit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/x86/rows_q45_k_avx2.h"
#include "kernels/x86/rows_q6_k_avx2.h"
#include "kernels/x86/strip_runner.h"
#include "kernels/x86/x86_kernels.h"

namespace kazeia::kernels::x86 {
namespace {

// ------------------------------------------------- in-lane byte helpers
//
// v holds 4 bytes per 32-bit lane; vpshufb controls index within the
// 128-bit lane, so every control is "4i + j" for the lane's position i.

template <class Isa>
[[gnu::always_inline]] inline typename Isa::VI lane_pos(uint32_t mask) {
  return Isa::and_(Isa::dword_base(), Isa::splat32(mask));  // 4i in the masked bytes
}
// Byte j of every lane, zero-extended to 32 bits.
template <class Isa>
[[gnu::always_inline]] inline typename Isa::VI byte_u32(typename Isa::VI v, int j) {
  return Isa::shuffle8(v, Isa::add32(lane_pos<Isa>(0x000000FFu), Isa::splat32(0x80808000u + static_cast<uint32_t>(j))));
}
// Byte j of every lane, sign-extended to 32 bits.
template <class Isa>
[[gnu::always_inline]] inline typename Isa::VI byte_s32(typename Isa::VI v, int j) {
  const typename Isa::VI top =
      Isa::shuffle8(v, Isa::add32(lane_pos<Isa>(0xFF000000u), Isa::splat32(0x00808080u + (static_cast<uint32_t>(j) << 24))));
  return Isa::template sra32<24>(top);
}
// Bytes 2q and 2q + 1 of every lane as a pair of zero-extended int16.
template <class Isa>
[[gnu::always_inline]] inline typename Isa::VI byte_pair_u16(typename Isa::VI v, int q) {
  const uint32_t c = 0x80008000u + static_cast<uint32_t>(2 * q) + (static_cast<uint32_t>(2 * q + 1) << 16);
  return Isa::shuffle8(v, Isa::add32(lane_pos<Isa>(0x00FF00FFu), Isa::splat32(c)));
}

// Bit `bit` of every byte moved to bit `to` (other bits garbage).
template <class Isa, int bit, int to>
[[gnu::always_inline]] inline typename Isa::VI move_bit(typename Isa::VI v) {
  if constexpr (bit == to) {
    return v;
  } else if constexpr (bit < to) {
    return Isa::template sll16<to - bit>(v);
  } else {
    return Isa::template srl16<bit - to>(v);
  }
}

// ------------------------------------------------------- shared compute

// The Compute of every K-quant: kUnitWords activation words per unit, kUnits
// units; integer scales iscale<u> (u < kUnits), mins pairs iscale<kUnits +
// p>; float scales d (scale<0>) and dmin (scale<1>). Units may arrive in any
// order (each one whole); the decoder emits unit kFirstUnit first.
template <class Isa, class Fmt, int C, int kChains>
struct KCompute : ComputeBase<Isa> {
  using VI = typename Isa::VI;
  using VF = typename Isa::VF;
  using ComputeBase<Isa>::ComputeBase;
  static constexpr int kUnitWords = Fmt::kUnitElems / 4;
  // A unit's dot chain is short (4 or 8 words) and the units of a block are
  // independent chains already: more than one accumulator per 4 words only
  // adds the vpaddd that merge them.
  static constexpr int kUnitChains = std::min(kChains, std::max(1, kUnitWords / 4));
  VF d, dmin;
  VI sc[Fmt::kUnits];
  VI mins[Fmt::kMinPairs > 0 ? Fmt::kMinPairs : 1];
  Chains<Isa, kUnitChains> ch[C];
  VI isum[C];

  // Without VNNI (one vpmaddubsw + one vpmaddwd per word, and cores with a
  // single vector-multiply port) the words of a group sum their vpmaddubsw
  // pairs in int16 and the group widens once, with the unit's scale as an
  // int16 pair (vpmaddwd gives sc * sum). The offset formats (Q3_K, Q6_K)
  // add their -offset * sum(x) term once per block from the bsums (end);
  // they widened each group by 1, started each unit from its corr word and
  // took a vpmulld by the scale at the unit's end (Q6_K, 1024 x 3072, 128
  // tokens, 2 threads, Zen 2: 1.07x the time; Q3_K 1.06x).
  // kGroupWords keeps the int16 sum exact: a pair is at most 2 * kQmax * 128
  // (Q8_K activations reach -128). Same integers, same bits.
  static constexpr bool kInt16 = !Isa::kVnni;
  static_assert(!kInt16 || Fmt::kOffset == 0 || Fmt::kUnitElems == 16, "the offset term takes one bsum per unit");
  static constexpr int kGroupWords = std::min(kUnitWords, 32767 / (256 * Fmt::kQmax));
  static_assert(kUnitWords % kGroupWords == 0);
  VI t16[C];

  // (a, b) as one int16 pair per lane (a and b: int32 lanes in int16 range).
  [[gnu::always_inline]] static VI int16_pair(VI a, VI b) {
    if constexpr (Fmt::kOffset == 0) {
      return Isa::or_(a, Isa::template sll32<16>(b));  // scales 0..63: no sign bits to clear
    } else {
      return Isa::or_(Isa::and_(a, Isa::splat32(0xFFFFu)), Isa::template sll32<16>(b));
    }
  }

  template <int J>
  [[gnu::always_inline]] void scale(VF v) {
    if constexpr (J == 0) d = v; else dmin = v;
  }
  template <int J>
  [[gnu::always_inline]] void iscale(VI v) {
    if constexpr (J < Fmt::kUnits) sc[J] = v; else mins[J - Fmt::kUnits] = v;
  }
  template <int I>
  [[gnu::always_inline]] void w(VI v) {
    if constexpr (kInt16) {
      w_int16<I>(v);
    } else {
      w_int32<I>(v);
    }
  }
  template <int I>
  [[gnu::always_inline]] void w_int16(VI v) {
    constexpr int u = I / kUnitWords;
    constexpr int k = I % kUnitWords;
    constexpr int g = k / kGroupWords;
    constexpr int kg = k % kGroupWords;
    static_for<C>([&](auto c) __attribute__((always_inline)) {
      const VI p = Isa::pairs16(v, this->tok[c].q + 292 * this->b + 4 + 4 * I);
      t16[c] = kg == 0 ? p : Isa::add16(t16[c], p);
    });
    if constexpr (kg == kGroupWords - 1) {
      // The unit's scale as an int16 pair: vpmaddwd gives sc * the group's
      // sum. The offset formats' -offset * sum(x) term is added once per
      // block (end), not per unit as the int32 path's chains start from it.
      const VI sc_pair = int16_pair(sc[u], sc[u]);
      static_for<C>([&](auto c) __attribute__((always_inline)) {
        const VI part = Isa::madd16(t16[c], sc_pair);
        isum[c] = u == Fmt::kFirstUnit && g == 0 ? part : Isa::add32(isum[c], part);
      });
    }
  }
  template <int I>
  [[gnu::always_inline]] void w_int32(VI v) {
    constexpr int u = I / kUnitWords;
    constexpr int k = I % kUnitWords;
    static_for<C>([&](auto c) __attribute__((always_inline)) {
      const uint8_t* xb = this->tok[c].q + 292 * this->b;
      ch[c].template add<k>([&]() __attribute__((always_inline)) { return init(c, u); }, [&](VI a) __attribute__((always_inline)) { return Isa::dot4(a, v, xb + 4 + 4 * I); });
    });
    if constexpr (k == kUnitWords - 1) {
      static_for<C>([&](auto c) __attribute__((always_inline)) {
        const VI s = Isa::mullo32(sc[u], ch[c].template total<kUnitWords>());
        if constexpr (u == Fmt::kFirstUnit) {
          isum[c] = s;
        } else {
          isum[c] = Isa::add32(isum[c], s);
        }
        // Left alone, GCC sinks every unit's vpmulld to the end of the block
        // and spills the 16 unit sums and their scales to the stack.
        if constexpr (Isa::kRegisterBarriers) asm("" : "+v"(isum[c]));
      });
    }
  }
  void end() {
    if constexpr (kInt16 && Fmt::kOffset != 0) {
      // I1's term -offset * sum over the units of sc_u * (sum of unit u's
      // activations): scale pairs against the Q8_K block's bsums (one per
      // unit), shifted (offset 4 or 32), exact: at most 32 * 16 * 128 *
      // 2048 in magnitude.
      static_assert(Fmt::kOffset == 4 || Fmt::kOffset == 32);
      constexpr int kShift = Fmt::kOffset == 4 ? 2 : 5;
      VI pairs[Fmt::kUnits / 2];
      static_for<Fmt::kUnits / 2>([&](auto p) __attribute__((always_inline)) { pairs[p] = int16_pair(sc[2 * p], sc[2 * p + 1]); });
      static_for<C>([&](auto c) __attribute__((always_inline)) {
        const uint8_t* bsums = this->tok[c].q + 292 * this->b + 260;
        VI m = Isa::dot2x16(Isa::zero_i(), pairs[0], bsums);
        static_for<Fmt::kUnits / 2 - 1>([&](auto p) __attribute__((always_inline)) { m = Isa::dot2x16(m, pairs[p + 1], bsums + 4 * (p + 1)); });
        isum[c] = Isa::sub32(isum[c], Isa::template sll32<kShift>(m));
      });
    }
    static_for<C>([&](auto c) __attribute__((always_inline)) {
      const uint8_t* xb = this->tok[c].q + 292 * this->b;
      const VF dx = Isa::bcst_f32(xb);
      this->acc[c] = Isa::fmadd(Isa::mul(d, dx), Isa::cvt(isum[c]), this->acc[c]);
      if constexpr (Fmt::kMinPairs > 0) {
        // Pairs of activation sub-sums: Q2_K the block's own bsums, Q4_K /
        // Q5_K the aux row's sums of 32.
        const uint8_t* pairs = Fmt::kUnitElems == 16 ? xb + 260 : this->tok[c].aux + 16 * this->b;
        VI m = Isa::dot2x16(Isa::zero_i(), mins[0], pairs);
        static_for<Fmt::kMinPairs - 1>([&](auto p) __attribute__((always_inline)) { m = Isa::dot2x16(m, mins[p + 1], pairs + 4 * (p + 1)); });
        this->acc[c] = Isa::fnmadd(Isa::mul(dmin, dx), Isa::cvt(m), this->acc[c]);
      }
    });
  }
  [[gnu::always_inline]] VI init(int c, int u) const {
    if constexpr (Fmt::kOffset != 0) return Isa::bcst32(this->tok[c].aux + 64 * this->b + 4 * u);  // corr16
    return Isa::zero_i();
  }
};

// Common members of the K decoders.
template <class Isa, class Fmt>
struct KDec {
  using VI = typename Isa::VI;
  using VF = typename Isa::VF;
  static constexpr int kBlockElems = 256;
  static constexpr int kF = Fmt::kMinPairs > 0 ? 2 : 1;
  static constexpr int kIs = Fmt::kUnits + Fmt::kMinPairs;
  static constexpr int kW = 64;
  static constexpr int kTile512 = 8;
  static constexpr int kTile256 = 2;
  struct Panel {
    VF f[kF];
    VI i[kIs];
    VI w[kW];
  };
  template <int C, int kChains>
  using Compute = KCompute<Isa, Fmt, C, kChains>;
  // Offset formats (Q3_K, Q6_K): the corr words (-offset * bsum per unit)
  // that start the int32 path's unit chains (VNNI). The int16 path (and the
  // AVX2 Q6_K row kernel) take the offset term from the bsums: no aux row.
  static constexpr bool kCorrAux = Fmt::kOffset != 0 && !KCompute<Isa, Fmt, 1, 1>::kInt16;
  static size_t corr_aux_bytes(int64_t n) { return kCorrAux ? corr16_aux_bytes(n) : 0; }
  static void corr_aux(int64_t n, const uint8_t* q, uint8_t* out) {
    if constexpr (kCorrAux) corr16_aux<Fmt::kOffset>(n, q, out);
  }
};

// The header of Q4_K / Q5_K (16 bytes: d, dmin, 12 bytes of 6-bit scales
// and mins, scale_min_k4's layout): scales, mins pairs and d / dmin.
template <class Isa, class Sink>
[[gnu::always_inline]] inline void k4_header(const Rows<Isa>& rows, size_t base, Sink& sink) {
  using VI = typename Isa::VI;
  VI h[4];
  Isa::load_t4(rows.p, base, h);
  sink.template scale<0>(Isa::half_lo(h[0]));
  sink.template scale<1>(Isa::half_lo(Isa::template srl32<16>(h[0])));
  // Bytes 0-3: scales 0-3 (low 6 bits); 4-7: mins 0-3; 8-11: low nibble
  // scale 4-7, high nibble min 4-7; their top 2 bits are the top bits of
  // bytes 0-3 (scales) and 4-7 (mins).
  const VI m6 = Isa::splat8(0x3F), m4 = Isa::splat8(0x0F), top = Isa::splat8(0x30);
  const VI sc_lo = Isa::and_(h[1], m6);
  const VI mn_lo = Isa::and_(h[2], m6);
  const VI sc_hi = Isa::or_and(Isa::and_(h[3], m4), Isa::template srl32<2>(h[1]), top);
  const VI mn_hi = Isa::or_and(Isa::and_(Isa::template srl32<4>(h[3]), m4), Isa::template srl32<2>(h[2]), top);
  static_for<4>([&](auto j) __attribute__((always_inline)) {
    sink.template iscale<j>(byte_u32<Isa>(sc_lo, j));
    sink.template iscale<4 + j>(byte_u32<Isa>(sc_hi, j));
  });
  sink.template iscale<8>(byte_pair_u16<Isa>(mn_lo, 0));
  sink.template iscale<9>(byte_pair_u16<Isa>(mn_lo, 1));
  sink.template iscale<10>(byte_pair_u16<Isa>(mn_hi, 0));
  sink.template iscale<11>(byte_pair_u16<Isa>(mn_hi, 1));
}

// ---------------------------------------------------------------- Q4_K

struct FmtQ4_K {
  static constexpr int kUnits = 8, kUnitElems = 32, kMinPairs = 4, kOffset = 0, kFirstUnit = 0;
  static constexpr int kQmax = 15;  // largest quant entering the dot
};
struct FmtQ5_K : FmtQ4_K {
  static constexpr int kQmax = 31;
};

template <class Isa>
struct DecQ4_K : KDec<Isa, FmtQ4_K> {
  using VI = typename Isa::VI;
  template <class Sink>
  [[gnu::always_inline]] static void unpack(const Rows<Isa>& rows, int64_t b, Sink& sink) {
    const size_t base = 144 * static_cast<size_t>(b);
    k4_header(rows, base, sink);
    // Bytes 32c..32c+31 of qs: low nibbles are sub-block 2c, high 2c + 1.
    static_for<4>([&](auto c) __attribute__((always_inline)) {
      VI t[8];
      Isa::load_t8(rows.p, base + 16 + 32 * c, t);
      const VI m = Isa::splat8(0x0F);
      static_for<8>([&](auto k) __attribute__((always_inline)) { sink.template w<16 * c + k>(Isa::and_(t[k], m)); });
      static_for<8>([&](auto k) __attribute__((always_inline)) { sink.template w<16 * c + 8 + k>(Isa::and_(Isa::template srl16<4>(t[k]), m)); });
    });
  }
  static size_t aux_bytes(int64_t n) { return pairs32_aux_bytes(n); }
  static void aux(int64_t n, const uint8_t* q, uint8_t* out) { pairs32_aux(n, q, out); }
};

// ---------------------------------------------------------------- Q5_K

template <class Isa>
struct DecQ5_K : KDec<Isa, FmtQ5_K> {
  using VI = typename Isa::VI;
  template <class Sink>
  [[gnu::always_inline]] static void unpack(const Rows<Isa>& rows, int64_t b, Sink& sink) {
    const size_t base = 176 * static_cast<size_t>(b);
    k4_header(rows, base, sink);
    // qh: element 32s + l has its 5th bit in bit s of qh[l].
    VI qh[8];
    Isa::load_t8(rows.p, base + 16, qh);
    const VI m = Isa::splat8(0x0F), sixteen = Isa::splat8(0x10);
    static_for<4>([&](auto c) __attribute__((always_inline)) {
      VI t[8];
      Isa::load_t8(rows.p, base + 48 + 32 * c, t);
      static_for<8>([&](auto k) __attribute__((always_inline)) {
        const VI hb = move_bit<Isa, 2 * c, 4>(qh[k]);
        sink.template w<16 * c + k>(Isa::or_and(Isa::and_(t[k], m), hb, sixteen));
      });
      static_for<8>([&](auto k) __attribute__((always_inline)) {
        const VI hb = move_bit<Isa, 2 * c + 1, 4>(qh[k]);
        sink.template w<16 * c + 8 + k>(Isa::or_and(Isa::and_(Isa::template srl16<4>(t[k]), m), hb, sixteen));
      });
    });
  }
  static size_t aux_bytes(int64_t n) { return pairs32_aux_bytes(n); }
  static void aux(int64_t n, const uint8_t* q, uint8_t* out) { pairs32_aux(n, q, out); }
};

// ---------------------------------------------------------------- Q6_K

struct FmtQ6_K {
  static constexpr int kUnits = 16, kUnitElems = 16, kMinPairs = 0, kOffset = 32, kFirstUnit = 0;
  static constexpr int kQmax = 63;
};

template <class Isa>
struct DecQ6_K : KDec<Isa, FmtQ6_K> {
  using VI = typename Isa::VI;
  template <class Sink>
  [[gnu::always_inline]] static void unpack(const Rows<Isa>& rows, int64_t b, Sink& sink) {
    const size_t base = 210 * static_cast<size_t>(b);
    VI s[4], sd[4];
    Isa::load_t4(rows.p, base + 192, s);  // 16 int8 scales
    Isa::load_t4(rows.p, base + 194, sd);  // scales 2..15, d
    sink.template scale<0>(Isa::half_lo(Isa::template srl32<16>(sd[3])));
    // Half h, words k = 4kq .. 4kq+3 of ql' = ql + 64h (a), ql' + 32 (b)
    // and qh' = qh + 32h: elements 128h + 32m + 4k take their low 4 bits
    // from a (m = 0, 2: low / high nibble) or b (m = 1, 3), their high 2
    // bits from bits 2m, 2m + 1 of qh'.
    const VI m4 = Isa::splat8(0x0F), top = Isa::splat8(0x30);
    static_for<2>([&](auto h) __attribute__((always_inline)) {
      // Both kq's words of a, b and qh' at once (32 bytes per row each).
      VI a8[8], bb8[8], qh8[8];
      Isa::load_t8(rows.p, base + 64 * h, a8);
      Isa::load_t8(rows.p, base + 64 * h + 32, bb8);
      Isa::load_t8(rows.p, base + 128 + 32 * h, qh8);
      static_for<2>([&](auto kq) __attribute__((always_inline)) {
        const VI* a = a8 + 4 * kq;
        const VI* bb = bb8 + 4 * kq;
        const VI* qh = qh8 + 4 * kq;
        VI qh01[4], qh23[4];  // qh's bits of m = 0, 2 / of m = 1, 3
        if constexpr (Isa::kBitSelect) {
          static_for<4>([&](auto j) __attribute__((always_inline)) {
            qh01[j] = Isa::and_(qh[j], Isa::splat8(0x33));
            qh23[j] = Isa::and_(qh[j], Isa::splat8(0xCC));
          });
        }
        static_for<4>([&](auto m) __attribute__((always_inline)) {
          // Unit 8h + 2m + kq's scale just before its words (unpacked all
          // at once, the 16 scales were spilled to the stack).
          constexpr int u = 8 * h + 2 * m + kq;
          sink.template iscale<u>(byte_s32<Isa>(s[u / 4], u % 4));
          static_for<4>([&](auto j) __attribute__((always_inline)) {
            const VI src = m % 2 == 0 ? a[j] : bb[j];
            if constexpr (Isa::kBitSelect) {
              // q = select(low nibble source, high bits, 0x0F): the high
              // bits come from qh with the other m's bits cleared (qh01 /
              // qh23, shared by two m), so the 16-bit shifts leave zeros or
              // bits the select drops. Two or three instructions instead of
              // three or four.
              const VI qh_m = m % 2 == 0 ? qh01[j] : qh23[j];
              const VI lo = m < 2 ? src : Isa::template srl16<4>(src);
              const VI hi = m == 0 ? Isa::template sll16<4>(qh_m)
                          : m == 1 ? Isa::template sll16<2>(qh_m)
                          : m == 2 ? qh_m
                                   : Isa::template srl16<2>(qh_m);
              sink.template w<32 * h + 8 * m + 4 * kq + j>(Isa::select(lo, hi, m4));
            } else {
              const VI lo = m < 2 ? Isa::and_(src, m4) : Isa::and_(Isa::template srl16<4>(src), m4);
              const VI hi = move_bit<Isa, 2 * m, 4>(qh[j]);
              sink.template w<32 * h + 8 * m + 4 * kq + j>(Isa::or_and(lo, hi, top));
            }
          });
        });
      });
    });
  }
  static size_t aux_bytes(int64_t n) { return KDec<Isa, FmtQ6_K>::corr_aux_bytes(n); }
  static void aux(int64_t n, const uint8_t* q, uint8_t* out) { KDec<Isa, FmtQ6_K>::corr_aux(n, q, out); }
};

// ---------------------------------------------------------- Q2_K / Q3_K

// The 2-bit planes shared by Q2_K and Q3_K: half j (qs[32j..32j+31]), word
// m, plane p' holds elements 128j + 32p' + 4m .. (bits 2p', 2p' + 1).
template <class Isa, int p>
[[gnu::always_inline]] inline typename Isa::VI plane2(typename Isa::VI q) {
  if constexpr (p == 0) {
    return Isa::and_(q, Isa::splat8(0x03));
  } else {
    return Isa::and_(Isa::template srl16<2 * p>(q), Isa::splat8(0x03));
  }
}

struct FmtQ2_K {
  static constexpr int kUnits = 16, kUnitElems = 16, kMinPairs = 8, kOffset = 0, kFirstUnit = 0;
  static constexpr int kQmax = 3;
};

template <class Isa>
struct DecQ2_K : KDec<Isa, FmtQ2_K> {
  using VI = typename Isa::VI;
  template <class Sink>
  [[gnu::always_inline]] static void unpack(const Rows<Isa>& rows, int64_t b, Sink& sink) {
    const size_t base = 84 * static_cast<size_t>(b);
    const VI dd = Isa::gather32(rows.p[0] + base + 80, rows.idx);  // d | dmin << 16
    sink.template scale<0>(Isa::half_lo(dd));
    sink.template scale<1>(Isa::half_lo(Isa::template srl32<16>(dd)));
    VI s[4];
    Isa::load_t4(rows.p, base, s);  // scales[s]: low nibble scale, high nibble min
    const VI m4 = Isa::splat8(0x0F);
    static_for<16>([&](auto u) __attribute__((always_inline)) { sink.template iscale<u>(Isa::and_(byte_u32<Isa>(s[u / 4], u % 4), m4)); });
    static_for<8>([&](auto p) __attribute__((always_inline)) {
      const VI pair = byte_pair_u16<Isa>(s[p / 2], p % 2);
      sink.template iscale<16 + p>(Isa::template srl32<4>(Isa::and_(pair, Isa::splat32(0x00F000F0u))));
    });
    static_for<2>([&](auto j) __attribute__((always_inline)) {
      VI q[8];
      Isa::load_t8(rows.p, base + 16 + 32 * j, q);
      static_for<4>([&](auto p) __attribute__((always_inline)) {
        static_for<8>([&](auto m) __attribute__((always_inline)) { sink.template w<32 * j + 8 * p + m>(plane2<Isa, p>(q[m])); });
      });
    });
  }
  static size_t aux_bytes(int64_t) { return 0; }
  static void aux(int64_t, const uint8_t*, uint8_t*) {}
};

struct FmtQ3_K {
  static constexpr int kUnits = 16, kUnitElems = 16, kMinPairs = 0, kOffset = 4, kFirstUnit = 0;
  static constexpr int kQmax = 7;
};

template <class Isa>
struct DecQ3_K : KDec<Isa, FmtQ3_K> {
  using VI = typename Isa::VI;
  template <class Sink>
  [[gnu::always_inline]] static void unpack(const Rows<Isa>& rows, int64_t b, Sink& sink) {
    const size_t base = 110 * static_cast<size_t>(b);
    // Bytes 94..109: qs[62..63], the 12 scale bytes, d - one chunk, nothing
    // read past the block. Scale byte i is byte (2 + i) % 4 of word
    // (2 + i) / 4.
    VI t[4];
    Isa::load_t4(rows.p, base + 94, t);
    sink.template scale<0>(Isa::half_lo(Isa::template srl32<16>(t[3])));
    auto sc_byte = [&](int i) { return byte_u32<Isa>(t[(2 + i) / 4], (2 + i) % 4); };
    static_for<16>([&](auto u) __attribute__((always_inline)) {
      // 6-bit scale u: low 4 bits from byte u % 8 (low / high nibble for
      // u < 8 / >= 8), high 2 bits from byte 8 + u % 4 at bit 2 (u / 4).
      const VI lo_byte = sc_byte(u % 8);
      const VI lo = u < 8 ? Isa::and_(lo_byte, Isa::splat32(0x0F)) : Isa::template srl32<4>(lo_byte);
      const VI hi = Isa::and_(Isa::template srl32<2 * (u / 4)>(sc_byte(8 + u % 4)), Isa::splat32(0x03));
      const VI v = Isa::or_(lo, Isa::template sll32<4>(hi));
      sink.template iscale<u>(Isa::sub32(v, Isa::splat32(32)));
    });
    VI hm[8];  // hmask: element 32p + l has its high bit in bit p of hmask[l]
    Isa::load_t8(rows.p, base, hm);
    const VI four = Isa::splat8(0x04);
    static_for<2>([&](auto j) __attribute__((always_inline)) {
      VI q[8];
      Isa::load_t8(rows.p, base + 32 + 32 * j, q);
      static_for<4>([&](auto p) __attribute__((always_inline)) {
        static_for<8>([&](auto m) __attribute__((always_inline)) {
          const VI hb = move_bit<Isa, 4 * j + p, 2>(hm[m]);
          sink.template w<32 * j + 8 * p + m>(Isa::or_and(plane2<Isa, p>(q[m]), hb, four));
        });
      });
    });
  }
  static size_t aux_bytes(int64_t n) { return KDec<Isa, FmtQ3_K>::corr_aux_bytes(n); }
  static void aux(int64_t n, const uint8_t* q, uint8_t* out) { KDec<Isa, FmtQ3_K>::corr_aux(n, q, out); }
};

// Q4_K / Q5_K / Q6_K where the policy asks for it (Isa::kRowKernels: the
// AVX2 table): decode by rows_q45_k_avx2.h / rows_q6_k_avx2.h (Rows), up to
// kMaxGrouped tokens in groups of 4 (for_token_groups), the rest by the
// strip runner's panels (Dec).
template <class Isa, class Rows, class Dec, int64_t kMaxGrouped>
struct RowKernelStrip {
  static void group(const StripArgs& a) {
    if (!Rows::strip(a)) StripRunner<Isa, Dec>::strip(a);
  }
  static void strip(const StripArgs& a) {
    if (a.x.n_tokens > kMaxGrouped) return group(a);
    for_token_groups(a, group);
  }
};
// Q6_K: a speculative batch to verify against the tied output matrix. Q6_K
// 1024 x 75968, 2 threads, Zen 2, best of 15, row groups / the runner's
// panels: 2 tokens 2.40 / 3.23 ms, 4 4.87 / 5.53, 5 7.04 / 10.58, 8
// 9.96 / 12.56, 12 14.79 / 15.50; from 16 the panels win (19.23 / 18.56).
template <class Isa>
using Q6KStrip = RowKernelStrip<Isa, Q6KRows, DecQ6_K<Isa>, 12>;
// Q4_K / Q5_K: 1-4 tokens only. From 5 the runner's panels are as fast
// (Q4_K 1024 x 12288, 2 threads, Zen 2: 8 tokens as two groups 0.90 ms,
// the panels 0.91).
template <class Isa>
using Q4KStrip = RowKernelStrip<Isa, Q4KRows, DecQ4_K<Isa>, 4>;
template <class Isa>
using Q5KStrip = RowKernelStrip<Isa, Q5KRows, DecQ5_K<Isa>, 4>;

template <class Isa>
void fill_kquants(KernelTable& table, const char* isa, bool row_kernels) {
  set_strip<Isa, DecQ2_K<Isa>>(table, TensorType::Q2_K, isa);
  set_strip<Isa, DecQ3_K<Isa>>(table, TensorType::Q3_K, isa);
  set_strip<Isa, DecQ4_K<Isa>>(table, TensorType::Q4_K, isa);
  set_strip<Isa, DecQ5_K<Isa>>(table, TensorType::Q5_K, isa);
  set_strip<Isa, DecQ6_K<Isa>>(table, TensorType::Q6_K, isa);
  if constexpr (Isa::kRowKernels) {
    if (row_kernels) {
      table.weights[static_cast<int>(TensorType::Q4_K)].strip = &Q4KStrip<Isa>::strip;
      table.weights[static_cast<int>(TensorType::Q5_K)].strip = &Q5KStrip<Isa>::strip;
      table.weights[static_cast<int>(TensorType::Q6_K)].strip = &Q6KStrip<Isa>::strip;
    }
  }
}

}  // namespace
}  // namespace kazeia::kernels::x86
