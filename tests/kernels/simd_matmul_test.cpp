// Every kernel table this CPU can run (dispatch.h: scalar, avx2, avx2+vnni,
// avx512, ...) against the scalar reference, in one process.
//
// What must hold (dispatch.h):
//  - F32, F16, BF16 and the 32-element formats: bit-identical to
//    ref::vec_dot_* for every (row, token);
//  - K-quants: within 1e-5 of sum |w_i x_i| (the integer super-block sums
//    are exact, the float combination has its own order);
//  - the result does not depend on the thread count, on how many tokens are
//    batched, or on the alignment of weights and activations;
//  - the activation quantizers write the reference's bytes.
// Shapes cover lengths that are and are not multiples of the block, of the
// 8-block stream groups and of the 8 / 16-row strips and token tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "base/scratch.h"
#include "base/thread_pool.h"
#include "common/scoped_env.h"
#include "kernel_test_util.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/quant.h"

namespace kazeia::kernels {
namespace {

using testing::random_activations;
using testing::type_name;

const TensorType kTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
};

// The tables to run a weight type's matmul on: the scalar table, and every
// other table with kernels of its own for the type. The emulated AVX-512
// table of the sanitizer build (KAZEIA_EMULATE_AVX512=PARTIAL) keeps the
// references' slots for all but its token tiles' types; running those again
// under ASan took a minute.
std::vector<const KernelTable*> tables_for(TensorType type) {
  const KernelTable* scalar = kernel_table(CpuLevel::kScalar);
  const auto kernels_of = [type](const KernelTable& t) {
    const WeightKernels& w = t.weights[static_cast<int>(type)];
    return std::tuple(w.dot, w.strip, w.tile_strip, t.quantize_q8_0, t.quantize_q8_1, t.quantize_q8_K);
  };
  std::vector<const KernelTable*> out;
  for (const KernelTable* table : available_kernel_tables()) {
    if (table == scalar || kernels_of(*table) != kernels_of(*scalar)) out.push_back(table);
  }
  return out;
}

bool is_k_quant(TensorType t) { return tensor_type_traits(t).block_size == 256; }

// Row lengths to try for a type: one block, several, not a multiple of the
// 8-block groups (32-element formats), several groups.
std::vector<int64_t> lengths(TensorType t) {
  switch (tensor_type_traits(t).block_size) {
    case 1: return {1, 15, 16, 17, 100, 257};
    case 32: return {32, 96, 224, 256, 288, 768};
    default: return {256, 512, 768, 1024};  // 768: a tile panel chunk of 2 super-blocks, then 1
  }
}

// A matrix of `type` placed `offset` bytes past a 64-byte boundary.
struct Weights {
  std::vector<uint8_t> storage;
  const uint8_t* data = nullptr;
  size_t row_bytes = 0;
  MatrixView view(TensorType type, int64_t n_in, int64_t n_out) const {
    return MatrixView{type, data, n_in, n_out, row_bytes};
  }
};

// The n_out rows of src (n_in floats each), quantized.
Weights weights_from(TensorType type, const std::vector<float>& src, int64_t n_in, int64_t n_out, size_t offset) {
  Weights w;
  w.row_bytes = type_row_bytes(type, n_in);
  w.storage.resize(w.row_bytes * static_cast<size_t>(n_out) + 128);
  uint8_t* base = w.storage.data() + (64 - reinterpret_cast<uintptr_t>(w.storage.data()) % 64) % 64;
  w.data = base + offset;
  for (int64_t r = 0; r < n_out; ++r) {
    Status st = quantize_row(type, src.data() + r * n_in, base + offset + r * w.row_bytes, n_in);
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  return w;
}

Weights make_weights(TensorType type, int64_t n_in, int64_t n_out, uint32_t seed, size_t offset) {
  return weights_from(type, testing::random_floats(static_cast<size_t>(n_in * n_out), seed), n_in, n_out, offset);
}

// The reference: activations by quantize_activations, one ref dot per
// (row, token); plus sum |w_i x_i| per output, from the dequantized values.
struct Reference {
  std::vector<float> y;
  std::vector<double> magnitude;
};

Reference reference(TensorType type, const Weights& w, int64_t n_in, int64_t n_out,
                    const std::vector<float>& x, int64_t n_tokens) {
  Reference ref;
  ref.y.resize(static_cast<size_t>(n_out * n_tokens));
  ref.magnitude.resize(ref.y.size());
  const TensorType vdt = vec_dot_type(type);
  const size_t act_row = vdt == TensorType::F32 ? n_in * 4 : activation_row_bytes(vdt, n_in);
  std::vector<uint8_t> act(act_row);
  std::vector<float> wf(static_cast<size_t>(n_in));
  const ref::VecDotFn dot = ref::vec_dot_fn(type);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xt = x.data() + t * n_in;
    if (vdt == TensorType::F32) {
      std::memcpy(act.data(), xt, act_row);
    } else {
      EXPECT_TRUE(quantize_activations(vdt, xt, n_in, act.data()).ok());
    }
    const std::vector<double> xq = vdt == TensorType::F32 ? std::vector<double>(xt, xt + n_in)
                                                          : testing::decode_activation(vdt, act.data(), n_in);
    for (int64_t r = 0; r < n_out; ++r) {
      const uint8_t* row = w.data + r * w.row_bytes;
      ref.y[static_cast<size_t>(t * n_out + r)] = dot(n_in, row, act.data());
      EXPECT_TRUE(dequantize_row(type, row, wf.data(), n_in).ok());
      double mag = 0;
      for (int64_t i = 0; i < n_in; ++i) mag += std::fabs(wf[static_cast<size_t>(i)] * xq[static_cast<size_t>(i)]);
      ref.magnitude[static_cast<size_t>(t * n_out + r)] = mag;
    }
  }
  return ref;
}

// got vs the reference: bit-identical, or (K-quants) within 1e-5 of the
// magnitude.
void expect_matches(TensorType type, const Reference& ref, const std::vector<float>& got, int64_t n_out,
                    const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (is_k_quant(type)) {
      EXPECT_LE(std::fabs(static_cast<double>(got[i]) - ref.y[i]), 1e-5 * ref.magnitude[i] + 1e-30)
          << what << " row " << i % n_out << " token " << i / n_out;
    } else {
      EXPECT_EQ(got[i], ref.y[i]) << what << " row " << i % n_out << " token " << i / n_out;
    }
    if (::testing::Test::HasFailure()) return;  // one report per case is enough
  }
}

class SimdTables : public ::testing::TestWithParam<TensorType> {};

TEST_P(SimdTables, MatmulAgreesWithTheReference) {
  const TensorType type = GetParam();
  uint32_t seed = 100;
  for (const KernelTable* table : tables_for(type)) {
    for (int64_t n_in : lengths(type)) {
      for (int64_t n_out : {1, 5, 16, 17, 37}) {
        // 1-4: decode batches (the AVX2 Q4_0 / Q8_0 row kernels take each,
        // 5 and 9 as groups of 4); 9: the rows-in-lanes panel tiles (8 + 1);
        // the AVX-512 token tiles start above 9 (AMX above 4), AVX2's
        // above 14 / 15: 19; AVX2 takes a tiled batch's last 1-8 tokens
        // on the row kernels (19: 16 + 3), more in a padded group (29).
        for (int64_t n_tokens : {1, 2, 3, 4, 5, 9, 19, 29}) {
          ++seed;
          const size_t offset = seed % 64;
          const Weights w = make_weights(type, n_in, n_out, seed, offset);
          const auto x = random_activations(static_cast<size_t>(n_in * n_tokens), seed + 7);
          const Reference ref = reference(type, w, n_in, n_out, x, n_tokens);
          std::vector<float> y(ref.y.size(), NAN);
          ASSERT_TRUE(matmul_with(*table, w.view(type, n_in, n_out), x.data(), n_tokens, y.data()).ok());
          expect_matches(type, ref, y, n_out,
                         std::string(table->name) + " " + type_name(type) + " n_in=" + std::to_string(n_in) +
                             " n_out=" + std::to_string(n_out) + " tokens=" + std::to_string(n_tokens) +
                             " offset=" + std::to_string(offset));
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Rows longer than the token tiles' chunk of 32 blocks (prefill strips
// that unpack a long row in pieces): 72 blocks (2 x 32 + 8, a whole number
// of 8-block groups) and 75 (an odd last piece), batches that tile (19 =
// 16 + 3) and a decode token.
TEST_P(SimdTables, LongRowsAgreeWithTheReference) {
  const TensorType type = GetParam();
  const int64_t block = tensor_type_traits(type).block_size;
  const std::vector<int64_t> row_lengths = block == 32 ? std::vector<int64_t>{2304, 2400} : std::vector<int64_t>{10 * 256};
  uint32_t seed = 900;
  for (const KernelTable* table : tables_for(type)) {
    for (int64_t n_in : row_lengths) {
      for (int64_t n_tokens : {1, 19}) {
        ++seed;
        const Weights w = make_weights(type, n_in, 21, seed, seed % 64);
        const auto x = random_activations(static_cast<size_t>(n_in * n_tokens), seed + 3);
        const Reference ref = reference(type, w, n_in, 21, x, n_tokens);
        std::vector<float> y(ref.y.size(), NAN);
        ASSERT_TRUE(matmul_with(*table, w.view(type, n_in, 21), x.data(), n_tokens, y.data()).ok());
        expect_matches(type, ref, y, 21,
                       std::string(table->name) + " " + type_name(type) + " n_in=" + std::to_string(n_in) +
                           " tokens=" + std::to_string(n_tokens));
        if (HasFailure()) return;
      }
    }
  }
}

// The int16 sums of the AVX2 kernels (vpmaddubsw pairs, then several
// words before widening) are exact only by their bounds: largest quants
// against the largest activations, all of one sign, meet them. Rows of
// +-1 with one -+1 per 32 (the formats with a min put it at 0 and every
// other quant at its top), tokens of all +1 or all -1 (Q8 +-127); decode
// batches, the row kernels' groups and the token tiles (20: Q6_K's, 40:
// Q4_K's and Q4_0's).
TEST_P(SimdTables, LargestQuantsAgreeWithTheReference) {
  const TensorType type = GetParam();
  const int64_t n_in = 512, n_out = 20;
  std::vector<float> src(static_cast<size_t>(n_in * n_out));
  for (int64_t r = 0; r < n_out; ++r)
    for (int64_t i = 0; i < n_in; ++i) src[static_cast<size_t>(r * n_in + i)] = ((r % 2 == 0) == (i % 32 != 0)) ? 1.0f : -1.0f;
  const Weights w = weights_from(type, src, n_in, n_out, 0);
  for (int64_t n_tokens : {1, 4, 20, 40}) {
    std::vector<float> x(static_cast<size_t>(n_in * n_tokens));
    for (int64_t t = 0; t < n_tokens; ++t)
      std::fill_n(x.begin() + t * n_in, n_in, t % 2 == 0 ? 1.0f : -1.0f);
    const Reference ref = reference(type, w, n_in, n_out, x, n_tokens);
    for (const KernelTable* table : tables_for(type)) {
      std::vector<float> y(ref.y.size(), NAN);
      ASSERT_TRUE(matmul_with(*table, w.view(type, n_in, n_out), x.data(), n_tokens, y.data()).ok());
      expect_matches(type, ref, y, n_out, std::string(table->name) + " " + type_name(type) + " tokens=" + std::to_string(n_tokens));
      if (HasFailure()) return;
    }
  }
}

TEST_P(SimdTables, ResultIndependentOfThreadsAndBatching) {
  const TensorType type = GetParam();
  const int64_t n_in = is_k_quant(type) ? 512 : (tensor_type_traits(type).block_size == 1 ? 300 : 512);
  const int64_t n_out = 83, n_tokens = 37;  // several strips; tiles of 16 / 8 / 4 plus rests
  const Weights w = make_weights(type, n_in, n_out, 5, 3);
  const auto x = random_activations(static_cast<size_t>(n_in * n_tokens), 6);
  ThreadPool pool(2);
  for (const KernelTable* table : tables_for(type)) {
    SCOPED_TRACE(table->name);
    const MatrixView v = w.view(type, n_in, n_out);
    std::vector<float> one(static_cast<size_t>(n_out * n_tokens)), two(one.size());
    ASSERT_TRUE(matmul_with(*table, v, x.data(), n_tokens, one.data(), nullptr).ok());
    ASSERT_TRUE(matmul_with(*table, v, x.data(), n_tokens, two.data(), &pool).ok());
    EXPECT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float)));
    // Token by token (decode) equals the batch (prefill), bit for bit.
    for (int64_t t = 0; t < n_tokens; t += 5) {
      std::vector<float> single(static_cast<size_t>(n_out));
      ASSERT_TRUE(matmul_with(*table, v, x.data() + t * n_in, 1, single.data(), &pool).ok());
      EXPECT_EQ(0, std::memcmp(single.data(), one.data() + t * n_out, single.size() * sizeof(float))) << t;
    }
  }
}

// Streaming stores exist in the x86 SIMD strips only; the big cases below
// cost seconds per table (minutes under the sanitizers and qemu) and test
// nothing where no strip streams.
bool may_stream(const KernelTable& table) {
#if defined(__x86_64__)
  return std::string(table.name) != "scalar";
#else
  (void)table;
  return false;
#endif
}

// Outputs of a MiB and more go out with non-temporal stores where the strip
// can (StripArgs::stream_y: whole 16-row strips into a line-aligned y): the
// values must be the ones the same table writes in small batches (plain
// stores; batch independence is checked above), on the caller's thread and
// across the pool, into an aligned y and one shifted off the line.
TEST_P(SimdTables, LargeOutputsEqualSmallBatches) {
  const TensorType type = GetParam();
  const int64_t n_in = is_k_quant(type) ? 256 : 64;
  const int64_t n_out = 2064, n_tokens = 130;  // 1.07 MB of y; rows of y a whole number of lines
  const Weights w = make_weights(type, n_in, n_out, 11, 0);
  const auto x = random_activations(static_cast<size_t>(n_in * n_tokens), 12);
  const MatrixView v = w.view(type, n_in, n_out);
  ThreadPool pool(2);
  for (const KernelTable* table : tables_for(type)) {
    if (!may_stream(*table)) continue;
    SCOPED_TRACE(table->name);
    std::vector<float> small(static_cast<size_t>(n_out * n_tokens));
    for (int64_t t = 0; t < n_tokens; t += 8) {
      const int64_t n = std::min<int64_t>(8, n_tokens - t);
      ASSERT_TRUE(matmul_with(*table, v, x.data() + t * n_in, n, small.data() + t * n_out, &pool).ok());
    }
    for (size_t shift : {size_t{0}, size_t{4}}) {
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        std::vector<float, CacheLineAllocator<float>> big(small.size() + shift, NAN);
        ASSERT_TRUE(matmul_with(*table, v, x.data(), n_tokens, big.data() + shift, p).ok());
        EXPECT_EQ(0, std::memcmp(big.data() + shift, small.data(), small.size() * sizeof(float)))
            << "shift " << shift << (p != nullptr ? ", 2 threads" : ", 1 thread");
      }
    }
  }
}

// The fused gate / up / swiglu product equals its three steps: both
// matmuls with the same table, then the reference swiglu, bit for bit.
// Batches that fuse (more than 4 tokens; 130 x 2064 outputs also stream)
// and decode's (1 and 3 tokens; 2064 and 1037 rows split into several
// chunks over 2 threads), partial last strips (37 and 1037 rows), 1 and 2
// threads.
TEST_P(SimdTables, MatmulSwigluEqualsItsSteps) {
  const TensorType type = GetParam();
  const int64_t n_in = is_k_quant(type) ? 256 : 64;
  ThreadPool pool(2);
  uint32_t seed = 40;
  for (const KernelTable* table : tables_for(type)) {
    SCOPED_TRACE(table->name);
    for (const auto& [n_out, n_tokens] : {std::pair<int64_t, int64_t>{37, 1}, {37, 3}, {37, 19}, {37, 29}, {2064, 130}, {2064, 1}, {1037, 3}}) {
      ++seed;
      if (n_out * n_tokens > 100000 && !may_stream(*table)) continue;
      const Weights wg = make_weights(type, n_in, n_out, seed, 0), wu = make_weights(type, n_in, n_out, seed + 50, 0);
      const MatrixView g = wg.view(type, n_in, n_out), u = wu.view(type, n_in, n_out);
      const auto x = random_activations(static_cast<size_t>(n_in * n_tokens), seed + 9);
      const size_t n = static_cast<size_t>(n_out * n_tokens);
      std::vector<float> yg(n), yu(n), want(n);
      ASSERT_TRUE(matmul_with(*table, g, x.data(), n_tokens, yg.data()).ok());
      ASSERT_TRUE(matmul_with(*table, u, x.data(), n_tokens, yu.data()).ok());
      ref::swiglu_approx(yg.data(), yu.data(), static_cast<int64_t>(n), want.data());
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        std::vector<float, CacheLineAllocator<float>> got(n, NAN);
        ASSERT_TRUE(matmul_swiglu_with(*table, g, u, x.data(), n_tokens, got.data(), p).ok());
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), n * sizeof(float)))
            << type_name(type) << " n_out=" << n_out << " tokens=" << n_tokens << (p != nullptr ? " 2 threads" : "");
      }
    }
  }
}

// Quants at the ends of their ranges, where integer sums are largest: the
// kernels may sum in narrow integers (without VNNI, words' vpmaddubsw pairs
// are summed in int16) only while the true sum fits. Every quantized format,
// every weight byte one pattern (all nibbles 15, all 0, Q8_0's -128 / 127
// ...) with the block scales set to 1, against activations at +-max (the
// quantizer's 127 / -127), uniform and alternating; decode and prefill.
TEST(SimdTables, ExtremeQuantsMatchTheReference) {
  // Each format with the byte offsets of its fp16 block scales (d, and
  // dmin / m where it has one).
  struct Format {
    TensorType type;
    std::vector<size_t> scales;
  };
  const Format formats[] = {
      {TensorType::Q4_0, {0}},   {TensorType::Q4_1, {0, 2}},  {TensorType::Q5_0, {0}},
      {TensorType::Q5_1, {0, 2}}, {TensorType::Q8_0, {0}},    {TensorType::Q2_K, {80, 82}},
      {TensorType::Q3_K, {108}}, {TensorType::Q4_K, {0, 2}},  {TensorType::Q5_K, {0, 2}},
      {TensorType::Q6_K, {208}},
  };
  const int64_t n_in = 768, n_out = 17;
  for (const auto& [type, scales] : formats) {
    const size_t block_bytes = tensor_type_traits(type).block_bytes;
    for (const uint8_t pattern : {uint8_t{0xFF}, uint8_t{0x00}, uint8_t{0x80}, uint8_t{0x7F}, uint8_t{0x88}}) {
      Weights w;
      w.row_bytes = type_row_bytes(type, n_in);
      w.storage.assign(w.row_bytes * n_out + 64, pattern);
      w.data = w.storage.data() + 1;  // misaligned on purpose
      uint8_t* bytes = const_cast<uint8_t*>(w.data);
      for (size_t b = 0; b < w.row_bytes * n_out / block_bytes; ++b) {
        const uint8_t one[2] = {0x00, 0x3C};  // fp16 1.0
        for (const size_t at : scales) std::memcpy(bytes + b * block_bytes + at, one, 2);
      }
      for (int sign_pattern = 0; sign_pattern < 3; ++sign_pattern) {
        for (const int64_t n_tokens : {1, 2, 5, 19}) {
          std::vector<float> x(static_cast<size_t>(n_in * n_tokens));
          for (size_t i = 0; i < x.size(); ++i) {
            x[i] = sign_pattern == 0 ? 1.0f : sign_pattern == 1 ? -1.0f : (i % 2 == 0 ? 1.0f : -1.0f);
          }
          const Reference ref = reference(type, w, n_in, n_out, x, n_tokens);
          for (const KernelTable* table : tables_for(type)) {
            std::vector<float> y(ref.y.size(), NAN);
            ASSERT_TRUE(matmul_with(*table, w.view(type, n_in, n_out), x.data(), n_tokens, y.data()).ok());
            expect_matches(type, ref, y, n_out,
                           std::string(table->name) + " " + type_name(type) + " pattern=" + std::to_string(pattern) +
                               " signs=" + std::to_string(sign_pattern) + " tokens=" + std::to_string(n_tokens));
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

TEST(MatmulSwiglu, RejectsMismatchedShapes) {
  const Weights wg = make_weights(TensorType::Q8_0, 64, 16, 1, 0), wu = make_weights(TensorType::Q8_0, 64, 17, 2, 0);
  const auto x = random_activations(64 * 8, 3);
  std::vector<float> out(17 * 8);
  const Status st = matmul_swiglu(wg.view(TensorType::Q8_0, 64, 16), wu.view(TensorType::Q8_0, 64, 17), x.data(), 8,
                                  out.data());
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.to_string();
  EXPECT_NE(st.message().find("64 -> 16"), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("64 -> 17"), std::string::npos) << st.to_string();
  // Row lengths too: the activations cannot serve both.
  const Weights wide = make_weights(TensorType::Q8_0, 96, 16, 4, 0);
  const auto x2 = random_activations(96 * 8, 5);
  const Status st2 = matmul_swiglu(wg.view(TensorType::Q8_0, 64, 16), wide.view(TensorType::Q8_0, 96, 16), x2.data(), 8,
                                   out.data());
  EXPECT_EQ(st2.code(), ErrorCode::kInvalidArgument) << st2.to_string();
}

TEST_P(SimdTables, DotAgreesWithTheReferenceAtAnyAlignment) {
  const TensorType type = GetParam();
  const TensorType vdt = vec_dot_type(type);
  for (const KernelTable* table : tables_for(type)) {
    const WeightKernels* k = table->find(type);
    ASSERT_NE(k, nullptr) << table->name;
    for (int64_t n_in : lengths(type)) {
      const Weights w = make_weights(type, n_in, 1, static_cast<uint32_t>(n_in), static_cast<size_t>(n_in % 61));
      const auto x = random_activations(static_cast<size_t>(n_in), 9);
      const Reference ref = reference(type, w, n_in, 1, x, 1);
      const size_t act_bytes = vdt == TensorType::F32 ? n_in * 4 : activation_row_bytes(vdt, n_in);
      std::vector<uint8_t> act(act_bytes + 64);
      // Quantized activation rows are arrays of blocks whose scale is an
      // fp16 (Q8_0, Q8_1) or a float (Q8_K): that alignment is part of their
      // type (matmul's buffers are 64-byte aligned). Float rows may sit anywhere.
      const std::vector<size_t> offsets = vdt == TensorType::F32 ? std::vector<size_t>{0, 1, 13, 63}
                                                                 : std::vector<size_t>{0, 4, 12, 60};
      for (size_t off : offsets) {
        if (vdt == TensorType::F32) {
          std::memcpy(act.data() + off, x.data(), act_bytes);
        } else {
          ASSERT_TRUE(quantize_activations(vdt, x.data(), n_in, act.data() + off).ok());
        }
        const std::vector<float> got = {k->dot(n_in, w.data, act.data() + off)};
        expect_matches(type, ref, got, 1,
                       std::string(table->name) + " dot n_in=" + std::to_string(n_in) + " x offset " + std::to_string(off));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, SimdTables, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return type_name(info.param); });

// --------------------------------------------------------- quantizers

// Inputs meant to hit the corner cases: all-zero blocks, exact rounding
// ties (x * 127 / amax = k + 0.5), a repeated maximum of either sign, tiny
// and huge magnitudes.
std::vector<float> tricky_activations(int64_t n, uint32_t seed) {
  auto x = random_activations(static_cast<size_t>(n), seed);
  std::mt19937 rng(seed);
  for (int64_t b = 0; b * 32 < n; ++b) {
    float* blk = x.data() + b * 32;
    switch (rng() % 6) {
      case 0: std::fill(blk, blk + 32, 0.0f); break;
      case 1:
        for (int j = 0; j < 32; ++j) blk[j] = static_cast<float>(static_cast<int>(rng() % 21) - 10) + 0.5f;
        blk[rng() % 32] = 127;
        break;
      case 2:
        blk[rng() % 32] = -7.5f;
        blk[rng() % 32] = 7.5f;
        break;
      case 3:
        for (int j = 0; j < 32; ++j) blk[j] *= 1e-30f;
        break;
      case 4:
        for (int j = 0; j < 32; ++j) blk[j] *= 1e30f;
        break;
      default: break;
    }
  }
  return x;
}

TEST(SimdQuantizers, BytesIdenticalToTheReference) {
  struct Case {
    TensorType vdt;
    QuantizeActFn KernelTable::*fn;
    void (*ref)(const float*, int64_t, uint8_t*);
  };
  const Case cases[] = {
      {TensorType::Q8_0, &KernelTable::quantize_q8_0, ref::quantize_row_q8_0_act},
      {TensorType::Q8_1, &KernelTable::quantize_q8_1, ref::quantize_row_q8_1_act},
      {TensorType::Q8_K, &KernelTable::quantize_q8_K, ref::quantize_row_q8_K_act},
  };
  for (const KernelTable* table : available_kernel_tables()) {
    for (const Case& c : cases) {
      for (int64_t n : {256, 512, 4096}) {
        for (uint32_t seed = 1; seed <= 20; ++seed) {
          const auto x = tricky_activations(n, seed);
          const size_t bytes = activation_row_bytes(c.vdt, n);
          std::vector<uint8_t> want(bytes), got(bytes + 64, 0xAB);
          c.ref(x.data(), n, want.data());
          const size_t off = seed % 7;  // misaligned output
          (table->*c.fn)(x.data(), n, got.data() + off);
          ASSERT_EQ(0, std::memcmp(want.data(), got.data() + off, bytes))
              << table->name << " " << type_name(c.vdt) << " n=" << n << " seed=" << seed;
        }
      }
    }
  }
}

// ------------------------------------------------------------- dispatch

TEST(Dispatch, TablesAreConsistent) {
  const auto tables = available_kernel_tables();
  ASSERT_FALSE(tables.empty());
  EXPECT_STREQ(tables[0]->name, "scalar");
  EXPECT_NE(kernel_table(CpuLevel::kScalar), nullptr);
  // The active table is one of the available ones and matches cpu_level().
  bool found = false;
  for (const KernelTable* t : tables) found |= t == &active_kernels();
  EXPECT_TRUE(found);
  EXPECT_EQ(active_kernels().level, kernel_table(cpu_level()) ? kernel_table(cpu_level())->level : CpuLevel::kScalar);
  for (const KernelTable* t : tables) {
    for (TensorType type : kTypes) {
      const WeightKernels* k = t->find(type);
      ASSERT_NE(k, nullptr) << t->name << " " << type_name(type);
      EXPECT_NE(k->strip, nullptr);
      EXPECT_GE(k->strip_rows, 1);
      if (k->tile_strip != nullptr) {  // matmul needs all three, and no tile for a decode batch
        EXPECT_NE(k->tile_acts, nullptr) << t->name << " " << type_name(type);
        EXPECT_NE(k->tile_group_bytes, nullptr) << t->name << " " << type_name(type);
        EXPECT_GE(k->tile_above, 4) << t->name << " " << type_name(type);
      }
    }
    EXPECT_EQ(t->find(TensorType::IQ4_NL), nullptr);
    EXPECT_NE(t->quantizer(TensorType::Q8_0), nullptr);
    EXPECT_EQ(t->quantizer(TensorType::Q4_0), nullptr);
  }
}

using kazeia::testing::ScopedEnv;

TEST(Dispatch, DecodeWalkFollowsTheCpuAndTheEnvironment) {
  {
    ScopedEnv walk("KAZEIA_DECODE_WALK", nullptr);
    EXPECT_EQ(default_decode_walk(), DecodeWalk::kLaneStreams);
  }
  {
    ScopedEnv walk("KAZEIA_DECODE_WALK", "strips");
    EXPECT_EQ(default_decode_walk(), DecodeWalk::kPrefetchedStrips);
  }
  {
    ScopedEnv walk("KAZEIA_DECODE_WALK", "lanes");
    EXPECT_EQ(default_decode_walk(), DecodeWalk::kLaneStreams);
  }
  {
    ScopedEnv walk("KAZEIA_DECODE_WALK", "diagonal");  // not a walk: ignored
    EXPECT_EQ(default_decode_walk(), DecodeWalk::kLaneStreams);
  }
  // AMD Zen 4 (family 0x19 with AVX-512) and Zen 5 (0x1A): 1 KiB; Zen 2
  // (0x17), Zen 3 (0x19 without AVX-512) and other CPUs: none.
  EXPECT_EQ(decode_lane_prefetch_for(CpuVendor::kAmd, 0x19, true), 1024u);
  EXPECT_EQ(decode_lane_prefetch_for(CpuVendor::kAmd, 0x1A, false), 1024u);
  EXPECT_EQ(decode_lane_prefetch_for(CpuVendor::kAmd, 0x19, false), 0u);
  EXPECT_EQ(decode_lane_prefetch_for(CpuVendor::kAmd, 0x17, false), 0u);
  EXPECT_EQ(decode_lane_prefetch_for(CpuVendor::kIntel, 6, true), 0u);
  EXPECT_EQ(decode_lane_prefetch_for(CpuVendor::kOther, 0, false), 0u);
  const CpuFeatures& f = cpu_features();
#if defined(__x86_64__)
  EXPECT_GE(f.family, 6u);  // every x86-64 CPU: Intel 6 (or 0xF, 0x13), AMD 0xF and up
#endif
  const size_t by_cpu = decode_lane_prefetch_for(f.vendor, f.family, f.avx512f);
  {
    ScopedEnv ahead("KAZEIA_LANE_PREFETCH", nullptr);
    EXPECT_EQ(default_decode_lane_prefetch(), by_cpu);
  }
  for (const char* bad : {"-1", "12ab", "2000000", "x"}) {
    ScopedEnv ahead("KAZEIA_LANE_PREFETCH", bad);
    EXPECT_EQ(default_decode_lane_prefetch(), by_cpu) << bad;
  }
  {
    ScopedEnv ahead("KAZEIA_LANE_PREFETCH", "0");
    EXPECT_EQ(default_decode_lane_prefetch(), 0u);
  }
  {
    ScopedEnv ahead("KAZEIA_LANE_PREFETCH", "4096");
    EXPECT_EQ(default_decode_lane_prefetch(), 4096u);
  }
  EXPECT_STREQ(decode_walk_name(DecodeWalk::kLaneStreams), "lanes");
  EXPECT_STREQ(decode_walk_name(DecodeWalk::kPrefetchedStrips), "strips");
}

TEST(Dispatch, TableWithSettingsAsTheEnvironmentWouldBuildIt) {
  ScopedEnv walk("KAZEIA_DECODE_WALK", nullptr), ahead("KAZEIA_LANE_PREFETCH", "64");
  auto t = kernel_table_with_settings("KAZEIA_LANE_PREFETCH=512,KAZEIA_DECODE_WALK=strips");
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ((*t)->decode_lane_prefetch, 512u);
  EXPECT_EQ((*t)->decode_walk, DecodeWalk::kPrefetchedStrips);
  EXPECT_STREQ((*t)->name, active_kernels().name);  // the same level
  // The environment is as it was: set, and unset.
  ASSERT_NE(std::getenv("KAZEIA_LANE_PREFETCH"), nullptr);
  EXPECT_STREQ(std::getenv("KAZEIA_LANE_PREFETCH"), "64");
  EXPECT_EQ(std::getenv("KAZEIA_DECODE_WALK"), nullptr);
  // Nothing given: the defaults of this environment (64 bytes ahead here).
  auto plain = kernel_table_with_settings("");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->decode_lane_prefetch, 64u);
  EXPECT_EQ((*plain)->decode_walk, DecodeWalk::kLaneStreams);
  auto scalar = kernel_table_with_settings("KAZEIA_CPU_LEVEL=scalar");
  ASSERT_TRUE(scalar.ok());
  EXPECT_STREQ((*scalar)->name, "scalar");
  for (const char* bad : {"KAZEIA_LANE_PREFETCH", "KAZEIA_BOGUS=1", "KAZEIA_CPU_LEVEL=avx9", "PATH=/"}) {
    auto r = kernel_table_with_settings(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().to_string().find(bad), std::string::npos) << r.status().to_string();
  }
}

// KAZEIA_ROW_KERNELS=0: the AVX2 table's Q4_0 / Q8_0 / Q4_K / Q5_K / Q6_K decode on the
// strip runner instead of the row kernels - other code, the same bits.
TEST(Dispatch, RowKernelsOffGiveTheSameBits) {
  auto off = kernel_table_with_settings("KAZEIA_ROW_KERNELS=0");
  ASSERT_TRUE(off.ok()) << off.status().to_string();
  const KernelTable& on = active_kernels();
  const bool avx2 = std::string(on.name) == "avx2";
  if (!avx2) std::printf("*** active kernels %s: no row kernels to turn off, comparing equal tables ***\n", on.name);
  const TensorType row_kernel_types[] = {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K,
                                         TensorType::Q6_K};
  // Every other slot is the default table's.
  for (int id = 0; id < kMaxTypeId; ++id) {
    if (std::any_of(std::begin(row_kernel_types), std::end(row_kernel_types),
                    [&](TensorType t) { return static_cast<int>(t) == id; }))
      continue;
    EXPECT_EQ((*off)->weights[id].strip, on.weights[id].strip) << "type id " << id;
  }
  for (TensorType type : row_kernel_types) {
    SCOPED_TRACE(tensor_type_name(type));
    if (avx2) {
      EXPECT_NE((*off)->find(type)->strip, on.find(type)->strip);
    }
    // Several units; Q4_0 / Q8_0 also a partial one (800: 25 blocks, LegacyAux rows).
    const std::vector<int64_t> lengths = is_k_quant(type) ? std::vector<int64_t>{768} : std::vector<int64_t>{768, 800};
    // Strips of 8 rows and a last one of 5 / 7 / 1 (rows past it repeat its last).
    for (int64_t n_out : {37, 15, 1})
    for (int64_t n_in : lengths)
    for (int64_t n_tokens : {1, 2, 3, 4, 5, 9, 12}) {  // 1-4: one row kernel call; 5, 9, 12: groups of 4
      const Weights w = make_weights(type, n_in, n_out, 21, 5);
      const auto x = random_activations(static_cast<size_t>(n_in * n_tokens), 22);
      std::vector<float> a(static_cast<size_t>(n_out * n_tokens)), b(a.size());
      ASSERT_TRUE(matmul_with(on, w.view(type, n_in, n_out), x.data(), n_tokens, a.data()).ok());
      ASSERT_TRUE(matmul_with(**off, w.view(type, n_in, n_out), x.data(), n_tokens, b.data()).ok());
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)))
          << n_out << " x " << n_in << ", " << n_tokens << " tokens";
    }
  }
}

TEST(Dispatch, ActiveTableOverrideAndBack) {
  const KernelTable* defaults = &active_kernels();
  auto scalar = kernel_table_with_settings("KAZEIA_CPU_LEVEL=scalar");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(set_active_kernels_override(*scalar), nullptr);
  EXPECT_EQ(&active_kernels(), *scalar);
  // Results do not depend on the table: a product through the override
  // equals the same product through the defaults' table.
  const auto w = testing::make_matrix(TensorType::Q4_0, 256, 40, 7);
  const auto x = random_activations(256, 8);
  std::vector<float> y_override(40), y_default(40);
  ASSERT_TRUE(matmul(w.view(), x.data(), 1, y_override.data(), nullptr).ok());
  EXPECT_EQ(set_active_kernels_override(nullptr), *scalar);
  EXPECT_EQ(&active_kernels(), defaults);
  ASSERT_TRUE(matmul_with(*defaults, w.view(), x.data(), 1, y_default.data(), nullptr).ok());
  EXPECT_EQ(0, std::memcmp(y_override.data(), y_default.data(), y_default.size() * sizeof(float)));
}

}  // namespace
}  // namespace kazeia::kernels
