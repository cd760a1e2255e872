// The `calculator` tool: a safe arithmetic evaluator.
//
// A recursive-descent parser evaluates as it parses; there is no code
// evaluation of any kind, only the grammar below.
//
//   expression := term (('+' | '-') term)*
//   term       := unary (('*' | '×' | '/' | '÷' | '%') unary)*
//   unary      := ('-' | '−' | '+') unary | power
//   power      := postfix (('^' | '**') unary)?       right-associative
//   postfix    := primary '!'*
//   primary    := number | constant | function '(' expression ')' | '(' expression ')'
//
// so -2^2 = -4, 2^3^2 = 512, 2^-1 = 0.5, and -3! = -6.
// Functions: sqrt cbrt sin cos tan asin acos atan sinh cosh tanh exp
// ln log (natural) log10 log2 abs round (half away from zero) floor ceil.
// Constants: pi (π), e, tau.
//
// Numbers. Integers are exact (arbitrary size up to max_exact_bits, then the
// result falls back to a double): 2^100 = 1267650600228229401496703205376.
// A division of integers that is exact stays an integer (6/3 = 2); otherwise
// it gives a decimal (7/2 = 3.5). '%' is the floored modulo (the result has
// the divisor's sign: -7 % 3 = 2), as in Python and in mathematics. Decimal
// literals (0.1, 1e-3) and irrational functions produce doubles, printed
// with 15 significant digits so that binary noise does not show
// (0.1 + 0.2 = 0.3); sin/cos/tan results below 1e-15 in magnitude print as 0
// (sin(pi) = 0, not 1.2e-16).
//
// Errors name the problem and its 1-based character position:
// "division by zero at position 3", "unknown function 'foo' at position 1",
// "expected ')' at position 7 to close '(' at position 1".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "agent/tool_registry.h"
#include "kazeia/status.h"

namespace kazeia::agent {

struct CalculatorLimits {
  size_t max_input_bytes = 1000;
  int max_depth = 64;             // nesting of parentheses, unary signs and powers
  uint64_t max_exact_bits = 4096; // larger integer results become doubles
};

struct CalculatorResult {
  std::string value;  // "132678", "3.5", "1267650600228229401496703205376"
  bool exact = false; // true when the value is an exact integer
};

Result<CalculatorResult> evaluate_expression(std::string_view expression,
                                             const CalculatorLimits& limits = {});

// Tool "calculator": {"expression": string} -> {"expression", "result", "exact"}.
Tool make_calculator_tool(const CalculatorLimits& limits = {});

}  // namespace kazeia::agent
