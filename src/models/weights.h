// Binding named GGUF tensors to typed weight views, with shape checks.
//
// Every check names the tensor with the expected and the actual shape, so a
// file with a wrong hyper-parameter fails at load time with a useful message
// instead of reading out of bounds in a forward pass.
#pragma once

#include <cstdint>
#include <string>

#include "format/gguf.h"
#include "kazeia/status.h"
#include "kernels/kernels.h"

namespace kazeia {

class WeightBinder {
 public:
  explicit WeightBinder(const gguf::File& file) : file_(file) {}

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
  // A matrix stored as [n_in, n_out] (n_out rows of n_in values).
  Result<kernels::MatrixView> matrix(const std::string& name, int64_t n_in, int64_t n_out) const;
  // An F32 tensor of exactly these dims (norm weights, biases, conv kernels).
  Result<const float*> f32(const std::string& name, std::initializer_list<int64_t> dims) const;
  // An optional F32 vector: nullptr when the tensor is absent.
  Result<const float*> optional_f32(const std::string& name, std::initializer_list<int64_t> dims) const;

 private:
  Result<const gguf::TensorInfo*> find(const std::string& name) const;
  const gguf::File& file_;
};

std::string shape_string(const std::vector<uint64_t>& dims);

}  // namespace kazeia
