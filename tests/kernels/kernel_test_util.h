// Helpers shared by the kernel tests: random data, quantized matrices and
// double-precision references that do not use the code under test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "format/tensor_types.h"
#include "kernels/kernels.h"
#include "tensor/quant.h"

namespace kazeia::kernels::testing {

inline std::string type_name(TensorType t) { return std::string(tensor_type_name(t)); }

// Uniform in [lo, hi) from the top 24 bits of each draw. (libstdc++'s
// uniform_real_distribution computes a long-double log per draw: it was a
// tenth of the kernel tests' time under the sanitizers and under qemu.)
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = lo + (hi - lo) * (static_cast<float>(rng() >> 8) * 0x1p-24f);
  return v;
}

// Activations with some spread between blocks, like real hidden states: a
// few larger entries, so block scales differ.
inline std::vector<float> random_activations(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 15);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng) * (pick(rng) == 0 ? 4.0f : 1.0f);
  return v;
}

// A weight matrix of `type`: random floats rounded by the tensor layer's
// reference quantizer (or converted, for the float types), row by row.
struct TestMatrix {
  TensorType type;
  int64_t n_in;
  int64_t n_out;
  std::vector<uint8_t> bytes;
  std::vector<double> values;  // the dequantized weights, row-major

  MatrixView view() const {
    auto v = make_matrix_view(type, bytes.data(), n_in, n_out, bytes.size());
    EXPECT_TRUE(v.ok()) << v.status().to_string();
    return v.value_or(MatrixView{});
  }
};

inline TestMatrix make_matrix(TensorType type, int64_t n_in, int64_t n_out, uint32_t seed) {
  TestMatrix m{type, n_in, n_out, {}, {}};
  const size_t row_bytes = type_row_bytes(type, n_in);
  m.bytes.resize(row_bytes * static_cast<size_t>(n_out));
  const std::vector<float> src = random_floats(static_cast<size_t>(n_in * n_out), seed);
  std::vector<float> row(static_cast<size_t>(n_in));
  for (int64_t r = 0; r < n_out; ++r) {
    const float* s = src.data() + r * n_in;
    uint8_t* dst = m.bytes.data() + static_cast<size_t>(r) * row_bytes;
    Status st = quantize_row(type, s, dst, n_in);
    EXPECT_TRUE(st.ok()) << st.to_string();
    st = dequantize_row(type, dst, row.data(), n_in);
    EXPECT_TRUE(st.ok()) << st.to_string();
    for (float v : row) m.values.push_back(v);
  }
  return m;
}

// The values an activation row holds after quantize_activations(vdt, ...),
// decoded here (Q8_1 is not a tensor-layer type; the rest use
// dequantize_row, which is independent of the kernels).
inline std::vector<double> decode_activation(TensorType vdt, const uint8_t* bytes, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n));
  if (vdt == TensorType::Q8_1) {
    for (int64_t ib = 0; ib < n / 32; ++ib) {
      const uint8_t* b = bytes + ib * 36;
      uint16_t d;
      std::memcpy(&d, b, 2);
      for (int j = 0; j < 32; ++j) {
        out[static_cast<size_t>(ib * 32 + j)] =
            static_cast<double>(fp16_to_fp32(d)) * static_cast<int8_t>(b[4 + j]);
      }
    }
    return out;
  }
  std::vector<float> tmp(static_cast<size_t>(n));
  Status st = dequantize_row(vdt, bytes, tmp.data(), n);
  EXPECT_TRUE(st.ok()) << st.to_string();
  for (size_t i = 0; i < tmp.size(); ++i) out[i] = tmp[i];
  return out;
}

// sum_i w[i] * x[i] and sum_i |w[i] * x[i]| in double.
struct DotRef {
  double value = 0;
  double magnitude = 0;
};
inline DotRef dot_ref(const double* w, const double* x, int64_t n) {
  DotRef r;
  for (int64_t i = 0; i < n; ++i) {
    r.value += w[i] * x[i];
    r.magnitude += std::fabs(w[i] * x[i]);
  }
  return r;
}

// Round half to even in double, independent of the current rounding mode.
inline double round_half_even(double v) {
  const double f = std::floor(v);
  const double diff = v - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;
}

}  // namespace kazeia::kernels::testing
