// Jinja lexer: template text -> tokens, whitespace control applied.
//
// Text between tags becomes kText tokens that already reflect `{%-`/`-%}`,
// trim_blocks (the first newline after a block or comment tag is dropped) and
// lstrip_blocks (spaces and tabs before a block or comment tag on its own
// line are dropped) — the settings HF transformers uses and llama.cpp
// reproduces. Like Jinja2, "\r\n" and "\r" become "\n" in the template and a
// single trailing newline of the template is removed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kazeia/status.h"

namespace kazeia::jinja {

enum class TokenType : uint8_t {
  kText,        // literal output
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,        // identifier (keywords are names too)
  kString,      // string literal, escapes already decoded
  kInteger,
  kFloat,
  kOperator,    // + - * / // % ** ~ == != < <= > >= = . , : | ( ) [ ] { }
  kEof,
};

struct Token {
  TokenType type = TokenType::kEof;
  std::string text;  // name, operator, decoded string, literal text
  int64_t int_value = 0;
  double float_value = 0.0;
  int line = 1;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// Fails (InvalidFile, "line N: ...") on an unclosed tag or comment, an
// unterminated string, an unknown character or unbalanced brackets.
Result<std::vector<Token>> tokenize(std::string_view source, const LexOptions& options = {});

}  // namespace kazeia::jinja
