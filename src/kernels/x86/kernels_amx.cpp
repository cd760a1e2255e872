// AMX-INT8 prefill strips for Q4_0 and Q8_0 weights (x Q8_0 activations):
// 16 weight rows x 16 tokens per tile product, one 32-element block at a
// time, so every (row, token, block) integer sum is exact (TDPBSSD, signed
// x signed, no bias) and the float update afterwards is the reference's,
// vectorised across the 16 tokens:
//   Q4_0: acc += (sumi * d_w) * d_x        Q8_0: acc += (d_w * d_x) * sumi
// The results are bit-identical to ref::vec_dot_q4_0 / _q8_0 (and so to
// every other variant), whatever the batch.
//
// Operands:
//  - A (weights): the strip unpacked once into the thread's panel, per
//    block 16 rows x 32 signed bytes (Q4_0: nibble - 8) and 16 scales.
//  - B (activations): matmul interleaves the tokens once per call in groups
//    of 16 (tile_acts): per block 8 rows of 64 bytes (row w = word w of the
//    16 tokens, the layout TDPBSSD reads) and the 16 tokens' scales.
// Compiled with AMX flags; used only when amx_usable() (CPUID and the
// kernel's permission for the tile data state).
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/x86/x86_kernels.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
// GCC 12 reports its own _mm*_undefined_* idiom in the intrinsics headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace kazeia::kernels::x86 {
namespace {

constexpr int kBlock = 32;
constexpr int kTokens = 16;                // tokens per group (tile columns)
constexpr size_t kActBlockBytes = 8 * 64 + 16 * sizeof(float);  // q words, then d
constexpr size_t kPanelBlockBytes = 16 * kBlock + 16 * sizeof(float);

struct TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0, 3: C (16 x 16 int32); 1, 4: A (16 rows x 32 bytes); 2, 5: B
// (8 rows x 64 bytes). Two sets, so one block's product runs while the
// previous one's sums are turned into floats.
void configure_tiles() {
  thread_local bool configured = false;
  if (configured) return;
  alignas(64) TileConfig cfg;
  for (int set = 0; set < 2; ++set) {
    cfg.colsb[3 * set] = 64, cfg.rows[3 * set] = 16;
    cfg.colsb[3 * set + 1] = 32, cfg.rows[3 * set + 1] = 16;
    cfg.colsb[3 * set + 2] = 64, cfg.rows[3 * set + 2] = 8;
  }
  _tile_loadconfig(&cfg);
  configured = true;
}

size_t tile_group_bytes(int64_t n_in) { return static_cast<size_t>(n_in / kBlock) * kActBlockBytes; }

// Up to 16 Q8_0 rows into one group; missing tokens are zeros.
void tile_acts(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out) {
  const int64_t nb = n_in / kBlock;
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* dst = out + static_cast<size_t>(b) * kActBlockBytes;
    float d[kTokens] = {};
    std::memset(dst, 0, 8 * 64);
    for (int t = 0; t < n; ++t) {
      BlockQ8_0 blk;
      std::memcpy(&blk, q + static_cast<size_t>(t) * q_stride + static_cast<size_t>(b) * sizeof(BlockQ8_0), sizeof(blk));
      d[t] = fp16_to_fp32(blk.d);
      for (int w = 0; w < 8; ++w) std::memcpy(dst + 64 * w + 4 * t, blk.qs + 4 * w, 4);
    }
    std::memcpy(dst + 8 * 64, d, sizeof(d));
  }
}

// The strip's 16 rows (the last real row repeated) unpacked per block.
template <bool kQ4>
void pack_panel(const StripArgs& a, int64_t nb, uint8_t* panel) {
  constexpr size_t kBytes = kQ4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  for (int r = 0; r < 16; ++r) {
    const int64_t rr = r < a.n_rows ? r : a.n_rows - 1;
    const uint8_t* row = a.w + static_cast<size_t>(rr) * a.w_stride;
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = row + static_cast<size_t>(b) * kBytes;
      uint8_t* pb = panel + static_cast<size_t>(b) * kPanelBlockBytes;
      auto* w = reinterpret_cast<int8_t*>(pb + r * kBlock);
      uint16_t d;
      std::memcpy(&d, blk, 2);
      const float df = _cvtsh_ss(d);
      std::memcpy(pb + 16 * kBlock + r * sizeof(float), &df, sizeof(float));
      if constexpr (kQ4) {  // elements j and j + 16 share byte j
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        const __m128i nib = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
        _mm_store_si128(reinterpret_cast<__m128i*>(w), _mm_sub_epi8(_mm_and_si128(q, nib), eight));
        _mm_store_si128(reinterpret_cast<__m128i*>(w + 16),
                        _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), nib), eight));
      } else {
        std::memcpy(w, blk + 2, kBlock);
      }
    }
  }
}

template <bool kQ4>
[[gnu::always_inline]] inline void finish_block(const int32_t* sums, const uint8_t* panel_block, const float* dx_ptr,
                                                __m512 acc[16]) {
  const __m512 dx = _mm512_loadu_ps(dx_ptr);
  const auto* dw = reinterpret_cast<const float*>(panel_block + 16 * kBlock);
  for (int r = 0; r < 16; ++r) {
    const __m512 s = _mm512_cvtepi32_ps(_mm512_load_si512(sums + 16 * r));
    const __m512 d = _mm512_set1_ps(dw[r]);
    if constexpr (kQ4) {
      acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(_mm512_mul_ps(s, d), dx));
    } else {
      acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(_mm512_mul_ps(d, dx), s));
    }
  }
}

template <bool kQ4>
void amx_strip(const StripArgs& a) {
  configure_tiles();
  const int64_t nb = a.n_in / kBlock;
  thread_local std::vector<uint8_t> panel_buf;
  const size_t panel_bytes = static_cast<size_t>(nb) * kPanelBlockBytes + 64;
  if (panel_buf.size() < panel_bytes) panel_buf.resize(panel_bytes);
  uint8_t* panel = panel_buf.data() + ((64 - reinterpret_cast<uintptr_t>(panel_buf.data()) % 64) % 64);
  pack_panel<kQ4>(a, nb, panel);
  // The sums of a block are read back kLag blocks after their tile store:
  // a tile store followed at once by vector loads of the same lines stalls
  // until the product and the store complete (~ the whole pipeline).
  constexpr int kLag = 4;
  alignas(64) int32_t sums[kLag + 1][16 * 16];
  alignas(64) float out[16][16];
  const int64_t n_tok = a.x.n_tokens;
  for (int64_t t0 = 0; t0 < n_tok; t0 += kTokens) {
    const uint8_t* group = a.tiles + static_cast<size_t>(t0 / kTokens) * a.tile_group_bytes;
    __m512 acc[16];
    for (auto& v : acc) v = _mm512_setzero_ps();
    // Block b's product on tile set b % 2 while block b - kLag is finished.
    for (int64_t b = 0; b < nb + kLag; ++b) {
      if (b < nb) {
        const uint8_t* pb = panel + static_cast<size_t>(b) * kPanelBlockBytes;
        const uint8_t* xb = group + static_cast<size_t>(b) * kActBlockBytes;
        int32_t* dst = sums[b % (kLag + 1)];
        // The group's blocks come from L2: ask for block b + 4 now.
        for (int l = 0; l < 9; ++l) _mm_prefetch(reinterpret_cast<const char*>(xb + 4 * kActBlockBytes + 64 * l), _MM_HINT_T0);
        if (b % 2 == 0) {
          _tile_zero(0);
          _tile_loadd(1, pb, kBlock);
          _tile_loadd(2, xb, 64);
          _tile_dpbssd(0, 1, 2);
          _tile_stored(0, dst, 64);
        } else {
          _tile_zero(3);
          _tile_loadd(4, pb, kBlock);
          _tile_loadd(5, xb, 64);
          _tile_dpbssd(3, 4, 5);
          _tile_stored(3, dst, 64);
        }
      }
      if (b >= kLag) {
        const int64_t pbk = b - kLag;
        finish_block<kQ4>(sums[pbk % (kLag + 1)], panel + static_cast<size_t>(pbk) * kPanelBlockBytes,
                          reinterpret_cast<const float*>(group + static_cast<size_t>(pbk) * kActBlockBytes + 8 * 64), acc);
      }
    }
    for (int r = 0; r < 16; ++r) _mm512_store_ps(out[r], acc[r]);
    const int64_t n = n_tok - t0 < kTokens ? n_tok - t0 : kTokens;
    for (int64_t t = 0; t < n; ++t) {
      float* y = a.y + static_cast<size_t>(t0 + t) * a.ldy;
      for (int64_t r = 0; r < a.n_rows; ++r) y[r] = out[r][t];
    }
  }
}

bool cpu_has_amx_int8() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool tile = (edx >> 24) & 1u, int8 = (edx >> 25) & 1u;
  if (!tile || !int8) return false;
  // The OS must enable the tile state in XCR0 (bits 17, 18)...
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !((ecx >> 27) & 1u)) return false;  // OSXSAVE
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((lo >> 17) & 3u) == 3u;
}

}  // namespace

bool amx_usable() {
  static const bool usable = [] {
    // KAZEIA_AMX=0 keeps the AVX-512 strips (for comparisons).
    if (const char* env = std::getenv("KAZEIA_AMX"); env != nullptr && std::strcmp(env, "0") == 0) return false;
    if (!cpu_has_amx_int8()) return false;
    // ...and Linux hands the (large) tile data state out on request only.
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return usable;
}

void fill_amx_kernels(KernelTable& table) {
  for (TensorType type : {TensorType::Q4_0, TensorType::Q8_0}) {
    WeightKernels& k = table.weights[static_cast<int>(type)];
    k.tile_strip = type == TensorType::Q4_0 ? &amx_strip<true> : &amx_strip<false>;
    k.tile_group_bytes = &tile_group_bytes;
    k.tile_acts = &tile_acts;
    k.tile_isa = "amx";
  }
}

}  // namespace kazeia::kernels::x86
