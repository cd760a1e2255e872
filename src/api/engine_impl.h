// Internals of Engine and Session shared by the files of src/api (the
// agent's token generator drives a Session token by token).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "format/gguf.h"
#include "kazeia/engine.h"
#include "models/model.h"
#include "runtime/sampler.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace kazeia {

struct Engine::Impl {
  EngineOptions options;
  std::string path;
  std::string arch;
  std::optional<gguf::File> file;
  std::unique_ptr<Model> model;
  std::optional<text::Tokenizer> tokenizer;
  std::optional<text::ChatTemplate> chat_template;
  std::unique_ptr<ThreadPool> pool;
};

struct Session::Impl {
  Engine::Impl* engine = nullptr;
  std::unique_ptr<ModelState> state;
  std::vector<int32_t> history;
  std::vector<float> logits;  // last row

  Status eval(std::span<const int32_t> tokens, float* out, bool all) {
    ForwardRequest r;
    r.tokens = tokens;
    r.rows = out == nullptr ? LogitsRows::kNone : (all ? LogitsRows::kAll : LogitsRows::kLast);
    r.logits = out;
    r.pool = engine->pool.get();
    KZ_RETURN_IF_ERROR(engine->model->forward(*state, r));
    history.insert(history.end(), tokens.begin(), tokens.end());
    return OkStatus();
  }

  // Keeps the longest prefix of `prompt` the state can resume from and
  // returns its length. Always leaves at least one prompt token to evaluate,
  // because generation needs the logits after the last one.
  int64_t reuse_prefix(std::span<const int32_t> prompt) {
    size_t common = 0;
    while (common < history.size() && common < prompt.size() && history[common] == prompt[common]) ++common;
    if (common == prompt.size() && common > 0) --common;
    if (common < history.size()) {
      // A KV cache truncates; recurrent state cannot go back (checkpoints
      // will make that possible), so it starts over unless the history is a
      // prefix of the prompt.
      if (!state->truncate(static_cast<int64_t>(common)).ok()) {
        state->reset();
        common = 0;
      }
      history.resize(common);
    }
    return static_cast<int64_t>(common);
  }
};

// SamplingOptions -> the runtime's sampler parameters (validated).
Result<SamplerParams> sampler_params(const SamplingOptions& options);

// The friend of Engine and Session that lets src/api reach their internals.
struct ApiAccess {
  using EngineImpl = Engine::Impl;
  using SessionImpl = Session::Impl;
  static EngineImpl& engine(Engine& e) { return *e.impl_; }
  static SessionImpl& session(Session& s) { return *s.impl_; }
};

}  // namespace kazeia
