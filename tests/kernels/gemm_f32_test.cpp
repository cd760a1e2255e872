// gemm_f32_acc (the attention tiles' products): every kernel table equals
// the reference bit for bit over odd shapes, leading dimensions larger than
// the rows and misaligned starts, and the reference itself is checked
// against a closed form (exact small integers) and a double-precision sum.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/kernel_test_util.h"
#include "kernels/ref/vec_dot.h"

namespace kazeia::kernels {
namespace {

// Inputs in [-2, 2).
std::vector<float> gemm_input(size_t n, uint32_t seed) { return testing::random_floats(n, seed, -2.0f, 2.0f); }

TEST(GemmF32, ReferenceIsExactOnSmallIntegers) {
  // Integer products and sums below 2^24 are exact in float: the result
  // must be the integer matrix product plus C's initial value.
  const int64_t m = 3, n = 5, k = 7;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (int64_t i = 0; i < m * k; ++i) a[i] = static_cast<float>(i % 5 - 2);
  for (int64_t i = 0; i < k * n; ++i) b[i] = static_cast<float>(i % 7 - 3);
  for (int64_t i = 0; i < m * n; ++i) c[i] = static_cast<float>(i);
  ref::gemm_f32_acc(m, n, k, a.data(), k, b.data(), n, c.data(), n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t want = i * n + j;
      for (int64_t kk = 0; kk < k; ++kk) want += static_cast<int64_t>(a[i * k + kk]) * static_cast<int64_t>(b[kk * n + j]);
      EXPECT_EQ(c[i * n + j], static_cast<float>(want)) << i << "," << j;
    }
  }
}

TEST(GemmF32, ReferenceMatchesADoubleSum) {
  const int64_t m = 4, n = 9, k = 200;
  const auto a = gemm_input(m * k, 1), b = gemm_input(k * n, 2);
  std::vector<float> c(m * n, 0.0f);
  ref::gemm_f32_acc(m, n, k, a.data(), k, b.data(), n, c.data(), n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0.0, mag = 0.0;
      for (int64_t kk = 0; kk < k; ++kk) {
        want += static_cast<double>(a[i * k + kk]) * b[kk * n + j];
        mag += std::fabs(static_cast<double>(a[i * k + kk]) * b[kk * n + j]);
      }
      EXPECT_NEAR(c[i * n + j], want, 1e-6 * mag) << i << "," << j;
    }
  }
}

TEST(GemmF32, EveryTableEqualsTheReferenceBitForBit) {
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->gemm_f32_acc, nullptr) << table->name;
    for (int64_t m : {1, 2, 5, 6, 7, 13, 64}) {
      for (int64_t n : {1, 3, 12, 16, 17, 27, 33, 64, 65, 128, 130, 273}) {
        for (int64_t k : {1, 4, 31, 128}) {
          for (size_t offset : {size_t{0}, size_t{1}}) {  // misaligned starts
            const size_t lda = static_cast<size_t>(k) + 3, ldb = static_cast<size_t>(n) + 5,
                         ldc = static_cast<size_t>(n) + 2;
            const auto a = gemm_input(offset + m * lda, static_cast<uint32_t>(m * 7 + k));
            const auto b = gemm_input(offset + k * ldb, static_cast<uint32_t>(n * 11 + k));
            const auto c0 = gemm_input(offset + m * ldc, static_cast<uint32_t>(m + n));
            std::vector<float> want = c0, got = c0;
            ref::gemm_f32_acc(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, want.data() + offset, ldc);
            table->gemm_f32_acc(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, got.data() + offset, ldc);
            // Bitwise, including the padding between rows (must stay untouched).
            ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
                << table->name << " m=" << m << " n=" << n << " k=" << k << " offset=" << offset;
          }
        }
      }
    }
  }
}

// gemm_f32 (C = A * B): the reference is gemm_f32_acc onto zeros; every
// table equals it bit for bit over the same shapes, whatever C held before,
// and leaves the padding between rows alone.
TEST(GemmF32, OverwriteEqualsAccumulateOntoZerosInEveryTable) {
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->gemm_f32, nullptr) << table->name;
    for (int64_t m : {1, 2, 5, 6, 7, 13}) {
      for (int64_t n : {1, 16, 17, 65, 130}) {
        for (int64_t k : {0, 1, 31, 128}) {  // k = 0: C becomes zeros
          for (size_t offset : {size_t{0}, size_t{1}}) {
            const size_t lda = static_cast<size_t>(k) + 3, ldb = static_cast<size_t>(n) + 5,
                         ldc = static_cast<size_t>(n) + 2;
            const auto a = gemm_input(offset + m * lda, static_cast<uint32_t>(m * 5 + k));
            const auto b = gemm_input(offset + k * ldb, static_cast<uint32_t>(n * 3 + k));
            const auto c0 = gemm_input(offset + m * ldc, static_cast<uint32_t>(m + 2 * n));  // stale contents
            std::vector<float> zeros = c0, want = c0, got = c0;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) zeros[offset + static_cast<size_t>(i) * ldc + static_cast<size_t>(j)] = 0.0f;
            ref::gemm_f32_acc(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, zeros.data() + offset, ldc);
            ref::gemm_f32(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, want.data() + offset, ldc);
            ASSERT_EQ(0, std::memcmp(zeros.data(), want.data(), want.size() * sizeof(float)))
                << "reference, m=" << m << " n=" << n << " k=" << k;
            table->gemm_f32(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, got.data() + offset, ldc);
            ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
                << table->name << " m=" << m << " n=" << n << " k=" << k << " offset=" << offset;
          }
        }
      }
    }
  }
}

// gemm_f32_f16b(_acc) (attention over the f16 KV cache): B in half, the
// same bits as converting B to float first and taking the float product,
// in the reference and in every table, over odd shapes and misaligned
// starts. B holds subnormal halves too (exact in float).
TEST(GemmF32, HalfBEqualsConvertThenFloatProductInEveryTable) {
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->gemm_f32_f16b_acc, nullptr) << table->name;
    ASSERT_NE(table->gemm_f32_f16b, nullptr) << table->name;
    for (int64_t m : {1, 2, 5, 6, 7, 13}) {
      for (int64_t n : {1, 3, 12, 16, 17, 27, 33, 64, 65, 130}) {
        for (int64_t k : {0, 1, 4, 31, 128}) {
          for (size_t offset : {size_t{0}, size_t{1}}) {
            const size_t lda = static_cast<size_t>(k) + 3, ldb = static_cast<size_t>(n) + 5,
                         ldc = static_cast<size_t>(n) + 2;
            const auto a = gemm_input(offset + m * lda, static_cast<uint32_t>(m * 7 + k));
            auto bf = gemm_input(offset + k * ldb, static_cast<uint32_t>(n * 11 + k));
            for (size_t i = 0; i < bf.size(); i += 7) bf[i] *= 1e-6f;  // subnormal in half
            std::vector<uint16_t> bh(bf.size());
            ref::fp32_to_fp16_row(bf.data(), static_cast<int64_t>(bf.size()), bh.data());
            std::vector<float> b(bh.size());  // B as the product sees it
            ref::fp16_to_fp32_row(bh.data(), static_cast<int64_t>(bh.size()), b.data());
            const auto c0 = gemm_input(offset + m * ldc, static_cast<uint32_t>(m + n));
            for (bool acc : {true, false}) {
              std::vector<float> want = c0, ref_c = c0, got = c0;
              if (acc) {
                ref::gemm_f32_acc(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, want.data() + offset, ldc);
                ref::gemm_f32_f16b_acc(m, n, k, a.data() + offset, lda, bh.data() + offset, ldb, ref_c.data() + offset, ldc);
                if (k > 0)  // (a k = 0 call never reaches a table: nothing to add)
                  table->gemm_f32_f16b_acc(m, n, k, a.data() + offset, lda, bh.data() + offset, ldb, got.data() + offset, ldc);
              } else {
                ref::gemm_f32(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, want.data() + offset, ldc);
                ref::gemm_f32_f16b(m, n, k, a.data() + offset, lda, bh.data() + offset, ldb, ref_c.data() + offset, ldc);
                table->gemm_f32_f16b(m, n, k, a.data() + offset, lda, bh.data() + offset, ldb, got.data() + offset, ldc);
              }
              ASSERT_EQ(0, std::memcmp(want.data(), ref_c.data(), want.size() * sizeof(float)))
                  << "reference, acc=" << acc << " m=" << m << " n=" << n << " k=" << k << " offset=" << offset;
              ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
                  << table->name << " acc=" << acc << " m=" << m << " n=" << n << " k=" << k << " offset=" << offset;
            }
          }
        }
      }
    }
  }
}

// A partial column tile reads nothing past its last column: B's last row
// ends where an inaccessible page begins (a read past it is a SIGSEGV), for
// every tail width 1..15 in float and in half, in every table.
TEST(GemmF32, TailColumnsReadNothingPastTheMatrix) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(0, mprotect(static_cast<char*>(map) + page, page, PROT_NONE));
  char* const end = static_cast<char*>(map) + page;
  const int64_t m = 1, k = 3;
  for (const KernelTable* table : available_kernel_tables()) {
    for (int64_t n = 1; n < 16; ++n) {
      const auto a = gemm_input(static_cast<size_t>(k), static_cast<uint32_t>(n));
      const auto bf = gemm_input(static_cast<size_t>(k * n), static_cast<uint32_t>(n + 100));
      std::vector<uint16_t> bh_vec(bf.size());
      ref::fp32_to_fp16_row(bf.data(), static_cast<int64_t>(bf.size()), bh_vec.data());
      // B (k x n, ld n) as the last bytes before the guard page.
      auto* b = reinterpret_cast<float*>(end - bf.size() * sizeof(float));
      std::memcpy(b, bf.data(), bf.size() * sizeof(float));
      std::vector<float> want(static_cast<size_t>(n)), got(want.size());
      ref::gemm_f32(m, n, k, a.data(), k, b, n, want.data(), n);
      table->gemm_f32(m, n, k, a.data(), k, b, n, got.data(), n);
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float))) << table->name << " n=" << n;
      auto* bh = reinterpret_cast<uint16_t*>(end - bh_vec.size() * sizeof(uint16_t));
      std::memcpy(bh, bh_vec.data(), bh_vec.size() * sizeof(uint16_t));
      ref::gemm_f32_f16b(m, n, k, a.data(), k, bh, n, want.data(), n);
      table->gemm_f32_f16b(m, n, k, a.data(), k, bh, n, got.data(), n);
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float))) << table->name << " half n=" << n;
    }
  }
  munmap(map, 2 * page);
}

// gemm_f32_scaled_acc (the delta rule's state update): the reference equals
// scaling C, gemm_f32_acc and abs_range over the result; every table equals
// the reference bit for bit, range included, over odd shapes, misaligned
// starts, a zero scale and a NaN in C.
TEST(GemmF32, ScaledAccumulateEqualsScaleThenAccumulateInEveryTable) {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  for (const KernelTable* table : available_kernel_tables()) {
    ASSERT_NE(table->gemm_f32_scaled_acc, nullptr) << table->name;
    for (int64_t m : {1, 2, 5, 6, 7, 13, 128}) {
      for (int64_t n : {1, 16, 17, 65, 128, 130}) {
        for (int64_t k : {0, 1, 16, 31}) {
          for (float scale : {0.75f, 0.0f, 1.0f}) {
            for (bool nan : {false, true}) {
              const size_t offset = (m + n) % 2;  // misaligned half the time
              const size_t lda = static_cast<size_t>(k) + 3, ldb = static_cast<size_t>(n) + 5,
                           ldc = static_cast<size_t>(n) + 2;
              const auto a = gemm_input(offset + m * lda, static_cast<uint32_t>(m * 5 + k));
              const auto b = gemm_input(offset + k * ldb, static_cast<uint32_t>(n * 3 + k));
              auto c0 = gemm_input(offset + m * ldc, static_cast<uint32_t>(m + 2 * n));
              if (nan) c0[offset + static_cast<size_t>((m - 1) * ldc + n / 2)] = NAN;
              // The definition: scale, accumulate, then the range row by row.
              std::vector<float> want = c0;
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) want[offset + static_cast<size_t>(i) * ldc + static_cast<size_t>(j)] *= scale;
              ref::gemm_f32_acc(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, want.data() + offset, ldc);
              uint32_t want_lo = 0x7fffffffu, want_hi = 0;
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  const uint32_t v = bits(want[offset + static_cast<size_t>(i) * ldc + static_cast<size_t>(j)]) & 0x7fffffffu;
                  want_lo = std::min(want_lo, v), want_hi = std::max(want_hi, v);
                }
              if (nan) {
                EXPECT_GT(want_hi, 0x7f800000u);  // a NaN ranks above infinity
              }
              std::vector<float> ref_c = c0, got = c0;
              float ref_lo, ref_hi, got_lo, got_hi;
              ref::gemm_f32_scaled_acc(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, ref_c.data() + offset,
                                       ldc, scale, &ref_lo, &ref_hi);
              ASSERT_EQ(0, std::memcmp(want.data(), ref_c.data(), want.size() * sizeof(float)))
                  << "reference, m=" << m << " n=" << n << " k=" << k;
              ASSERT_EQ(bits(ref_lo), want_lo) << "reference, m=" << m << " n=" << n << " k=" << k;
              ASSERT_EQ(bits(ref_hi), want_hi) << "reference, m=" << m << " n=" << n << " k=" << k;
              table->gemm_f32_scaled_acc(m, n, k, a.data() + offset, lda, b.data() + offset, ldb, got.data() + offset,
                                         ldc, scale, &got_lo, &got_hi);
              ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
                  << table->name << " m=" << m << " n=" << n << " k=" << k << " scale=" << scale << " nan=" << nan;
              ASSERT_EQ(bits(got_lo), want_lo) << table->name << " m=" << m << " n=" << n << " k=" << k;
              ASSERT_EQ(bits(got_hi), want_hi) << table->name << " m=" << m << " n=" << n << " k=" << k;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kazeia::kernels
