// Inspecting a GGUF model file without loading its weights (`kazeia info`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

struct TensorSummary {
  std::string name;
  std::string type;              // "Q4_K"
  std::vector<uint64_t> shape;   // GGUF dims, ne0 first
  uint64_t bytes = 0;
};

struct TokenizerSummary {
  std::string model;             // tokenizer.ggml.model: "gpt2", "llama", ...
  std::string pre;               // tokenizer.ggml.pre, empty when absent
  uint64_t vocab_size = 0;
  uint64_t merges = 0;
  // Special ids present in the file, with their token text: ("bos", 151643, "<|endoftext|>").
  struct Special { std::string role; int64_t id; std::string text; };
  std::vector<Special> specials;
  std::optional<bool> add_bos;
};

struct ModelInfo {
  std::string path;
  uint64_t file_size = 0;
  uint32_t gguf_version = 0;
  uint32_t alignment = 0;
  std::string architecture;
  std::string name;
  uint64_t parameters = 0;                  // total elements of all tensors
  std::optional<uint32_t> file_type;        // general.file_type
  std::string file_type_name;               // "Q4_K_M"; "unknown" / "" when absent
  std::vector<std::pair<std::string, uint64_t>> bytes_per_type;    // ("Q4_K", bytes)
  std::vector<std::pair<std::string, std::string>> hyperparameters;  // "{arch}.*" keys, rendered
  std::optional<TokenizerSummary> tokenizer;
  bool has_chat_template = false;
  uint64_t chat_template_bytes = 0;
  std::vector<TensorSummary> tensors;
  // Every metadata key as JSON text (arrays longer than 64 items summarised
  // as {"array": TYPE, "length": N}, unless full_metadata was asked for).
  std::string metadata_json;
};

struct InspectOptions {
  bool full_metadata = false;
};

Result<ModelInfo> inspect_model(const std::string& path, const InspectOptions& options = {});

// A readable report (the default of `kazeia info`).
std::string format_model_info_table(const ModelInfo& info);
// JSON with keys architecture, name, tensor_count, parameters, file_type,
// tensors [{name, type, shape, bytes}], metadata {key: value}, tokenizer, ...
std::string format_model_info_json(const ModelInfo& info);

}  // namespace kazeia
