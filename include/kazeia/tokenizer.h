// A model's tokenizer on its own, read from a GGUF file's tokenizer.ggml.*
// keys without loading any weights: text -> token ids -> text, as llama.cpp
// tokenizes (byte-level BPE "gpt2" with the pre-tokenizer named by
// tokenizer.ggml.pre, or SentencePiece "llama").
//
// std-only; errors are Status / Result values. Thread-safe for concurrent
// const use; a Detokenizer is one stream (not shared between threads).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

struct TokenizeOptions {
  // Recognise special-token text such as "<|im_start|>" as the token.
  // User-defined tokens (<think>, <tool_call>) are recognised either way.
  bool parse_special = true;
  // Add BOS / EOS when the vocabulary asks for them (add_bos_token, ...).
  bool add_special = true;
};

struct DetokenizeOptions {
  // Write control tokens (<|im_end|>, <s>) as their text instead of nothing.
  bool render_special = false;
  // Drop a leading BOS / trailing EOS that tokenize(add_special) would add.
  bool remove_special = false;
};

// Token ids of roles the vocabulary defines; -1 when absent.
struct SpecialTokens {
  int32_t bos = -1;
  int32_t eos = -1;
  int32_t eot = -1;  // end of turn (<|im_end|>, <|eot_id|>), found by text when not named
  int32_t unk = -1;
  int32_t pad = -1;
};

class Detokenizer;

class Tokenizer {
 public:
  static Result<Tokenizer> load(const std::string& gguf_path);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int32_t> tokenize(std::string_view text, const TokenizeOptions& options = {}) const;
  // Raw bytes: may be invalid UTF-8 when ids cut a character (use a
  // Detokenizer for display). Invalid ids render as nothing.
  std::string detokenize(std::span<const int32_t> ids, const DetokenizeOptions& options = {}) const;
  // One token's bytes; control tokens give "" unless render_special.
  std::string token_to_piece(int32_t id, bool render_special = true) const;
  // The token's text as stored in the vocabulary ("Ġworld", "▁the", "<0x0A>").
  std::string token_text(int32_t id) const;

  int32_t vocab_size() const;
  SpecialTokens special_tokens() const;
  bool is_end_of_generation(int32_t id) const;
  bool is_control(int32_t id) const;
  bool add_bos() const;
  std::string model() const;  // tokenizer.ggml.model: "gpt2" or "llama"
  std::string pre() const;    // tokenizer.ggml.pre ("" when absent)

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend class Detokenizer;
};

// Streaming ids -> text that hands out only complete UTF-8: a character cut
// across tokens is held until complete; bytes that cannot complete become
// U+FFFD as soon as that is certain, and at flush().
class Detokenizer {
 public:
  struct Options {
    bool render_special = false;
    // The ids are a whole text rather than a continuation of a prompt: a
    // SentencePiece vocabulary's first leading space is then dropped, as
    // detokenize() does.
    bool whole_text = false;
  };
  // The tokenizer must outlive the detokenizer.
  explicit Detokenizer(const Tokenizer& tokenizer);
  Detokenizer(const Tokenizer& tokenizer, const Options& options);
  Detokenizer(Detokenizer&&) noexcept;
  Detokenizer& operator=(Detokenizer&&) noexcept;
  ~Detokenizer();

  std::string push(int32_t id);
  std::string flush();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kazeia
