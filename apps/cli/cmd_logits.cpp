// kazeia logits -m M --tokens 1,2,3 [--all] --out FILE
// Writes little-endian float32 rows: the last position's logits, or every
// position's with --all (row-major, n_vocab floats per row).
#include <cstdio>

#include "cmd_common.h"

namespace kazeia::cli {
namespace {

void setup_logits(CLI::App& app, std::function<int()>* run) {
  struct Options {
    ModelFlags model;
    std::string tokens, out;
    bool all = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("logits", "Evaluate token ids and write their logits as float32");
  o->model.add_to(cmd, 2048);
  cmd->add_option("--tokens", o->tokens, "Token ids: 1,2,3")->required();
  cmd->add_flag("--all", o->all, "Every position's row, not only the last");
  cmd->add_option("--out", o->out, "Output file (raw little-endian float32)")->required();
  cmd->callback([run, o] {
    *run = [o] {
      auto ids = parse_token_list(o->tokens);
      if (!ids.ok()) return fail(ids.status().to_string());
      if (static_cast<int64_t>(ids->size()) > o->model.ctx) o->model.ctx = static_cast<int64_t>(ids->size());
      auto engine = o->model.load();
      if (!engine.ok()) return fail(engine.status().to_string());
      auto session = (*engine)->new_session();
      if (!session.ok()) return fail(session.status().to_string());
      const size_t rows = o->all ? ids->size() : 1;
      std::vector<float> logits(rows * static_cast<size_t>((*engine)->n_vocab()));
      Status s = (*session)->eval(*ids, logits.data(), o->all);
      if (!s.ok()) return fail(s.to_string());
      std::FILE* f = std::fopen(o->out.c_str(), "wb");
      if (f == nullptr) return fail("cannot write '" + o->out + "'");
      const size_t written = std::fwrite(logits.data(), sizeof(float), logits.size(), f);
      const bool closed = std::fclose(f) == 0;
      if (written != logits.size() || !closed) return fail("short write to '" + o->out + "'");
      std::fprintf(stderr, "logits: %zu row(s) x %lld floats -> %s\n", rows,
                   static_cast<long long>((*engine)->n_vocab()), o->out.c_str());
      return 0;
    };
  });
}

const CommandRegistration kLogitsRegistration("logits", setup_logits);

}  // namespace
}  // namespace kazeia::cli
