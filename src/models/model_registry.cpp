#include <string_view>

#include "models/architectures.h"

namespace kazeia {
namespace {

struct Entry {
  std::string_view arch;
  Result<std::unique_ptr<Model>> (*load)(const gguf::File&);
};

constexpr Entry kRegistry[] = {
    {"llama", load_llama},
    {"qwen3", load_qwen3},
    {"qwen35", load_qwen35},
};

}  // namespace

std::vector<std::string> supported_architectures() {
  std::vector<std::string> out;
  for (const auto& e : kRegistry) out.emplace_back(e.arch);
  return out;
}

Result<std::unique_ptr<Model>> load_model(const gguf::File& file) {
  auto arch = file.get_string("general.architecture");
  if (!arch.ok()) return arch.status();
  for (const auto& e : kRegistry)
    if (e.arch == *arch) {
      auto model = e.load(file);
      if (!model.ok()) return model.status().with_context("loading " + *arch + " model '" + file.source_name() + "'");
      return model;
    }
  std::string known;
  for (const auto& e : kRegistry) known += (known.empty() ? "" : ", ") + std::string(e.arch);
  return Unsupported("architecture '" + *arch + "' is not supported (supported: " + known + ")");
}

}  // namespace kazeia
