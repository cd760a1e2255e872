// Token sampling: greedy, temperature, top-k, top-p, min-p, repetition /
// presence / frequency penalties, seeded and reproducible.
//
// The chain runs in llama.cpp's default order: penalties -> top-k -> top-p ->
// min-p -> temperature -> draw. Temperature <= 0 means greedy (argmax, ties to
// the lowest id), which ignores the truncation steps but not the penalties.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

struct SamplerParams {
  float temperature = 0.8f;
  int32_t top_k = 40;          // <= 0: off
  float top_p = 0.95f;         // >= 1: off
  float min_p = 0.05f;         // <= 0: off
  float repeat_penalty = 1.0f; // 1: off; divides positive logits, multiplies negative ones
  int32_t repeat_last_n = 64;  // how many recent tokens the penalties look at (-1: all)
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  uint64_t seed = 0xC0FFEE;

  Status validate() const;
};

// xoshiro256** seeded by splitmix64: the same seed gives the same stream on
// every platform and standard library (unlike std::mt19937 + distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();  // [0, 1), 53 random bits

 private:
  uint64_t s_[4];
};

struct TokenProb {
  int32_t id;
  float p;
};

class Sampler {
 public:
  explicit Sampler(const SamplerParams& params);

  // Picks the next token from one row of logits. `history` is the context
  // so far (prompt + generated), which the penalties look at.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);

  // The distribution sample() draws from, after every step of the chain:
  // surviving tokens with their renormalised probabilities, best first.
  // Greedy gives one entry with p = 1. Speculative decoding's acceptance
  // test needs these.
  std::vector<TokenProb> distribution(std::span<const float> logits, std::span<const int32_t> history) const;

  const SamplerParams& params() const { return params_; }
  bool greedy() const { return params_.temperature <= 0.0f; }
  Rng& rng() { return rng_; }

 private:
  SamplerParams params_;
  Rng rng_;
};

// Index of the largest value; ties go to the lowest index.
int32_t argmax(std::span<const float> logits);

}  // namespace kazeia
