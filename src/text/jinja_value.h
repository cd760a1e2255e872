// The value model of the Jinja interpreter.
//
// A Value is what a Python object is to Jinja2: undefined, None, bool, int,
// float, str, list (or tuple), dict (insertion-ordered, string keys), a
// namespace() object, or something callable (a macro, a builtin, a bound
// method). Lists and dicts are shared and immutable once built, so copying a
// Value is cheap; only namespace objects change after creation (that is
// their purpose: `{% set ns.x = ... %}` inside a loop).
//
// Each list/dict records its nesting depth when built. The interpreter
// refuses values nested deeper than its limit, which keeps every recursive
// walk here (equality, repr, tojson, destruction) bounded.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "kazeia/status.h"

namespace kazeia::jinja {

class Value;
class Interpreter;

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
};

using NativeFunction = std::function<Result<Value>(Interpreter&, CallArgs&)>;

struct ArrayData;
struct ObjectData;

struct Callable {
  std::string name;  // for messages and repr: "range", "macro render_content"
  NativeFunction fn;
};

class Value {
 public:
  enum class Kind : uint8_t { kUndefined, kNone, kBool, kInt, kFloat, kString, kArray, kObject, kCallable };

  Value() = default;  // undefined
  static Value undefined(std::string hint = {});
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double d);
  static Value string(std::string s);
  static Value array(std::vector<Value> items, bool is_tuple = false);
  static Value object(std::vector<std::pair<std::string, Value>> items);  // later duplicates win
  static Value make_namespace(std::vector<std::pair<std::string, Value>> items);
  static Value callable(std::string name, NativeFunction fn);

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python: bool is a Number
  bool is_string() const { return kind() == Kind::kString; }
  bool is_array() const { return kind() == Kind::kArray; }
  bool is_object() const { return kind() == Kind::kObject; }
  bool is_namespace() const;
  bool is_dict() const { return is_object() && !is_namespace(); }
  bool is_callable() const { return kind() == Kind::kCallable; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  // Numeric value of a bool, int or float.
  double to_double() const;
  const std::string& str() const { return *std::get<StrPtr>(v_); }
  const std::vector<Value>& items() const;
  bool is_tuple() const;
  const ObjectData& obj() const { return *std::get<ObjPtr>(v_); }
  ObjectData& mutable_namespace() const { return *std::get<ObjPtr>(v_); }
  const Callable& fn() const { return *std::get<FnPtr>(v_); }
  const std::string& undefined_hint() const;

  // Nesting depth: 0 for scalars, 1 + the deepest element for lists/dicts,
  // 1 for namespaces (they are opaque to every recursive walk).
  uint32_t depth() const;
  // Identity of shared storage, for `is sameas`.
  const void* identity() const;

 private:
  struct UndefinedTag {
    std::shared_ptr<const std::string> hint;
  };
  struct NoneTag {};
  using StrPtr = std::shared_ptr<const std::string>;
  using ArrPtr = std::shared_ptr<const ArrayData>;
  using ObjPtr = std::shared_ptr<ObjectData>;
  using FnPtr = std::shared_ptr<const Callable>;
  std::variant<UndefinedTag, NoneTag, bool, int64_t, double, StrPtr, ArrPtr, ObjPtr, FnPtr> v_;
};

struct ArrayData {
  std::vector<Value> items;
  bool is_tuple = false;
  uint32_t depth = 1;
};

struct ObjectData {
  std::vector<std::pair<std::string, Value>> entries;  // insertion order
  std::unordered_map<std::string, size_t> index;
  bool is_namespace = false;
  uint32_t depth = 1;

  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value value);
};

// Python truthiness.
bool truthy(const Value& v);
// Python ==, with Jinja's undefined == undefined.
bool equals(const Value& a, const Value& b);
// Python ordering (<): -1, 0, 1; an error for unorderable types.
Result<int> compare(const Value& a, const Value& b);
// Python type name for messages: "str", "int", "list", "dict", "NoneType", ...
std::string type_name(const Value& v);

// str(v) as Jinja prints it; fails (OutOfRange) past max_bytes.
Result<std::string> to_str(const Value& v, size_t max_bytes);
// repr(v).
Result<std::string> to_repr(const Value& v, size_t max_bytes);

struct JsonOptions {
  int indent = -1;                  // < 0: single line
  std::string item_separator;       // default ", " (single line) or "," (indented)
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// json.dumps(v, ...) as HF transformers' tojson filter calls it.
Result<std::string> to_json_text(const Value& v, const JsonOptions& options, size_t max_bytes);

// nlohmann JSON -> Value; deeper than max_depth is an error.
Result<Value> from_json(const nlohmann::ordered_json& j, uint32_t max_depth);
// Value -> nlohmann JSON (undefined and callables are errors).
Result<nlohmann::ordered_json> to_json(const Value& v);

}  // namespace kazeia::jinja
