// Internals of Engine and Session shared by the files of src/api (the
// agent's token generator drives a Session token by token).
#pragma once

#include <algorithm>
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
  uint64_t huge_page_bytes = 0;  // of the mapping, after loading
};

struct Session::Impl {
  Engine::Impl* engine = nullptr;
  std::unique_ptr<ModelState> state;
  std::vector<int32_t> history;
  std::vector<float> logits;  // last row

  // A long batch runs as micro-batches of at most options.n_ubatch tokens:
  // the forward pass's activations grow with the batch (~100 KB per token
  // at the Qwen3.5-0.8B shape), its weight reads do not, so past a few
  // hundred tokens a bigger batch only costs memory. The logits are those
  // of one batch: the kernels give every token the same bits in any batch.
  Status eval(std::span<const int32_t> tokens, float* out, bool all) {
    const size_t ub = static_cast<size_t>(engine->options.n_ubatch);  // > 0: checked by Engine::load
    const size_t n_vocab = static_cast<size_t>(engine->model->config().n_vocab);
    // The whole input is checked before the first micro-batch runs, so a
    // bad id or too long an input leaves the session as it was (the model
    // checks each batch again, for its other callers).
    for (size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i] < 0 || static_cast<size_t>(tokens[i]) >= n_vocab)
        return OutOfRange("token id " + std::to_string(tokens[i]) + " at index " + std::to_string(i) +
                          " is outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
    KZ_RETURN_IF_ERROR(state->check_room(static_cast<int64_t>(tokens.size())));
    for (size_t start = 0; start < tokens.size(); start += ub) {
      const size_t n = std::min(ub, tokens.size() - start);
      const bool last = start + n == tokens.size();
      ForwardRequest r;
      r.tokens = tokens.subspan(start, n);
      r.rows = out == nullptr ? LogitsRows::kNone
               : all          ? LogitsRows::kAll
               : last         ? LogitsRows::kLast
                              : LogitsRows::kNone;
      r.logits = out == nullptr ? nullptr : all ? out + start * n_vocab : out;
      r.pool = engine->pool.get();
      KZ_RETURN_IF_ERROR(engine->model->forward(*state, r));
      history.insert(history.end(), r.tokens.begin(), r.tokens.end());
    }
    return OkStatus();
  }

  // Prefix cache of a model with recurrent layers (Qwen3.5), whose state
  // cannot be truncated like a KV cache: checkpoints taken after each
  // prompt's prefill (the point a chat's next turn, or an agent's next
  // round, diverges from when the template rewrites the answer, e.g. drops
  // its reasoning). At most kMaxCheckpoints, the least recently used
  // replaced; a checkpoint is about n_layers(recurrent) x heads x d_k x d_v
  // floats (~18 MB at the Qwen3.5-0.8B shape).
  static constexpr size_t kMaxCheckpoints = 4;
  struct CachedCheckpoint {
    StateCheckpoint state;
    uint64_t last_used = 0;
  };
  std::vector<CachedCheckpoint> checkpoints;
  uint64_t clock = 0;

  bool has_recurrent_state() const { return !state->recurrent().empty(); }

  // After a prompt's prefill: remember this position (recurrent models).
  void checkpoint_here() {
    if (!has_recurrent_state() || state->n_past() == 0) return;
    CachedCheckpoint* slot = nullptr;
    for (auto& c : checkpoints)
      if (c.state.n_past == state->n_past()) slot = &c;  // same position: refresh it
    if (slot == nullptr && checkpoints.size() < kMaxCheckpoints) slot = &checkpoints.emplace_back();
    if (slot == nullptr)
      slot = &*std::min_element(checkpoints.begin(), checkpoints.end(),
                                [](const auto& a, const auto& b) { return a.last_used < b.last_used; });
    state->save_checkpoint(slot->state);  // reuses the buffers
    slot->last_used = ++clock;
  }

  uint64_t checkpoint_bytes() const {
    uint64_t n = 0;
    for (const auto& c : checkpoints) n += c.state.memory_bytes();
    return n;
  }

  // Keeps the longest prefix of `prompt` the state can resume from and
  // returns its length. Always leaves at least one prompt token to evaluate,
  // because generation needs the logits after the last one.
  int64_t reuse_prefix(std::span<const int32_t> prompt) {
    size_t common = 0;
    while (common < history.size() && common < prompt.size() && history[common] == prompt[common]) ++common;
    if (common == prompt.size() && common > 0) --common;
    if (common < history.size()) {
      if (!has_recurrent_state()) {
        if (!state->truncate(static_cast<int64_t>(common)).ok()) {
          state->reset();
          common = 0;
        }
      } else {
        // The deepest checkpoint within the common prefix that is still
        // valid (restore_checkpoint refuses stale ones), else from scratch.
        std::vector<CachedCheckpoint*> order;
        for (auto& c : checkpoints)
          if (c.state.n_past > 0 && c.state.n_past <= static_cast<int64_t>(common)) order.push_back(&c);
        std::sort(order.begin(), order.end(),
                  [](const auto* a, const auto* b) { return a->state.n_past > b->state.n_past; });
        size_t resumed = 0;
        for (auto* c : order) {
          if (state->restore_checkpoint(c->state).ok()) {
            resumed = static_cast<size_t>(c->state.n_past);
            c->last_used = ++clock;
            break;
          }
        }
        if (resumed == 0) state->reset();
        common = resumed;
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
