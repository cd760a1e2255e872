// The Jinja tree-walking interpreter.
//
// One Interpreter renders one template once. A template is hostile input, so
// every resource is bounded by RenderLimits: evaluation steps (time), the
// output and every intermediate string (memory), list sizes, the nesting of
// values, and recursion (macros calling macros, deep expressions). Running
// out of any of them is an OutOfRange error, never a crash.
//
// Scoping follows Jinja2: a for loop and a macro call open a scope; `set`
// writes to the innermost scope, so a variable set inside a loop is gone
// after it (hence namespace()); `if` opens none. A macro sees its own scope
// and the template's top-level names, not its caller's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kazeia/status.h"
#include "text/jinja_ast.h"
#include "text/jinja_value.h"

namespace kazeia::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{32} << 20;  // the output and any single string
  uint64_t max_steps = 20'000'000;            // nodes evaluated + loop iterations + bytes/16 produced
  uint32_t max_depth = 400;                   // nested evaluation (expressions, blocks, macro calls)
  uint32_t max_macro_depth = 64;              // macro calls in progress
  uint32_t max_value_depth = 128;             // nesting of lists/dicts
  size_t max_items = 1'000'000;               // elements of one list (range() included)
};

class Interpreter {
 public:
  explicit Interpreter(const RenderLimits& limits);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders a parsed template with the top-level variables of `context`
  // (a dict).
  Result<std::string> render(const StmtList& program, const Value& context);

  // ---- services for builtins (jinja_builtins.cpp) ----
  const RenderLimits& limits() const { return limits_; }
  // Consumes evaluation budget.
  Status step(uint64_t cost = 1);
  // Consumes budget for producing n bytes and checks the string limit.
  Status charge_bytes(size_t n);
  // str(v) within the string limit.
  Result<std::string> str(const Value& v);
  // A list (or tuple) after checking its size and nesting.
  Result<Value> make_list(std::vector<Value> items, bool is_tuple = false);
  Result<Value> make_dict(std::vector<std::pair<std::string, Value>> entries);
  // A namespace() object; the interpreter owns it so cycles are broken at the end.
  Result<Value> make_namespace(std::vector<std::pair<std::string, Value>> entries);
  Status check_value(const Value& v);
  // obj.name and obj[key] with Jinja's rules (missing -> undefined).
  Result<Value> get_attr(const Value& obj, const std::string& name);
  Result<Value> get_item(const Value& obj, const Value& key);
  // Calls a macro, builtin or bound method.
  Result<Value> call(const Value& fn, CallArgs& args);
  Result<Value> apply_filter(const std::string& name, const Value& input, CallArgs& args);
  Result<bool> apply_test(const std::string& name, const Value& input, CallArgs& args);
  // The elements a for loop would visit (list items, dict keys, string
  // characters; undefined -> none); an error for non-iterables.
  Result<std::vector<Value>> iterate(const Value& v);

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  struct Frame {
    std::vector<std::pair<std::string, Value>> vars;
    const Value* find(const std::string& name) const;
    void set(const std::string& name, Value v);
  };
  class DepthGuard;

  Status exec_body(const StmtList& body, std::string& out, Flow& flow);
  Status exec(const Stmt& s, std::string& out, Flow& flow);
  Status exec_if(const Stmt& s, std::string& out, Flow& flow);
  Status exec_for(const Stmt& s, std::string& out, Flow& flow);
  Status exec_set(const Stmt& s);
  Status exec_block_with_filters(const Stmt& s, std::string& out);
  Status assign(const Target& target, const Value& value);
  Status append(std::string& out, std::string_view text);

  Result<Value> eval(const Expr& e);
  Result<Value> eval_call(const Expr& e);
  Result<Value> eval_filter(const Expr& e, const Value& input);
  Result<Value> eval_test(const Expr& e);
  Result<Value> eval_compare(const Expr& e);
  Result<Value> eval_slice(const Expr& e);
  Result<Value> eval_unary(const Expr& e);
  Result<Value> eval_binary(const Expr& e);
  Result<Value> eval_collection(const Expr& e);
  Result<CallArgs> eval_args(const Expr& e, size_t first_positional);

  Value lookup(const std::string& name) const;
  Result<Value> call_macro(const Stmt& macro, CallArgs& args);

  RenderLimits limits_;
  uint64_t steps_ = 0;
  uint32_t depth_ = 0;
  uint32_t macro_depth_ = 0;
  std::vector<Frame> frames_;   // frames_[0]: context + template-level names
  size_t scope_base_ = 1;       // first frame visible besides frames_[0] (macro boundary)
  std::vector<Value> namespaces_;
};

}  // namespace kazeia::jinja
