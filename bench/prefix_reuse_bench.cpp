// A chat's second turn on a model with recurrent state: N tokens of history
// plus M new ones, served from the session's prefix cache (the checkpoint
// taken after the first turn's prefill), against re-running all N + M
// tokens in a fresh session. Whole-process figures for issue notes:
//   bench_prefix_reuse MODEL.gguf [N=1500] [M=20] [THREADS=2] [REPS=3]
// Prints the prompt seconds of both and their ratio (median of REPS).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kazeia/engine.h"

using namespace kazeia;

namespace {

std::vector<int32_t> tokens(int32_t first, int n, int32_t vocab) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back((first + 7919 * i) % (vocab - 300) + 100);
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.gguf [N=1500] [M=20] [THREADS=2] [REPS=3]\n", argv[0]);
    return 2;
  }
  const int n = argc > 2 ? std::atoi(argv[2]) : 1500;
  const int m = argc > 3 ? std::atoi(argv[3]) : 20;
  EngineOptions eo;
  eo.n_threads = argc > 4 ? std::atoi(argv[4]) : 2;
  const int reps = argc > 5 ? std::atoi(argv[5]) : 3;
  eo.n_ctx = n + m + 64;
  auto engine = Engine::load(argv[1], eo);
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().to_string().c_str());
    return 1;
  }
  const int32_t vocab = static_cast<int32_t>((*engine)->n_vocab());
  const auto history = tokens(11, n, vocab);
  auto turn2 = history;
  const auto fresh_tail = tokens(5003, m, vocab);
  turn2.insert(turn2.end(), fresh_tail.begin(), fresh_tail.end());
  GenerateOptions go;
  go.sampling.temperature = 0.0f;
  go.ignore_eos = true;

  std::vector<double> full, reuse;
  int64_t reused = 0, evaluated = 0;
  uint64_t cp_bytes = 0, state_bytes = 0;
  for (int r = 0; r < reps; ++r) {
    {  // everything from scratch
      auto s = (*engine)->new_session();
      go.max_tokens = 1;
      auto res = (*s)->generate(turn2, go);
      if (!res.ok()) return std::fprintf(stderr, "%s\n", res.status().to_string().c_str()), 1;
      full.push_back(res->prompt_seconds);
    }
    {  // turn 1 (its answer: 8 tokens), then turn 2 diverging after the history
      auto s = (*engine)->new_session();
      go.max_tokens = 8;
      if (!(*s)->generate(history, go).ok()) return 1;
      go.max_tokens = 1;
      auto res = (*s)->generate(turn2, go);
      if (!res.ok()) return std::fprintf(stderr, "%s\n", res.status().to_string().c_str()), 1;
      reuse.push_back(res->prompt_seconds);
      reused = res->reused_tokens;
      evaluated = res->prompt_tokens;
      cp_bytes = (*s)->checkpoint_bytes();
      state_bytes = (*s)->state_bytes();
    }
  }
  const double f = median(full), u = median(reuse);
  std::printf("history %d + new %d tokens, %d threads, median of %d\n", n, m, eo.n_threads, reps);
  std::printf("  re-run everything: %.3f s (%d tokens)\n", f, n + m);
  std::printf("  prefix cache:      %.3f s (%lld reused, %lld evaluated)\n", u, static_cast<long long>(reused),
              static_cast<long long>(evaluated));
  std::printf("  speed-up: %.1fx; checkpoints %.1f MiB, session state %.1f MiB\n", f / u, cp_bytes / 1048576.0,
              state_bytes / 1048576.0);
  return 0;
}
