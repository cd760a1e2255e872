// Runs one float op of an ARM kernel table `reps` times on random inputs,
// for tools/arm_instruction_count.sh (as arm_strip_calls.cpp does for the
// matmul strips):
//   arm_float_calls OP D1 D2 D3 REPS [LEVEL]
// OP and its sizes:
//   gemm M N K          C = A B, A M x K, B K x N (gemm_f32)
//   gemm_acc M N K      C += A B (gemm_f32_acc)
//   gemm_f16b M N K     C = A B with B in half (gemm_f32_f16b)
//   gemm_scaled M N K   C = s C + A B and |C|'s range (gemm_f32_scaled_acc)
//   softmax N - -       one online-softmax row of N scores
//   swiglu N - -        silu(gate) * up over N values
//   conv_silu N 4 -     the depthwise conv over N channels, 4 taps
//   sum_squares N - -   RMSNorm's sum of squares
//   transpose R C -     an R x C float block
// LEVEL: the table of that level (scalar: the references compiled for
// aarch64; default neon).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "kernels/dispatch.h"
#include "tensor/quant.h"

using namespace kazeia;
using namespace kazeia::kernels;

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: %s OP D1 D2 D3 REPS [LEVEL]\n", argv[0]);
    return 2;
  }
  const std::optional<CpuLevel> level = parse_cpu_level(argc == 7 ? argv[6] : "neon");
  if (!level) return std::fprintf(stderr, "unknown level %s\n", argv[6]), 2;
  const KernelTable* t = kernel_table(*level);
  if (t == nullptr) return std::fprintf(stderr, "no table for level %s\n", argv[6]), 2;
  const std::string op = argv[1];
  const int64_t d1 = std::atoll(argv[2]), d2 = std::atoll(argv[3]), d3 = std::atoll(argv[4]);
  const int reps = std::atoi(argv[5]);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  auto floats = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = uniform(rng);
    return v;
  };
  double sink = 0;
  if (op.rfind("gemm", 0) == 0) {
    const int64_t m = d1, n = d2, k = d3;
    const auto a = floats(m * k), b = floats(k * n);
    std::vector<uint16_t> bh(b.size());
    for (size_t i = 0; i < b.size(); ++i) bh[i] = fp32_to_fp16(b[i]);
    auto c = floats(m * n);
    float lo = 0, hi = 0;
    for (int i = 0; i < reps; ++i) {
      if (op == "gemm") t->gemm_f32(m, n, k, a.data(), k, b.data(), n, c.data(), n);
      else if (op == "gemm_acc") t->gemm_f32_acc(m, n, k, a.data(), k, b.data(), n, c.data(), n);
      else if (op == "gemm_f16b") t->gemm_f32_f16b(m, n, k, a.data(), k, bh.data(), n, c.data(), n);
      else if (op == "gemm_scaled") t->gemm_f32_scaled_acc(m, n, k, a.data(), k, b.data(), n, c.data(), n, 0.5f, &lo, &hi);
      else return std::fprintf(stderr, "unknown op %s\n", op.c_str()), 2;
      sink += c[0] + hi;
    }
  } else if (op == "softmax") {
    const auto s = floats(d1);
    std::vector<float> p(s.size());
    for (int i = 0; i < reps; ++i) {
      float m = -INFINITY, alpha = 0;
      sink += t->softmax_online_row(s.data(), d1, d1, 0.125f, &m, &alpha, p.data());
    }
  } else if (op == "swiglu") {
    const auto g = floats(d1), u = floats(d1);
    std::vector<float> o(g.size());
    for (int i = 0; i < reps; ++i) t->swiglu(g.data(), u.data(), d1, o.data()), sink += o[0];
  } else if (op == "conv_silu") {
    const int64_t n = d1, taps = d2 > 0 ? d2 : 4;
    const auto w = floats(n * taps), x = floats(n * taps);
    std::vector<const float*> rows;
    for (int64_t k = 0; k < taps; ++k) rows.push_back(x.data() + k * n);
    std::vector<float> o(static_cast<size_t>(n));
    for (int i = 0; i < reps; ++i) t->conv_silu(rows.data(), w.data(), static_cast<size_t>(n), taps, n, o.data()), sink += o[0];
  } else if (op == "sum_squares") {
    const auto x = floats(d1);
    for (int i = 0; i < reps; ++i) sink += t->sum_squares(x.data(), d1);
  } else if (op == "transpose") {
    const auto x = floats(d1 * d2);
    std::vector<float> o(x.size());
    for (int i = 0; i < reps; ++i) t->transpose_f32(x.data(), static_cast<size_t>(d2), d1, d2, o.data(), static_cast<size_t>(d1)), sink += o[1];
  } else {
    return std::fprintf(stderr, "unknown op %s\n", op.c_str()), 2;
  }
  std::printf("%g\n", sink);
  return 0;
}
