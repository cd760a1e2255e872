// Decoders of the 32-element block formats for the strip runner
// (strip_runner.h): Q4_0, Q5_0, Q8_0 (x Q8_0) and Q4_1, Q5_1 (x Q8_1).
//
// Weight quants enter vpdpbusd as unsigned bytes: formats with signed
// values get a bias (Q4_0 +8, Q5_0 +16, Q8_0 +128 - the stored nibbles, or
// the byte xor 0x80), and the aux word corr = -bias * sum(x) of each block
// (x86_kernels.h) starts the dot chain, so the integer block sum is exactly
// the reference's. The float update then reproduces the reference's
// expression operation for operation (files compiled with fp-contract off,
// fma only where the reference has one), so every output is bit-identical
// to ref::vec_dot_*:
//   Q4_0:       acc = fma(sumi * d_w, d_x, acc)
//   Q8_0:       acc = fma(d_w * d_x, sumi, acc)
//   Q5_0:       acc += (d_w * d_x) * sumi
//   Q4_1, Q5_1: acc += (d_w * d_x) * sumi + m_w * s_x
//
// Two decoders per format:
//  - Block*: one block per unit; d (and m, qh) gathered per row. Any row
//    length.
//  - Stream* (Q4_0, Q8_0): eight blocks per unit (144 / 272 bytes, a whole
//    number of 16-byte chunks). The chunks are transposed as they come, so
//    d comes out of the transposition instead of a gather (a zmm gather
//    costs ~13 cycles, as much as the rest of a block). Blocks are 18 / 34
//    bytes, so every other block starts in the middle of a 4-byte word:
//    for those, the word holding d also holds the first two quants, and the
//    last word holds the next block's d. Their activations come from the
//    aux row shifted by two bytes with zeros in front of and behind the 32
//    values, so d's bytes meet zeros and no word is realigned. No word mixes
//    the quants of two blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/x86/rows_legacy_avx2.h"
#include "kernels/x86/stream_aux_avx2.h"
#include "kernels/x86/strip_runner.h"
#include "kernels/x86/x86_kernels.h"

namespace kazeia::kernels::x86 {
namespace {

// ------------------------------------------------------------- formats

enum class Legacy { kQ4_0, kQ5_0, kQ8_0, kQ4_1, kQ5_1 };

template <Legacy F>
struct LegacyFmt {
  static constexpr bool kQ8 = F == Legacy::kQ8_0;
  static constexpr bool kMin = F == Legacy::kQ4_1 || F == Legacy::kQ5_1;  // value = d q + m
  static constexpr bool kFive = F == Legacy::kQ5_0 || F == Legacy::kQ5_1;
  static constexpr int kBytes = F == Legacy::kQ4_0 ? 18 : F == Legacy::kQ5_0 ? 22 : F == Legacy::kQ8_0 ? 34 : F == Legacy::kQ4_1 ? 20 : 24;
  static constexpr int kQs = kBytes - (kQ8 ? 32 : 16);  // offset of the quants
  static constexpr int kQh = kMin ? 4 : 2;              // offset of qh (Q5 only)
  static constexpr int kX = kMin ? 36 : 34;             // activation block: Q8_1 / Q8_0
  static constexpr int kXqs = kMin ? 4 : 2;
  static constexpr int kBias = F == Legacy::kQ4_0 ? 8 : F == Legacy::kQ5_0 ? 16 : F == Legacy::kQ8_0 ? 128 : 0;

  // The reference's float update for one block.
  template <class Isa>
  [[gnu::always_inline]] static typename Isa::VF finish(typename Isa::VI isum, typename Isa::VF d,
                                                       typename Isa::VF m, const uint8_t* aux_block,
                                                       typename Isa::VF acc) {
    const typename Isa::VF dx = Isa::bcst_f32(aux_block);
    if constexpr (F == Legacy::kQ4_0) {
      return Isa::fmadd(Isa::mul(Isa::cvt(isum), d), dx, acc);
    } else if constexpr (F == Legacy::kQ8_0) {
      return Isa::fmadd(Isa::mul(d, dx), Isa::cvt(isum), acc);
    } else if constexpr (kMin) {
      const typename Isa::VF sx = Isa::bcst_f32(aux_block + 4);
      return Isa::add(acc, Isa::add(Isa::mul(Isa::mul(d, dx), Isa::cvt(isum)), Isa::mul(m, sx)));
    } else {
      return Isa::add(acc, Isa::mul(Isa::mul(d, dx), Isa::cvt(isum)));
    }
  }
};

// Q8_0 without VNNI: vpmaddubsw would saturate on biased quants (up to 255),
// so the weights stay signed and the dot multiplies |w| by x with w's sign.
template <class Isa, bool kSigned>
[[gnu::always_inline]] inline typename Isa::VI dot_word(typename Isa::VI acc, typename Isa::VI w,
                                                      typename Isa::VI w_abs, const uint8_t* x) {
  if constexpr (kSigned) {
    return Isa::dot4_signed(acc, w_abs, w, x);
  } else {
    return Isa::dot4(acc, w, x);
  }
}

template <class Isa, bool kSigned>
[[gnu::always_inline]] inline typename Isa::VI abs_if_signed(typename Isa::VI w) {
  if constexpr (kSigned) {
    return Isa::abs8(w);
  } else {
    return w;
  }
}

// ---------------------------------------------------------- unpacking

// w[k] = low nibbles of t[k] (elements 4k..4k+3), w[k + 4] = high nibbles
// (elements 16 + 4k ..).
template <class Isa>
[[gnu::always_inline]] inline void split_nibbles(const typename Isa::VI t[4], typename Isa::VI w[8]) {
  const typename Isa::VI m = Isa::splat8(0x0F);
  for (int k = 0; k < 4; ++k) {
    w[k] = Isa::and_(t[k], m);
    w[k + 4] = Isa::and_(Isa::template srl16<4>(t[k]), m);
  }
}

// The 5th bits of Q5_0 / Q5_1: bit i of the row's 32-bit qh belongs to
// element i. Adds 16 to byte j of w[g] when bit 4g + j is set.
template <class Isa>
[[gnu::always_inline]] inline void add_high_bits(typename Isa::VI qh, typename Isa::VI w[8]) {
  using VI = typename Isa::VI;
  // Byte j of every lane: bit j (even g) or bit 4 + j (odd g) of the byte of
  // qh that holds bits 4g..4g+3.
  const VI bit_even = Isa::splat32(0x08040201u);
  const VI bit_odd = Isa::splat32(0x80402010u);
  const VI sixteen = Isa::splat8(0x10);
  for (int g = 0; g < 8; ++g) {
    // vpshufb control: in every 32-bit lane, repeat byte g / 2 of that lane.
    const VI ctrl = Isa::add32(Isa::dword_base(), Isa::splat32(static_cast<uint32_t>(g / 2) * 0x01010101u));
    const VI rep = Isa::shuffle8(qh, ctrl);
    const VI bits = g % 2 == 0 ? bit_even : bit_odd;
    w[g] = Isa::or_and(w[g], Isa::cmpeq8(Isa::and_(rep, bits), bits), sixteen);
  }
}

// The fp16 at byte `off` of every row, as float (one gather).
template <class Isa>
[[gnu::always_inline]] inline typename Isa::VF row_half(const Rows<Isa>& rows, size_t off) {
  return Isa::half_lo(Isa::gather32(rows.p[0] + off, rows.idx));
}

// ----------------------------------------------- one block per unit

template <class Isa, Legacy F>
struct BlockDec {
  using VI = typename Isa::VI;
  using VF = typename Isa::VF;
  using Fmt = LegacyFmt<F>;
  static constexpr bool kSigned = Fmt::kQ8 && !Isa::kVnni;
  static constexpr int kBlockElems = 32;
  static constexpr int kF = Fmt::kMin ? 2 : 1;  // d (, m)
  static constexpr int kIs = 0;
  static constexpr int kW = 8;
  static constexpr int kTile512 = 16;
  static constexpr int kTile256 = 4;
  struct Panel {
    VF f[kF];
    VI i[1];
    VI w[kW];
  };

  template <class Sink>
  [[gnu::always_inline]] static void unpack(const Rows<Isa>& rows, int64_t b, Sink& sink) {
    const size_t base = static_cast<size_t>(Fmt::kBytes * b);
    if constexpr (Fmt::kMin) {
      const VI dm = Isa::gather32(rows.p[0] + base, rows.idx);
      sink.template scale<0>(Isa::half_lo(dm));
      sink.template scale<1>(Isa::half_lo(Isa::template srl32<16>(dm)));
    } else {
      sink.template scale<0>(row_half(rows, base));
    }
    VI w[8];
    if constexpr (Fmt::kQ8) {
      Isa::load_t4(rows.p, base + 2, w);
      Isa::load_t4(rows.p, base + 18, w + 4);
      if constexpr (!kSigned) {
        for (int g = 0; g < 8; ++g) w[g] = Isa::xor_(w[g], Isa::splat8(0x80));
      }
    } else {
      VI t[4];
      Isa::load_t4(rows.p, base + Fmt::kQs, t);
      split_nibbles<Isa>(t, w);
      if constexpr (Fmt::kFive) add_high_bits<Isa>(Isa::gather32(rows.p[0] + base + Fmt::kQh, rows.idx), w);
    }
    static_for<8>([&](auto g) __attribute__((always_inline)) { sink.template w<g>(w[g]); });
  }

  template <int C, int kChains>
  struct Compute : ComputeBase<Isa> {
    using ComputeBase<Isa>::ComputeBase;
    VF d, m;
    Chains<Isa, kChains> ch[C];

    template <int J>
    [[gnu::always_inline]] void scale(VF v) {
      if constexpr (J == 0) d = v; else m = v;
    }
    template <int J>
    [[gnu::always_inline]] void iscale(VI) {}
    void end() {}  // blocks finish in w<>
    template <int I>
    [[gnu::always_inline]] void w(VI v) {
      const VI v_abs = abs_if_signed<Isa, kSigned>(v);
      static_for<C>([&](auto c) __attribute__((always_inline)) {
        const uint8_t* x = this->tok[c].q + Fmt::kX * this->b + Fmt::kXqs + 4 * I;
        ch[c].template add<I>([&]() __attribute__((always_inline)) { return init(c); },
                              [&](VI a) __attribute__((always_inline)) { return dot_word<Isa, kSigned>(a, v, v_abs, x); });
      });
      if constexpr (I == 7) {
        static_for<C>([&](auto c) __attribute__((always_inline)) {
          this->acc[c] = Fmt::template finish<Isa>(ch[c].template total<8>(), d, m, this->tok[c].aux + 8 * this->b, this->acc[c]);
        });
      }
    }
    [[gnu::always_inline]] VI init(int c) const {
      if constexpr (Fmt::kBias != 0 && !kSigned) return Isa::bcst32(this->tok[c].aux + 8 * this->b + 4);  // corr
      return Isa::zero_i();
    }
  };

  static size_t aux_bytes(int64_t n) { return legacy_aux_bytes(n); }
  static void aux(int64_t n, const uint8_t* q, uint8_t* out) {
    if constexpr (Fmt::kMin) {
      legacy1_aux(n, q, out);
    } else {
      legacy_aux<kSigned ? 0 : Fmt::kBias>(n, q, out);
    }
  }
};

// ------------------------------------------ eight blocks per unit

// Where the words of block `beta` (0..7) of a group lie, for blocks of
// `bytes` bytes with the 2-byte d first: words first(beta) .. last(beta) of
// the group; the block's quants start two bytes into word first(beta) when
// `shifted`; d is the low (or, when d_high, the high) half of word d_word.
struct StreamLayout {
  int bytes;
  constexpr int first(int beta) const { return (bytes * beta + 2) / 4; }
  constexpr int last(int beta) const { return (bytes * beta + bytes - 1) / 4; }
  constexpr bool shifted(int beta) const { return (bytes * beta + 2) % 4 != 0; }
  constexpr int d_word(int beta) const { return bytes * beta / 4; }
  constexpr bool d_high(int beta) const { return (bytes * beta) % 4 != 0; }
  constexpr int block_of(int word) const {
    int beta = 0;
    while (last(beta) < word) ++beta;
    return beta;
  }
};

// Q4_0 (18-byte blocks, each word gives a low- and a high-nibble vector:
// I = 2 * word + half) and Q8_0 (34-byte blocks, I = word).
template <class Isa, Legacy F>
struct StreamDec {
  static_assert(F == Legacy::kQ4_0 || F == Legacy::kQ8_0);
  using VI = typename Isa::VI;
  using VF = typename Isa::VF;
  using Fmt = LegacyFmt<F>;
  static constexpr bool kNibbles = F == Legacy::kQ4_0;
  static constexpr bool kSigned = Fmt::kQ8 && !Isa::kVnni;
  static constexpr StreamLayout kLayout{Fmt::kBytes};
  static constexpr int kChunks = Fmt::kBytes / 2;  // 8 blocks = kBytes * 8 / 16 chunks
  static constexpr int kWords = kChunks * 4;
  static constexpr int kBlockElems = 256;
  static constexpr int kF = 8;  // d of each block
  static constexpr int kIs = 0;
  static constexpr int kW = kNibbles ? 2 * kWords : kWords;
  static constexpr int kTile512 = 8;
  static constexpr int kTile256 = 4;
  struct Panel {
    VF f[kF];
    VI i[1];
    VI w[kW];
  };

  // The aux row of one group (x86_kernels.h): LegacyAux of the 8 blocks,
  // then for the 4 shifted (even) blocks their activations 2 bytes late:
  // Q4_0: [0 0 x0..x15 0 0] [0 0 x16..x31 0 0], Q8_0: [0 0 x0..x31 0 0].
  static constexpr int kShiftBytes = kNibbles ? 40 : 36;
  static constexpr int kAuxGroup = 64 + 4 * kShiftBytes;

  // Whether a sink takes Q4_0's high nibbles as t & 0xF0 (Compute::kRawHigh).
  template <class Sink>
  static constexpr bool raw_high() {
    if constexpr (requires { Sink::kRawHigh; }) {
      return Sink::kRawHigh;
    } else {
      return false;
    }
  }

  template <class Sink>
  [[gnu::always_inline]] static void unpack(const Rows<Isa>& rows, int64_t g, Sink& sink) {
    const size_t base = static_cast<size_t>(Fmt::kBytes) * 8 * static_cast<size_t>(g);
    // Chunks read two at a time (Isa::load_t8), an odd last one alone.
    static_for<(kChunks + 1) / 2>([&](auto pair) __attribute__((always_inline)) {
      constexpr int c0 = 2 * pair;
      VI t8[8];
      if constexpr (c0 + 1 < kChunks) {
        Isa::load_t8(rows.p, base + 16 * c0, t8);
      } else {
        Isa::load_t4(rows.p, base + 16 * c0, t8);
      }
      static_for<c0 + 1 < kChunks ? 2 : 1>([&](auto h) __attribute__((always_inline)) {
        chunk<c0 + h>(t8 + 4 * h, sink);
      });
    });
  }

  // The scales found in chunk c (its transposed words t), then its quants.
  template <int c, class Sink>
  [[gnu::always_inline]] static void chunk(const VI* t, Sink& sink) {
    static_for<8>([&](auto beta) __attribute__((always_inline)) {
      constexpr int dw = kLayout.d_word(beta);
      if constexpr (dw / 4 == c) {
        const VI word = t[dw % 4];
        sink.template scale<beta>(Isa::half_lo(kLayout.d_high(beta) ? Isa::template srl32<16>(word) : word));
      }
    });
    static_for<4>([&](auto k) __attribute__((always_inline)) {
      constexpr int word = 4 * c + k;
      if constexpr (kNibbles) {
        const VI m = Isa::splat8(0x0F);
        sink.template w<2 * word>(Isa::and_(t[k], m));
        if constexpr (raw_high<Sink>()) {
          sink.template w<2 * word + 1>(Isa::and_(t[k], Isa::splat8(0xF0)));
        } else {
          sink.template w<2 * word + 1>(Isa::and_(Isa::template srl16<4>(t[k]), m));
        }
      } else if constexpr (kSigned) {
        sink.template w<word>(t[k]);
      } else {
        sink.template w<word>(Isa::xor_(t[k], Isa::splat8(0x80)));
      }
    });
  }

  // A group is four identical pairs of blocks (36 / 68 bytes = 9 / 17
  // words): the even block (shifted) owns words 0 .. kEvenWords - 1 of the
  // pair, the odd one the rest. The Compute works per pair word, the pair
  // index p a run-time value: the panel replay loops over pairs instead of
  // unrolling a whole group (that much straight-line code outruns the
  // decoders and the uop cache).
  static constexpr int kPairWords = kWords / 4;
  static constexpr int kEvenWords = kLayout.last(0) + 1;
  static constexpr int kPairW = kW / 4;  // w vectors per pair

  template <int C, int kChains>
  struct Compute : ComputeBase<Isa> {
    using ComputeBase<Isa>::ComputeBase;
    VF d[8];
    Chains<Isa, kChains> ch[C];

    // Q4_0 with VNNI and an even number of chains: a high-nibble vector
    // comes as t & 0xF0 (16 x the quants: one AND instead of a shift and an
    // AND, ~7 % of the decoder's vector uops). Dot k = 2 j + half goes to
    // chain k % kChains, so the high halves fill the odd chains alone; their
    // sum, a multiple of 16, is shifted back by 4 at the end of the block.
    // Integer sums, so the total is exactly the old one. (vpmaddubsw would
    // saturate 16 x 15 x 127 pairs: VNNI only.)
    static constexpr bool kRawHigh = kNibbles && Isa::kVnni && kChains % 2 == 0;

    // Q4_0 without VNNI: the words of a block sum their vpmaddubsw pairs in
    // int16 and widen once per block (one vpmaddwd instead of eight; on
    // cores with one vector multiply port that port was the bottleneck). A
    // pair is at most 2 * 15 * 128 = 3840 in magnitude, so the 8 words of a
    // block stay below 30720 < 2^15 in any grouping: exact, same bits.
    static constexpr bool kInt16 = kNibbles && !Isa::kVnni;

    template <int n>
    [[gnu::always_inline]] VI block_total(const Chains<Isa, kChains>& chains) const {
      if constexpr (kInt16) {
        constexpr int used = n < kChains ? n : kChains;
        VI t = chains.s[0];
        static_for<used - 1>([&](auto i) __attribute__((always_inline)) { t = Isa::add16(t, chains.s[i + 1]); });
        return Isa::widen16(t);
      } else if constexpr (kRawHigh) {
        VI lo = chains.s[0], hi = chains.s[1];
        static_for<kChains / 2 - 1>([&](auto i) __attribute__((always_inline)) {
          lo = Isa::add32(lo, chains.s[2 * i + 2]);
          hi = Isa::add32(hi, chains.s[2 * i + 3]);
        });
        return Isa::add32(lo, Isa::template sra32<4>(hi));
      } else {
        return chains.template total<n>();
      }
    }

    template <int J>
    [[gnu::always_inline]] void scale(VF v) { d[J] = v; }
    template <int J>
    [[gnu::always_inline]] void iscale(VI) {}
    void end() {}  // blocks finish in w_pair<>
    template <int I>
    [[gnu::always_inline]] void w(VI v) { w_pair<I % kPairW>(v, I / kPairW); }

    // Vector Ip of pair p.
    template <int Ip>
    [[gnu::always_inline]] void w_pair(VI v, int p) {
      constexpr int word = kNibbles ? Ip / 2 : Ip;  // word within the pair
      constexpr int half = kNibbles ? Ip % 2 : 0;
      constexpr bool odd = word >= kEvenWords;
      constexpr int j = odd ? word - kEvenWords : word;  // word within the block
      constexpr int k = kNibbles ? 2 * j + half : j;    // dot within the block
      constexpr int words = odd ? kPairWords - kEvenWords : kEvenWords;
      const int beta = 2 * p + (odd ? 1 : 0);
      const VI v_abs = abs_if_signed<Isa, kSigned>(v);
      static_for<C>([&](auto c) __attribute__((always_inline)) {
        const uint8_t* x;
        if constexpr (odd) {  // quants word-aligned: the activations as stored
          x = this->tok[c].q + 34 * (8 * this->b + beta) + 2 + (half ? 16 : 0) + 4 * j;
        } else {  // two bytes late: the aux row's shifted copy
          x = this->tok[c].aux + kAuxGroup * this->b + 64 + kShiftBytes * p + (half ? 20 : 0) + 4 * j;
        }
        if constexpr (kInt16) {
          if constexpr (k < kChains) {
            ch[c].s[k % kChains] = Isa::pairs16(v, x);
          } else {
            ch[c].s[k % kChains] = Isa::add16(ch[c].s[k % kChains], Isa::pairs16(v, x));
          }
        } else {
          ch[c].template add<k>([&]() __attribute__((always_inline)) { return init(c, beta); },
                                [&](VI a) __attribute__((always_inline)) { return dot_word<Isa, kSigned>(a, v, v_abs, x); });
        }
      });
      if constexpr (k + 1 == (kNibbles ? 2 * words : words)) {
        static_for<C>([&](auto c) __attribute__((always_inline)) {
          const uint8_t* aux = this->tok[c].aux + kAuxGroup * this->b + 8 * beta;
          VI isum = block_total<k + 1>(ch[c]);
          if constexpr (kInt16) isum = Isa::add32(init(c, beta), isum);
          this->acc[c] = Fmt::template finish<Isa>(isum, d[beta], d[beta], aux, this->acc[c]);
        });
      }
    }
    [[gnu::always_inline]] VI init(int c, int beta) const {
      if constexpr (!kSigned) return Isa::bcst32(this->tok[c].aux + kAuxGroup * this->b + 8 * beta + 4);  // corr
      return Isa::zero_i();
    }
  };

  // The panel replay (strip_runner.h): scales, then the pairs in a loop.
  static constexpr bool kCustomReplay = true;
  template <class Sink>
  [[gnu::always_inline]] static void replay(const Panel& panel, Sink& sink) {
    static_for<kF>([&](auto j) __attribute__((always_inline)) { sink.template scale<j>(panel.f[j]); });
#pragma GCC unroll 1
    for (int p = 0; p < 4; ++p) {
      static_for<kPairW>([&](auto i) __attribute__((always_inline)) {
        // The panel holds high nibbles shifted down (any sink can replay it).
        if constexpr (raw_high<Sink>() && i % 2 == 1) {
          sink.template w_pair<i>(Isa::template sll16<4>(panel.w[p * kPairW + i]), p);
        } else {
          sink.template w_pair<i>(panel.w[p * kPairW + i], p);
        }
      });
    }
  }

  static size_t aux_bytes(int64_t n) { return static_cast<size_t>(n / 256) * kAuxGroup; }
  static void aux(int64_t n, const uint8_t* q, uint8_t* out) {
    stream_aux_avx2<kNibbles, kSigned ? 0 : Fmt::kBias>(n, q, out);
  }
};

// Q4_0 and Q8_0 where the policy asks for it (Isa::kRowKernels: the AVX2
// table): decode batches by rows_legacy_avx2.h, the rest (prefill's panels,
// the dot) by the strip runner's decoders.
template <class Isa, Legacy F>
struct RowsStrip {
  static constexpr bool kQ8 = F == Legacy::kQ8_0;
  using Split = SplitStrip<Isa, StreamDec<Isa, F>, BlockDec<Isa, F>>;
  static void strip(const StripArgs& a) {
    const bool done = Split::main(a.n_in) ? LegacyRows<kQ8, StreamDec<Isa, F>::kAuxGroup>::strip(a)
                                          : LegacyRows<kQ8, 0>::strip(a);
    if (!done) Split::strip(a);
  }
};

template <class Isa>
void fill_legacy(KernelTable& table, const char* isa, bool row_kernels) {
  set_split_strip<Isa, StreamDec<Isa, Legacy::kQ4_0>, BlockDec<Isa, Legacy::kQ4_0>>(table, TensorType::Q4_0, isa);
  set_split_strip<Isa, StreamDec<Isa, Legacy::kQ8_0>, BlockDec<Isa, Legacy::kQ8_0>>(table, TensorType::Q8_0, isa);
  if constexpr (Isa::kRowKernels) {
    if (row_kernels) {
      table.weights[static_cast<int>(TensorType::Q4_0)].strip = &RowsStrip<Isa, Legacy::kQ4_0>::strip;
      table.weights[static_cast<int>(TensorType::Q8_0)].strip = &RowsStrip<Isa, Legacy::kQ8_0>::strip;
    }
  }
  set_strip<Isa, BlockDec<Isa, Legacy::kQ5_0>>(table, TensorType::Q5_0, isa);
  set_strip<Isa, BlockDec<Isa, Legacy::kQ4_1>>(table, TensorType::Q4_1, isa);
  set_strip<Isa, BlockDec<Isa, Legacy::kQ5_1>>(table, TensorType::Q5_1, isa);
}

}  // namespace
}  // namespace kazeia::kernels::x86
