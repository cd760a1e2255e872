// SentencePiece BPE (the "llama" tokenizer model), as llama.cpp runs it.
//
// The text (spaces already written as U+2581) starts as one symbol per UTF-8
// character, cut by lead-byte length without validation. The adjacent pair
// whose concatenation is a token with the highest score is merged first (ties:
// the leftmost pair), until no adjacent pair forms a token. A final symbol that
// is not a token is written as <0xNN> byte tokens, one per byte, so any byte
// string survives a round trip when the vocabulary has the 256 byte tokens.
//
// Speed-up, exact: when no token has U+2581 right after another character
// (other than U+2581), no merge can ever join a character with a following
// U+2581. The text then falls apart into independent words starting at each
// such U+2581; they are merged one by one, and repeated words are copied.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/bpe.h"  // TokenLookup

namespace kazeia::text {

struct SpmScratch {
  struct Symbol {
    uint32_t start;
    uint32_t length;  // 0 once merged into its left neighbour
    int32_t prev;
    int32_t next;
    int32_t token;  // token id of the symbol's text, or -1
  };
  struct Bigram {
    float score;
    int32_t left;
    int32_t right;
    int32_t token;
    uint32_t length;  // combined length when queued
  };
  std::vector<Symbol> symbols;
  std::vector<Bigram> heap;
};

class SpmModel {
 public:
  // lookup: every token by its text (llama.cpp looks pieces up among all
  // tokens); it must outlive the model. fallback_id is used for a byte
  // without a <0xNN> token.
  static SpmModel build(const TokenLookup& lookup, const StringTable& texts, const std::vector<float>& scores,
                        int32_t fallback_id);

  // Appends the tokens of `text` (already escaped: ' ' -> U+2581).
  void encode(std::string_view text, std::vector<int32_t>& out, SpmScratch& scratch) const;

  int32_t byte_token(uint8_t b) const { return byte_token_[b]; }
  bool splits_words() const { return splits_words_; }

 private:
  int32_t find(std::string_view piece) const;
  void encode_word(std::string_view text, std::vector<int32_t>& out, SpmScratch& scratch) const;
  void try_add(std::string_view text, SpmScratch& s, int32_t left, int32_t right) const;

  const TokenLookup* lookup_ = nullptr;
  std::vector<float> scores_;
  int32_t byte_token_[256] = {};
  bool splits_words_ = false;
};

}  // namespace kazeia::text
