// Hand-built blocks: raw bytes laid out per the ggml block documentation
// (offsets written out here, not taken from tensor/blocks.h), with expected
// floats computed in the test from the documented formulas and, for a few
// elements per block, as literal numbers worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tensor/quant.h"

namespace kazeia {
namespace {

// fp16 constants (IEEE half bits).
constexpr uint16_t kHalfQuarter = 0x3400;   // 0.25
constexpr uint16_t kHalfHalf = 0x3800;      // 0.5
constexpr uint16_t kHalfOne = 0x3C00;       // 1.0
constexpr uint16_t kHalfTwo = 0x4000;       // 2.0
constexpr uint16_t kHalfMinus1_5 = 0xBE00;  // -1.5

void put16(std::vector<uint8_t>& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v & 0xFF);
  b[off + 1] = static_cast<uint8_t>(v >> 8);
}

uint8_t pattern_a(int i) { return static_cast<uint8_t>((i * 37 + 11) & 0xFF); }
uint8_t pattern_b(int i) { return static_cast<uint8_t>((i * 29 + 5) & 0xFF); }

std::vector<float> dequant(TensorType type, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n), -12345.0f);
  const Status st = dequantize_row(type, bytes.data(), out.data(), n);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return out;
}

// ------------------------------------------------------------------ Q4_0

TEST(DequantBlocks, Q4_0) {
  std::vector<uint8_t> b(18);
  put16(b, 0, kHalfHalf);  // d = 0.5
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const auto y = dequant(TensorType::Q4_0, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f) << j;          // low nibble of qs[j]
    EXPECT_EQ(y[j + 16], (7 - j) * 0.5f) << j;     // high nibble of qs[j]
  }
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[15], 3.5f);
  EXPECT_EQ(y[16], 3.5f);
  EXPECT_EQ(y[31], -4.0f);
}

TEST(DequantBlocks, Q4_0TwoBlocksNegativeScale) {
  std::vector<uint8_t> b(36, 0);
  put16(b, 0, kHalfOne);
  for (int j = 0; j < 16; ++j) b[2 + j] = 0x8F;  // low 15 -> 7, high 8 -> 0
  put16(b, 18, 0xC000);                          // d = -2
  for (int j = 0; j < 16; ++j) b[20 + j] = 0x0A; // low 10 -> 2, high 0 -> -8
  const auto y = dequant(TensorType::Q4_0, b, 64);
  EXPECT_EQ(y[0], 7.0f);
  EXPECT_EQ(y[16], 0.0f);
  EXPECT_EQ(y[32], -4.0f);
  EXPECT_EQ(y[63], 16.0f);
}

// ------------------------------------------------------------------ Q4_1

TEST(DequantBlocks, Q4_1WithMin) {
  std::vector<uint8_t> b(20);
  put16(b, 0, kHalfTwo);       // d = 2
  put16(b, 2, kHalfMinus1_5);  // m = -1.5
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const auto y = dequant(TensorType::Q4_1, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], j * 2.0f - 1.5f) << j;
    EXPECT_EQ(y[j + 16], (15 - j) * 2.0f - 1.5f) << j;
  }
  EXPECT_EQ(y[0], -1.5f);
  EXPECT_EQ(y[15], 28.5f);
  EXPECT_EQ(y[16], 28.5f);
}

// ------------------------------------------------------------ Q5_0 / Q5_1

// qh bytes 0F F0 A5 A5 = little-endian 0xA5A5F00F: bit i is the 5th bit of element i.
const uint8_t kQh[4] = {0x0F, 0xF0, 0xA5, 0xA5};

int q5_quant(int e) {
  const uint32_t qh = 0xA5A5F00Fu;
  const int j = e % 16;
  const uint8_t qs = static_cast<uint8_t>((j & 0xF) | (((j * 3) & 0xF) << 4));
  const int low = e < 16 ? (qs & 0xF) : (qs >> 4);
  return low | static_cast<int>(((qh >> e) & 1u) << 4);
}

TEST(DequantBlocks, Q5_0HighBits) {
  std::vector<uint8_t> b(22);
  put16(b, 0, kHalfOne);
  std::memcpy(&b[2], kQh, 4);
  for (int j = 0; j < 16; ++j) b[6 + j] = static_cast<uint8_t>((j & 0xF) | (((j * 3) & 0xF) << 4));
  const auto y = dequant(TensorType::Q5_0, b, 32);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(y[e], static_cast<float>(q5_quant(e) - 16)) << e;
  EXPECT_EQ(y[0], 0.0f);     // low 0, bit 0 set -> 16
  EXPECT_EQ(y[4], -12.0f);   // low 4, bit 4 clear
  EXPECT_EQ(y[12], 12.0f);   // low 12, bit 12 (byte 1 bit 4) set -> 28
  EXPECT_EQ(y[16], 0.0f);    // high nibble of qs[0] = 0, bit 16 set
  EXPECT_EQ(y[17], -13.0f);  // high nibble of qs[1] = 3, bit 17 clear
  EXPECT_EQ(y[31], 13.0f);   // high nibble of qs[15] = 45 & 15 = 13, bit 31 set -> 29
}

TEST(DequantBlocks, Q5_1HighBitsWithMin) {
  std::vector<uint8_t> b(24);
  put16(b, 0, kHalfHalf);  // d = 0.5
  put16(b, 2, kHalfOne);   // m = 1
  std::memcpy(&b[4], kQh, 4);
  for (int j = 0; j < 16; ++j) b[8 + j] = static_cast<uint8_t>((j & 0xF) | (((j * 3) & 0xF) << 4));
  const auto y = dequant(TensorType::Q5_1, b, 32);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(y[e], q5_quant(e) * 0.5f + 1.0f) << e;
  EXPECT_EQ(y[0], 9.0f);    // q = 16
  EXPECT_EQ(y[4], 3.0f);    // q = 4
  EXPECT_EQ(y[31], 15.5f);  // q = 29
}

// ------------------------------------------------------------------ Q8_0

TEST(DequantBlocks, Q8_0) {
  std::vector<uint8_t> b(34);
  put16(b, 0, kHalfQuarter);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  b[2] = 0x80;                                   // -128
  b[33] = 127;
  const auto y = dequant(TensorType::Q8_0, b, 32);
  for (int j = 1; j < 31; ++j) EXPECT_EQ(y[j], (j - 16) * 0.25f) << j;
  EXPECT_EQ(y[0], -32.0f);
  EXPECT_EQ(y[31], 31.75f);
}

// ------------------------------------------------------------------ Q2_K
// Layout: scales[16] @0 (low nibble scale, high nibble min), qs[64] @16,
// d @80, dmin @82. Element e: half h = e/128, pass p = (e%128)/32, l = e%32,
// q = (qs[32h + l] >> 2p) & 3, sub-block e/16.

TEST(DequantBlocks, Q2_K) {
  std::vector<uint8_t> b(84);
  for (int s = 0; s < 16; ++s) b[s] = static_cast<uint8_t>(((s + 1) & 0xF) | ((s % 4) << 4));
  for (int i = 0; i < 64; ++i) b[16 + i] = pattern_a(i);
  put16(b, 80, kHalfOne);   // d = 1
  put16(b, 82, kHalfHalf);  // dmin = 0.5
  const auto y = dequant(TensorType::Q2_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, p = (e % 128) / 32, l = e % 32, s = e / 16;
    const int q = (pattern_a(32 * h + l) >> (2 * p)) & 3;
    const float sc = static_cast<float>((s + 1) & 0xF);
    const float mn = static_cast<float>(s % 4);
    EXPECT_EQ(y[e], 1.0f * sc * q - 0.5f * mn) << e;
  }
  EXPECT_EQ(y[0], 3.0f);     // qs[0] = 11 -> q 3; scale 1, min 0
  EXPECT_EQ(y[23], 3.5f);    // qs[23] = 94 -> q 2; sub-block 1: 2*2 - 0.5
  EXPECT_EQ(y[90], -0.5f);   // qs[26] = 205, pass 2 -> q 0; sub-block 5: min 1
  EXPECT_EQ(y[200], 13.0f);  // qs[40] = 211, pass 2 -> q 1; sub-block 12: scale 13, min 0
  EXPECT_EQ(y[250], -1.5f);  // qs[58] = 109, pass 3 -> q 1; sub-block 15: scale 0, min 3
}

// ------------------------------------------------------------------ Q3_K
// Layout: hmask[32] @0, qs[64] @32, scales[12] @96, d @108. 6-bit scale s:
// low 4 bits in byte s (s < 8, low nibble) or byte s-8 (high nibble), top 2
// bits at bits 2*(s/4) of byte 8 + s%4; value (scale - 32). High bit of
// element e: bit e/32 of hmask[e%32]; clear means subtract 4.

void pack_q3_scales(const int sc6[16], uint8_t* out) {
  std::memset(out, 0, 12);
  for (int s = 0; s < 16; ++s) {
    if (s < 8) out[s] |= static_cast<uint8_t>(sc6[s] & 0xF);
    else out[s - 8] |= static_cast<uint8_t>((sc6[s] & 0xF) << 4);
    out[8 + s % 4] |= static_cast<uint8_t>((sc6[s] >> 4) << (2 * (s / 4)));
  }
}

TEST(DequantBlocks, Q3_KScalePackingByHand) {
  // sc6[s] = 24 + s (scales -8..7). Worked by hand: byte 0 = low(24)=8 | low(32)=0 <<4;
  // byte 8 = top bits of s=0 (1), s=4 (1), s=8 (2), s=12 (2) = 01|01<<2|10<<4|10<<6.
  int sc6[16];
  for (int s = 0; s < 16; ++s) sc6[s] = 24 + s;
  uint8_t packed[12];
  pack_q3_scales(sc6, packed);
  EXPECT_EQ(packed[0], 0x08);
  EXPECT_EQ(packed[7], 0x7F);  // low(31) = 15 | low(39) = 7 << 4
  EXPECT_EQ(packed[8], 0xA5);
  EXPECT_EQ(packed[11], 0xA5);  // s = 3 (27 -> 1), 7 (31 -> 1), 11 (35 -> 2), 15 (39 -> 2)
}

TEST(DequantBlocks, Q3_K) {
  std::vector<uint8_t> b(110);
  for (int i = 0; i < 32; ++i) b[i] = pattern_b(i);
  for (int i = 0; i < 64; ++i) b[32 + i] = pattern_a(i);
  int sc6[16];
  for (int s = 0; s < 16; ++s) sc6[s] = 24 + s;
  pack_q3_scales(sc6, &b[96]);
  put16(b, 108, kHalfHalf);  // d = 0.5
  const auto y = dequant(TensorType::Q3_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, p = (e % 128) / 32, l = e % 32, s = e / 16;
    const int low = (pattern_a(32 * h + l) >> (2 * p)) & 3;
    const bool hbit = (pattern_b(l) >> (e / 32)) & 1;
    const int q = low - (hbit ? 0 : 4);
    EXPECT_EQ(y[e], 0.5f * static_cast<float>(s - 8) * static_cast<float>(q)) << e;
  }
  EXPECT_EQ(y[0], -12.0f);  // q 3, hmask[0] = 5 bit 0 set; scale -8
  EXPECT_EQ(y[35], 6.0f);   // qs[3] = 122 pass 1 -> 2, hmask[3] = 92 bit 1 clear -> -2; scale -6
  EXPECT_EQ(y[200], 2.0f);  // qs[40] = 211 pass 2 -> 1, hmask[8] = 237 bit 6 set; scale 4
}

// ------------------------------------------------------------ Q4_K / Q5_K
// Scales and mins of the 8 sub-blocks, packed by hand (see get_scale_min_k4):
//   sc = {1, 2, 3, 4, 37, 50, 63, 20}, min = {0, 5, 10, 15, 33, 48, 7, 60}.
const uint8_t kK4Scales[12] = {0x81, 0xC2, 0xC3, 0x44, 0x80, 0xC5,
                               0x0A, 0xCF, 0x15, 0x02, 0x7F, 0xC4};
const int kK4Sc[8] = {1, 2, 3, 4, 37, 50, 63, 20};
const int kK4Min[8] = {0, 5, 10, 15, 33, 48, 7, 60};

TEST(DequantBlocks, Q4_K) {
  // Layout: d @0, dmin @2, scales[12] @4, qs[128] @16. Sub-block s: chunk
  // c = s/2 of 32 bytes, low nibbles for even s, high nibbles for odd s.
  std::vector<uint8_t> b(144);
  put16(b, 0, kHalfHalf);     // d = 0.5
  put16(b, 2, kHalfQuarter);  // dmin = 0.25
  std::memcpy(&b[4], kK4Scales, 12);
  for (int i = 0; i < 128; ++i) b[16 + i] = pattern_a(i);
  const auto y = dequant(TensorType::Q4_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32, l = e % 32;
    const uint8_t byte = pattern_a(32 * (s / 2) + l);
    const int q = (s % 2 == 0) ? (byte & 0xF) : (byte >> 4);
    EXPECT_EQ(y[e], 0.5f * kK4Sc[s] * q - 0.25f * kK4Min[s]) << e;
  }
  EXPECT_EQ(y[0], 5.5f);       // qs[0] = 0x0B low -> 11; 0.5*1*11
  EXPECT_EQ(y[140], 121.25f);  // sub-block 4: qs[76] = 0x07 low -> 7; 0.5*37*7 - 0.25*33
  EXPECT_EQ(y[163], 263.0f);   // sub-block 5: qs[67] = 0xBA high -> 11; 0.5*50*11 - 0.25*48
  EXPECT_EQ(y[250], 85.0f);    // sub-block 7: qs[122] = 0xAD high -> 10; 0.5*20*10 - 0.25*60
}

TEST(DequantBlocks, Q5_K) {
  // Layout: d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48. The 5th
  // bit of element e = 32s + l is bit s of qh[l].
  std::vector<uint8_t> b(176);
  put16(b, 0, kHalfHalf);
  put16(b, 2, kHalfQuarter);
  std::memcpy(&b[4], kK4Scales, 12);
  for (int i = 0; i < 32; ++i) b[16 + i] = pattern_b(i);
  for (int i = 0; i < 128; ++i) b[48 + i] = pattern_a(i);
  const auto y = dequant(TensorType::Q5_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32, l = e % 32;
    const uint8_t byte = pattern_a(32 * (s / 2) + l);
    const int low = (s % 2 == 0) ? (byte & 0xF) : (byte >> 4);
    const int q = low | (((pattern_b(l) >> s) & 1) << 4);
    EXPECT_EQ(y[e], 0.5f * kK4Sc[s] * q - 0.25f * kK4Min[s]) << e;
  }
  EXPECT_EQ(y[0], 13.5f);      // qh[0] = 5 bit 0 set -> 27
  EXPECT_EQ(y[140], 121.25f);  // qh[12] = 97 bit 4 clear -> 7
  EXPECT_EQ(y[163], 263.0f);   // qh[3] = 92 bit 5 clear -> 11
  EXPECT_EQ(y[250], 245.0f);   // qh[26] = 247 bit 7 set -> 26; 0.5*20*26 - 15
}

// ------------------------------------------------------------------ Q6_K
// Layout: ql[128] @0, qh[64] @128, int8 scales[16] @192, d @208. Element e:
// half h = e/128, group g = (e%128)/32, l = e%32; low 4 bits from
// ql[64h + l + 32*(g&1)] (low nibble for g < 2, high for g >= 2), top 2 bits
// (qh[32h + l] >> 2g) & 3; value d * scales[e/16] * (q - 32).

TEST(DequantBlocks, Q6_K) {
  std::vector<uint8_t> b(210);
  for (int i = 0; i < 128; ++i) b[i] = pattern_a(i);
  for (int i = 0; i < 64; ++i) b[128 + i] = pattern_b(i);
  for (int s = 0; s < 16; ++s) b[192 + s] = static_cast<uint8_t>(static_cast<int8_t>(s - 8));
  put16(b, 208, kHalfQuarter);
  const auto y = dequant(TensorType::Q6_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    const uint8_t lo_byte = pattern_a(64 * h + l + 32 * (g & 1));
    const int low = g < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
    const int high = (pattern_b(32 * h + l) >> (2 * g)) & 3;
    const int q = (low | (high << 4)) - 32;
    EXPECT_EQ(y[e], 0.25f * static_cast<float>(e / 16 - 8) * static_cast<float>(q)) << e;
  }
  EXPECT_EQ(y[0], 10.0f);     // ql[0] low 11, qh[0] bits 0-1 = 1 -> 27 - 32 = -5; scale -8
  EXPECT_EQ(y[48], 6.25f);    // ql[48] = 0xFB low 11, qh[16] = 213 bits 2-3 = 1 -> -5; scale -5
  EXPECT_EQ(y[77], -30.0f);   // ql[13] = 0xEC high 14, qh[13] = 126 bits 4-5 = 3 -> 30; scale -4
  EXPECT_EQ(y[200], -25.0f);  // ql[72] = 0x73 high 7, qh[40] = 141 bits 4-5 = 0 -> -25; scale 4
  EXPECT_EQ(y[255], -45.5f);  // ql[127] = 0x66 high 6, qh[63] = 40 bits 6-7 = 0 -> -26; scale 7
}

// ------------------------------------------------------------------ Q8_K
// Layout: float d @0, int8 qs[256] @4, int16 bsums[16] @260 (ignored here).

TEST(DequantBlocks, Q8_K) {
  std::vector<uint8_t> b(292, 0);
  const float d = 0.125f;
  std::memcpy(&b[0], &d, 4);
  auto q_of = [](int j) { return (j * 7) % 200 - 100; };
  for (int j = 0; j < 256; ++j) b[4 + j] = static_cast<uint8_t>(static_cast<int8_t>(q_of(j)));
  b[4] = 0x80;    // -128
  b[259] = 0x7F;  // 127
  const auto y = dequant(TensorType::Q8_K, b, 256);
  for (int j = 1; j < 255; ++j) EXPECT_EQ(y[j], 0.125f * static_cast<float>(q_of(j))) << j;
  EXPECT_EQ(y[0], -16.0f);
  EXPECT_EQ(y[255], 15.875f);
}

// ------------------------------------------------------------- F16 / BF16

TEST(DequantBlocks, F16AndBF16Rows) {
  std::vector<uint8_t> h(6);
  put16(h, 0, 0x3C00);
  put16(h, 2, 0xC000);
  put16(h, 4, 0x0001);
  const auto yh = dequant(TensorType::F16, h, 3);
  EXPECT_EQ(yh[0], 1.0f);
  EXPECT_EQ(yh[1], -2.0f);
  EXPECT_EQ(yh[2], 5.9604644775390625e-8f);

  std::vector<uint8_t> bf(4);
  put16(bf, 0, 0x3F80);
  put16(bf, 2, 0xC040);
  const auto yb = dequant(TensorType::BF16, bf, 2);
  EXPECT_EQ(yb[0], 1.0f);
  EXPECT_EQ(yb[1], -3.0f);
}

}  // namespace
}  // namespace kazeia
