// The ggml quantization blocks, byte for byte as they are stored in GGUF
// files (little-endian). fp16 fields are raw IEEE half bits (uint16_t); use
// fp16_to_fp32() / fp32_to_fp16() from tensor/quant.h.
//
// Reading from file bytes: memcpy a block into one of these structs (the
// reference code does); a raw pointer into a mapping may be misaligned.
//
// Element order inside a block (the dequantized index of each quant):
//  - Q4_0/Q4_1/Q5_0/Q5_1: element j (0..15) is the low nibble of qs[j],
//    element j + 16 the high nibble; for Q5 the 5th bit of element i (0..31)
//    is bit i of the little-endian uint32 qh.
//  - Q8_0: element j is qs[j].
//  - K-quants: see the comment on each struct.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kazeia {

inline constexpr int kQK = 32;     // elements per block of the legacy formats
inline constexpr int kQK_K = 256;  // elements per K-quant super-block
inline constexpr int kKScaleSize = 12;

// value = (q - 8) * d, q in 0..15
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(offsetof(BlockQ4_0, qs) == 2);

// value = q * d + m, q in 0..15
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(offsetof(BlockQ4_1, m) == 2 && offsetof(BlockQ4_1, qs) == 4);

// value = (q - 16) * d, q in 0..31
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(offsetof(BlockQ5_0, qh) == 2 && offsetof(BlockQ5_0, qs) == 6);

// value = q * d + m, q in 0..31
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(offsetof(BlockQ5_1, m) == 2 && offsetof(BlockQ5_1, qh) == 4 &&
              offsetof(BlockQ5_1, qs) == 8);

// value = q * d
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(offsetof(BlockQ8_0, qs) == 2);

// 16 sub-blocks of 16. scales[s]: low nibble = scale, high nibble = min.
// value = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4), q in 0..3.
// Element order: for half h (0..1, 128 elements, qs[32h .. 32h+31]) and
// shift pass p (0..3, bits 2p..2p+1): elements 128h + 32p + l (l < 16) from
// qs[32h + l] and 128h + 32p + 16 + l from qs[32h + 16 + l]; sub-block
// s = 8h + 2p (+1 for the second 16).
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(offsetof(BlockQ2_K, qs) == 16 && offsetof(BlockQ2_K, d) == 80 &&
              offsetof(BlockQ2_K, dmin) == 82);

// 16 sub-blocks of 16, 3-bit quants: 2 low bits in qs (same order as Q2_K),
// the high bit in hmask: element 32p + l (p = 0..7, l = 0..31) has its high
// bit in bit p of hmask[l]. value = d * (scale_s - 32) * (q_low - (hbit ? 0 : 4)).
// The 16 6-bit scales: low 4 bits of scale s are scales[s] & 15 (s < 8) or
// scales[s - 8] >> 4 (s >= 8); the high 2 bits are bits 2*(s/4) of
// scales[8 + s%4].
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[kKScaleSize];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(offsetof(BlockQ3_K, qs) == 32 && offsetof(BlockQ3_K, scales) == 96 &&
              offsetof(BlockQ3_K, d) == 108);

// 8 sub-blocks of 32 with 6-bit scale and min (see scale_min_k4).
// value = d * scale_s * q - dmin * min_s, q in 0..15. Sub-block 2c (c = 0..3)
// is the low nibbles of qs[32c .. 32c+31], sub-block 2c+1 the high nibbles.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(offsetof(BlockQ4_K, dmin) == 2 && offsetof(BlockQ4_K, scales) == 4 &&
              offsetof(BlockQ4_K, qs) == 16);

// As Q4_K with a 5th bit: element 32s + l of sub-block s has its high bit in
// bit s of qh[l]. value = d * scale_s * q - dmin * min_s, q in 0..31.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(offsetof(BlockQ5_K, dmin) == 2 && offsetof(BlockQ5_K, scales) == 4 &&
              offsetof(BlockQ5_K, qh) == 16 && offsetof(BlockQ5_K, qs) == 48);

// 16 sub-blocks of 16, 6-bit quants, value = d * scales[s] * (q - 32).
// For half h (128 elements) and l = 0..31, with ql' = ql + 64h, qh' = qh + 32h:
//   element 128h + l      : ql'[l] & 15      | ((qh'[l] >> 0) & 3) << 4
//   element 128h + l + 32 : ql'[l + 32] & 15 | ((qh'[l] >> 2) & 3) << 4
//   element 128h + l + 64 : ql'[l] >> 4      | ((qh'[l] >> 4) & 3) << 4
//   element 128h + l + 96 : ql'[l + 32] >> 4 | ((qh'[l] >> 6) & 3) << 4
// and element i uses scales[i / 16].
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(offsetof(BlockQ6_K, qh) == 128 && offsetof(BlockQ6_K, scales) == 192 &&
              offsetof(BlockQ6_K, d) == 208);

// Intermediate format for dot products: value = d * qs[i] (d is fp32);
// bsums[g] = sum of qs[16g .. 16g+15].
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(offsetof(BlockQ8_K, qs) == 4 && offsetof(BlockQ8_K, bsums) == 260);

// The 6-bit scale of sub-block s (0..15) of a Q3_K block, still biased by
// 32: the low 4 bits are scales[s] & 15 (s < 8) or scales[s - 8] >> 4, the
// high 2 bits bits 2 (s / 4) of scales[8 + s % 4].
inline int q3_scale(const uint8_t* scales, int s) {
  const int low = s < 8 ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
  const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
  return low | (high << 4);
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K block
// (ggml's get_scale_min_k4). Bytes 0-3 hold scales 0-3 in their low 6 bits,
// bytes 4-7 mins 0-3; for j >= 4 the low 4 bits come from byte j + 4 (scale in
// the low nibble, min in the high) and the top 2 bits from the top bits of
// bytes j - 4 (scale) and j (min).
inline void scale_min_k4(int j, const uint8_t* q, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

}  // namespace kazeia
