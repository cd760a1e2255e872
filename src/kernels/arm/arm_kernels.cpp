// Level -> kernel tables of the ARM kernels (see arm_kernels.h).
//
// This file is compiled on every architecture (its name has no ISA suffix);
// the per-level kernels it points to exist only in aarch64 builds, so off
// aarch64 the lookups return nullptr.
#include "kernels/arm/arm_kernels.h"

#if defined(__aarch64__)
#include "kernels/arm/level_kernels.h"
#include "kernels/dispatch.h"
#endif

namespace kazeia::kernels::arm {

#if defined(__aarch64__)

namespace {

// The ARM levels are ordered scalar < neon < dotprod < i8mm; any other value
// (an x86 level, which cannot occur here) counts as scalar.
bool at_least(CpuLevel level, CpuLevel wanted) {
  const bool is_arm = level == CpuLevel::kNeon || level == CpuLevel::kDotprod ||
                      level == CpuLevel::kI8mm;
  return is_arm && level >= wanted;
}

}  // namespace

// From dotprod up, the 4-row x 4-token SDOT tiles (strip_dotprod.cpp,
// strip_kquants_dotprod.cpp); at i8mm, Q4_0, Q8_0, Q4_K and Q5_K take 4 x 4
// tiles of SMMLAs (strip_i8mm.cpp; instruction counts there).
// F32, F16 and BF16 take the NEON tiles at every level (float_rows_neon.cpp).
StripFn arm_strip_fn(TensorType type, CpuLevel level) {
  if (at_least(level, CpuLevel::kNeon)) {
    switch (type) {
      case TensorType::F32: return neon::strip_f32;
      case TensorType::F16: return neon::strip_f16;
      case TensorType::BF16: return neon::strip_bf16;
      default: break;
    }
  }
  if (!at_least(level, CpuLevel::kDotprod)) return nullptr;
  const bool mmla = at_least(level, CpuLevel::kI8mm);
  switch (type) {
    case TensorType::Q4_0: return mmla ? i8mm::strip_q4_0 : dotprod::strip_q4_0;
    case TensorType::Q8_0: return mmla ? i8mm::strip_q8_0 : dotprod::strip_q8_0;
    case TensorType::Q4_1: return dotprod::strip_q4_1;
    case TensorType::Q5_0: return dotprod::strip_q5_0;
    case TensorType::Q5_1: return dotprod::strip_q5_1;
    case TensorType::Q4_K: return mmla ? i8mm::strip_q4_K : dotprod::strip_q4_K;
    case TensorType::Q5_K: return mmla ? i8mm::strip_q5_K : dotprod::strip_q5_K;
    case TensorType::Q6_K: return dotprod::strip_q6_K;
    case TensorType::Q2_K: return dotprod::strip_q2_K;
    case TensorType::Q3_K: return dotprod::strip_q3_K;
    default: return nullptr;
  }
}

VecDotFn arm_vec_dot_fn(TensorType type, CpuLevel level) {
  if (at_least(level, CpuLevel::kDotprod)) {
    switch (type) {
      case TensorType::Q4_0: return dotprod::vec_dot_q4_0;
      case TensorType::Q4_1: return dotprod::vec_dot_q4_1;
      case TensorType::Q5_0: return dotprod::vec_dot_q5_0;
      case TensorType::Q5_1: return dotprod::vec_dot_q5_1;
      case TensorType::Q8_0: return dotprod::vec_dot_q8_0;
      case TensorType::Q2_K: return dotprod::vec_dot_q2_K;
      case TensorType::Q3_K: return dotprod::vec_dot_q3_K;
      case TensorType::Q4_K: return dotprod::vec_dot_q4_K;
      case TensorType::Q5_K: return dotprod::vec_dot_q5_K;
      case TensorType::Q6_K: return dotprod::vec_dot_q6_K;
      default: break;  // the NEON versions below
    }
  }
  if (at_least(level, CpuLevel::kNeon)) {
    switch (type) {
      case TensorType::F32: return neon::vec_dot_f32;
      case TensorType::F16: return neon::vec_dot_f16;
      case TensorType::BF16: return neon::vec_dot_bf16;
      case TensorType::Q4_0: return neon::vec_dot_q4_0;
      case TensorType::Q4_1: return neon::vec_dot_q4_1;
      case TensorType::Q5_0: return neon::vec_dot_q5_0;
      case TensorType::Q5_1: return neon::vec_dot_q5_1;
      case TensorType::Q8_0: return neon::vec_dot_q8_0;
      case TensorType::Q2_K: return neon::vec_dot_q2_K;
      case TensorType::Q3_K: return neon::vec_dot_q3_K;
      case TensorType::Q4_K: return neon::vec_dot_q4_K;
      case TensorType::Q5_K: return neon::vec_dot_q5_K;
      case TensorType::Q6_K: return neon::vec_dot_q6_K;
      default: break;
    }
  }
  return nullptr;
}

QuantizeActFn arm_quantize_act_fn(TensorType vec_dot_type, CpuLevel level) {
  if (!at_least(level, CpuLevel::kNeon)) return nullptr;
  switch (vec_dot_type) {
    case TensorType::Q8_0: return neon::quantize_row_q8_0_act;
    case TensorType::Q8_1: return neon::quantize_row_q8_1_act;
    case TensorType::Q8_K: return neon::quantize_row_q8_K_act;
    default: return nullptr;
  }
}

HalfToFloatFn arm_fp16_to_fp32_fn(CpuLevel level) {
  return at_least(level, CpuLevel::kNeon) ? neon::fp16_to_fp32_row : nullptr;
}
FloatToHalfFn arm_fp32_to_fp16_fn(CpuLevel level) {
  return at_least(level, CpuLevel::kNeon) ? neon::fp32_to_fp16_row : nullptr;
}

void fill_arm_float_ops(KernelTable& t, CpuLevel level) {
  if (!at_least(level, CpuLevel::kNeon)) return;
  t.softmax_online_row = neon::softmax_online_row;
  t.silu = neon::silu;
  t.swiglu = neon::swiglu;
  t.sigmoid_mul = neon::sigmoid_mul;
  t.swiglu_rows = neon::swiglu_rows;
  t.conv_silu = neon::conv_silu;
  t.sum_squares = neon::sum_squares;
  t.abs_range = neon::abs_range;
  t.scale = neon::scale;
  t.scale_mul = neon::scale_mul;
  t.scale_add = neon::scale_add;
  t.transpose_f32 = neon::transpose_f32;
  t.read_stream = neon::read_stream;
  t.gemm_f32_acc = neon::gemm_f32_acc;
  t.gemm_f32 = neon::gemm_f32;
  t.gemm_f32_f16b_acc = neon::gemm_f32_f16b_acc;
  t.gemm_f32_f16b = neon::gemm_f32_f16b;
  t.gemm_f32_scaled_acc = neon::gemm_f32_scaled_acc;
}

// Prefill's token groups (matmul pairs or lays out the activations once
// per call). At i8mm, batches of more than 4 tokens (the SMMLA strip tiles
// take 2-4: a speculative batch); a group's missing tokens cost at most
// half a pair, so no rest goes to the strips. Q6_K's groups, and the
// dotprod level's (tiles of 4 tokens and more), lose to the strips on
// small batches: instructions per (row, token, 32 weights), strips against
// groups, Q6_K 5 tokens 11.7 / 21.1, 8 tokens 9.5 / 9.1; dotprod Q4_0
// 5 tokens 9.05 / 10.95, 8 tokens 6.44 / 5.47 (Q8_0 8.27 / 11.18, 6.14 /
// 5.59). Those batches, and the rest of a grouped batch up to that size,
// take the strips.
void fill_arm_token_groups(WeightKernels& k, TensorType type, CpuLevel level) {
  if (!at_least(level, CpuLevel::kDotprod)) return;
  struct Groups {
    StripFn strip;
    BytesFn bytes;
    TileActsFn build;
    int64_t above;  // tile_above and tile_rest_max
  };
  Groups g{};
  if (!at_least(level, CpuLevel::kI8mm)) {
    switch (type) {
      case TensorType::Q4_0: g = {dotprod::group_strip_q4_0, dotprod::token_group_bytes_q4_0, dotprod::build_token_group_q4_0, 7}; break;
      case TensorType::Q8_0: g = {dotprod::group_strip_q8_0, dotprod::token_group_bytes_q8_0, dotprod::build_token_group_q8_0, 7}; break;
      default: return;
    }
  } else {
    switch (type) {
      case TensorType::Q4_0: g = {i8mm::group_strip_q4_0, i8mm::token_group_bytes_q4_0, i8mm::build_token_group_q4_0, 4}; break;
      case TensorType::Q8_0: g = {i8mm::group_strip_q8_0, i8mm::token_group_bytes_q8_0, i8mm::build_token_group_q8_0, 4}; break;
      case TensorType::Q4_K: g = {i8mm::group_strip_q4_K, i8mm::token_group_bytes_k, i8mm::build_token_group_k, 4}; break;
      case TensorType::Q5_K: g = {i8mm::group_strip_q5_K, i8mm::token_group_bytes_k, i8mm::build_token_group_k, 4}; break;
      case TensorType::Q6_K: g = {i8mm::group_strip_q6_K, i8mm::token_group_bytes_q6_K, i8mm::build_token_group_q6_K, 8}; break;
      default: return;
    }
  }
  k.tile_strip = g.strip;
  k.tile_group_bytes = g.bytes;
  k.tile_acts = g.build;
  k.tile_scratch_bytes = nullptr;
  k.tile_isa = cpu_level_name(level);
  k.tile_above = g.above;
  k.tile_rest_max = g.above > 4 ? g.above : 0;
}

#else  // not aarch64

VecDotFn arm_vec_dot_fn(TensorType, CpuLevel) { return nullptr; }
StripFn arm_strip_fn(TensorType, CpuLevel) { return nullptr; }
QuantizeActFn arm_quantize_act_fn(TensorType, CpuLevel) { return nullptr; }
HalfToFloatFn arm_fp16_to_fp32_fn(CpuLevel) { return nullptr; }
FloatToHalfFn arm_fp32_to_fp16_fn(CpuLevel) { return nullptr; }
void fill_arm_float_ops(KernelTable&, CpuLevel) {}
void fill_arm_token_groups(WeightKernels&, TensorType, CpuLevel) {}

#endif

}  // namespace kazeia::kernels::arm
