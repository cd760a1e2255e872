// Byte-level BPE pre-tokenizers: the regex split chosen by tokenizer.ggml.pre.
//
// A pre-tokenizer is a list of regexes applied one after the other, as
// llama.cpp does (unicode_regex_split): each regex cuts every current piece
// into its matches and the text between matches, so later regexes refine the
// cuts of earlier ones. Patterns are compiled once with PCRE2 (UTF, UCP, JIT).
//
// Matching llama.cpp exactly: its whitespace is Unicode White_Space, i.e.
// PCRE2's UCP \s plus U+0085 (NEL), so every \s / \S is widened to include
// U+0085 before compiling. Letters, marks and numbers are the Unicode general
// categories L, M, N in both. Known remaining difference: code points assigned
// after the Unicode version of the system's PCRE2 (Unicode 14 for 10.42) are
// "unassigned" here, while llama.cpp's tables may already classify them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kazeia/status.h"

namespace kazeia::text {

// What tokenizer.ggml.pre selects.
struct PreTokenizerSpec {
  std::string name;                   // canonical name of the family ("qwen2", "llama3", ...)
  std::vector<std::string> patterns;  // applied in order
  bool ignore_merges = false;  // a pre-token that is itself a token is emitted whole (llama3)
  bool clean_spaces = true;    // llama.cpp's clean_up_tokenization_spaces default for the family
  bool add_bos = false;        // llama.cpp's default when the file has no add_bos_token
};

// The spec for a tokenizer.ggml.pre value; nullptr when unknown. The empty
// string (key absent) maps to "default", as in llama.cpp.
const PreTokenizerSpec* find_pretokenizer(std::string_view pre);
// All accepted tokenizer.ggml.pre values, comma separated (for error messages).
std::string supported_pretokenizers();

// Rewrites \s and \S so that they also cover U+0085 (see the file comment).
std::string widen_whitespace(std::string_view pattern);

struct TextSpan {
  size_t offset;
  size_t length;
};

class RegexSplitter {
 public:
  static Result<RegexSplitter> create(const std::vector<std::string>& patterns);

  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;
  ~RegexSplitter();

  // Cuts text (which must be valid UTF-8) into pieces covering it without gaps
  // or overlaps, in order. Thread-safe.
  void split(std::string_view text, std::vector<TextSpan>& pieces) const;

 private:
  struct Compiled;
  RegexSplitter() = default;
  std::vector<std::unique_ptr<Compiled>> regexes_;
};

}  // namespace kazeia::text
