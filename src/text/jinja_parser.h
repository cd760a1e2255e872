// Jinja parser: tokens -> syntax tree (jinja_ast.h).
//
// The grammar and operator precedence are Jinja2's: conditional expression,
// or, and, not, comparisons (chained; in / not in), + -, ~, * / // %, **,
// unary - +, then primary with postfix `.attr`, `[index]`, `[a:b:c]`,
// calls, filters (`|f(args)`) and tests (`is [not] t args`).
#pragma once

#include <cstdint>
#include <vector>

#include "kazeia/status.h"
#include "text/jinja_ast.h"
#include "text/jinja_lexer.h"

namespace kazeia::jinja {

struct ParseLimits {
  // Parser recursion: nested parentheses, brackets, unary operators and
  // nested blocks together.
  uint32_t max_nesting = 64;
  // Depth of any expression tree (chains of binary operators or filters
  // included).
  uint32_t max_expr_depth = 128;
};

// Fails with InvalidFile ("template line N: ...") on a syntax error, an
// unknown or unclosed tag, or a limit exceeded.
Result<StmtList> parse(const std::vector<Token>& tokens, const ParseLimits& limits = {});

}  // namespace kazeia::jinja
