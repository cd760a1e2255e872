// Small hand-made vocabularies shared by the tokenizer and detokenizer tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "text/tokenizer.h"
#include "text/unicode_utf8.h"

namespace kazeia::text::testvocab {

using Ids = std::vector<int32_t>;

// ---------------------------------------------------------------------------
// Byte-level BPE. Ids 0-255 are the bytes (id = byte value) in GPT-2 alphabet
// form, then merged tokens, then special tokens.
constexpr int32_t kHe = 256, kLl = 257, kHell = 258, kHello = 259, kGw = 260, kOr = 261, kGwor = 262,
                  kLd = 263, kGworld = 264, kEot = 265, kThink = 266, kImEnd = 267, kX = 268, kXy = 269;

inline Vocab small_bpe_vocab(const std::string& pre) {
  Vocab v;
  v.kind = TokenizerKind::kBpe;
  v.pre = pre;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(gpt2_encode(std::string(1, static_cast<char>(b))));
  // Rank = position; each merge creates the token listed next to it.
  v.merges = {"h e", "l l", "he ll", "hell o", "\xC4\xA0 w", "o r", "\xC4\xA0w or", "l d", "\xC4\xA0wor ld"};
  for (const char* t : {"he", "ll", "hell", "hello", "\xC4\xA0w", "or", "\xC4\xA0wor", "ld", "\xC4\xA0world"}) {
    v.tokens.push_back(t);
  }
  v.tokens.push_back("<|eot|>");     // 265 CONTROL
  v.tokens.push_back("<think>");     // 266 USER_DEFINED
  v.tokens.push_back("<|im_end|>");  // 267 NORMAL in the file, CONTROL by llama.cpp's text rule
  v.tokens.push_back("<x>");         // 268 USER_DEFINED
  v.tokens.push_back("<x><y>");      // 269 USER_DEFINED, longer: wins over <x>
  v.types.assign(v.tokens.size(), TokenType::kNormal);
  v.types[kEot] = TokenType::kControl;
  v.types[kThink] = TokenType::kUserDefined;
  v.types[kX] = TokenType::kUserDefined;
  v.types[kXy] = TokenType::kUserDefined;
  v.eos_id = kEot;
  v.bos_id = kEot;
  return v;
}

inline Tokenizer make(Vocab v) {
  Result<Tokenizer> t = Tokenizer::create(std::move(v));
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  if (!t.ok()) std::abort();
  return std::move(t).value();
}

// ---------------------------------------------------------------------------
// SentencePiece. 0 <unk>, 1 <s>, 2 </s>, 3-258 <0x00>-<0xFF>, then pieces.
constexpr int32_t kByte0 = 3;
constexpr int32_t kMark = 259, kH = 260, kE = 261, kL = 262, kO = 263, kMarkH = 264, kLlS = 265, kHeS = 266,
                  kLlo = 267, kMarkHe = 268, kMarkHello = 269, kA = 270, kMarkA = 271;

inline Vocab small_spm_vocab() {
  Vocab v;
  v.kind = TokenizerKind::kSpm;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    v.tokens.push_back(hex);
    v.types.push_back(TokenType::kByte);
  }
  const std::pair<const char*, float> pieces[] = {
      {"\xE2\x96\x81", -1.0f}, {"h", -5.0f},     {"e", -5.0f},    {"l", -5.0f},
      {"o", -5.0f},            {"\xE2\x96\x81h", -3.0f}, {"ll", -2.5f}, {"he", -4.0f},
      {"llo", -2.0f},          {"\xE2\x96\x81he", -2.2f}, {"\xE2\x96\x81hello", -1.5f},
      {"a", -6.0f},            {"\xE2\x96\x81" "a", -3.5f}};
  v.scores.assign(v.tokens.size(), 0.0f);
  for (const auto& [text, score] : pieces) {
    v.tokens.push_back(text);
    v.types.push_back(TokenType::kNormal);
    v.scores.push_back(score);
  }
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  return v;
}

}  // namespace kazeia::text::testvocab
