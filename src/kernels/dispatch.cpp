// Kernel tables per CPU level and the choice of the active one.
//
// A table starts as the scalar reference (every type ref::vec_dot_fn
// supports, strips that loop over the dot, the reference quantizers); the
// ISA fill functions then overwrite what they implement. Tables are built
// once, on first use, and never change afterwards, so readers need no lock
// (bench --ab swaps which one is active, between tokens).
#include "kernels/dispatch.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "base/cpu_features.h"
#include "base/log.h"
#include "kernels/arm/arm_kernels.h"
#include "kernels/x86/x86_kernels.h"

namespace kazeia::kernels {

const WeightKernels* KernelTable::find(TensorType weight_type) const {
  const auto id = static_cast<uint32_t>(weight_type);
  if (id >= static_cast<uint32_t>(kMaxTypeId)) return nullptr;
  return weights[id].dot != nullptr ? &weights[id] : nullptr;
}

QuantizeActFn KernelTable::quantizer(TensorType vec_dot_type) const {
  switch (vec_dot_type) {
    case TensorType::Q8_0: return quantize_q8_0;
    case TensorType::Q8_1: return quantize_q8_1;
    case TensorType::Q8_K: return quantize_q8_K;
    default: return nullptr;
  }
}

const char* decode_walk_name(DecodeWalk walk) {
  return walk == DecodeWalk::kLaneStreams ? "lanes" : "strips";
}

// Measured on an AMD Zen 4 (EPYC, 2 threads, cold weights, kazeia bench
// tg64, 3-4 alternating runs, medians): lane streams prefetched 1 KiB ahead
// decoded Qwen3-0.6B Q4_0 at 58.8-61.5 t/s, prefetched strips at 52.8-55.2
// and unprefetched lane streams at 33-40; Qwen3.5-0.8B Q4_0 45.0 / 38.3 /
// 27.1 t/s (512 to 1536 bytes ahead: within the noise). Its prefetchers lose
// track of 16 streams per core read 16 bytes at a time (a plain read of
// them ran at 10 GB/s against 24 for one stream). On an Intel Xeon with
// AMX (model 207, 2 vCPUs, same method, 5 runs each) lane streams without a
// prefetch win: Qwen3-0.6B Q4_0 98.9 t/s against 88.3 prefetched and 80.7
// for prefetched strips, Qwen3.5-0.8B Q8_0 50.6 / 47.0 / 37.4: there the
// hardware streamers keep up with the 16 lanes on their own.
DecodeWalk default_decode_walk() {
  if (const char* env = std::getenv("KAZEIA_DECODE_WALK"); env != nullptr && *env != '\0') {
    if (std::strcmp(env, "lanes") == 0) return DecodeWalk::kLaneStreams;
    if (std::strcmp(env, "strips") == 0) return DecodeWalk::kPrefetchedStrips;
    KZ_LOG_WARN("KAZEIA_DECODE_WALK='%s' is not lanes or strips; ignored", env);
  }
  return DecodeWalk::kLaneStreams;
}

// A kernel choice that is on unless the environment sets it to "0" (for
// comparisons):
//  - KAZEIA_TOKEN_TILES=0 keeps prefill on the rows-in-lanes strips: the
//    AVX-512 and AVX2 token tiles are left out of the table;
//  - KAZEIA_ROW_KERNELS=0 keeps the AVX2 table's Q4_0 / Q8_0 / Q6_K decode
//    on the rows-in-lanes strips instead of the row kernels.
[[maybe_unused]] static bool wanted(const char* name) {
  const char* env = std::getenv(name);
  return env == nullptr || std::strcmp(env, "0") != 0;
}
[[maybe_unused]] static bool token_tiles_wanted() { return wanted("KAZEIA_TOKEN_TILES"); }
[[maybe_unused]] static bool row_kernels_wanted() { return wanted("KAZEIA_ROW_KERNELS"); }

// AMD Zen 4 and later (family 0x19 with AVX-512, 0x1A and up): 1 KiB
// ahead (Zen 4, Qwen3-0.6B Q4_0: ~58 t/s with it, ~35 without). Zen 1 /
// Zen 2 (0x17) and Zen 3 (0x19 without AVX-512) follow the lanes by
// themselves and lose to the extra requests:
//  - Zen 2, per-token A/B in one process, none against 256 / 1024 / 2048
//    / 4096 bytes ahead: 0.97 / 0.90 / 0.86 / 0.82x the token time
//    (Qwen3-0.6B Q4_0), 0.76x against 1024 (Q8_0);
//  - Zen 3 (EPYC, model 1), none against 1024 ahead: per-token A/B
//    0.945-0.988x the token time (Qwen3-0.6B Q4_0, 3 runs), 0.959-0.976x
//    (Q8_0), 0.949-0.982x (Qwen3.5-0.8B Q8_0), 0.969-1.022x (Qwen3.5-0.8B
//    Q4_0); whole processes, farm-bench 11 pairs, tg128: 1.066x the t/s
//    (Qwen3-0.6B Q4_0), 1.026x (Q8_0), 1.007x (Qwen3.5-0.8B Q4_0).
size_t decode_lane_prefetch_for(CpuVendor vendor, unsigned family, bool avx512f) {
  if (vendor != CpuVendor::kAmd) return 0;
  return family >= 0x1A || (family == 0x19 && avx512f) ? 1024 : 0;
}

size_t default_decode_lane_prefetch() {
  if (const char* env = std::getenv("KAZEIA_LANE_PREFETCH"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0' && v <= (1u << 20)) return static_cast<size_t>(v);
    KZ_LOG_WARN("KAZEIA_LANE_PREFETCH='%s' is not a byte count in [0, 1048576]; ignored", env);
  }
  const CpuFeatures& f = cpu_features();
  return decode_lane_prefetch_for(f.vendor, f.family, f.avx512f);
}

void strip_from_dot(const StripArgs& a) {
  for (int64_t r = 0; r < a.n_rows; ++r) {
    const uint8_t* w_row = a.w + static_cast<size_t>(r) * a.w_stride;
    for (int64_t t = 0; t < a.x.n_tokens; ++t) {
      a.y[static_cast<size_t>(t) * a.ldy + static_cast<size_t>(r)] =
          a.dot(a.n_in, w_row, a.x.q + static_cast<size_t>(t) * a.x.q_stride);
    }
  }
}

namespace {

constexpr TensorType kMatmulTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
};

// Rows per strip of the dot-based strips: enough that a chunk of work is
// not tiny, few enough to split small matrices across threads.
constexpr int kDotStripRows = 16;

void fill_scalar(KernelTable& t) {
  for (TensorType type : kMatmulTypes) {
    WeightKernels& k = t.weights[static_cast<int>(type)];
    k = WeightKernels{};
    k.dot = ref::vec_dot_fn(type);
    k.strip = strip_from_dot;
    k.strip_rows = kDotStripRows;
    k.isa = "scalar";
  }
  t.quantize_q8_0 = ref::quantize_row_q8_0_act;
  t.quantize_q8_1 = ref::quantize_row_q8_1_act;
  t.quantize_q8_K = ref::quantize_row_q8_K_act;
  t.gemm_f32_acc = ref::gemm_f32_acc;
  t.gemm_f32 = ref::gemm_f32;
  t.gemm_f32_scaled_acc = ref::gemm_f32_scaled_acc;
  t.gemm_f32_f16b_acc = ref::gemm_f32_f16b_acc;
  t.gemm_f32_f16b = ref::gemm_f32_f16b;
  t.softmax_online_row = ref::softmax_online_row;
  t.silu = ref::silu_approx;
  t.swiglu = ref::swiglu_approx;
  t.sigmoid_mul = ref::sigmoid_mul_approx;
  t.swiglu_rows = ref::swiglu_rows;
  t.conv_silu = ref::conv_silu;
  t.abs_range = ref::abs_range;
  t.scale = ref::scale;
  t.scale_mul = ref::scale_mul;
  t.scale_add = ref::scale_add;
  t.transpose_f32 = ref::transpose_f32;
  t.sum_squares = ref::sum_squares;
  t.read_stream = ref::read_stream;
  t.fp16_to_fp32_row = ref::fp16_to_fp32_row;
  t.fp32_to_fp16_row = ref::fp32_to_fp16_row;
}

// ARM: arm/arm_kernels.h returns the best dot / quantizer for a level, or
// nullptr where the reference stays (always nullptr off aarch64).
void fill_arm(KernelTable& t, CpuLevel level) {
  for (TensorType type : kMatmulTypes) {
    if (ref::VecDotFn dot = arm::arm_vec_dot_fn(type, level)) {
      t.weights[static_cast<int>(type)].dot = dot;
      t.weights[static_cast<int>(type)].isa = cpu_level_name(level);
    }
    if (StripFn strip = arm::arm_strip_fn(type, level)) {
      t.weights[static_cast<int>(type)].strip = strip;
      t.weights[static_cast<int>(type)].strip_rows = arm::kArmStripRows;
    }
    arm::fill_arm_token_groups(t.weights[static_cast<int>(type)], type, level);
  }
  if (auto q = arm::arm_quantize_act_fn(TensorType::Q8_0, level)) t.quantize_q8_0 = q;
  if (auto q = arm::arm_quantize_act_fn(TensorType::Q8_1, level)) t.quantize_q8_1 = q;
  if (auto q = arm::arm_quantize_act_fn(TensorType::Q8_K, level)) t.quantize_q8_K = q;
  if (auto f = arm::arm_fp16_to_fp32_fn(level)) t.fp16_to_fp32_row = f;
  if (auto f = arm::arm_fp32_to_fp16_fn(level)) t.fp32_to_fp16_row = f;
  arm::fill_arm_float_ops(t, level);
}

// k*Emulated: AVX-512 / AVX-VNNI kernels built for AVX2 with SIMDe for the
// tests on hosts without them (KAZEIA_EMULATE_AVX512, cmake/KazeiaLayer.cmake);
// never chosen to run a model.
enum class Variant {
  kScalar, kAvx2, kAvx2Vnni, kAvx512, kAvx512Amx, kAvx512Emulated, kAvx2VnniEmulated, kNeon, kDotprod, kI8mm, kCount
};

KernelTable build(Variant v) {
  KernelTable t;
  fill_scalar(t);
  t.decode_walk = default_decode_walk();
  t.decode_lane_prefetch = default_decode_lane_prefetch();
  switch (v) {
    case Variant::kScalar: break;
#if defined(__x86_64__) || defined(_M_X64)
#if KAZEIA_AVX2_TABLES
    case Variant::kAvx2:
      t.name = "avx2";
      t.level = CpuLevel::kAvx2;
      x86::fill_avx2_kernels(t, row_kernels_wanted());
      x86::fill_avx2_float_ops(t);
      if (token_tiles_wanted()) x86::fill_avx2_token_tiles(t);
      break;
#endif
#if KAZEIA_AVXVNNI_TABLES
    case Variant::kAvx2Vnni:
      t.name = "avx2+vnni";
      t.level = CpuLevel::kAvx2;
      x86::fill_avxvnni_kernels(t);
      x86::fill_avx2_float_ops(t);
      break;
#endif
#if KAZEIA_AVX512_TABLES
    case Variant::kAvx512:
      t.name = "avx512";
      t.level = CpuLevel::kAvx512;
      x86::fill_avx512_kernels(t);
      if (token_tiles_wanted()) x86::fill_avx512_token_tiles(t);
      break;
    case Variant::kAvx512Amx:
      t.name = "avx512+amx";
      t.level = CpuLevel::kAvx512;
      x86::fill_avx512_kernels(t);
      if (token_tiles_wanted()) x86::fill_avx512_token_tiles(t);
      x86::fill_amx_kernels(t);
      break;
#endif
#if KAZEIA_AVX512_EMULATED
    case Variant::kAvx512Emulated:
      t.name = "avx512-emulated";
      t.level = CpuLevel::kAvx512;
#if KAZEIA_AVX512_EMULATED == 2
      x86::fill_avx512_kernels(t);  // PARTIAL: the references' slots stay
#endif
      x86::fill_avx512_float_ops(t);
      if (token_tiles_wanted()) x86::fill_avx512_token_tiles(t);
      break;
#endif
#if KAZEIA_AVX512_EMULATED == 2
    case Variant::kAvx2VnniEmulated:
      t.name = "avx2+vnni-emulated";
      t.level = CpuLevel::kAvx2;
      x86::fill_avxvnni_kernels(t);
#if KAZEIA_AVX2_TABLES
      x86::fill_avx2_float_ops(t);
#endif
      break;
#endif
#endif
    case Variant::kNeon:
    case Variant::kDotprod:
    case Variant::kI8mm: {
      const CpuLevel level = v == Variant::kNeon      ? CpuLevel::kNeon
                             : v == Variant::kDotprod ? CpuLevel::kDotprod
                                                      : CpuLevel::kI8mm;
      t.name = cpu_level_name(level);
      t.level = level;
      fill_arm(t, level);
      break;
    }
    default: break;
  }
  return t;
}

// Whether this build and this CPU (its hardware level, not the
// KAZEIA_CPU_LEVEL override) can run a variant.
bool runnable(Variant v) {
  const CpuFeatures& f = cpu_features();
  const CpuLevel hw = f.hw_level;
  [[maybe_unused]] const bool x86 = hw == CpuLevel::kAvx2 || hw == CpuLevel::kAvx512;
  const bool arm = hw == CpuLevel::kNeon || hw == CpuLevel::kDotprod || hw == CpuLevel::kI8mm;
  switch (v) {
    case Variant::kScalar: return true;
#if defined(__x86_64__) || defined(_M_X64)
#if KAZEIA_AVX2_TABLES
    case Variant::kAvx2: return x86;
#endif
#if KAZEIA_AVXVNNI_TABLES
    // AVX-VNNI is reported only with AVX2 enabled; re-read the hardware,
    // since cpu_features() masks the flag when the override is scalar.
    case Variant::kAvx2Vnni: return x86 && detect_cpu_features_hw().avx_vnni;
#endif
#if KAZEIA_AVX512_TABLES
    case Variant::kAvx512: return hw == CpuLevel::kAvx512;
    case Variant::kAvx512Amx: return hw == CpuLevel::kAvx512 && x86::amx_usable();
#endif
#if KAZEIA_AVX512_EMULATED
    case Variant::kAvx512Emulated: return x86;  // AVX2, FMA, F16C, BMI2: what the emulation is built for
#endif
#if KAZEIA_AVX512_EMULATED == 2
    case Variant::kAvx2VnniEmulated: return x86;
#endif
#endif
    case Variant::kNeon: return arm;
    case Variant::kDotprod: return arm && hw >= CpuLevel::kDotprod;
    case Variant::kI8mm: return arm && hw >= CpuLevel::kI8mm;
    default: return false;
  }
}

// Built on first use, and only for runnable variants: a fill function is
// compiled for its ISA and may use its instructions itself.
const KernelTable& table_of(Variant v) {
  static std::once_flag once[static_cast<int>(Variant::kCount)];
  static KernelTable tables[static_cast<int>(Variant::kCount)];
  const int i = static_cast<int>(v);
  std::call_once(once[i], [&] { tables[i] = build(v); });
  return tables[i];
}

// The variant a level runs as on this CPU (kAvx2 with VNNI, kAvx512 with
// AMX when present).
Variant variant_of(CpuLevel level, bool avx_vnni) {
  switch (level) {
    case CpuLevel::kAvx2: return avx_vnni ? Variant::kAvx2Vnni : Variant::kAvx2;
    case CpuLevel::kAvx512: return runnable(Variant::kAvx512Amx) ? Variant::kAvx512Amx : Variant::kAvx512;
    case CpuLevel::kNeon: return Variant::kNeon;
    case CpuLevel::kDotprod: return Variant::kDotprod;
    case CpuLevel::kI8mm: return Variant::kI8mm;
    default: return Variant::kScalar;
  }
}

// set_active_kernels_override's table; read on every active_kernels() call.
std::atomic<const KernelTable*> g_override{nullptr};

}  // namespace

const KernelTable& active_kernels() {
  if (const KernelTable* o = g_override.load(std::memory_order_acquire)) return *o;
  static const KernelTable* active = [] {
    const CpuFeatures& f = cpu_features();
    Variant v = variant_of(f.level, f.avx_vnni);
    if (!runnable(v)) v = Variant::kScalar;  // a build without that ISA's kernels
    return &table_of(v);
  }();
  return *active;
}

const KernelTable* kernel_table(CpuLevel level) {
  const Variant v = variant_of(level, level == CpuLevel::kAvx2 && runnable(Variant::kAvx2Vnni));
  if (v == Variant::kScalar && level != CpuLevel::kScalar) return nullptr;
  return runnable(v) ? &table_of(v) : nullptr;
}

const KernelTable* set_active_kernels_override(const KernelTable* table) {
  return g_override.exchange(table, std::memory_order_acq_rel);
}

Result<const KernelTable*> kernel_table_with_settings(const std::string& settings) {
  static constexpr const char* kNames[] = {"KAZEIA_CPU_LEVEL", "KAZEIA_DECODE_WALK", "KAZEIA_LANE_PREFETCH",
                                           "KAZEIA_TOKEN_TILES", "KAZEIA_AMX", "KAZEIA_ROW_KERNELS"};
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t start = 0; start <= settings.size();) {
    size_t end = settings.find(',', start);
    if (end == std::string::npos) end = settings.size();
    const std::string item = settings.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (eq == std::string::npos || std::none_of(std::begin(kNames), std::end(kNames), [&](const char* n) { return name == n; })) {
      std::string names;
      for (const char* n : kNames) names += std::string(names.empty() ? "" : ", ") + n;
      return InvalidArgument("kernel setting '" + item + "': expected NAME=VALUE with NAME one of " + names);
    }
    pairs.emplace_back(name, item.substr(eq + 1));
  }
  const CpuFeatures& f = cpu_features();
  CpuLevel level = f.level;
  bool amx = true;
  for (const auto& [name, value] : pairs) {
    if (name == "KAZEIA_CPU_LEVEL") {
      const std::optional<CpuLevel> want = parse_cpu_level(value);
      if (!want || *want > f.hw_level || kernel_table(*want) == nullptr)
        return InvalidArgument("kernel setting KAZEIA_CPU_LEVEL=" + value + ": not a level this build and CPU run (hardware: " +
                               cpu_level_name(f.hw_level) + ")");
      level = *want;
    }
    if (name == "KAZEIA_AMX") amx = value != "0";
  }
  Variant v = variant_of(level, level == CpuLevel::kAvx2 && runnable(Variant::kAvx2Vnni));
  if (v == Variant::kAvx512Amx && !amx) v = Variant::kAvx512;
  if (!runnable(v)) v = Variant::kScalar;
  // The fill functions read their settings from the environment while the
  // table is built: set them for that time, then put everything back.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const auto& [name, value] : pairs) {
    const char* old = std::getenv(name.c_str());
    saved.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
    setenv(name.c_str(), value.c_str(), 1);
  }
  auto table = std::make_unique<KernelTable>(build(v));
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
    else unsetenv(it->first.c_str());
  }
  static std::vector<std::unique_ptr<KernelTable>> kept;
  kept.push_back(std::move(table));
  return kept.back().get();
}

std::vector<const KernelTable*> available_kernel_tables() {
  std::vector<const KernelTable*> out;
  for (int v = 0; v < static_cast<int>(Variant::kCount); ++v) {
    if (runnable(static_cast<Variant>(v))) out.push_back(&table_of(static_cast<Variant>(v)));
  }
  return out;
}

}  // namespace kazeia::kernels
