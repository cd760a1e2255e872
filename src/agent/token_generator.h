// The agent loop's view of a language model: prompt tokens in, one sampled
// token at a time out.
//
// The agent layer sits below the public API, so it cannot use
// kazeia::Engine / Session; src/api implements this interface over a Session
// (with its prefix reuse) and tests implement it with a scripted token
// stream. Detokenizing, parsing, stopping and the reasoning budget are the
// loop's job, so every generator gets them the same way.
#pragma once

#include <cstdint>
#include <span>

#include "kazeia/status.h"

namespace kazeia::agent {

struct PromptStats {
  int64_t evaluated = 0;  // prompt tokens run through the model
  int64_t reused = 0;     // prompt tokens served from what was evaluated before
  double seconds = 0.0;
};

class TokenGenerator {
 public:
  virtual ~TokenGenerator() = default;

  // Starts a generation after `prompt`. A generator may keep the longest
  // prefix it already evaluated (the previous round's prompt and output).
  virtual Result<PromptStats> start(std::span<const int32_t> prompt) = 0;
  // Samples the next token. OutOfRange when the context is full.
  virtual Result<int32_t> next() = 0;
  // Appends tokens the caller chose (the forced `</think>`) to the sequence,
  // as if they had been generated; the next next() continues after them.
  virtual Status append(std::span<const int32_t> tokens) = 0;
  // The round's generation is over (tools run next): a generator may
  // release what it holds for speed, e.g. spinning worker threads.
  virtual void finish() {}
};

}  // namespace kazeia::agent
