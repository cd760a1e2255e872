// Two builds of the x86 matmul kernels (AVX-512 or AVX2) in one process (tools/kernel_ab.sh
// builds this with a base revision's src/kernels, against the library's):
// matmul calls (mat-vecs, or batches of KERNEL_AB_TOKENS tokens) alternate
// between the base table (A) and the new one (B),
// the order swapped every call pair, so both meet the same state of a shared
// machine; prints the ratio of median call times and the median of the
// pairs' ratios. Whole-process runs of the
// kernel benchmarks moved 10-20 % between runs here; alternating calls
// resolve ~1 %. Warns when the outputs differ (a kernel change that should
// keep the bits).
//   [KERNEL_AB_TOKENS=N] kernel_ab TYPE N_IN N_OUT THREADS hot|cold [PAIRS]
// (PAIRS default: 40 cold, 300 for a batch, 3000 else.)
// hot: one matrix, cache-resident when small (the kernel's compute speed);
// cold: copies of it over 1 GiB, each call reads another (decode's case).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "format/tensor_types.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "tensor/quant.h"

namespace kazeia::kernels::x86 {
void fill_base(KernelTable& table);
const char* base_isa();  // the table fill_base fills: "avx2" or "avx512"
}  // namespace kazeia::kernels::x86

namespace {

using namespace kazeia;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: kernel_ab TYPE N_IN N_OUT THREADS hot|cold [PAIRS]\n");
    return 2;
  }
  const std::string type_arg = argv[1];
  const int64_t n_in = std::atol(argv[2]), n_out = std::atol(argv[3]);
  const int threads = std::atoi(argv[4]);
  const std::string mode = argv[5];
  const bool cold = mode == "cold";
  // KERNEL_AB_TOKENS: the batch (prefill's token tiles from ~16).
  const char* tokens_env = std::getenv("KERNEL_AB_TOKENS");
  const int64_t n_tokens = tokens_env != nullptr ? std::atol(tokens_env) : 1;
  if (n_tokens <= 0 || n_tokens > 4096) {
    std::fprintf(stderr, "kernel_ab: KERNEL_AB_TOKENS must be 1..4096, not '%s'\n", tokens_env);
    return 2;
  }
  // Defaults: ~1 % resolution on a shared 2-core host (a batch's A/A read
  // 0.955 with 40 pairs, 0.997 with 300).
  const int pairs = argc > 6 ? std::atoi(argv[6]) : (cold ? 40 : n_tokens > 1 ? 300 : 3000);
  const std::optional<TensorType> parsed = tensor_type_from_name(type_arg);
  if (!parsed || n_in <= 0 || n_out <= 0 || threads <= 0 || pairs <= 0 || (mode != "hot" && !cold)) {
    std::fprintf(stderr, "kernel_ab: bad arguments; usage: kernel_ab TYPE(Q4_0, Q6_K, ...) N_IN N_OUT THREADS hot|cold [PAIRS]\n");
    return 2;
  }
  const TensorType type = *parsed;
  if (std::strcmp(kernels::active_kernels().name, kernels::x86::base_isa()) != 0) {
    std::printf("kernel_ab: skipped, the active kernels are %s, not %s (KAZEIA_CPU_LEVEL, KERNEL_AB_ISA)\n",
                kernels::active_kernels().name, kernels::x86::base_isa());
    return 77;
  }
  // B: the library's active table; A: the same with every slot fill_isa
  // fills refilled from the base build.
  const kernels::KernelTable& b = kernels::active_kernels();
  kernels::KernelTable a = b;
  kernels::x86::fill_base(a);

  const size_t row_bytes = type_row_bytes(type, n_in), matrix_bytes = row_bytes * static_cast<size_t>(n_out);
  const size_t copies = cold ? (size_t{1} << 30) / matrix_bytes + 1 : 1;
  std::vector<uint8_t> buf(matrix_bytes * copies);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  // 64 distinct quantized rows, tiled (speed does not depend on the values).
  std::vector<float> row(static_cast<size_t>(n_in));
  std::vector<uint8_t> rows(row_bytes * 64);
  for (int r = 0; r < 64; ++r) {
    for (float& v : row) v = dist(rng);
    if (!quantize_row(type, row.data(), rows.data() + r * row_bytes, n_in).ok()) {
      std::fprintf(stderr, "kernel_ab: cannot quantize %s rows of %ld\n", type_arg.c_str(), static_cast<long>(n_in));
      return 2;
    }
  }
  for (size_t off = 0; off < buf.size(); off += rows.size())
    std::memcpy(buf.data() + off, rows.data(), std::min(rows.size(), buf.size() - off));
  std::vector<float> x(static_cast<size_t>(n_in * n_tokens)), ya(static_cast<size_t>(n_out * n_tokens)),
      yb(static_cast<size_t>(n_out * n_tokens));
  for (float& v : x) v = dist(rng) * 50.0f;

  ThreadPool pool(threads);
  ThreadPool::SpinScope spin(pool);
  std::vector<double> ta, tb;
  size_t next = 0;
  for (int i = 0; i < pairs; ++i) {
    for (int s = 0; s < 2; ++s) {
      const bool use_a = (s == 0) == (i % 2 == 0);
      auto view = kernels::make_matrix_view(type, buf.data() + next * matrix_bytes, n_in, n_out);
      next = (next + 1) % copies;
      const auto t0 = std::chrono::steady_clock::now();
      const Status st = kernels::matmul_with(use_a ? a : b, *view, x.data(), n_tokens, use_a ? ya.data() : yb.data(), &pool);
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!st.ok()) {
        std::fprintf(stderr, "kernel_ab: %s\n", st.to_string().c_str());
        return 1;
      }
      (use_a ? ta : tb).push_back(dt);
    }
  }
  if (std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)) != 0)
    std::printf("warning: the two builds' outputs differ\n");
  const double ma = median(ta), mb = median(tb);
  // Each pair's two calls are adjacent: the median of their ratios holds
  // where the machine changes speed for stretches (another guest on the
  // core's SMT sibling) and the two medians above come from different ones.
  std::vector<double> ratios(ta.size());
  for (size_t i = 0; i < ta.size(); ++i) ratios[i] = tb[i] / ta[i];
  std::sort(ratios.begin(), ratios.end());
  const double r_lo = ratios[ratios.size() / 4], r_hi = ratios[ratios.size() * 3 / 4];
  // Weight bytes per second for a mat-vec (memory bound), multiply-adds
  // (x 2, as GFLOP/s) for a batch (compute bound).
  const bool batch = n_tokens > 1;
  const double work = batch ? 2.0 * static_cast<double>(n_in) * static_cast<double>(n_out) * static_cast<double>(n_tokens)
                            : static_cast<double>(matrix_bytes);
  const char* unit = batch ? "GFLOP/s" : "GB/s";
  std::printf("%s %ldx%ld x %ld token(s), %d thread(s), %s, %d pairs: base %.1f us (%.1f %s), new %.1f us (%.1f %s), new/base %.3f; per pair %.3f (quartiles %.3f-%.3f)\n",
              type_arg.c_str(), static_cast<long>(n_in), static_cast<long>(n_out), static_cast<long>(n_tokens), threads,
              cold ? "cold" : "hot", pairs, ma * 1e6, work / ma * 1e-9, unit, mb * 1e6, work / mb * 1e-9, unit, mb / ma,
              ratios[ratios.size() / 2], r_lo, r_hi);
  return 0;
}
