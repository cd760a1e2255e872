#include "format/tensor_types.h"

#include <array>
#include <cctype>
#include <string>

namespace kazeia {
namespace {

constexpr std::array<TensorTypeTraits, 32> kTraits = {{
    {TensorType::F32, "F32", 1, 4, false},
    {TensorType::F16, "F16", 1, 2, false},
    {TensorType::Q4_0, "Q4_0", 32, 18, true},
    {TensorType::Q4_1, "Q4_1", 32, 20, true},
    {TensorType::Q5_0, "Q5_0", 32, 22, true},
    {TensorType::Q5_1, "Q5_1", 32, 24, true},
    {TensorType::Q8_0, "Q8_0", 32, 34, true},
    {TensorType::Q8_1, "Q8_1", 32, 36, true},
    {TensorType::Q2_K, "Q2_K", 256, 84, true},
    {TensorType::Q3_K, "Q3_K", 256, 110, true},
    {TensorType::Q4_K, "Q4_K", 256, 144, true},
    {TensorType::Q5_K, "Q5_K", 256, 176, true},
    {TensorType::Q6_K, "Q6_K", 256, 210, true},
    {TensorType::Q8_K, "Q8_K", 256, 292, true},
    {TensorType::IQ2_XXS, "IQ2_XXS", 256, 66, true},
    {TensorType::IQ2_XS, "IQ2_XS", 256, 74, true},
    {TensorType::IQ3_XXS, "IQ3_XXS", 256, 98, true},
    {TensorType::IQ1_S, "IQ1_S", 256, 50, true},
    {TensorType::IQ4_NL, "IQ4_NL", 32, 18, true},
    {TensorType::IQ3_S, "IQ3_S", 256, 110, true},
    {TensorType::IQ2_S, "IQ2_S", 256, 82, true},
    {TensorType::IQ4_XS, "IQ4_XS", 256, 136, true},
    {TensorType::I8, "I8", 1, 1, false},
    {TensorType::I16, "I16", 1, 2, false},
    {TensorType::I32, "I32", 1, 4, false},
    {TensorType::I64, "I64", 1, 8, false},
    {TensorType::F64, "F64", 1, 8, false},
    {TensorType::IQ1_M, "IQ1_M", 256, 56, true},
    {TensorType::BF16, "BF16", 1, 2, false},
    {TensorType::TQ1_0, "TQ1_0", 256, 54, true},
    {TensorType::TQ2_0, "TQ2_0", 256, 66, true},
    {TensorType::MXFP4, "MXFP4", 32, 17, true},
}};

}  // namespace

std::optional<TensorTypeTraits> tensor_type_traits(uint32_t type_id) {
  for (const auto& t : kTraits)
    if (static_cast<uint32_t>(t.type) == type_id) return t;
  return std::nullopt;
}

const TensorTypeTraits& tensor_type_traits(TensorType type) {
  for (const auto& t : kTraits)
    if (t.type == type) return t;
  return kTraits[0];  // unreachable for a valid enum value
}

std::string_view tensor_type_name(TensorType type) { return tensor_type_traits(type).name; }

std::optional<TensorType> tensor_type_from_name(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& t : kTraits)
    if (t.name == upper) return t.type;
  return std::nullopt;
}

}  // namespace kazeia
