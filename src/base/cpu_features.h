// CPU feature detection for kernel dispatch, done once and cached.
//
// x86-64: cpuid for what the CPU implements, xgetbv (XCR0) for what the OS
// saves on context switch. Both are needed: a CPU with AVX-512 under an OS
// (or hypervisor) that does not enable ZMM state faults on the first ZMM
// instruction. aarch64 Linux: getauxval(AT_HWCAP/AT_HWCAP2), which already
// reflects kernel support.
//
// Kernels dispatch on an ordered level; finer features are plain flags.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kazeia {

// Dispatch levels. Each is ordered only against levels of its own
// architecture (x86: scalar < avx2 < avx512; arm: scalar < neon < dotprod <
// i8mm). The other architecture's levels never occur on a given machine, so
// `level >= CpuLevel::kAvx2` is meaningful wherever it compiles and runs.
//
// Each level implies exactly the compiler flags that cmake/KazeiaLayer.cmake
// gives the matching *_avx2.cpp / *_avx512.cpp / *_dotprod.cpp / *_i8mm.cpp
// sources, so a kernel compiled for a level never executes an instruction
// the level does not guarantee:
//   avx2:    AVX AVX2 FMA F16C BMI2 (+ OS YMM state)
//   avx512:  avx2 + AVX512 F BW VL DQ VNNI (+ OS ZMM/opmask state)
//   neon:    ASIMD (always on aarch64)
//   dotprod: neon + ASIMDDP + ASIMDHP (fp16 arithmetic)
//   i8mm:    dotprod + I8MM
enum class CpuLevel : uint8_t {
  kScalar = 0,
  kAvx2 = 1,
  kAvx512 = 2,
  kNeon = 11,
  kDotprod = 12,
  kI8mm = 13,
};

const char* cpu_level_name(CpuLevel level);
// "scalar", "avx2", "avx512", "neon", "dotprod", "i8mm" (case-insensitive).
std::optional<CpuLevel> parse_cpu_level(std::string_view text);

// Who made the CPU (x86 CPUID leaf 0), for choices that depend on the
// microarchitecture rather than on an instruction set (how the hardware
// prefetchers follow a kernel's reads).
enum class CpuVendor : uint8_t { kOther = 0, kIntel = 1, kAmd = 2 };
const char* cpu_vendor_name(CpuVendor vendor);

struct CpuFeatures {
  CpuVendor vendor = CpuVendor::kOther;
  // x86 family (CPUID leaf 1: base family, plus the extended family when
  // the base is 0xF): AMD 0x17 = Zen 1 / Zen 2, 0x19 = Zen 3 / Zen 4,
  // 0x1A = Zen 5. 0 elsewhere.
  unsigned family = 0;
  // x86-64. YMM/ZMM/AMX flags are set only if the OS enabled the state too.
  bool sse42 = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool bmi2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
  bool avx512fp16 = false;
  bool avx_vnni = false;  // VEX-encoded VNNI (Alder Lake+, Zen 5): an avx2-level option
  // AMX: hardware + XCR0 state only. On Linux a process must still request
  // the tile data permission (arch_prctl ARCH_REQ_XCOMP_PERM) before use.
  bool amx_tile = false;
  bool amx_int8 = false;
  bool amx_bf16 = false;

  // aarch64.
  bool neon = false;
  bool dotprod = false;  // SDOT/UDOT
  bool i8mm = false;     // SMMLA/UMMLA/USDOT
  bool fp16 = false;     // ASIMDHP: half-precision vector arithmetic
  bool bf16 = false;
  bool sve = false;

  // What the hardware and OS support, and what dispatch should use. `level`
  // is lower than `hw_level` only when KAZEIA_CPU_LEVEL asks for it; the
  // flags above are then masked to that level too, so code that tests a flag
  // directly cannot bypass the override.
  CpuLevel hw_level = CpuLevel::kScalar;
  CpuLevel level = CpuLevel::kScalar;
};

// Detected on first call (thread-safe), then cached. Honors
// KAZEIA_CPU_LEVEL: a level at most the hardware's (for testing slower
// paths); a higher or unknown value is ignored with a warning.
const CpuFeatures& cpu_features();
inline CpuLevel cpu_level() { return cpu_features().level; }

// Space-separated names of the set flags, e.g. "AVX2 FMA F16C AVX512F ...".
std::string cpu_features_string(const CpuFeatures& f);

// Tests only: re-runs detection (re-reading KAZEIA_CPU_LEVEL) into the cached
// object and returns it. Not safe while other threads read cpu_features().
const CpuFeatures& redetect_cpu_features_for_testing();

// Pure parts of the above, exposed so tests can feed them any hardware.
CpuFeatures detect_cpu_features_hw();  // no env override applied
// Applies a KAZEIA_CPU_LEVEL-style request (nullptr/empty: none) to `hw`.
CpuFeatures apply_cpu_level_override(const CpuFeatures& hw, const char* request);

}  // namespace kazeia
