// Builtin filters, tests, methods and global functions of the interpreter.
//
// Filters and tests follow Jinja2 (with HF transformers' `tojson`), methods
// follow Python's str/dict/list, globals are those chat templates use:
// range, namespace, dict, raise_exception (HF), strftime_now (HF/llama.cpp).
// Unknown filter and test names are render-time errors, raised only when
// the template reaches them.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "kazeia/status.h"
#include "text/jinja_value.h"

namespace kazeia::jinja {

class Interpreter;

using FilterFn = Result<Value> (*)(Interpreter&, const Value& input, CallArgs& args);
using TestFn = Result<bool> (*)(Interpreter&, const Value& input, CallArgs& args);

FilterFn find_filter(const std::string& name);
TestFn find_test(const std::string& name);

// A bound method (`"abc".upper`, `d.items`), or undefined when `self` has no
// method of that name.
Value find_method(const Value& self, const std::string& name);

// A global function by name (`range`, `namespace`, ...), or undefined.
Value find_global(const std::string& name);

// The message carried by raise_exception(): render errors with this prefix
// come from the template itself.
inline constexpr const char* kRaisedPrefix = "template raised: ";

// Binds call arguments to parameter names, Python-style: positional first,
// then by keyword; missing ones are undefined. Too many positional
// arguments or an unknown keyword is an error naming `function`.
Result<std::vector<Value>> bind_args(const char* function, CallArgs& args,
                                     std::initializer_list<const char*> params);

}  // namespace kazeia::jinja
