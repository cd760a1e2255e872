// The Jinja interpreter; see jinja_eval.h.
#include "text/jinja_eval.h"

#include <algorithm>

#include "text/jinja_builtins.h"
#include "text/jinja_ops.h"
#include "text/jinja_pystr.h"

namespace kazeia::jinja {
namespace {

using EK = Expr::Kind;
using SK = Stmt::Kind;

constexpr std::string_view kLinePrefix = "template line ";

// Adds "template line N: " to an error that has no location yet.
Status at_line(const Status& st, int line) {
  if (st.ok() || line <= 0) return st;
  if (st.message().rfind(kLinePrefix, 0) == 0) return st;
  return Status(st.code(), std::string(kLinePrefix) + std::to_string(line) + ": " + st.message());
}

}  // namespace

class Interpreter::DepthGuard {
 public:
  explicit DepthGuard(Interpreter& in) : in_(in) { ++in_.depth_; }
  ~DepthGuard() { --in_.depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  Status check() const {
    if (in_.depth_ <= in_.limits_.max_depth) return OkStatus();
    return OutOfRange("template evaluation nested deeper than " + std::to_string(in_.limits_.max_depth) +
                      " levels (runaway recursion?)");
  }

 private:
  Interpreter& in_;
};

const Value* Interpreter::Frame::find(const std::string& name) const {
  for (const auto& [k, v] : vars) {
    if (k == name) return &v;
  }
  return nullptr;
}

void Interpreter::Frame::set(const std::string& name, Value v) {
  for (auto& [k, old] : vars) {
    if (k == name) {
      old = std::move(v);
      return;
    }
  }
  vars.emplace_back(name, std::move(v));
}

Interpreter::Interpreter(const RenderLimits& limits) : limits_(limits) {}

Interpreter::~Interpreter() {
  // Namespaces are the only mutable values, hence the only way to build a
  // reference cycle; emptying them all breaks every cycle.
  for (auto& ns : namespaces_) {
    std::vector<std::pair<std::string, Value>> entries;
    entries.swap(ns.mutable_namespace().entries);
    ns.mutable_namespace().index.clear();
  }
}

// ---- budget and value services ---------------------------------------------

Status Interpreter::step(uint64_t cost) {
  steps_ += cost;
  if (steps_ > limits_.max_steps) {
    return OutOfRange("template evaluation exceeded " + std::to_string(limits_.max_steps) + " steps");
  }
  return OkStatus();
}

Status Interpreter::charge_bytes(size_t n) {
  if (n > limits_.max_output_bytes) {
    return OutOfRange("string of " + std::to_string(n) + " bytes exceeds the limit of " +
                      std::to_string(limits_.max_output_bytes));
  }
  return step(1 + n / 16);
}

Result<std::string> Interpreter::str(const Value& v) {
  KZ_ASSIGN_OR_RETURN(std::string s, to_str(v, limits_.max_output_bytes));
  KZ_RETURN_IF_ERROR(charge_bytes(s.size()));
  return s;
}

Status Interpreter::check_value(const Value& v) {
  if (v.depth() > limits_.max_value_depth) {
    return OutOfRange("value nested deeper than " + std::to_string(limits_.max_value_depth) + " levels");
  }
  return OkStatus();
}

Result<Value> Interpreter::make_list(std::vector<Value> items, bool is_tuple) {
  if (items.size() > limits_.max_items) {
    return OutOfRange("list of " + std::to_string(items.size()) + " items exceeds the limit of " +
                      std::to_string(limits_.max_items));
  }
  Value v = Value::array(std::move(items), is_tuple);
  KZ_RETURN_IF_ERROR(check_value(v));
  return v;
}

Result<Value> Interpreter::make_dict(std::vector<std::pair<std::string, Value>> entries) {
  if (entries.size() > limits_.max_items) return OutOfRange("dict exceeds the item limit");
  Value v = Value::object(std::move(entries));
  KZ_RETURN_IF_ERROR(check_value(v));
  return v;
}

Result<Value> Interpreter::make_namespace(std::vector<std::pair<std::string, Value>> entries) {
  for (const auto& [k, v] : entries) KZ_RETURN_IF_ERROR(check_value(v));
  Value v = Value::make_namespace(std::move(entries));
  namespaces_.push_back(v);
  return v;
}

Result<std::vector<Value>> Interpreter::iterate(const Value& v) {
  if (v.is_array()) return v.items();
  if (v.is_undefined()) return std::vector<Value>{};
  std::vector<Value> out;
  if (v.is_dict()) {
    for (const auto& [k, unused] : v.obj().entries) out.push_back(Value::string(k));
    return out;
  }
  if (v.is_string()) {
    KZ_RETURN_IF_ERROR(step(1 + v.str().size() / 16));
    const std::string& s = v.str();
    size_t i = 0;
    while (i < s.size()) {
      const size_t start = i;
      py::next_code_point(s, i);
      out.push_back(Value::string(s.substr(start, i - start)));
    }
    return out;
  }
  return InvalidArgument("'" + type_name(v) + "' object is not iterable");
}

// ---- attribute and item access ----------------------------------------------

Result<Value> Interpreter::get_attr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) {
    // Lenient on purpose: `a.b.c` with `a.b` missing stays undefined (a
    // later use reports it), where Jinja2 would raise at once.
    return Value::undefined(name);
  }
  if (obj.is_namespace()) {
    const Value* v = obj.obj().find(name);
    return v ? *v : Value::undefined(name);
  }
  // Python's getattr first: a dict's methods shadow keys of the same name.
  Value method = find_method(obj, name);
  if (!method.is_undefined()) return method;
  if (obj.is_object()) {
    const Value* v = obj.obj().find(name);
    return v ? *v : Value::undefined(name);
  }
  return Value::undefined(name);
}

Result<Value> Interpreter::get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return Value::undefined();
  if (obj.is_object()) {
    if (key.is_string()) {
      const Value* v = obj.obj().find(key.str());
      if (v) return *v;
      if (!obj.is_namespace()) return find_method(obj, key.str());
    }
    return Value::undefined(key.is_string() ? key.str() : std::string());
  }
  if ((obj.is_array() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t idx = key.is_bool() ? (key.as_bool() ? 1 : 0) : key.as_int();
    if (obj.is_array()) {
      const auto n = static_cast<int64_t>(obj.items().size());
      if (idx < 0) idx += n;
      if (idx < 0 || idx >= n) return Value::undefined();
      return obj.items()[static_cast<size_t>(idx)];
    }
    KZ_RETURN_IF_ERROR(step(1 + obj.str().size() / 16));
    const auto offsets = py::code_point_offsets(obj.str());
    const auto n = static_cast<int64_t>(offsets.size()) - 1;
    if (idx < 0) idx += n;
    if (idx < 0 || idx >= n) return Value::undefined();
    const auto k = static_cast<size_t>(idx);
    return Value::string(obj.str().substr(offsets[k], offsets[k + 1] - offsets[k]));
  }
  if (key.is_string()) return get_attr(obj, key.str());
  return Value::undefined();
}

// ---- calls --------------------------------------------------------------------

Result<Value> Interpreter::call(const Value& fn, CallArgs& args) {
  if (!fn.is_callable()) {
    if (fn.is_undefined()) {
      return InvalidArgument(fn.undefined_hint().empty() ? std::string("call of an undefined value")
                                                         : "'" + fn.undefined_hint() + "' is undefined");
    }
    return InvalidArgument("'" + type_name(fn) + "' object is not callable");
  }
  KZ_RETURN_IF_ERROR(step());
  return fn.fn().fn(*this, args);
}

Result<Value> Interpreter::apply_filter(const std::string& name, const Value& input, CallArgs& args) {
  FilterFn f = find_filter(name);
  if (f == nullptr) return InvalidArgument("no filter named '" + name + "'");
  return f(*this, input, args);
}

Result<bool> Interpreter::apply_test(const std::string& name, const Value& input, CallArgs& args) {
  TestFn t = find_test(name);
  if (t == nullptr) return InvalidArgument("no test named '" + name + "'");
  return t(*this, input, args);
}

Result<Value> Interpreter::call_macro(const Stmt& macro, CallArgs& args) {
  if (macro_depth_ >= limits_.max_macro_depth) {
    return OutOfRange("macro calls nested deeper than " + std::to_string(limits_.max_macro_depth));
  }
  if (args.positional.size() > macro.params.size()) {
    return InvalidArgument("macro '" + macro.text + "' takes not more than " + std::to_string(macro.params.size()) +
                           " argument(s)");
  }
  for (const auto& named : args.named) {
    const std::string& key = named.first;
    const bool known = std::any_of(macro.params.begin(), macro.params.end(),
                                   [&](const MacroParam& p) { return p.name == key; });
    if (!known) return InvalidArgument("macro '" + macro.text + "' takes no keyword argument '" + key + "'");
  }
  ++macro_depth_;
  const size_t saved_base = scope_base_;
  frames_.emplace_back();
  scope_base_ = frames_.size() - 1;
  Status st;
  for (size_t i = 0; i < macro.params.size() && st.ok(); ++i) {
    const MacroParam& p = macro.params[i];
    Value v = Value::undefined(p.name);
    if (i < args.positional.size()) {
      v = args.positional[i];
    } else {
      auto it = std::find_if(args.named.begin(), args.named.end(), [&](const auto& kv) { return kv.first == p.name; });
      if (it != args.named.end()) {
        v = it->second;
      } else if (p.default_value) {
        auto d = eval(*p.default_value);
        if (!d.ok()) st = d.status();
        else v = std::move(d).value();
      }
    }
    frames_.back().set(p.name, std::move(v));
  }
  std::string out;
  Flow flow = Flow::kNormal;
  if (st.ok()) st = exec_body(macro.body, out, flow);
  frames_.pop_back();
  scope_base_ = saved_base;
  --macro_depth_;
  if (!st.ok()) return st;
  return Value::string(std::move(out));
}

// ---- statements -----------------------------------------------------------------

Result<std::string> Interpreter::render(const StmtList& program, const Value& context) {
  frames_.clear();
  frames_.emplace_back();
  scope_base_ = 1;
  if (context.is_dict()) {
    for (const auto& [k, v] : context.obj().entries) {
      KZ_RETURN_IF_ERROR(check_value(v));
      frames_[0].set(k, v);
    }
  }
  std::string out;
  Flow flow = Flow::kNormal;
  KZ_RETURN_IF_ERROR(exec_body(program, out, flow));
  return out;
}

Status Interpreter::append(std::string& out, std::string_view text) {
  if (out.size() + text.size() > limits_.max_output_bytes) {
    return OutOfRange("template output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
  }
  KZ_RETURN_IF_ERROR(charge_bytes(text.size()));
  out.append(text);
  return OkStatus();
}

Status Interpreter::exec_body(const StmtList& body, std::string& out, Flow& flow) {
  for (const auto& s : body) {
    KZ_RETURN_IF_ERROR(exec(*s, out, flow));
    if (flow != Flow::kNormal) return OkStatus();
  }
  return OkStatus();
}

Status Interpreter::exec(const Stmt& s, std::string& out, Flow& flow) {
  DepthGuard guard(*this);
  KZ_RETURN_IF_ERROR(guard.check());
  KZ_RETURN_IF_ERROR(step());
  Status st;
  switch (s.kind) {
    case SK::kText: st = append(out, s.text); break;
    case SK::kOutput: {
      auto v = eval(*s.expr);
      if (!v.ok()) return v.status();
      auto text = str(*v);
      st = text.ok() ? append(out, *text) : text.status();
      break;
    }
    case SK::kIf: st = exec_if(s, out, flow); break;
    case SK::kFor: st = exec_for(s, out, flow); break;
    case SK::kSet: st = exec_set(s); break;
    case SK::kSetBlock:
    case SK::kFilterBlock: st = exec_block_with_filters(s, out); break;
    case SK::kMacro: {
      const Stmt* macro = &s;
      frames_.back().set(s.text, Value::callable("macro " + s.text, [macro](Interpreter& in, CallArgs& args) {
                           return in.call_macro(*macro, args);
                         }));
      break;
    }
    case SK::kBreak: flow = Flow::kBreak; break;
    case SK::kContinue: flow = Flow::kContinue; break;
    case SK::kScope: st = exec_body(s.body, out, flow); break;
  }
  return at_line(st, s.line);
}

Status Interpreter::exec_if(const Stmt& s, std::string& out, Flow& flow) {
  for (const auto& branch : s.branches) {
    if (branch.condition) {
      KZ_ASSIGN_OR_RETURN(Value cond, eval(*branch.condition));
      if (!truthy(cond)) continue;
    }
    return exec_body(branch.body, out, flow);
  }
  return OkStatus();
}

Status Interpreter::exec_for(const Stmt& s, std::string& out, Flow& flow) {
  KZ_ASSIGN_OR_RETURN(Value iterable, eval(*s.expr));
  KZ_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(iterable));
  frames_.emplace_back();
  struct PopFrame {
    std::vector<Frame>& frames;
    ~PopFrame() { frames.pop_back(); }
  } pop{frames_};
  if (s.filter) {
    std::vector<Value> kept;
    for (auto& item : items) {
      KZ_RETURN_IF_ERROR(step());
      KZ_RETURN_IF_ERROR(assign(s.target, item));
      KZ_ASSIGN_OR_RETURN(Value keep, eval(*s.filter));
      if (truthy(keep)) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  const size_t n = items.size();
  for (size_t i = 0; i < n; ++i) {
    KZ_RETURN_IF_ERROR(step());
    // Each iteration starts from a clean scope: a variable set in the body
    // is not seen by the next iteration (Jinja2 semantics).
    frames_.back().vars.clear();
    KZ_RETURN_IF_ERROR(assign(s.target, items[i]));
    std::vector<std::pair<std::string, Value>> loop = {
        {"index", Value::integer(static_cast<int64_t>(i + 1))},
        {"index0", Value::integer(static_cast<int64_t>(i))},
        {"revindex", Value::integer(static_cast<int64_t>(n - i))},
        {"revindex0", Value::integer(static_cast<int64_t>(n - i - 1))},
        {"first", Value::boolean(i == 0)},
        {"last", Value::boolean(i + 1 == n)},
        {"length", Value::integer(static_cast<int64_t>(n))},
        {"depth", Value::integer(1)},
        {"depth0", Value::integer(0)},
    };
    if (i > 0) loop.emplace_back("previtem", items[i - 1]);
    if (i + 1 < n) loop.emplace_back("nextitem", items[i + 1]);
    loop.emplace_back("cycle", Value::callable("loop.cycle", [i](Interpreter&, CallArgs& args) -> Result<Value> {
                        if (args.positional.empty()) return InvalidArgument("loop.cycle() needs at least one argument");
                        return args.positional[i % args.positional.size()];
                      }));
    frames_.back().set("loop", Value::object(std::move(loop)));
    KZ_RETURN_IF_ERROR(exec_body(s.body, out, flow));
    if (flow == Flow::kBreak) {
      flow = Flow::kNormal;
      break;
    }
    flow = Flow::kNormal;
  }
  if (n == 0 && !s.else_body.empty()) KZ_RETURN_IF_ERROR(exec_body(s.else_body, out, flow));
  return OkStatus();
}

Status Interpreter::assign(const Target& target, const Value& value) {
  KZ_RETURN_IF_ERROR(check_value(value));
  if (!target.attr.empty()) {
    Value ns = lookup(target.names[0]);
    if (!ns.is_namespace()) {
      return InvalidArgument("cannot assign attribute '" + target.attr + "' on '" + target.names[0] +
                             "': it is not a namespace()");
    }
    ns.mutable_namespace().set(target.attr, value);
    return OkStatus();
  }
  if (!target.is_tuple) {
    frames_.back().set(target.names[0], value);
    return OkStatus();
  }
  KZ_ASSIGN_OR_RETURN(std::vector<Value> parts, iterate(value));
  if (parts.size() != target.names.size()) {
    return InvalidArgument(parts.size() > target.names.size()
                               ? "too many values to unpack (expected " + std::to_string(target.names.size()) + ")"
                               : "not enough values to unpack (expected " + std::to_string(target.names.size()) +
                                     ", got " + std::to_string(parts.size()) + ")");
  }
  for (size_t i = 0; i < parts.size(); ++i) frames_.back().set(target.names[i], parts[i]);
  return OkStatus();
}

Status Interpreter::exec_set(const Stmt& s) {
  KZ_ASSIGN_OR_RETURN(Value v, eval(*s.expr));
  return assign(s.target, v);
}

Status Interpreter::exec_block_with_filters(const Stmt& s, std::string& out) {
  std::string captured;
  Flow inner = Flow::kNormal;
  KZ_RETURN_IF_ERROR(exec_body(s.body, captured, inner));
  Value v = Value::string(std::move(captured));
  for (const auto& f : s.filters) {
    KZ_ASSIGN_OR_RETURN(v, eval_filter(*f, v));
  }
  if (s.kind == SK::kSetBlock) return assign(s.target, v);
  KZ_ASSIGN_OR_RETURN(std::string text, str(v));
  return append(out, text);
}

// ---- expressions ------------------------------------------------------------------

Value Interpreter::lookup(const std::string& name) const {
  for (size_t k = frames_.size(); k > scope_base_; --k) {
    if (const Value* v = frames_[k - 1].find(name)) return *v;
  }
  if (const Value* v = frames_[0].find(name)) return *v;
  Value global = find_global(name);
  if (!global.is_undefined()) return global;
  return Value::undefined(name);
}

Result<Value> Interpreter::eval(const Expr& e) {
  DepthGuard guard(*this);
  KZ_RETURN_IF_ERROR(guard.check());
  KZ_RETURN_IF_ERROR(step());
  Result<Value> r = Value();
  switch (e.kind) {
    case EK::kLiteral: return e.value;
    case EK::kName: return lookup(e.name);
    case EK::kList:
    case EK::kTuple:
    case EK::kDict: r = eval_collection(e); break;
    case EK::kGetAttr: {
      auto obj = eval(*e.children[0]);
      r = obj.ok() ? get_attr(*obj, e.name) : obj;
      break;
    }
    case EK::kGetItem: {
      auto obj = eval(*e.children[0]);
      if (!obj.ok()) return obj;
      auto key = eval(*e.children[1]);
      r = key.ok() ? get_item(*obj, *key) : key;
      break;
    }
    case EK::kSlice: r = eval_slice(e); break;
    case EK::kCall: r = eval_call(e); break;
    case EK::kFilter: {
      auto input = eval(*e.children[0]);
      r = input.ok() ? eval_filter(e, *input) : input;
      break;
    }
    case EK::kTest: r = eval_test(e); break;
    case EK::kUnary: r = eval_unary(e); break;
    case EK::kBinary: r = eval_binary(e); break;
    case EK::kAnd:
    case EK::kOr: {
      auto left = eval(*e.children[0]);
      if (!left.ok() || truthy(*left) == (e.kind == EK::kOr)) return left;
      r = eval(*e.children[1]);
      break;
    }
    case EK::kCompare: r = eval_compare(e); break;
    case EK::kCondExpr: {
      auto cond = eval(*e.children[0]);
      if (!cond.ok()) return cond;
      if (truthy(*cond)) r = eval(*e.children[1]);
      else if (e.children[2]) r = eval(*e.children[2]);
      else r = Value::undefined();
      break;
    }
  }
  if (!r.ok()) return at_line(r.status(), e.line);
  return r;
}

Result<Value> Interpreter::eval_collection(const Expr& e) {
  if (e.kind == EK::kDict) {
    std::vector<std::pair<std::string, Value>> entries;
    for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
      KZ_ASSIGN_OR_RETURN(Value key, eval(*e.children[i]));
      if (!key.is_string()) return InvalidArgument("dict keys must be strings, not " + type_name(key));
      KZ_ASSIGN_OR_RETURN(Value value, eval(*e.children[i + 1]));
      entries.emplace_back(key.str(), std::move(value));
    }
    return make_dict(std::move(entries));
  }
  std::vector<Value> items;
  items.reserve(e.children.size());
  for (const auto& c : e.children) {
    KZ_ASSIGN_OR_RETURN(Value v, eval(*c));
    items.push_back(std::move(v));
  }
  return make_list(std::move(items), e.kind == EK::kTuple);
}

Result<CallArgs> Interpreter::eval_args(const Expr& e, size_t first_positional) {
  CallArgs args;
  for (size_t i = first_positional; i < e.children.size(); ++i) {
    KZ_ASSIGN_OR_RETURN(Value v, eval(*e.children[i]));
    args.positional.push_back(std::move(v));
  }
  for (const auto& [key, expr] : e.kwargs) {
    KZ_ASSIGN_OR_RETURN(Value v, eval(*expr));
    args.named.emplace_back(key, std::move(v));
  }
  return args;
}

Result<Value> Interpreter::eval_call(const Expr& e) {
  const Expr& callee = *e.children[0];
  Value fn;
  if (callee.kind == EK::kGetAttr) {
    KZ_ASSIGN_OR_RETURN(Value self, eval(*callee.children[0]));
    KZ_ASSIGN_OR_RETURN(fn, get_attr(self, callee.name));
    if (fn.is_undefined()) {
      return InvalidArgument("'" + type_name(self) + "' object has no method '" + callee.name + "'");
    }
  } else {
    KZ_ASSIGN_OR_RETURN(fn, eval(callee));
  }
  KZ_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1));
  return call(fn, args);
}

Result<Value> Interpreter::eval_filter(const Expr& e, const Value& input) {
  KZ_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1));
  return apply_filter(e.name, input, args);
}

Result<Value> Interpreter::eval_test(const Expr& e) {
  KZ_ASSIGN_OR_RETURN(Value input, eval(*e.children[0]));
  KZ_ASSIGN_OR_RETURN(CallArgs args, eval_args(e, 1));
  KZ_ASSIGN_OR_RETURN(bool result, apply_test(e.name, input, args));
  return Value::boolean(result != e.negated);
}

Result<Value> Interpreter::eval_compare(const Expr& e) {
  KZ_ASSIGN_OR_RETURN(Value left, eval(*e.children[0]));
  for (size_t k = 0; k < e.ops.size(); ++k) {
    KZ_ASSIGN_OR_RETURN(Value right, eval(*e.children[k + 1]));
    const std::string& op = e.ops[k];
    bool ok = false;
    if (op == "==") {
      ok = equals(left, right);
    } else if (op == "!=") {
      ok = !equals(left, right);
    } else if (op == "in" || op == "notin") {
      KZ_ASSIGN_OR_RETURN(bool found, contains(right, left));
      ok = (op == "in") == found;
    } else {
      KZ_ASSIGN_OR_RETURN(int c, compare(left, right));
      ok = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
    }
    if (!ok) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Result<Value> Interpreter::eval_slice(const Expr& e) {
  KZ_ASSIGN_OR_RETURN(Value obj, eval(*e.children[0]));
  Value bounds[3] = {Value::none(), Value::none(), Value::none()};
  for (size_t k = 0; k < 3; ++k) {
    if (e.children[k + 1]) {
      KZ_ASSIGN_OR_RETURN(bounds[k], eval(*e.children[k + 1]));
    }
  }
  return slice_value(*this, obj, bounds[0], bounds[1], bounds[2]);
}

Result<Value> Interpreter::eval_unary(const Expr& e) {
  KZ_ASSIGN_OR_RETURN(Value v, eval(*e.children[0]));
  if (e.name == "not") return Value::boolean(!truthy(v));
  if (v.is_int() || v.is_bool()) {
    const int64_t i = v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int();
    if (e.name == "+") return Value::integer(i);
    if (i == INT64_MIN) return OutOfRange("integer overflow (values are limited to 64 bits)");
    return Value::integer(-i);
  }
  if (v.is_float()) return Value::number(e.name == "-" ? -v.as_float() : v.as_float());
  return InvalidArgument("bad operand type for unary " + e.name + ": '" + type_name(v) + "'");
}

Result<Value> Interpreter::eval_binary(const Expr& e) {
  KZ_ASSIGN_OR_RETURN(Value a, eval(*e.children[0]));
  KZ_ASSIGN_OR_RETURN(Value b, eval(*e.children[1]));
  if (e.name == "~") {
    KZ_ASSIGN_OR_RETURN(std::string left, str(a));
    KZ_ASSIGN_OR_RETURN(std::string right, str(b));
    KZ_RETURN_IF_ERROR(charge_bytes(left.size() + right.size()));
    return Value::string(left + right);
  }
  return binary_op(*this, e.name, a, b);
}

}  // namespace kazeia::jinja
