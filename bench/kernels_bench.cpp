// Kernel micro-benchmarks: matmul on Qwen3-0.6B's shapes.
//
//   MatVec/<table>/<type>/<n_in>x<n_out>/threads:N   decode (1 token)
//   MatMat/<table>/<type>/<n_in>x<n_out>/threads:N   prefill (512 tokens)
//   MatVecHot/...                                    decode, matrix kept in cache
//   ReadBandwidth/threads:N                          streaming read, the ceiling
//
// <table> is a kernel table (dispatch.h): "best" = the active one, "scalar"
// = the reference. Counters:
//   GB/s      weight bytes read per second (mat-vec): compare with
//             ReadBandwidth - decode is memory bound;
//   GFLOP/s   2 * n_in * n_out * tokens per second (mat-mat), counting the
//             int8 multiply-adds of quantized types as floating point ones.
//
// Mat-vec weights are cold, as in decode: the benchmark cycles through
// enough copies of the matrix (>= 1 GiB together) that none is still cached
// when it comes round again. Mat-mat reuses one matrix (prefill is compute
// bound, the weights stream once per 512 tokens anyway).
//
// The machine may be shared: use --benchmark_repetitions and the median.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/huge_page_buffer.h"
#include "base/scratch.h"
#include "base/thread_pool.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "tensor/quant.h"

namespace kz = kazeia;
namespace kk = kazeia::kernels;

namespace {

constexpr size_t kColdBytes = size_t{1} << 30;  // mat-vec working set

struct Shape {
  int64_t n_in, n_out;
};
// Qwen3-0.6B: q/o projections (1024 <-> 2048), ffn up/gate and down
// (1024 <-> 3072), the tied output matrix (1024 -> 151936).
// 1024 x 1024: small enough to stay in L2 (hot: the pure compute speed).
constexpr Shape kShapes[] = {{1024, 1024}, {1024, 2048}, {1024, 3072}, {3072, 1024}, {1024, 151936}};
constexpr kz::TensorType kTypes[] = {kz::TensorType::Q4_0, kz::TensorType::Q8_0,
                                     kz::TensorType::Q6_K, kz::TensorType::Q4_K};

// Weights stand-ins on 2 MiB pages, as the model's are (huge_page_buffer.h).
using Buffer = kz::HugePageBuffer;

// One quantized matrix of random weights, copied `copies` times.
struct Matrices {
  size_t matrix_bytes = 0;
  int copies = 0;
  std::unique_ptr<Buffer> buf;
};

Matrices make_matrices(kz::TensorType type, Shape s, int copies) {
  Matrices m;
  const size_t row_bytes = kz::type_row_bytes(type, s.n_in);
  m.matrix_bytes = row_bytes * static_cast<size_t>(s.n_out);
  m.copies = copies;
  m.buf = std::make_unique<Buffer>(m.matrix_bytes * static_cast<size_t>(copies));
  // Quantize a few distinct rows and tile them (quantizing 100+ MB with the
  // reference quantizers would take minutes; the kernels' speed does not
  // depend on the values).
  constexpr int kDistinct = 64;
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> row(static_cast<size_t>(s.n_in));
  std::vector<uint8_t> rows(row_bytes * kDistinct);
  for (int r = 0; r < kDistinct; ++r) {
    for (auto& v : row) v = dist(rng);
    (void)kz::quantize_row(type, row.data(), rows.data() + r * row_bytes, s.n_in);
  }
  for (size_t off = 0; off < m.buf->size(); off += rows.size()) {
    std::memcpy(m.buf->data() + off, rows.data(), std::min(rows.size(), m.buf->size() - off));
  }
  return m;
}

std::vector<float> activations(int64_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = dist(rng);
  return x;
}

const kk::KernelTable& table_named(const std::string& name) {
  return name == "scalar" ? *kk::kernel_table(kz::CpuLevel::kScalar) : kk::active_kernels();
}

void run_matmul(benchmark::State& state, const std::string& table_name, kz::TensorType type, Shape s,
                int64_t n_tokens, bool hot = false) {
  const kk::KernelTable& table = table_named(table_name);
  const int threads = static_cast<int>(state.range(0));
  const size_t matrix_bytes = kz::type_row_bytes(type, s.n_in) * static_cast<size_t>(s.n_out);
  const int copies = n_tokens == 1 && !hot ? static_cast<int>(std::max<size_t>(1, kColdBytes / matrix_bytes + 1)) : 1;
  static Matrices cache;  // reused across thread counts of the same case
  static std::string cache_key;
  const std::string key = std::to_string(static_cast<int>(type)) + "/" + std::to_string(s.n_in) + "x" +
                          std::to_string(s.n_out) + "/" + std::to_string(copies);
  if (key != cache_key) {
    cache = Matrices{};
    cache = make_matrices(type, s, copies);
    cache_key = key;
  }
  const auto x = activations(s.n_in * n_tokens);
  // Line-aligned, as the model's activation buffers are (ScratchFloats).
  std::vector<float, kz::CacheLineAllocator<float>> y(static_cast<size_t>(s.n_out * n_tokens));
  kz::ThreadPool pool(threads);
  kz::ThreadPool::SpinScope spin(pool);
  int next = 0;
  for (auto _ : state) {
    const uint8_t* data = cache.buf->data() + static_cast<size_t>(next) * cache.matrix_bytes;
    next = (next + 1) % cache.copies;
    auto view = kk::make_matrix_view(type, data, s.n_in, s.n_out);
    kz::Status st = kk::matmul_with(table, *view, x.data(), n_tokens, y.data(), &pool);
    if (!st.ok()) {
      state.SkipWithError(st.to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  if (n_tokens == 1) {
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(matrix_bytes) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  } else {
    state.counters["GFLOP/s"] = benchmark::Counter(2.0 * s.n_in * s.n_out * n_tokens * 1e-9,
                                                   benchmark::Counter::kIsIterationInvariantRate);
  }
  state.SetLabel(std::string(table.name) + " " + std::string(kz::tensor_type_name(type)));
}

// Streaming read of 1 GiB split across the pool's threads: the bandwidth
// the mat-vec kernels are measured against.
void ReadBandwidth(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  static Buffer buf(kColdBytes);
  static bool filled = false;
  if (!filled) {
    std::memset(buf.data(), 1, buf.size());
    filled = true;
  }
  kz::ThreadPool pool(threads);
  kz::ThreadPool::SpinScope spin(pool);
  const int64_t n_lines = static_cast<int64_t>(buf.size() / 64);
  std::vector<int64_t> sums(64, 0);
  for (auto _ : state) {
    pool.parallel_for(0, n_lines, [&](int64_t l0, int64_t l1, int t) {
      // Plain code on purpose (this file is baseline x86-64): SSE2 loads
      // already outrun memory.
      uint64_t acc[4] = {0, 0, 0, 0};
      for (int64_t l = l0; l < l1; ++l) {
        const auto* p = reinterpret_cast<const uint64_t*>(buf.data() + l * 64);
        for (int i = 0; i < 8; i += 4) {
          acc[0] += p[i];
          acc[1] += p[i + 1];
          acc[2] += p[i + 2];
          acc[3] += p[i + 3];
        }
      }
      sums[static_cast<size_t>(t) * 8] += static_cast<int64_t>(acc[0] + acc[1] + acc[2] + acc[3]);
    }, 1 << 12, threads);
    benchmark::DoNotOptimize(sums.data());
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(buf.size()) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

// gemm_f32_acc at attention's tile shapes (kernels.h: one query block of
// 64 positions x 2 heads against a 64-position K/V tile, head dim 128):
// S = Q K^T is 128 x 64 x 128, O += P V is 128 x 128 x 64. One thread,
// operands cache-resident as in the attention loop; GFLOP/s against the
// core's FMA peak tells how much the register tiles leave.
void GemmF32(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const auto a = activations(m * k), b = activations(k * n);
  std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
  for (auto _ : state) {
    kk::gemm_f32_acc(m, n, k, a.data(), static_cast<size_t>(k), b.data(), static_cast<size_t>(n), c.data(),
                     static_cast<size_t>(n));
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  benchmark::RegisterBenchmark("GemmF32", GemmF32)->Args({128, 64, 128})->Args({128, 128, 64})->ArgNames({"m", "n", "k"});
  benchmark::RegisterBenchmark("ReadBandwidth", ReadBandwidth)->Arg(1)->Arg(2)->UseRealTime()->ArgName("threads");
  for (const char* table : {"best", "scalar"}) {
    for (kz::TensorType type : kTypes) {
      for (Shape s : kShapes) {
        const std::string shape = std::to_string(s.n_in) + "x" + std::to_string(s.n_out);
        const std::string tname(kz::tensor_type_name(type));
        benchmark::RegisterBenchmark(("MatVec/" + std::string(table) + "/" + tname + "/" + shape).c_str(),
                                     [=](benchmark::State& st) { run_matmul(st, table, type, s, 1); })
            ->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMicrosecond);
        if (s.n_out > 4096) continue;
        // The same matrix every time (cache-resident for the small shapes):
        // the kernel's compute speed, without the memory bottleneck.
        benchmark::RegisterBenchmark(("MatVecHot/" + std::string(table) + "/" + tname + "/" + shape).c_str(),
                                     [=](benchmark::State& st) { run_matmul(st, table, type, s, 1, true); })
            ->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMicrosecond);  // prefill of the output matrix: only the last token needs it
        benchmark::RegisterBenchmark(("MatMat/" + std::string(table) + "/" + tname + "/" + shape).c_str(),
                                     [=](benchmark::State& st) { run_matmul(st, table, type, s, 512); })
            ->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
