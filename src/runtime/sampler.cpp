#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace kazeia {

Status SamplerParams::validate() const {
  if (!std::isfinite(temperature)) return InvalidArgument("temperature must be finite");
  if (!(top_p > 0.0f && top_p <= 1.0f))  // NaN fails too
    return InvalidArgument("top_p: expected a value in (0, 1], found " + std::to_string(top_p));
  if (min_p < 0.0f || min_p > 1.0f) return InvalidArgument("min_p: expected a value in [0, 1], found " + std::to_string(min_p));
  if (repeat_penalty <= 0.0f || !std::isfinite(repeat_penalty))
    return InvalidArgument("repeat_penalty: expected a positive value, found " + std::to_string(repeat_penalty));
  if (repeat_last_n < -1) return InvalidArgument("repeat_last_n: expected -1 or more, found " + std::to_string(repeat_last_n));
  return OkStatus();
}

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  return best;
}

Sampler::Sampler(const SamplerParams& params) : params_(params), rng_(params.seed) {}

namespace {

struct Candidate {
  int32_t id;
  float logit;
};

// Repetition (llama.cpp / CTRL style), presence and frequency penalties over
// the last repeat_last_n tokens of the history.
void apply_penalties(const SamplerParams& p, std::span<const int32_t> history, std::vector<float>& logits) {
  const bool any = p.repeat_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f;
  if (!any || p.repeat_last_n == 0 || history.empty()) return;
  size_t n = history.size();
  if (p.repeat_last_n > 0) n = std::min(n, static_cast<size_t>(p.repeat_last_n));
  std::unordered_map<int32_t, int> counts;
  for (size_t i = history.size() - n; i < history.size(); ++i) counts[history[i]]++;
  for (const auto& [id, count] : counts) {
    if (id < 0 || static_cast<size_t>(id) >= logits.size()) continue;
    float& l = logits[static_cast<size_t>(id)];
    l = l > 0.0f ? l / p.repeat_penalty : l * p.repeat_penalty;
    l -= static_cast<float>(count) * p.frequency_penalty + p.presence_penalty;
  }
}

}  // namespace

std::vector<TokenProb> Sampler::distribution(std::span<const float> logits_in,
                                             std::span<const int32_t> history) const {
  std::vector<float> logits(logits_in.begin(), logits_in.end());
  apply_penalties(params_, history, logits);
  if (logits.empty()) return {};
  if (greedy()) return {{argmax(logits), 1.0f}};

  std::vector<Candidate> cands(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) cands[i] = {static_cast<int32_t>(i), logits[i]};
  auto better = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  // top-k: keep the k best (partial sort keeps this O(n log k)).
  size_t keep = cands.size();
  if (params_.top_k > 0) keep = std::min(keep, static_cast<size_t>(params_.top_k));
  std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(keep), cands.end(), better);
  cands.resize(keep);

  // Softmax at temperature 1 for the truncation rules (as llama.cpp does:
  // top-p and min-p look at the untempered distribution).
  auto softmax = [](const std::vector<Candidate>& c, float temp) {
    std::vector<double> p(c.size());
    double sum = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
      p[i] = std::exp(static_cast<double>(c[i].logit - c[0].logit) / temp);
      sum += p[i];
    }
    for (double& x : p) x /= sum;
    return p;
  };
  if (params_.top_p < 1.0f) {
    auto p = softmax(cands, 1.0f);
    double cum = 0.0;
    size_t n = 0;
    while (n < cands.size()) {
      cum += p[n++];
      if (cum >= params_.top_p) break;
    }
    cands.resize(std::max<size_t>(n, 1));
  }
  if (params_.min_p > 0.0f && cands.size() > 1) {
    auto p = softmax(cands, 1.0f);
    const double threshold = p[0] * params_.min_p;
    size_t n = 1;
    while (n < cands.size() && p[n] >= threshold) ++n;
    cands.resize(n);
  }
  auto p = softmax(cands, params_.temperature);
  std::vector<TokenProb> out(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) out[i] = {cands[i].id, static_cast<float>(p[i])};
  return out;
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  auto dist = distribution(logits, history);
  if (dist.empty()) return -1;
  if (dist.size() == 1) return dist[0].id;
  double r = rng_.uniform();
  double cum = 0.0;
  for (const auto& tp : dist) {
    cum += tp.p;
    if (r < cum) return tp.id;
  }
  return dist.back().id;  // r landed in the rounding slack at the top
}

}  // namespace kazeia
