#include "session_generator.h"

#include <chrono>
#include <optional>

#include "engine_impl.h"

namespace kazeia {
namespace {

class SessionTokenGenerator final : public agent::TokenGenerator {
 public:
  SessionTokenGenerator(ApiAccess::SessionImpl& s, const SamplerParams& sp) : s_(s), sampler_(sp) {}

  Result<agent::PromptStats> start(std::span<const int32_t> prompt) override {
    if (prompt.empty()) return InvalidArgument("the prompt is empty");
    pending_.reset();
    spin_.emplace(*s_.engine->pool);
    const auto t0 = std::chrono::steady_clock::now();
    agent::PromptStats stats;
    stats.reused = s_.reuse_prefix(prompt);
    const auto rest = prompt.subspan(static_cast<size_t>(stats.reused));
    KZ_RETURN_IF_ERROR(eval(rest));
    s_.checkpoint_here();
    stats.evaluated = static_cast<int64_t>(rest.size());
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return stats;
  }

  Result<int32_t> next() override {
    KZ_RETURN_IF_ERROR(flush_pending());
    const int32_t token = sampler_.sample(s_.logits, s_.history);
    // Evaluated only when generation goes on: the last token of a round
    // (often the end-of-turn token) need not be.
    pending_ = token;
    return token;
  }

  Status append(std::span<const int32_t> tokens) override {
    KZ_RETURN_IF_ERROR(flush_pending());
    return eval(tokens);
  }

  void finish() override { spin_.reset(); }

 private:
  Status eval(std::span<const int32_t> tokens) {
    if (tokens.empty()) return OkStatus();
    const int64_t need = s_.state->n_past() + static_cast<int64_t>(tokens.size());
    if (need > s_.state->n_ctx())
      return OutOfRange("the context of " + std::to_string(s_.state->n_ctx()) + " tokens is full (" +
                        std::to_string(need) + " needed)");
    return s_.eval(tokens, s_.logits.data(), false);
  }
  Status flush_pending() {
    if (!pending_) return OkStatus();
    const int32_t one[1] = {*pending_};
    pending_.reset();
    return eval(one);
  }

  ApiAccess::SessionImpl& s_;
  Sampler sampler_;
  std::optional<int32_t> pending_;
  std::optional<ThreadPool::SpinScope> spin_;
};

}  // namespace

Result<std::unique_ptr<agent::TokenGenerator>> make_session_generator(Session& session,
                                                                      const SamplingOptions& sampling) {
  KZ_ASSIGN_OR_RETURN(SamplerParams sp, sampler_params(sampling));
  ApiAccess::SessionImpl& s = ApiAccess::session(session);
  if (!s.engine->tokenizer) return NotFound("model '" + s.engine->path + "' has no tokenizer; generation needs one");
  return std::unique_ptr<agent::TokenGenerator>(new SessionTokenGenerator(s, sp));
}

}  // namespace kazeia
