// The tokenizer's input data, independent of where it comes from: a GGUF
// file's tokenizer.ggml.* keys (tokenizer_gguf.cpp) or a hand-made vocabulary
// in a test.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"
#include "kazeia/status.h"

namespace kazeia::text {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,       // matched in text only with parse_special; not rendered by default
  kUserDefined = 4,   // always matched in text, always rendered (<think>, <tool_call>)
  kUnused = 5,
  kByte = 6,          // <0xNN> byte fallback
};

enum class TokenizerKind {
  kBpe,  // tokenizer.ggml.model = "gpt2": byte-level BPE with a regex pre-tokenizer
  kSpm,  // tokenizer.ggml.model = "llama": SentencePiece BPE with scores
};

inline constexpr int32_t kNoToken = -1;

struct Vocab {
  TokenizerKind kind = TokenizerKind::kBpe;
  std::string pre;                  // tokenizer.ggml.pre (BPE); "" when absent
  std::vector<std::string> tokens;  // id -> text (BPE: GPT-2 byte alphabet; SPM: with U+2581)
  std::vector<TokenType> types;     // empty: all kNormal
  std::vector<float> scores;        // empty: all 0 (SPM merges by score)
  std::vector<std::string> merges;  // BPE, "left right", rank = index

  // kNoToken when absent. load_vocab_from_gguf fills llama.cpp's defaults
  // (SPM: unk 0, bos 1, eos 2); a hand-made Vocab sets what it needs.
  int32_t bos_id = kNoToken;
  int32_t eos_id = kNoToken;
  int32_t unk_id = kNoToken;
  int32_t pad_id = kNoToken;
  int32_t sep_id = kNoToken;
  int32_t eot_id = kNoToken;  // found by token text when absent (<|im_end|>, <|eot_id|>, ...)
  int32_t eom_id = kNoToken;

  // Absent: llama.cpp's defaults for the model (SPM: add BOS, add a space
  // prefix; BPE: depends on the pre-tokenizer, usually no BOS).
  std::optional<bool> add_bos;
  std::optional<bool> add_eos;
  std::optional<bool> add_space_prefix;
};

// Reads the tokenizer.ggml.* keys. Errors name the key and what was wrong.
Result<Vocab> load_vocab_from_gguf(const gguf::File& file);

// The per-token arrays load_vocab_from_gguf copies out of the file: a holder
// of the File may drop their parsed values (gguf::File::erase) once the
// tokenizer and the chat template are built (~20 MB at a 250k vocabulary).
inline constexpr std::string_view kVocabArrayKeys[] = {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
                                                       "tokenizer.ggml.scores", "tokenizer.ggml.merges"};

}  // namespace kazeia::text
