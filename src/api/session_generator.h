// The agent loop's TokenGenerator over a Session: prefix reuse between
// rounds, one sampler for the whole conversation.
#pragma once

#include <memory>

#include "agent/token_generator.h"
#include "kazeia/engine.h"

namespace kazeia {

// The session must outlive the generator. Fails on invalid sampling options.
Result<std::unique_ptr<agent::TokenGenerator>> make_session_generator(Session& session,
                                                                      const SamplingOptions& sampling);

}  // namespace kazeia
