// Run-time kernel dispatch: one table of function pointers per CPU level,
// chosen once from cpu_level() (which honours KAZEIA_CPU_LEVEL).
//
// The scalar reference (src/kernels/ref) is always present and fills every
// slot no SIMD kernel claims, so a type without a SIMD kernel keeps working.
// x86 tables (avx2, avx2+AVX-VNNI, avx512) are filled by src/kernels/x86,
// ARM ones (neon, dotprod, i8mm) from src/kernels/arm/arm_kernels.h.
//
// Per weight type a table holds:
//  - dot: one weight row times one activation row (ref::VecDotFn), the unit
//    the tests compare against the reference;
//  - strip: up to strip_rows consecutive rows times any number of tokens,
//    what matmul() calls. x86 strips keep one row per SIMD lane ("rows in
//    lanes", see x86/strip_runner.h) and reuse the unpacked weights across
//    tokens;
//  - aux: optional per-token side data the strip kernel reads next to the
//    quantized activations (float block scales, integer block sums), built
//    once per matmul call;
// and per activation type the quantizer (bytes identical to the reference).
//
// Numerics: every variant computes the same exact integer block sums as the
// reference. For F32/F16/BF16 and the 32-element formats (Q4_0 .. Q8_0) the
// x86 kernels also apply the scales in the reference's float order, so they
// are bit-identical to ref::vec_dot_*; K-quant strips combine the
// super-block integers in their own (documented) float order, identical
// across x86 levels and token batching. See x86/strip_kquants.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "format/tensor_types.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"

namespace kazeia {
class ThreadPool;
}

namespace kazeia::kernels {

// The activations a strip kernel reads: n_tokens rows converted by
// quantize_activations (layout of vec_dot_type(weight)), plus for each token
// the aux row the table's aux function wrote (when aux_bytes is set).
struct ActivationRows {
  // token t at q + t * q_stride (F32 weights: the input floats, any
  // alignment); quantized rows are aligned as their blocks' scale (fp16 or
  // float).
  const uint8_t* q = nullptr;
  size_t q_stride = 0;
  const uint8_t* aux = nullptr;  // token t at aux + t * aux_stride; null without aux
  size_t aux_stride = 0;
  int64_t n_tokens = 0;
};

// One call of a strip kernel: rows [0, n_rows) of w (n_rows <= strip_rows)
// times every token of x, written to y[t * ldy + r].
struct StripArgs {
  int64_t n_in = 0;
  const uint8_t* w = nullptr;  // row r at w + r * w_stride, any alignment
  size_t w_stride = 0;
  int64_t n_rows = 0;
  ActivationRows x;
  float* y = nullptr;
  size_t ldy = 0;
  // scratch_bytes(n_in) bytes (tile strips: tile_scratch_bytes(n_in,
  // n_tokens)), 64-byte aligned, private to the thread.
  uint8_t* scratch = nullptr;
  // Lane streams (DecodeWalk::kLaneStreams, w_stride spanning several
  // rows): each row's lane prefetches its own stream lane_prefetch bytes
  // ahead while it is read (0: none), in rows of w_row_bytes. A lane's next
  // row follows its current one, so "ahead" runs on into it.
  size_t lane_prefetch = 0;
  size_t w_row_bytes = 0;
  // What the caller reads next, for the kernel to prefetch while it works
  // (null: nothing worth it).
  const uint8_t* prefetch = nullptr;
  size_t prefetch_bytes = 0;
  // Cache lines of `prefetch` per part, for a kernel that spreads them over
  // `parts` units of its work (the last part may reach past the end: hints
  // only). 0 when there is nothing to prefetch.
  size_t prefetch_lines_per(int64_t parts) const {
    const size_t per = 64 * static_cast<size_t>(parts);
    return prefetch == nullptr ? 0 : (prefetch_bytes + per - 1) / per;
  }
  ref::VecDotFn dot = nullptr;  // the table's dot for this type (generic strips loop over it)
  // The output is large (matmul: a MiB or more): a kernel may write it with
  // non-temporal stores (no line fetch before each write; the kernel fences
  // them before it returns).
  bool stream_y = false;
  // stream_y, and each token's 16 results are one whole, line-aligned cache
  // line of y: what a 16-lane strip needs to store them non-temporally.
  bool stream_lines() const {
    return stream_y && n_rows == 16 && reinterpret_cast<uintptr_t>(y) % 64 == 0 && ldy % 16 == 0;
  }
  // tile_strip only: the tokens interleaved by tile_acts, groups of 16
  // (the last one padded with zero tokens), tile_group_bytes apart.
  const uint8_t* tiles = nullptr;
  size_t tile_group_bytes = 0;
};

using StripFn = void (*)(const StripArgs& args);
using QuantizeActFn = void (*)(const float* x, int64_t n, uint8_t* out);
using AuxFn = void (*)(int64_t n_in, const uint8_t* q_row, uint8_t* aux_row);
using BytesFn = size_t (*)(int64_t n_in);
using TileScratchFn = size_t (*)(int64_t n_in, int64_t n_tokens);
using SoftmaxOnlineRowFn = float (*)(const float* s, int64_t valid, int64_t n, float scale, float* m,
                                     float* alpha, float* p);
using ReadStreamFn = uint64_t (*)(const uint8_t* p, size_t bytes);
using SiluFn = void (*)(const float* x, int64_t n, float* out);
using SwigluFn = void (*)(const float* gate, const float* up, int64_t n, float* out);
using SwigluRowsFn = void (*)(const float* gate, const float* up, int64_t n_rows, int64_t width, size_t ld_in,
                              float* out, size_t ld_out, bool stream);
using AbsRangeFn = void (*)(const float* x, int64_t n, float* min, float* max);
using ScaleFn = void (*)(const float* x, float s, int64_t n, float* out);
using TransposeF32Fn = void (*)(const float* src, size_t ld_src, int64_t rows, int64_t cols, float* dst,
                                size_t ld_dst);
// out = (x * s) op y: scale_mul (op *), scale_add (op +).
using ScaleCombineFn = void (*)(const float* x, float s, const float* y, int64_t n, float* out);
using SumSquaresFn = double (*)(const float* x, int64_t n);
using ConvSiluFn = void (*)(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps,
                            int64_t n, float* out);
using HalfToFloatFn = void (*)(const uint16_t* x, int64_t n, float* out);
using FloatToHalfFn = void (*)(const float* x, int64_t n, uint16_t* out);
// Interleaves n <= 16 activation rows (q_stride apart, q_stride <= 2^31 / 16:
// 32-bit offsets, matmul's limit for tile strips) into one token group.
using TileActsFn = void (*)(int64_t n_in, const uint8_t* q, size_t q_stride, int n, uint8_t* out);
using GemmF32AccFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b,
                              size_t ldb, float* c, size_t ldc);
using GemmF32F16bFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b,
                               size_t ldb, float* c, size_t ldc);
using GemmF32ScaledAccFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b,
                                    size_t ldb, float* c, size_t ldc, float scale, float* abs_min, float* abs_max);

struct WeightKernels {
  ref::VecDotFn dot = nullptr;  // nullptr: matmul does not support the type
  StripFn strip = nullptr;
  int strip_rows = 1;
  BytesFn aux_bytes = nullptr;  // null: no aux rows
  AuxFn aux = nullptr;
  BytesFn scratch_bytes = nullptr;  // null: no scratch
  const char* isa = "scalar";  // who implements strip: "scalar", "avx2", "avx512", ...
  // Optional prefill strip over tokens interleaved in groups of 16 (AMX
  // tiles, AVX-512 token tiles); matmul uses it for batches of more than
  // tile_above tokens (smaller ones take strip: a group of 16 would be
  // mostly padding). Same bits as strip.
  StripFn tile_strip = nullptr;
  BytesFn tile_group_bytes = nullptr;
  TileActsFn tile_acts = nullptr;
  TileScratchFn tile_scratch_bytes = nullptr;  // StripArgs::scratch of tile_strip (null: none)
  const char* tile_isa = nullptr;
  int64_t tile_above = 4;
  // A tiled batch's last tokens past a whole number of groups of 16, when
  // at most this many (<= tile_above), take strip in a second pass over
  // the weights instead of a group mostly of padding (0: always padded).
  int64_t tile_rest_max = 0;
};

// Type ids are small (tensor_types.h); the table is indexed by them.
inline constexpr int kMaxTypeId = 40;

// How a decode matmul (a few tokens: the weights stream through once) walks
// a thread's contiguous chunk of a matrix. Both give the same bits; which
// one reads memory faster depends on how the CPU's prefetchers follow the
// reads (measured: dispatch.cpp).
enum class DecodeWalk : uint8_t {
  // Lane r of the chunk's i-th strip takes row r * n + i (n strips): every
  // lane walks its own run of consecutive rows, 16 sequential streams, each
  // prefetched decode_lane_prefetch bytes ahead by software (0: left to the
  // hardware prefetchers).
  kLaneStreams,
  // Strips of consecutive rows in order, the next strip prefetched into L2
  // while one is computed: one sequential stream, fetched by software.
  kPrefetchedStrips,
};
const char* decode_walk_name(DecodeWalk walk);
// For this CPU: KAZEIA_DECODE_WALK=lanes|strips and KAZEIA_LANE_PREFETCH=
// bytes where set, else lane streams, prefetched as
// decode_lane_prefetch_for says.
DecodeWalk default_decode_walk();
size_t default_decode_lane_prefetch();
// The lane prefetch distance for a CPU: 1 KiB on AMD Zen 4 and later (CPU
// family 0x19 with AVX-512, 0x1A and up), none elsewhere (Zen 2 and Zen 3
// follow the lanes by themselves, measured in dispatch.cpp).
size_t decode_lane_prefetch_for(CpuVendor vendor, unsigned family, bool avx512f);

struct KernelTable {
  const char* name = "scalar";  // "scalar", "avx2", "avx2+vnni", "avx512", "neon", ...
  CpuLevel level = CpuLevel::kScalar;
  DecodeWalk decode_walk = DecodeWalk::kLaneStreams;
  size_t decode_lane_prefetch = 0;  // bytes ahead in each lane stream (kLaneStreams)
  WeightKernels weights[kMaxTypeId];
  QuantizeActFn quantize_q8_0 = nullptr;
  QuantizeActFn quantize_q8_1 = nullptr;
  QuantizeActFn quantize_q8_K = nullptr;
  GemmF32AccFn gemm_f32_acc = nullptr;  // C += A * B, bit-identical to ref::gemm_f32_acc
  GemmF32AccFn gemm_f32 = nullptr;      // C = A * B, bit-identical to ref::gemm_f32
  GemmF32ScaledAccFn gemm_f32_scaled_acc = nullptr;  // bit-identical to ref::gemm_f32_scaled_acc
  GemmF32F16bFn gemm_f32_f16b_acc = nullptr;  // bit-identical to ref::gemm_f32_f16b_acc
  GemmF32F16bFn gemm_f32_f16b = nullptr;      // bit-identical to ref::gemm_f32_f16b
  SoftmaxOnlineRowFn softmax_online_row = nullptr;  // bit-identical to the reference
  SiluFn silu = nullptr;      // bit-identical to ref::silu_approx
  SwigluFn swiglu = nullptr;  // bit-identical to ref::swiglu_approx
  SwigluFn sigmoid_mul = nullptr;  // bit-identical to ref::sigmoid_mul_approx
  SwigluRowsFn swiglu_rows = nullptr;  // bit-identical to ref::swiglu_rows
  ConvSiluFn conv_silu = nullptr;  // bit-identical to ref::conv_silu
  AbsRangeFn abs_range = nullptr;  // = ref::abs_range (exact)
  ScaleFn scale = nullptr;  // = ref::scale (one rounding per element: exact)
  ScaleCombineFn scale_mul = nullptr;  // = ref::scale_mul (two roundings per element, in its order: exact)
  ScaleCombineFn scale_add = nullptr;  // = ref::scale_add (x * s + y, two roundings: exact)
  TransposeF32Fn transpose_f32 = nullptr;  // = ref::transpose_f32 (copies: exact)
  SumSquaresFn sum_squares = nullptr;  // bit-identical to ref::sum_squares
  ReadStreamFn read_stream = nullptr;  // = ref::read_stream, with the widest loads
  HalfToFloatFn fp16_to_fp32_row = nullptr;  // bit-identical to ref::fp16_to_fp32_row
  FloatToHalfFn fp32_to_fp16_row = nullptr;  // bit-identical to ref::fp32_to_fp16_row

  // The kernels for a weight type, nullptr when matmul does not support it.
  const WeightKernels* find(TensorType weight_type) const;
  // The quantizer of an activation type (Q8_0, Q8_1, Q8_K), nullptr otherwise.
  QuantizeActFn quantizer(TensorType vec_dot_type) const;
};

// The table for cpu_level(), built on first use (thread-safe) and cached,
// unless an override is set (below).
const KernelTable& active_kernels();

// The kernel settings the environment chooses (KAZEIA_CPU_LEVEL,
// KAZEIA_DECODE_WALK, KAZEIA_LANE_PREFETCH, KAZEIA_TOKEN_TILES, KAZEIA_AMX,
// KAZEIA_ROW_KERNELS),
// as NAME=VALUE pairs separated by commas: a table built as the active one
// would be if the process had started with those set (the rest of the
// environment as it is). For comparing settings inside one process
// (`kazeia bench --ab`). The table lives until the process ends.
// InvalidArgument names the bad pair: not NAME=VALUE, a name not in the
// list, or a level this build or CPU cannot run.
Result<const KernelTable*> kernel_table_with_settings(const std::string& settings);

// Makes `table` the active one (nullptr: back to the default) and returns
// the previous override. Only while no kernel runs on any thread: a forward
// pass reads the active table many times, from every pool thread.
const KernelTable* set_active_kernels_override(const KernelTable* table);

// The table of one level, or nullptr when this build or this CPU cannot run
// it (independent of KAZEIA_CPU_LEVEL: tests use it to compare every variant
// the hardware has). kAvx2 includes AVX-VNNI when the CPU has it.
const KernelTable* kernel_table(CpuLevel level);

// Every distinct table this CPU can run, scalar first (on x86 with AVX-VNNI
// that includes avx2 without VNNI, which no level selects by itself).
std::vector<const KernelTable*> available_kernel_tables();

// matmul() with an explicit table (kernels.h's matmul uses active_kernels()).
Status matmul_with(const KernelTable& table, const MatrixView& w, const float* x,
                   int64_t n_tokens, float* y, ThreadPool* pool = nullptr);
Status matmul_many_with(const KernelTable& table, std::span<const MatmulJob> jobs, const float* x,
                        int64_t n_tokens, ThreadPool* pool = nullptr);
Status matmul_swiglu_with(const KernelTable& table, const MatrixView& gate, const MatrixView& up, const float* x,
                          int64_t n_tokens, float* out, ThreadPool* pool = nullptr);

// A strip implemented by calling `args.dot` for every (row, token): the
// strip of the scalar table and of types without a SIMD strip.
void strip_from_dot(const StripArgs& args);

}  // namespace kazeia::kernels
