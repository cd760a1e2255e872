// The ggml tensor type ids that GGUF files use, with their block geometry.
//
// This is a fact of the file format (a tensor's byte size follows from its
// type id and shape), so it lives here; the tensor layer adds the arithmetic
// (quantize / dequantize) on top.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kazeia {

enum class TensorType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21,
  IQ2_S = 22, IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28,
  IQ1_M = 29, BF16 = 30, TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct TensorTypeTraits {
  TensorType type;
  std::string_view name;   // "Q4_K", as llama.cpp prints it
  uint32_t block_size;     // elements per block
  uint32_t block_bytes;    // bytes per block
  bool quantized;
};

// Traits of a type id read from a file; nullopt for ids that ggml does not
// define (or has retired, like 4, 5 and 31-33).
std::optional<TensorTypeTraits> tensor_type_traits(uint32_t type_id);
const TensorTypeTraits& tensor_type_traits(TensorType type);
std::string_view tensor_type_name(TensorType type);
// Parses "q4_k", "Q4_K", "f16"...; nullopt when unknown.
std::optional<TensorType> tensor_type_from_name(std::string_view name);

}  // namespace kazeia
