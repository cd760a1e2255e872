// The Model interface and the registry keyed by general.architecture.
//
// A Model holds views into the mapped GGUF file (no weight copies) and a
// typed config. Its forward pass consumes a batch of tokens at the positions
// following what the ModelState already holds, updates the state (KV cache,
// recurrent state) and writes logits for the rows the caller asks for.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "kazeia/status.h"
#include "models/model_config.h"
#include "models/model_state.h"

namespace kazeia {

class ThreadPool;

// Which positions of a batch produce a logits row.
enum class LogitsRows { kNone, kLast, kAll };

struct ForwardRequest {
  std::span<const int32_t> tokens;   // at positions state.n_past() ...
  LogitsRows rows = LogitsRows::kLast;
  float* logits = nullptr;           // rows x n_vocab floats (kLast: 1 row)
  ThreadPool* pool = nullptr;        // null: single-threaded
};

class Model {
 public:
  virtual ~Model() = default;
  const ModelConfig& config() const { return config_; }

  // A fresh state able to hold n_ctx positions.
  virtual Result<std::unique_ptr<ModelState>> new_state(const StateOptions& options) const = 0;

  // Runs the batch; on error the state is left as it was before the call
  // (positions are only committed when the whole batch succeeded).
  virtual Status forward(ModelState& state, const ForwardRequest& request) const = 0;

  // Bytes of weights one decode step reads (for bandwidth figures).
  virtual uint64_t weight_bytes_per_token() const = 0;

 protected:
  ModelConfig config_;
};

// Builds the model for the file's general.architecture. The file must
// outlive the model (weights are views into it).
Result<std::unique_ptr<Model>> load_model(const gguf::File& file);

// Architectures this build knows.
std::vector<std::string> supported_architectures();

}  // namespace kazeia
