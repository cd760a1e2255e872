// Streaming detokenizer: token ids in, complete UTF-8 text out.
//
// A character whose bytes are spread over several tokens (byte tokens, or
// BPE tokens that end inside a multi-byte sequence) is held back until it is
// complete. Bytes that can never form a character become U+FFFD as soon as
// that is certain, and a sequence still incomplete at flush() becomes U+FFFD
// too: nothing is dropped. The concatenation of everything push() and
// flush() return equals sanitize_utf8(tokenizer.decode(ids, {render_special}))
// (with Options::whole_text, see below), however the ids are pushed.
//
// Leading space: decode() drops one leading space of the first piece when the
// vocabulary adds a space prefix (SentencePiece). A stream usually continues
// a prompt (generated tokens), where llama.cpp keeps that space, so by default
// nothing is dropped; set Options::whole_text to get decode()'s bytes for ids
// that are a whole text.
#pragma once

#include <cstdint>
#include <string>

#include "text/tokenizer.h"
#include "text/unicode_utf8.h"

namespace kazeia::text {

class StreamingDetokenizer {
 public:
  struct Options {
    bool render_special = false;  // CONTROL / UNKNOWN tokens as their text
    // The ids start a text, as for decode(): with add_space_prefix the first
    // piece loses one leading space.
    bool whole_text = false;
  };

  // The tokenizer must outlive the detokenizer.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer) : StreamingDetokenizer(tokenizer, Options{}) {}
  StreamingDetokenizer(const Tokenizer& tokenizer, const Options& options);

  // Returns the text that became complete with this token (possibly empty).
  std::string push(int32_t id);
  // Appending form, for callers that collect into one buffer.
  void push(int32_t id, std::string& out);
  // End of stream: a held incomplete character becomes U+FFFD.
  std::string flush();
  // True while bytes of an incomplete character are held back.
  bool has_pending() const { return utf8_.has_pending(); }
  // Back to the start of a text (the leading-space rule applies again).
  void reset();

 private:
  const Tokenizer* tokenizer_;
  bool render_special_;
  bool strip_first_;
  bool at_start_ = true;
  Utf8Sanitizer utf8_;
};

}  // namespace kazeia::text
