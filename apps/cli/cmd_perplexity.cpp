// kazeia perplexity -m M -f TEXT_FILE [-c N] [--all]
//
// As llama.cpp's perplexity tool: the text is cut into chunks of N tokens
// (a BOS first when the vocabulary adds one), and in each chunk the tokens
// of the second half are scored given everything before them in the chunk.
// --all scores every token after the first instead.
#include <cmath>
#include <cstdio>

#include "cmd_common.h"

namespace kazeia::cli {
namespace {

// -log softmax(row)[target], computed in double.
double negative_log_likelihood(const float* row, int64_t n_vocab, int32_t target) {
  double max = row[0];
  for (int64_t i = 1; i < n_vocab; ++i) max = std::max(max, double(row[i]));
  double sum = 0.0;
  for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(double(row[i]) - max);
  return std::log(sum) + max - double(row[target]);
}

void setup_perplexity(CLI::App& app, std::function<int()>* run) {
  struct Options {
    ModelFlags model;
    std::string file;
    bool all = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("perplexity", "Perplexity of a text file");
  o->model.add_to(cmd, 512);
  cmd->add_option("-f,--file", o->file, "Text file")->required();
  cmd->add_flag("--all", o->all, "Score every token of a chunk after the first (default: the second half)");
  cmd->callback([run, o] {
    *run = [o] {
      auto text = read_file(o->file);
      if (!text.ok()) return fail(text.status().to_string());
      auto engine = o->model.load();
      if (!engine.ok()) return fail(engine.status().to_string());
      Engine& e = **engine;
      auto bos_probe = e.tokenize("", false, true);
      if (!bos_probe.ok()) return fail(bos_probe.status().to_string());
      const std::vector<int32_t> bos = *bos_probe;  // [BOS] or []
      auto ids = e.tokenize(*text, false, false);
      if (!ids.ok()) return fail(ids.status().to_string());
      const int64_t n_ctx = o->model.ctx;
      const int64_t per_chunk = n_ctx - static_cast<int64_t>(bos.size());
      if (per_chunk < 2) return fail("context size " + std::to_string(n_ctx) + " is too small");
      const int64_t n_chunks = static_cast<int64_t>(ids->size()) / per_chunk;
      if (n_chunks == 0)
        return fail("the text has " + std::to_string(ids->size()) + " tokens, fewer than one chunk of " +
                    std::to_string(per_chunk) + " (lower -c)");
      auto session = e.new_session();
      if (!session.ok()) return fail(session.status().to_string());
      std::vector<float> logits(static_cast<size_t>(n_ctx * e.n_vocab()));
      double nll = 0.0;
      int64_t scored = 0;
      for (int64_t c = 0; c < n_chunks; ++c) {
        std::vector<int32_t> chunk = bos;
        chunk.insert(chunk.end(), ids->begin() + c * per_chunk, ids->begin() + (c + 1) * per_chunk);
        (*session)->reset();
        Status s = (*session)->eval(chunk, logits.data(), true);
        if (!s.ok()) return fail(s.to_string());
        const int64_t first = o->all ? 0 : static_cast<int64_t>(chunk.size()) / 2;
        for (int64_t i = first; i + 1 < static_cast<int64_t>(chunk.size()); ++i) {
          nll += negative_log_likelihood(logits.data() + i * e.n_vocab(), e.n_vocab(), chunk[static_cast<size_t>(i + 1)]);
          ++scored;
        }
        std::fprintf(stderr, "[%lld] %.4f\n", static_cast<long long>(c + 1), std::exp(nll / double(scored)));
      }
      std::printf("perplexity: %.6f over %lld tokens in %lld chunk(s) of %lld\n", std::exp(nll / double(scored)),
                  static_cast<long long>(scored), static_cast<long long>(n_chunks), static_cast<long long>(n_ctx));
      return 0;
    };
  });
}

const CommandRegistration kPerplexityRegistration("perplexity", setup_perplexity);

}  // namespace
}  // namespace kazeia::cli
