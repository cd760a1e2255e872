// Tokenizers for generated test models: the `tokenizer.*` GGUF keys.
//
// A generated model needs a vocabulary whose size matches token_embd and
// whose keys have exactly the types llama.cpp expects. Three sources:
//  - a synthetic byte-level BPE vocabulary (Qwen style, model "gpt2"): the
//    256 byte tokens in GPT-2 byte-to-unicode order, merges learned from a
//    small built-in text, the Qwen special tokens, then [PAD{id}] tokens;
//  - a synthetic SentencePiece vocabulary (llama style, model "llama"):
//    <unk>, <s>, </s>, 256 <0xNN> byte tokens, pieces learned from the same
//    text with scores;
//  - every tokenizer.* key copied from another GGUF file.
// Everything is deterministic: no seed is involved at all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"
#include "kazeia/status.h"

namespace kazeia::gen {

// GGUF token types (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6,
};

struct TokenizerKeys {
  std::vector<gguf::KeyValue> keys;  // in the order they are written
  uint32_t n_vocab = 0;
};

// The text the synthetic vocabularies are learned from (English prose and a
// little code, written for this purpose).
std::string_view tokenizer_training_text();

// GPT-2's byte-to-unicode table: the text of byte token `id` (0..255) in
// vocabulary order, and the byte it stands for.
std::string byte_token_text(int id);
uint8_t byte_token_value(int id);

// Byte-level BPE with `n_vocab` tokens (at least 256 + 9 special tokens).
// pre: tokenizer.ggml.pre ("qwen2", "qwen35").
Result<TokenizerKeys> make_byte_bpe_tokenizer(uint32_t n_vocab, std::string_view pre);

// SentencePiece-style vocabulary with `n_vocab` tokens (at least 3 + 256 + 1).
Result<TokenizerKeys> make_sentencepiece_tokenizer(uint32_t n_vocab);

// Every tokenizer.* key of the GGUF file at path; n_vocab is the length of
// its tokenizer.ggml.tokens array.
Result<TokenizerKeys> copy_tokenizer(const std::string& path);

// The short ChatML template written into synthetic BPE vocabularies (our own
// text, not Qwen's): system/user/assistant turns between <|im_start|> and
// <|im_end|>, and an empty think block when enable_thinking is false.
std::string_view synthetic_chat_template();

}  // namespace kazeia::gen
