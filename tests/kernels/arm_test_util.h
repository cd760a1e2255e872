// Helpers for the ARM kernel tests (arm_*_test.cpp): the levels this run
// may use, byte buffers at chosen misalignments, and blocks built with
// power-of-two scales so that every float operation of a dot product is
// exact (then any correct kernel, in any summation order, must return the
// very same float as the reference: a bit-for-bit check of the integer part).
#pragma once

#if defined(__aarch64__)

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "format/tensor_types.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace kazeia::kernels::arm_testing {

inline const CpuLevel kArmLevels[] = {CpuLevel::kNeon, CpuLevel::kDotprod, CpuLevel::kI8mm};

inline std::string level_name(CpuLevel level) { return cpu_level_name(level); }

// Why the current run may not use `level` (empty when it may): the hardware
// (qemu -cpu) lacks it or KAZEIA_CPU_LEVEL asks for less. Tests skip with it.
inline std::string level_unavailable(CpuLevel level) {
  if (cpu_level() >= level) return {};
  return std::string("CPU level ") + cpu_level_name(level) + " not available (running at " +
         cpu_level_name(cpu_level()) + ")";
}

// `bytes` copied to a fresh buffer at address % 64 == offset, so a kernel
// sees the alignment the test chooses (weight rows from a mapped file can
// start anywhere).
class OffsetBuffer {
 public:
  OffsetBuffer(const std::vector<uint8_t>& bytes, size_t offset)
      : storage_(bytes.size() + 128), offset_(offset) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    start_ = (64 - base % 64) % 64 + offset_;
    if (!bytes.empty()) std::memcpy(storage_.data() + start_, bytes.data(), bytes.size());
  }
  uint8_t* data() { return storage_.data() + start_; }

 private:
  std::vector<uint8_t> storage_;
  size_t offset_;
  size_t start_;
};

template <typename T>
void store(std::vector<uint8_t>& bytes, size_t at, const T& v) {
  std::memcpy(bytes.data() + at, &v, sizeof(T));
}

inline uint16_t half_pow2(int e) { return fp32_to_fp16(std::ldexp(1.0f, e)); }

// Random bytes (every bit pattern of the quant fields is a valid block).
inline void fill_random(std::vector<uint8_t>& bytes, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : bytes) b = static_cast<uint8_t>(byte(rng));
}

// A row of nb weight blocks of `type` with random quants (and, for the
// K-quants, random 6-bit / 8-bit sub-block scales and mins), and every fp16
// scale (and Q4_1 / Q5_1 offset m) set to 2^-3: products and sums of the dot
// product are then exact in float. Q6_K sub-block scales are kept in
// [-32, 31] so the largest partial sums stay well inside float's 24-bit
// integer range.
inline bool is_k_quant(TensorType type) {
  return type == TensorType::Q2_K || type == TensorType::Q3_K || type == TensorType::Q4_K ||
         type == TensorType::Q5_K || type == TensorType::Q6_K;
}
// Q4_1 / Q5_1 take Q8_1 activations (with s = d * sum(q)).
inline bool takes_q8_1(TensorType type) { return type == TensorType::Q4_1 || type == TensorType::Q5_1; }

inline std::vector<uint8_t> exact_weight_row(TensorType type, int64_t nb, uint32_t seed) {
  std::mt19937 rng(seed);
  const bool k_quant = is_k_quant(type);
  const size_t block = type_row_bytes(type, k_quant ? kQK_K : kQK);
  std::vector<uint8_t> row(block * static_cast<size_t>(nb));
  fill_random(row, rng);
  const uint16_t d = half_pow2(-3);
  for (int64_t ib = 0; ib < nb; ++ib) {
    const size_t at = block * static_cast<size_t>(ib);
    switch (type) {
      case TensorType::Q4_0: store(row, at + offsetof(BlockQ4_0, d), d); break;
      case TensorType::Q8_0: store(row, at + offsetof(BlockQ8_0, d), d); break;
      case TensorType::Q5_0: store(row, at + offsetof(BlockQ5_0, d), d); break;
      case TensorType::Q4_1:
      case TensorType::Q5_1:
      case TensorType::Q4_K:
      case TensorType::Q5_K:
        // d, then m (Q4_1 / Q5_1) or dmin (K): the first two fields.
        static_assert(offsetof(BlockQ4_1, m) == 2 && offsetof(BlockQ5_1, m) == 2);
        static_assert(offsetof(BlockQ4_K, dmin) == 2 && offsetof(BlockQ5_K, dmin) == 2);
        store(row, at, d);
        store(row, at + 2, d);
        break;
      case TensorType::Q2_K:
        store(row, at + offsetof(BlockQ2_K, d), d);
        store(row, at + offsetof(BlockQ2_K, dmin), d);
        break;
      case TensorType::Q3_K: store(row, at + offsetof(BlockQ3_K, d), d); break;
      case TensorType::Q6_K:
        for (int s = 0; s < 16; ++s) {
          const int scale = static_cast<int>(rng() % 64) - 32;
          row[at + offsetof(BlockQ6_K, scales) + s] = static_cast<uint8_t>(scale);
        }
        store(row, at + offsetof(BlockQ6_K, d), d);
        break;
      default: ADD_FAILURE() << "exact_weight_row: no recipe for " << tensor_type_name(type);
    }
  }
  return row;
}

// An activation row for `type`'s vec-dot type (Q8_0, Q8_1 or Q8_K) with
// random quants over the full int8 range (-128 included) and d = 2^-5; Q8_K
// bsums are filled consistently, and Q8_1's s = d * sum(q), exact in fp16
// while |sum(q)| <= 2048 (a block past that is drawn again).
inline std::vector<uint8_t> exact_activation_row(TensorType weight_type, int64_t nb,
                                                 uint32_t seed) {
  std::mt19937 rng(seed);
  const bool k_quant = is_k_quant(weight_type);
  if (takes_q8_1(weight_type)) {
    std::vector<uint8_t> row(sizeof(ref::BlockQ8_1) * static_cast<size_t>(nb));
    std::uniform_int_distribution<int> q(-128, 127);
    for (int64_t ib = 0; ib < nb; ++ib) {
      ref::BlockQ8_1 b;
      int sum = 0;
      do {
        sum = 0;
        for (auto& v : b.qs) sum += v = static_cast<int8_t>(q(rng));
      } while (std::abs(sum) > 2048);
      b.d = half_pow2(-5);
      b.s = fp32_to_fp16(std::ldexp(static_cast<float>(sum), -5));
      std::memcpy(row.data() + sizeof(b) * static_cast<size_t>(ib), &b, sizeof(b));
    }
    return row;
  }
  if (!k_quant) {
    std::vector<uint8_t> row(sizeof(BlockQ8_0) * static_cast<size_t>(nb));
    fill_random(row, rng);
    for (int64_t ib = 0; ib < nb; ++ib) store(row, sizeof(BlockQ8_0) * ib, half_pow2(-5));
    return row;
  }
  std::vector<uint8_t> row(sizeof(BlockQ8_K) * static_cast<size_t>(nb));
  fill_random(row, rng);
  for (int64_t ib = 0; ib < nb; ++ib) {
    BlockQ8_K b;
    std::memcpy(&b, row.data() + sizeof(BlockQ8_K) * ib, sizeof(b));
    b.d = std::ldexp(1.0f, -5);
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += b.qs[16 * g + i];
      b.bsums[g] = static_cast<int16_t>(sum);
    }
    std::memcpy(row.data() + sizeof(BlockQ8_K) * ib, &b, sizeof(b));
  }
  return row;
}

// The exact value of such a dot product: dequantize both rows (exact for
// these scales) and sum in double (exact: few significant bits).
inline double exact_dot(TensorType type, const uint8_t* w, const uint8_t* x, int64_t n) {
  std::vector<float> wf(static_cast<size_t>(n));
  std::vector<float> xf(static_cast<size_t>(n));
  // Q8_1's values are d * q (s only carries the weights' offsets).
  const TensorType x_type = is_k_quant(type) ? TensorType::Q8_K : TensorType::Q8_0;
  std::vector<uint8_t> x_q8_0;
  if (takes_q8_1(type)) {
    for (int64_t ib = 0; ib < n / kQK; ++ib) {
      ref::BlockQ8_1 b;
      std::memcpy(&b, x + sizeof(b) * static_cast<size_t>(ib), sizeof(b));
      BlockQ8_0 c;
      c.d = b.d;
      std::memcpy(c.qs, b.qs, sizeof(c.qs));
      const auto* bytes = reinterpret_cast<const uint8_t*>(&c);
      x_q8_0.insert(x_q8_0.end(), bytes, bytes + sizeof(c));
    }
    x = x_q8_0.data();
  }
  EXPECT_TRUE(dequantize_row(type, w, wf.data(), n).ok());
  EXPECT_TRUE(dequantize_row(x_type, x, xf.data(), n).ok());
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(wf[i]) * xf[i];
  return sum;
}

}  // namespace kazeia::kernels::arm_testing

#endif  // __aarch64__
