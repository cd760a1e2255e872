// UTF-8 helpers for the tokenizers: validation, U+FFFD replacement (batch and
// streaming, with identical results), and the GPT-2 byte <-> unicode mapping
// that byte-level BPE vocabularies are written in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kazeia::text {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

// Sequence length implied by a lead byte, without validation (1 for ASCII and
// stray continuation bytes). This is how llama.cpp's SentencePiece path cuts
// text into characters, so it must not be "fixed".
inline size_t utf8_lead_length(uint8_t lead) {
  static constexpr uint8_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

// Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

// Appends the UTF-8 encoding of a code point (<= 0x10FFFF).
void append_utf8(uint32_t cp, std::string& out);

// Decodes the code point at s[pos] (s must be valid UTF-8 there) and advances pos.
uint32_t decode_utf8(std::string_view s, size_t& pos);

// Streaming validator: bytes in, valid UTF-8 out. A sequence that is still a
// valid prefix is held back; a byte that cannot continue it turns the held
// bytes (a "maximal subpart", as in Unicode ch. 3 / WHATWG) into one U+FFFD
// and is then looked at again on its own. Results do not depend on how the
// input is cut into push() calls.
class Utf8Sanitizer {
 public:
  void push(std::string_view bytes, std::string& out);
  // Emits U+FFFD for a held incomplete sequence.
  void flush(std::string& out);
  bool has_pending() const { return n_pending_ > 0; }
  void reset() { n_pending_ = 0; need_ = 0; }

 private:
  void push_byte(uint8_t c, std::string& out);
  void start(uint8_t c, uint8_t need, uint8_t lo, uint8_t hi);

  char pending_[4] = {};
  uint8_t n_pending_ = 0;
  uint8_t need_ = 0;  // continuation bytes still expected
  uint8_t lo_ = 0x80, hi_ = 0xBF;  // allowed range of the next byte
};

// Batch form of Utf8Sanitizer (push everything, then flush).
std::string sanitize_utf8(std::string_view s);

// GPT-2 byte-level alphabet: every byte is written as one code point (printable
// Latin-1 bytes as themselves, the other 68 as U+0100 + n in byte order).
uint32_t gpt2_byte_to_codepoint(uint8_t b);
// The byte a code point stands for, or -1 when it is not in the alphabet.
int gpt2_codepoint_to_byte(uint32_t cp);
// True when every character of `mapped` is in the alphabet.
bool is_gpt2_text(std::string_view mapped);
// Raw bytes -> alphabet text.
std::string gpt2_encode(std::string_view raw);
// Alphabet text -> raw bytes; nullopt when a character is outside the alphabet
// (or the text is not valid UTF-8).
std::optional<std::string> gpt2_decode(std::string_view mapped);
// Like gpt2_decode, but characters outside the alphabet are kept as they are
// (llama.cpp writes "[UNK_BYTE_...]" there; keeping the text is more useful).
std::string gpt2_decode_lenient(std::string_view mapped);

}  // namespace kazeia::text
