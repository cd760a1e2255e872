// Python operators for the interpreter: arithmetic, `in`, slicing and
// printf-style `%` formatting, with Python's results (floor division and
// modulo round toward -inf, `/` is always a float, `"ab" * 2`, ...).
// Integers are 64-bit: where Python would grow a big integer we report an
// overflow error instead.
#pragma once

#include <string>

#include "kazeia/status.h"
#include "text/jinja_value.h"

namespace kazeia::jinja {

class Interpreter;

// op is one of + - * / // % **.
Result<Value> binary_op(Interpreter& in, const std::string& op, const Value& a, const Value& b);

// Python `item in container`.
Result<bool> contains(const Value& container, const Value& item);

// obj[start:stop:step] for lists, tuples and strings (code points); each
// bound is an int or none.
Result<Value> slice_value(Interpreter& in, const Value& obj, const Value& start, const Value& stop,
                          const Value& step);

// `fmt % args` (args: a tuple, a dict for %(name)s, or one value).
Result<std::string> percent_format(Interpreter& in, const std::string& fmt, const Value& args);

}  // namespace kazeia::jinja
