// Text <-> token ids, built only from a vocabulary (GGUF tokenizer.ggml.*),
// reproducing llama.cpp's llama_tokenize / llama_detokenize / token_to_piece.
//
// encode():
//  1. Special-token split, as llama.cpp's tokenizer_st_partition: tokens of
//     type CONTROL, USER_DEFINED and UNKNOWN, longest text first, each cut out
//     of the remaining text wherever it occurs. CONTROL and UNKNOWN take part
//     only with parse_special; USER_DEFINED (<think>, <tool_call>) always.
//  2. Each remaining text fragment is tokenized on its own:
//     - BPE: invalid UTF-8 is replaced by U+FFFD (llama.cpp does the same, byte
//       by byte), then the pre-tokenizer regex split, then byte-level merges.
//     - SPM: a space is prepended to a fragment at the start or right after a
//       special token (add_space_prefix), spaces become U+2581, then merges.
//  3. add_special adds BOS / EOS according to add_bos / add_eos.
//  No Unicode normalisation is applied.
//
// decode() concatenates token_to_piece() for each id. Pieces: NORMAL tokens
// their text (BPE: GPT-2 alphabet decoded to bytes; SPM: U+2581 -> space),
// BYTE tokens their byte, USER_DEFINED their text, CONTROL / UNKNOWN their text
// only with render_special, UNUSED nothing. With add_space_prefix (SPM) one
// leading space of the first piece is dropped, as llama.cpp does (except when
// remove_special drops a leading BOS: then llama.cpp keeps the space). The
// result is raw bytes and may be invalid UTF-8 (byte tokens); see
// StreamingDetokenizer and sanitize_utf8 for display.
//
// Ids outside the vocabulary render as nothing. All const methods are
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"
#include "kazeia/status.h"
#include "text/tokenizer_vocab.h"

namespace kazeia::text {

struct DecodeOptions {
  bool render_special = false;  // CONTROL / UNKNOWN tokens as their text (llama.cpp "special")
  bool remove_special = false;  // drop the BOS / EOS that encode(add_special) would add
  bool clean_spaces = false;    // apply llama.cpp's " ." " ," " 's" clean-up if the vocabulary asks for it
};

class Tokenizer {
 public:
  // Checks the vocabulary (ids in range, no duplicate token texts, a known
  // pre-tokenizer, BOS/EOS present when they are to be added).
  static Result<Tokenizer> create(Vocab vocab);
  static Result<Tokenizer> from_gguf(const gguf::File& file);
  static Result<Tokenizer> load(const std::string& gguf_path);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int32_t> encode(std::string_view text, bool parse_special, bool add_special) const;
  std::string decode(std::span<const int32_t> ids, const DecodeOptions& options = {}) const;
  // The bytes of one token; empty for CONTROL / UNKNOWN unless render_special.
  std::string_view token_to_piece(int32_t id, bool render_special = false) const;

  int32_t vocab_size() const;
  bool valid_id(int32_t id) const { return id >= 0 && id < vocab_size(); }
  std::string_view token_text(int32_t id) const;  // as stored; "" for an invalid id
  TokenType token_type(int32_t id) const;           // kUndefined for an invalid id
  bool is_control(int32_t id) const;                // CONTROL (incl. types llama.cpp promotes)
  bool is_eog(int32_t id) const;                    // end of generation
  const std::vector<int32_t>& eog_ids() const;
  int32_t find_token(std::string_view text) const;  // exact token text, or kNoToken

  TokenizerKind kind() const;
  const std::string& pre() const;  // tokenizer.ggml.pre as given
  int32_t bos_id() const;
  int32_t eos_id() const;
  int32_t eot_id() const;
  int32_t unk_id() const;
  int32_t pad_id() const;
  bool add_bos() const;
  bool add_eos() const;
  bool add_space_prefix() const;
  bool clean_spaces() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// llama.cpp's clean_up_tokenization_spaces passes (" ?" "!" "." "," lose the
// space before them, " ' " loses both spaces, " 's" " 'm" " 're" " 've" lose
// the space), on decoded text.
std::string clean_up_spaces(std::string_view text);

}  // namespace kazeia::text
