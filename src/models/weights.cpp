#include "models/weights.h"

namespace kazeia {

std::string shape_string(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Result<const gguf::TensorInfo*> WeightBinder::find(const std::string& name) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) return NotFound("tensor '" + name + "' is missing");
  return t;
}

Result<kernels::MatrixView> WeightBinder::matrix(const std::string& name, int64_t n_in, int64_t n_out) const {
  KZ_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name));
  const std::vector<uint64_t> want = {static_cast<uint64_t>(n_in), static_cast<uint64_t>(n_out)};
  if (t->dims != want)
    return InvalidFile("tensor '" + name + "': expected shape " + shape_string(want) + ", found " +
                       shape_string(t->dims));
  auto view = kernels::make_matrix_view(t->type, t->data, n_in, n_out, static_cast<size_t>(t->n_bytes));
  if (!view.ok()) return view.status().with_context("tensor '" + name + "'");
  return view;
}

Result<const float*> WeightBinder::f32(const std::string& name, std::initializer_list<int64_t> dims) const {
  KZ_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name));
  std::vector<uint64_t> want;
  for (int64_t d : dims) want.push_back(static_cast<uint64_t>(d));
  if (t->dims != want)
    return InvalidFile("tensor '" + name + "': expected shape " + shape_string(want) + ", found " +
                       shape_string(t->dims));
  if (t->type != TensorType::F32)
    return Unsupported("tensor '" + name + "': expected type F32, found " + std::string(tensor_type_name(t->type)));
  return reinterpret_cast<const float*>(t->data);
}

Result<const float*> WeightBinder::optional_f32(const std::string& name, std::initializer_list<int64_t> dims) const {
  if (!has(name)) return static_cast<const float*>(nullptr);
  return f32(name, dims);
}

}  // namespace kazeia
