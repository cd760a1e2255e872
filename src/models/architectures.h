// One loader per architecture file; the registry (model_registry.cpp) maps
// general.architecture to these.
#pragma once

#include <memory>

#include "format/gguf.h"
#include "models/model.h"

namespace kazeia {

Result<std::unique_ptr<Model>> load_llama(const gguf::File& file);
Result<std::unique_ptr<Model>> load_qwen3(const gguf::File& file);
Result<std::unique_ptr<Model>> load_qwen35(const gguf::File& file);

}  // namespace kazeia
