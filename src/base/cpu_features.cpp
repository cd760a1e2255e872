#include "base/cpu_features.h"

#include <cctype>
#include <cstdlib>

#include "base/log.h"

#if defined(__x86_64__) || defined(_M_X64)
#define KZ_CPU_X86 1
#include <cpuid.h>
#elif defined(__aarch64__)
#define KZ_CPU_ARM 1
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#endif

namespace kazeia {
namespace {

[[maybe_unused]] bool is_x86_level(CpuLevel l) { return l == CpuLevel::kAvx2 || l == CpuLevel::kAvx512; }
[[maybe_unused]] bool is_arm_level(CpuLevel l) {
  return l == CpuLevel::kNeon || l == CpuLevel::kDotprod || l == CpuLevel::kI8mm;
}

#if KZ_CPU_X86
constexpr const char* kArchName = "x86-64";
bool level_for_this_arch(CpuLevel l) { return !is_arm_level(l); }

// XCR0: which register state the OS saves. _xgetbv() would need -mxsave on
// this file, which must stay baseline; the instruction itself is harmless
// once CPUID says OSXSAVE.
uint64_t xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

void detect_hw(CpuFeatures& f) {
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return;
  unsigned a, b, c, d;
  // Leaf 0: the vendor string, in EBX EDX ECX.
  __cpuid(0, a, b, c, d);
  const unsigned ebx = b, ecx = c, edx = d;
  if (ebx == 0x756E6547u && edx == 0x49656E69u && ecx == 0x6C65746Eu) f.vendor = CpuVendor::kIntel;  // GenuineIntel
  if (ebx == 0x68747541u && edx == 0x69746E65u && ecx == 0x444D4163u) f.vendor = CpuVendor::kAmd;    // AuthenticAMD
  __cpuid_count(1, 0, a, b, c, d);
  const unsigned base_family = (a >> 8) & 0xF;
  f.family = base_family == 0xF ? base_family + ((a >> 20) & 0xFF) : base_family;
  f.sse42 = c & (1u << 20);
  bool osxsave = c & (1u << 27);
  uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  bool os_ymm = (xcr0 & 0x6) == 0x6;                // SSE + AVX state
  bool os_zmm = os_ymm && (xcr0 & 0xE0) == 0xE0;    // opmask + ZMM_Hi256 + Hi16_ZMM
  bool os_amx = (xcr0 & 0x60000) == 0x60000;        // XTILECFG + XTILEDATA
  f.avx = os_ymm && (c & (1u << 28));
  f.fma = f.avx && (c & (1u << 12));
  f.f16c = f.avx && (c & (1u << 29));
  if (max_leaf < 7) return;

  __cpuid_count(7, 0, a, b, c, d);
  unsigned max_sub7 = a;
  f.bmi2 = b & (1u << 8);
  f.avx2 = f.avx && (b & (1u << 5));
  f.avx512f = os_zmm && (b & (1u << 16));
  f.avx512dq = f.avx512f && (b & (1u << 17));
  f.avx512bw = f.avx512f && (b & (1u << 30));
  f.avx512vl = f.avx512f && (b & (1u << 31));
  f.avx512vnni = f.avx512f && (c & (1u << 11));
  f.avx512fp16 = f.avx512f && (d & (1u << 23));
  f.amx_bf16 = os_amx && (d & (1u << 22));
  f.amx_tile = os_amx && (d & (1u << 24));
  f.amx_int8 = os_amx && (d & (1u << 25));
  if (max_sub7 >= 1) {
    __cpuid_count(7, 1, a, b, c, d);
    f.avx_vnni = f.avx && (a & (1u << 4));
    f.avx512bf16 = f.avx512f && (a & (1u << 5));
  }
}

CpuLevel level_of(const CpuFeatures& f) {
  bool l_avx2 = f.avx && f.avx2 && f.fma && f.f16c && f.bmi2;
  if (!l_avx2) return CpuLevel::kScalar;
  bool l_avx512 = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni;
  return l_avx512 ? CpuLevel::kAvx512 : CpuLevel::kAvx2;
}

void mask_to(CpuFeatures& f, CpuLevel level) {
  if (level < CpuLevel::kAvx512) {
    f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512vnni = false;
    f.avx512bf16 = f.avx512fp16 = f.amx_tile = f.amx_int8 = f.amx_bf16 = false;
  }
  if (level < CpuLevel::kAvx2) f.avx = f.avx2 = f.fma = f.f16c = f.bmi2 = f.avx_vnni = false;
}

#elif KZ_CPU_ARM
constexpr const char* kArchName = "aarch64";
bool level_for_this_arch(CpuLevel l) { return !is_x86_level(l); }

// Bit values from the kernel's uapi <asm/hwcap.h>, spelled out so that an
// older libc header does not break the build.
constexpr unsigned long kHwcapAsimdhp = 1ul << 10;
constexpr unsigned long kHwcapAsimddp = 1ul << 20;
constexpr unsigned long kHwcapSve = 1ul << 22;
constexpr unsigned long kHwcap2I8mm = 1ul << 13;
constexpr unsigned long kHwcap2Bf16 = 1ul << 14;

void detect_hw(CpuFeatures& f) {
  f.neon = true;  // ASIMD is mandatory in the AArch64 Linux ABI
#if defined(__linux__)
  unsigned long hw = getauxval(AT_HWCAP);
  unsigned long hw2 = getauxval(AT_HWCAP2);
  f.fp16 = hw & kHwcapAsimdhp;
  f.dotprod = hw & kHwcapAsimddp;
  f.sve = hw & kHwcapSve;
  f.i8mm = hw2 & kHwcap2I8mm;
  f.bf16 = hw2 & kHwcap2Bf16;
#endif
}

CpuLevel level_of(const CpuFeatures& f) {
  if (!f.neon) return CpuLevel::kScalar;
  if (!(f.dotprod && f.fp16)) return CpuLevel::kNeon;
  return f.i8mm ? CpuLevel::kI8mm : CpuLevel::kDotprod;
}

void mask_to(CpuFeatures& f, CpuLevel level) {
  if (level < CpuLevel::kI8mm) f.i8mm = f.bf16 = f.sve = false;
  if (level < CpuLevel::kDotprod) f.dotprod = f.fp16 = false;
  if (level < CpuLevel::kNeon) f.neon = false;
}

#else
constexpr const char* kArchName = "unknown";
bool level_for_this_arch(CpuLevel l) { return l == CpuLevel::kScalar; }
void detect_hw(CpuFeatures&) {}
CpuLevel level_of(const CpuFeatures&) { return CpuLevel::kScalar; }
void mask_to(CpuFeatures&, CpuLevel) {}
#endif

CpuFeatures& cached() {
  static CpuFeatures f = apply_cpu_level_override(detect_cpu_features_hw(), std::getenv("KAZEIA_CPU_LEVEL"));
  return f;
}

}  // namespace

const char* cpu_vendor_name(CpuVendor vendor) {
  switch (vendor) {
    case CpuVendor::kIntel: return "Intel";
    case CpuVendor::kAmd: return "AMD";
    case CpuVendor::kOther: break;
  }
  return "other";
}

const char* cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::kScalar: return "scalar";
    case CpuLevel::kAvx2: return "avx2";
    case CpuLevel::kAvx512: return "avx512";
    case CpuLevel::kNeon: return "neon";
    case CpuLevel::kDotprod: return "dotprod";
    case CpuLevel::kI8mm: return "i8mm";
  }
  return "?";
}

std::optional<CpuLevel> parse_cpu_level(std::string_view text) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (CpuLevel l : {CpuLevel::kScalar, CpuLevel::kAvx2, CpuLevel::kAvx512, CpuLevel::kNeon,
                     CpuLevel::kDotprod, CpuLevel::kI8mm}) {
    if (s == cpu_level_name(l)) return l;
  }
  return std::nullopt;
}

CpuFeatures detect_cpu_features_hw() {
  CpuFeatures f;
  detect_hw(f);
  f.hw_level = f.level = level_of(f);
  return f;
}

CpuFeatures apply_cpu_level_override(const CpuFeatures& hw, const char* request) {
  CpuFeatures f = hw;
  if (request == nullptr || *request == '\0') return f;
  std::optional<CpuLevel> want = parse_cpu_level(request);
  if (!want) {
    KZ_LOG_WARN("KAZEIA_CPU_LEVEL='%s' is not a level (scalar, avx2, avx512, neon, dotprod, "
                "i8mm); ignored, using %s", request, cpu_level_name(hw.hw_level));
    return f;
  }
  if (!level_for_this_arch(*want)) {
    KZ_LOG_WARN("KAZEIA_CPU_LEVEL=%s does not apply to %s; ignored, using %s",
                cpu_level_name(*want), kArchName, cpu_level_name(hw.hw_level));
    return f;
  }
  // Never raise: running instructions the CPU lacks would crash (SIGILL) or
  // worse, silently compute garbage under an emulator.
  if (*want > hw.hw_level) {
    KZ_LOG_WARN("KAZEIA_CPU_LEVEL=%s is above what this CPU supports; using %s",
                cpu_level_name(*want), cpu_level_name(hw.hw_level));
    return f;
  }
  f.level = *want;
  mask_to(f, f.level);
  if (f.level != hw.hw_level) {
    KZ_LOG_INFO("KAZEIA_CPU_LEVEL: dispatch forced down to %s (hardware: %s)",
                cpu_level_name(f.level), cpu_level_name(hw.hw_level));
  }
  return f;
}

const CpuFeatures& cpu_features() { return cached(); }

const CpuFeatures& redetect_cpu_features_for_testing() {
  CpuFeatures& f = cached();
  f = apply_cpu_level_override(detect_cpu_features_hw(), std::getenv("KAZEIA_CPU_LEVEL"));
  return f;
}

std::string cpu_features_string(const CpuFeatures& f) {
  struct Named { bool on; const char* name; };
  const Named flags[] = {
      {f.sse42, "SSE4.2"}, {f.avx, "AVX"}, {f.avx2, "AVX2"}, {f.fma, "FMA"}, {f.f16c, "F16C"},
      {f.bmi2, "BMI2"}, {f.avx512f, "AVX512F"}, {f.avx512bw, "AVX512BW"},
      {f.avx512vl, "AVX512VL"}, {f.avx512dq, "AVX512DQ"}, {f.avx512vnni, "AVX512_VNNI"},
      {f.avx512bf16, "AVX512_BF16"}, {f.avx512fp16, "AVX512_FP16"}, {f.avx_vnni, "AVX_VNNI"},
      {f.amx_tile, "AMX_TILE"}, {f.amx_int8, "AMX_INT8"}, {f.amx_bf16, "AMX_BF16"},
      {f.neon, "NEON"}, {f.dotprod, "DOTPROD"}, {f.i8mm, "I8MM"}, {f.fp16, "FP16"},
      {f.bf16, "BF16"}, {f.sve, "SVE"},
  };
  std::string out;
  for (const Named& n : flags) {
    if (!n.on) continue;
    if (!out.empty()) out += ' ';
    out += n.name;
  }
  return out;
}

}  // namespace kazeia
