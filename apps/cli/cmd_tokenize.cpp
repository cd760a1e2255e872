// kazeia tokenize -m FILE [--no-special] [--no-bos] [--json] (TEXT | -f FILE)
//
// Prints the token ids of TEXT with the model's own tokenizer (only the
// tokenizer.ggml.* keys are read, no weights): one line per token,
// "id<TAB>'piece'" as llama-tokenize does, or a JSON array with --json.
// Pieces are shown with control characters and bytes that are not valid
// UTF-8 escaped (\n, \t, \xNN), so a byte token of a split character is visible.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cmd_common.h"
#include "commands.h"
#include "kazeia/tokenizer.h"

namespace kazeia::cli {

namespace {

// Length of the valid UTF-8 sequence at s[i], 0 when there is none.
size_t utf8_sequence_length(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + need >= s.size()) return 0;
  for (size_t k = 1; k <= need; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) return 0;
  }
  return need + 1;
}

std::string escape_piece(const std::string& piece) {
  std::string out;
  char buf[8];
  for (size_t i = 0; i < piece.size();) {
    const auto c = static_cast<unsigned char>(piece[i]);
    const size_t len = utf8_sequence_length(piece, i);
    if (len > 1) {
      out.append(piece, i, len);
      i += len;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (len == 0 || c < 0x20 || c == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

void setup_tokenize(CLI::App& app, std::function<int()>* run) {
  struct Options {
    std::string model;
    std::string text;
    std::string file;
    bool no_special = false;
    bool no_bos = false;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text (tokenizer only, no weights loaded)");
  cmd->add_option("-m,--model", opts->model, "GGUF file")->required();
  cmd->add_option("text", opts->text, "Text to tokenize");
  cmd->add_option("-f,--file", opts->file, "Read the text from a file ('-' for stdin)");
  cmd->add_flag("--no-special", opts->no_special,
                "Do not recognise control-token text such as <|im_start|> (user-defined tokens still are)");
  cmd->add_flag("--no-bos", opts->no_bos, "Do not add BOS/EOS even if the model asks for them");
  cmd->add_flag("--json", opts->json, "Print a JSON array of ids");
  cmd->callback([run, opts, cmd] {
    *run = [opts, cmd] {
      const bool has_text = cmd->count("text") > 0;
      const bool has_file = !opts->file.empty();
      if (has_text == has_file) return fail("give either TEXT or -f FILE");
      std::string text = opts->text;
      if (has_file) {
        if (opts->file == "-") {
          text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
        } else {
          auto content = read_file(opts->file);
          if (!content.ok()) return fail(content.status().to_string());
          text = std::move(content).value();
        }
      }
      auto tokenizer = Tokenizer::load(opts->model);
      if (!tokenizer.ok()) return fail(tokenizer.status().to_string());
      TokenizeOptions to;
      to.parse_special = !opts->no_special;
      to.add_special = !opts->no_bos;
      const std::vector<int32_t> ids = tokenizer->tokenize(text, to);
      if (opts->json) {
        std::printf("%s\n", nlohmann::json(ids).dump().c_str());
        return 0;
      }
      for (int32_t id : ids) {
        std::printf("%d\t'%s'\n", id, escape_piece(tokenizer->token_to_piece(id, true)).c_str());
      }
      return 0;
    };
  });
}

const CommandRegistration kTokenizeRegistration("tokenize", setup_tokenize);

}  // namespace

}  // namespace kazeia::cli
