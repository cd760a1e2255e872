// AMX-INT8 prefill strips for Q4_0 and Q8_0 weights (x Q8_0 activations):
// 16 weight rows x 16 tokens per tile product, one 32-element block at a
// time, so every (row, token, block) integer sum is exact (TDPBSSD, signed
// x signed, no bias) and the float update afterwards is the reference's,
// vectorised across the 16 tokens:
//   Q4_0: acc = fma(sumi * d_w, d_x, acc)   Q8_0: acc = fma(d_w * d_x, sumi, acc)
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
#include "kernels/x86/exact_float.h"  // first: before any code

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "kernels/x86/token_groups_avx512.h"
#include "kernels/x86/x86_kernels.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace kazeia::kernels::x86 {
namespace {

constexpr int kBlock = 32;
constexpr int kTokens = 16;                // tokens per group (tile columns)
constexpr size_t kActBlockBytes = Q8Group<0>::kBlockBytes;  // q words, then d (token_groups_avx512.h)
constexpr size_t kPanelBlockBytes = 16 * kBlock + 16 * sizeof(float);

struct TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0-3: C (16 x 16 int32), four blocks' sums; 4, 5: A (16 rows x 32
// bytes); 6, 7: B (8 rows x 64 bytes). Four independent products are in
// flight before the first of their sums is stored: a tile store waits for
// its product, and with one or two in flight the unit sat idle on it.
void configure_tiles() {
  thread_local bool configured = false;
  if (configured) return;
  alignas(64) TileConfig cfg;
  for (int c = 0; c < 4; ++c) cfg.colsb[c] = 64, cfg.rows[c] = 16;
  for (int t = 4; t < 6; ++t) cfg.colsb[t] = 32, cfg.rows[t] = 16;
  for (int t = 6; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 8;
  _tile_loadconfig(&cfg);
  configured = true;
}

// The 16 tokens' words and scales per block (token_groups_avx512.h).
using Group = Q8Group<0>;

size_t tile_scratch_bytes(int64_t n_in, int64_t) { return static_cast<size_t>(n_in / kBlock) * kPanelBlockBytes; }

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
  static_for<16>([&](auto r) {
    const __m512 s = _mm512_cvtepi32_ps(_mm512_load_si512(sums + 16 * r));
    const __m512 d = _mm512_set1_ps(dw[r]);
    if constexpr (kQ4) {
      acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(s, d), dx, acc[r]);
    } else {
      acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(d, dx), s, acc[r]);
    }
  });
}

// flatten: the static_for lambdas inlined too (GCC left some out of line, and
// the accumulators went back to memory).
template <bool kQ4>
[[gnu::flatten]] void amx_strip(const StripArgs& a) {
  configure_tiles();
  const int64_t nb = a.n_in / kBlock;
  uint8_t* panel = a.scratch;  // tile_scratch_bytes: the unpacked strip
  pack_panel<kQ4>(a, nb, panel);
  // Blocks go in batches of four (tiles 0-3); the sums of batch i are
  // turned into floats while batch i + 1's products run.
  alignas(64) int32_t sums[2][4][16 * 16];
  const int64_t n_tok = a.x.n_tokens;
  const int64_t n_batches = nb / 4;
  auto act_block = [&](const uint8_t* group, int64_t b) { return group + static_cast<size_t>(b) * kActBlockBytes; };
  auto panel_block = [&](int64_t b) { return panel + static_cast<size_t>(b) * kPanelBlockBytes; };
  // The next strip's rows (matmul passes them) are fetched into L2 a slice
  // per token group: unpacked at the start of the next call, they would
  // otherwise come from memory while the tile unit waits.
  const size_t lines_per_group = a.prefetch_lines_per((n_tok + kTokens - 1) / kTokens);
  // Each token's 16 results are one cache line of y when the rows are
  // whole and y is line-aligned. A strip writes a line per token, 512
  // tokens a row of y apart: as plain stores each fetched its line first,
  // from memory (a big y is not cached), ~15 % of a 512-token matmul.
  // Non-temporal stores write the lines without reading them.
  const bool stream = a.stream_lines();
  for (int64_t t0 = 0; t0 < n_tok; t0 += kTokens) {
    const uint8_t* group = a.tiles + static_cast<size_t>(t0 / kTokens) * a.tile_group_bytes;
    const uint8_t* next = a.prefetch + 64 * lines_per_group * static_cast<size_t>(t0 / kTokens);
    for (size_t l = 0; l < lines_per_group; ++l) _mm_prefetch(reinterpret_cast<const char*>(next + 64 * l), _MM_HINT_T1);
    __m512 acc[16];
    static_for<16>([&](auto r) { acc[r] = _mm512_setzero_ps(); });
    auto finish = [&](const int32_t* s32, int64_t b) {
      finish_block<kQ4>(s32, panel_block(b), reinterpret_cast<const float*>(act_block(group, b) + Group::kScales), acc);
    };
    // Each product of batch i is issued next to the float finish of one block
    // of batch i - 1 (stored one batch earlier), and batch i's sums are
    // stored last: finishing the whole previous batch after the stores left
    // the vector ports idle while the products ran. No software prefetch of
    // the next activation blocks: they come from L2 either way, and the 36
    // prefetches per batch cost more than they saved (a standalone copy of
    // this loop: 131 -> 110 ns per batch).
    for (int64_t i = 0; i <= n_batches; ++i) {
      const int32_t(*prev)[16 * 16] = i > 0 ? sums[(i + 1) % 2] : nullptr;
      const int64_t pb = 4 * (i - 1);
      if (i < n_batches) {
        const int64_t b = 4 * i;
        int32_t(*dst)[16 * 16] = sums[i % 2];
        // (The tile intrinsics take literal tile numbers: written out.)
        _tile_zero(0);
        _tile_loadd(4, panel_block(b), kBlock);
        _tile_loadd(6, act_block(group, b), 64);
        _tile_dpbssd(0, 4, 6);
        if (prev != nullptr) finish(prev[0], pb);
        _tile_zero(1);
        _tile_loadd(5, panel_block(b + 1), kBlock);
        _tile_loadd(7, act_block(group, b + 1), 64);
        _tile_dpbssd(1, 5, 7);
        if (prev != nullptr) finish(prev[1], pb + 1);
        _tile_zero(2);
        _tile_loadd(4, panel_block(b + 2), kBlock);
        _tile_loadd(6, act_block(group, b + 2), 64);
        _tile_dpbssd(2, 4, 6);
        if (prev != nullptr) finish(prev[2], pb + 2);
        _tile_zero(3);
        _tile_loadd(5, panel_block(b + 3), kBlock);
        _tile_loadd(7, act_block(group, b + 3), 64);
        _tile_dpbssd(3, 5, 7);
        if (prev != nullptr) finish(prev[3], pb + 3);
        _tile_stored(0, dst[0], 64);
        _tile_stored(1, dst[1], 64);
        _tile_stored(2, dst[2], 64);
        _tile_stored(3, dst[3], 64);
      } else if (prev != nullptr) {
        for (int j = 0; j < 4; ++j) finish(prev[j], pb + j);
      }
    }
    for (int64_t b = 4 * n_batches; b < nb; ++b) {  // the last nb % 4 blocks
      _tile_zero(0);
      _tile_loadd(4, panel_block(b), kBlock);
      _tile_loadd(6, act_block(group, b), 64);
      _tile_dpbssd(0, 4, 6);
      _tile_stored(0, sums[0][0], 64);
      finish(sums[0][0], b);
    }
    // acc[r] holds row r for the 16 tokens; y wants each token's rows side
    // by side.
    store_token_rows(acc, a.y + static_cast<size_t>(t0) * a.ldy, a.ldy, n_tok - t0 < kTokens ? n_tok - t0 : kTokens,
                     static_cast<int>(a.n_rows), stream);
  }
  if (stream) _mm_sfence();  // visible to whoever reads y after this returns
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
    k.tile_group_bytes = &Group::bytes;
    k.tile_acts = &Group::build;
    k.tile_scratch_bytes = &tile_scratch_bytes;
    k.tile_isa = "amx";
    k.tile_above = 4;
  }
}

}  // namespace kazeia::kernels::x86
