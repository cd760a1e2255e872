// Runs one ARM matmul strip kernel `reps` times on random rows, for
// tools/arm_instruction_count.sh, which counts the instructions qemu
// executes (one per translation block with -singlestep) at two repetition
// counts: the difference is the kernel's instructions per call, setup
// excluded.
//   arm_strip_calls TYPE N_IN ROWS TOKENS strip|dot|group|acts REPS [LEVEL]
// strip: arm_strip_fn(TYPE, LEVEL) (dotprod, the default: the 4 x 4 SDOT
// tiles; i8mm: Q4_0 / Q8_0's SMMLA tiles); dot: the level's row dot once
// per (row, token), as strip_from_dot calls it (LEVEL scalar: the
// reference's); group: the level's tile_strip on token groups of 16 built
// once (dotprod Q4_0 / Q8_0, i8mm Q4_0 / Q8_0 / Q4_K / Q5_K / Q6_K), as matmul calls it for prefill; acts: building
// those groups (tile_acts), once per matmul call.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "kernels/arm/arm_kernels.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/quant.h"

using namespace kazeia;
using namespace kazeia::kernels;

int main(int argc, char** argv) {
  if (argc != 7 && argc != 8) {
    std::fprintf(stderr, "usage: %s TYPE N_IN ROWS TOKENS strip|dot|group|acts REPS [LEVEL]\n", argv[0]);
    return 2;
  }
  const std::optional<CpuLevel> level = parse_cpu_level(argc == 8 ? argv[7] : "dotprod");
  if (!level) return std::fprintf(stderr, "unknown level %s\n", argv[7]), 2;
  TensorType type{};
  bool found = false;
  for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                       TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
    if (tensor_type_name(t) == argv[1]) type = t, found = true;
  }
  if (!found) return std::fprintf(stderr, "unknown type %s\n", argv[1]), 2;
  const int64_t n_in = std::atoll(argv[2]), rows = std::atoll(argv[3]), tokens = std::atoll(argv[4]);
  const std::string mode = argv[5];
  const int reps = std::atoi(argv[6]);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> f(static_cast<size_t>(n_in));
  const size_t row_bytes = type_row_bytes(type, n_in);
  std::vector<uint8_t> w(row_bytes * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : f) v = normal(rng);
    if (!quantize_row(type, f.data(), w.data() + row_bytes * static_cast<size_t>(r), n_in).ok()) return 1;
  }
  const TensorType vdt = vec_dot_type(type);
  const size_t x_bytes = activation_row_bytes(vdt, n_in);
  std::vector<uint8_t> x(x_bytes * static_cast<size_t>(tokens));
  for (int64_t t = 0; t < tokens; ++t) {
    for (auto& v : f) v = normal(rng);
    if (!quantize_activations(vdt, f.data(), n_in, x.data() + x_bytes * static_cast<size_t>(t)).ok()) return 1;
  }
  std::vector<float> y(static_cast<size_t>(rows * tokens));
  StripArgs a;
  a.n_in = n_in;
  a.w = w.data();
  a.w_stride = row_bytes;
  a.n_rows = rows;
  a.x.q = x.data();
  a.x.q_stride = x_bytes;
  a.x.n_tokens = tokens;
  a.y = y.data();
  a.ldy = static_cast<size_t>(rows);
  // scalar: the reference dot (compiled for aarch64), the yardstick of a new row dot.
  a.dot = *level == CpuLevel::kScalar ? ref::vec_dot_fn(type) : arm::arm_vec_dot_fn(type, *level);
  if (a.dot == nullptr) return std::fprintf(stderr, "no dot for %s\n", argv[1]), 1;
  const arm::StripFn strip = arm::arm_strip_fn(type, *level);
  if (mode == "strip" && strip == nullptr) return std::fprintf(stderr, "no strip for %s\n", argv[1]), 1;
  // Token groups of 16 as matmul builds them (ref/matmul.cpp), the last padded.
  const KernelTable* table = kernel_table(*level);
  const WeightKernels* k = table != nullptr ? table->find(type) : nullptr;
  const bool grouped = mode == "group" || mode == "acts";
  if (grouped && (k == nullptr || k->tile_strip == nullptr))
    return std::fprintf(stderr, "no token groups for %s at that level\n", argv[1]), 1;
  constexpr int64_t kGroup = 16;
  const int64_t n_groups = (tokens + kGroup - 1) / kGroup;
  const size_t group_bytes = grouped ? (k->tile_group_bytes(n_in) + 63) / 64 * 64 : 0;
  std::vector<uint8_t> groups(group_bytes * static_cast<size_t>(n_groups));
  auto build_groups = [&] {
    for (int64_t g = 0; g < n_groups; ++g)
      k->tile_acts(n_in, x.data() + x_bytes * static_cast<size_t>(g * kGroup), x_bytes,
                   static_cast<int>(std::min(kGroup, tokens - g * kGroup)), groups.data() + group_bytes * static_cast<size_t>(g));
  };
  if (mode == "group") build_groups();
  a.tiles = groups.data();
  a.tile_group_bytes = group_bytes;
  float sink = 0;
  for (int i = 0; i < reps; ++i) {
    if (mode == "strip") {
      strip(a);
    } else if (mode == "group") {
      k->tile_strip(a);
    } else if (mode == "acts") {
      build_groups();
      sink += static_cast<float>(groups[static_cast<size_t>(i) % groups.size()]);
    } else {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t t = 0; t < tokens; ++t)
          y[static_cast<size_t>(t * rows + r)] = a.dot(n_in, w.data() + row_bytes * static_cast<size_t>(r),
                                                        x.data() + x_bytes * static_cast<size_t>(t));
    }
    sink += y[0];
  }
  std::printf("%g\n", static_cast<double>(sink));
  return 0;
}
