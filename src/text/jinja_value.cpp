// Values of the Jinja interpreter: construction, Python comparisons and the
// three text forms (str, repr, json.dumps). See jinja_value.h.
#include "text/jinja_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "text/jinja_pystr.h"

namespace kazeia::jinja {

// ---- construction ---------------------------------------------------------

Value Value::undefined(std::string hint) {
  Value v;
  if (!hint.empty()) v.v_ = UndefinedTag{std::make_shared<const std::string>(std::move(hint))};
  return v;
}

Value Value::none() {
  Value v;
  v.v_ = NoneTag{};
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.v_ = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.v_ = i;
  return v;
}

Value Value::number(double d) {
  Value v;
  v.v_ = d;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.v_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::array(std::vector<Value> items, bool is_tuple) {
  auto data = std::make_shared<ArrayData>();
  uint32_t deepest = 0;
  for (const auto& item : items) deepest = std::max(deepest, item.depth());
  data->items = std::move(items);
  data->is_tuple = is_tuple;
  data->depth = deepest + 1;
  Value v;
  v.v_ = ArrPtr(std::move(data));
  return v;
}

Value Value::object(std::vector<std::pair<std::string, Value>> items) {
  auto data = std::make_shared<ObjectData>();
  uint32_t deepest = 0;
  for (auto& [key, value] : items) {
    deepest = std::max(deepest, value.depth());
    data->set(key, std::move(value));
  }
  data->depth = deepest + 1;
  Value v;
  v.v_ = ObjPtr(std::move(data));
  return v;
}

Value Value::make_namespace(std::vector<std::pair<std::string, Value>> items) {
  Value v = object(std::move(items));
  auto& data = *std::get<ObjPtr>(v.v_);
  data.is_namespace = true;
  data.depth = 1;
  return v;
}

Value Value::callable(std::string name, NativeFunction fn) {
  Value v;
  v.v_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

bool Value::is_namespace() const { return is_object() && obj().is_namespace; }

double Value::to_double() const {
  switch (kind()) {
    case Kind::kBool: return as_bool() ? 1.0 : 0.0;
    case Kind::kInt: return static_cast<double>(as_int());
    case Kind::kFloat: return as_float();
    default: return 0.0;
  }
}

const std::vector<Value>& Value::items() const { return std::get<ArrPtr>(v_)->items; }
bool Value::is_tuple() const { return is_array() && std::get<ArrPtr>(v_)->is_tuple; }

const std::string& Value::undefined_hint() const {
  static const std::string kEmpty;
  const auto& tag = std::get<UndefinedTag>(v_);
  return tag.hint ? *tag.hint : kEmpty;
}

uint32_t Value::depth() const {
  if (is_array()) return std::get<ArrPtr>(v_)->depth;
  if (is_object()) return obj().is_namespace ? 1 : obj().depth;
  return 0;
}

const void* Value::identity() const {
  switch (kind()) {
    case Kind::kString: return std::get<StrPtr>(v_).get();
    case Kind::kArray: return std::get<ArrPtr>(v_).get();
    case Kind::kObject: return std::get<ObjPtr>(v_).get();
    case Kind::kCallable: return std::get<FnPtr>(v_).get();
    default: return nullptr;
  }
}

const Value* ObjectData::find(const std::string& key) const {
  auto it = index.find(key);
  return it == index.end() ? nullptr : &entries[it->second].second;
}

void ObjectData::set(const std::string& key, Value value) {
  auto it = index.find(key);
  if (it != index.end()) {
    entries[it->second].second = std::move(value);
    return;
  }
  index.emplace(key, entries.size());
  entries.emplace_back(key, std::move(value));
}

// ---- comparisons ----------------------------------------------------------

bool truthy(const Value& v) {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::kUndefined:
    case K::kNone: return false;
    case K::kBool: return v.as_bool();
    case K::kInt: return v.as_int() != 0;
    case K::kFloat: return v.as_float() != 0.0;
    case K::kString: return !v.str().empty();
    case K::kArray: return !v.items().empty();
    case K::kObject: return v.is_namespace() || !v.obj().entries.empty();
    case K::kCallable: return true;
  }
  return false;
}

bool equals(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() == b.to_double();
    const int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
    const int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
    return x == y;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kUndefined:
    case K::kNone: return true;
    case K::kString: return a.str() == b.str();
    case K::kArray: {
      if (a.is_tuple() != b.is_tuple()) return false;
      const auto& x = a.items();
      const auto& y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case K::kObject: {
      if (a.is_namespace() || b.is_namespace()) return a.identity() == b.identity();
      const auto& x = a.obj();
      const auto& y = b.obj();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [key, value] : x.entries) {
        const Value* other = y.find(key);
        if (other == nullptr || !equals(value, *other)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

std::string type_name(const Value& v) {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::kUndefined: return "Undefined";
    case K::kNone: return "NoneType";
    case K::kBool: return "bool";
    case K::kInt: return "int";
    case K::kFloat: return "float";
    case K::kString: return "str";
    case K::kArray: return v.is_tuple() ? "tuple" : "list";
    case K::kObject: return v.is_namespace() ? "Namespace" : "dict";
    case K::kCallable: return "function";
  }
  return "object";
}

Result<int> compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) {
      const int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
      const int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    const double x = a.to_double();
    const double y = b.to_double();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.str().compare(b.str());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_array() && b.is_array() && a.is_tuple() == b.is_tuple()) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return InvalidArgument("'<' not supported between instances of '" + type_name(a) + "' and '" +
                         type_name(b) + "'");
}

// ---- text forms -----------------------------------------------------------

namespace {

// Appends with a byte budget; the first overflow sticks.
class Writer {
 public:
  explicit Writer(size_t max_bytes) : max_(max_bytes) {}
  void put(std::string_view s) {
    if (overflow_) return;
    if (out_.size() + s.size() > max_) {
      overflow_ = true;
      return;
    }
    out_.append(s);
  }
  void put(char c) { put(std::string_view(&c, 1)); }
  bool overflow() const { return overflow_; }
  Result<std::string> finish() {
    if (overflow_) return OutOfRange("rendered value exceeds " + std::to_string(max_) + " bytes");
    return std::move(out_);
  }

 private:
  std::string out_;
  size_t max_;
  bool overflow_ = false;
};

void write_repr(Writer& w, const Value& v);

void write_scalar(Writer& w, const Value& v, bool as_repr) {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::kUndefined: w.put(as_repr ? "Undefined" : ""); return;
    case K::kNone: w.put("None"); return;
    case K::kBool: w.put(v.as_bool() ? "True" : "False"); return;
    case K::kInt: w.put(std::to_string(v.as_int())); return;
    case K::kFloat: w.put(py::format_float(v.as_float())); return;
    case K::kString: w.put(as_repr ? py::repr_string(v.str()) : v.str()); return;
    case K::kCallable: w.put("<function " + v.fn().name + ">"); return;
    default: return;
  }
}

void write_repr(Writer& w, const Value& v) {
  if (w.overflow()) return;
  if (v.is_array()) {
    w.put(v.is_tuple() ? '(' : '[');
    const auto& items = v.items();
    for (size_t i = 0; i < items.size() && !w.overflow(); ++i) {
      if (i) w.put(", ");
      write_repr(w, items[i]);
    }
    if (v.is_tuple() && items.size() == 1) w.put(',');
    w.put(v.is_tuple() ? ')' : ']');
  } else if (v.is_namespace()) {
    // Namespaces may contain themselves; never walk into them.
    w.put("<Namespace>");
  } else if (v.is_object()) {
    w.put('{');
    bool first = true;
    for (const auto& [key, value] : v.obj().entries) {
      if (w.overflow()) break;
      if (!first) w.put(", ");
      first = false;
      w.put(py::repr_string(key));
      w.put(": ");
      write_repr(w, value);
    }
    w.put('}');
  } else {
    write_scalar(w, v, true);
  }
}

void write_json_string(Writer& w, std::string_view s, bool ensure_ascii) {
  std::string out = "\"";
  size_t i = 0;
  char buf[16];
  while (i < s.size()) {
    const size_t start = i;
    const uint32_t cp = py::next_code_point(s, i);
    switch (cp) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (cp < 0x20) {
          std::snprintf(buf, sizeof buf, "\\u%04x", cp);
          out += buf;
        } else if (ensure_ascii && cp >= 0x80) {
          if (cp >= 0x10000) {
            const uint32_t c = cp - 0x10000;
            std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF));
          } else {
            std::snprintf(buf, sizeof buf, "\\u%04x", cp);
          }
          out += buf;
        } else {
          out.append(s.substr(start, i - start));
        }
    }
  }
  out += '"';
  w.put(out);
}

Status write_json(Writer& w, const Value& v, const JsonOptions& o, int level) {
  if (w.overflow()) return OkStatus();
  using K = Value::Kind;
  const std::string item_sep = !o.item_separator.empty() ? o.item_separator : (o.indent >= 0 ? "," : ", ");
  auto newline = [&](int lvl) {
    if (o.indent < 0) return;
    w.put('\n');
    w.put(std::string(static_cast<size_t>(o.indent) * static_cast<size_t>(lvl), ' '));
  };
  switch (v.kind()) {
    case K::kNone: w.put("null"); return OkStatus();
    case K::kBool: w.put(v.as_bool() ? "true" : "false"); return OkStatus();
    case K::kInt: w.put(std::to_string(v.as_int())); return OkStatus();
    case K::kFloat: {
      const double d = v.as_float();
      if (std::isnan(d)) w.put("NaN");
      else if (std::isinf(d)) w.put(d < 0 ? "-Infinity" : "Infinity");
      else w.put(py::format_float(d));
      return OkStatus();
    }
    case K::kString: write_json_string(w, v.str(), o.ensure_ascii); return OkStatus();
    case K::kArray: {
      const auto& items = v.items();
      if (items.empty()) {
        w.put("[]");
        return OkStatus();
      }
      w.put('[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) w.put(item_sep);
        newline(level + 1);
        KZ_RETURN_IF_ERROR(write_json(w, items[i], o, level + 1));
        if (w.overflow()) return OkStatus();
      }
      newline(level);
      w.put(']');
      return OkStatus();
    }
    case K::kObject: {
      if (v.is_namespace()) return InvalidArgument("Object of type Namespace is not JSON serializable");
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& e : v.obj().entries) entries.push_back(&e);
      if (o.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
      }
      if (entries.empty()) {
        w.put("{}");
        return OkStatus();
      }
      w.put('{');
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) w.put(item_sep);
        newline(level + 1);
        write_json_string(w, entries[i]->first, o.ensure_ascii);
        w.put(o.key_separator);
        KZ_RETURN_IF_ERROR(write_json(w, entries[i]->second, o, level + 1));
        if (w.overflow()) return OkStatus();
      }
      newline(level);
      w.put('}');
      return OkStatus();
    }
    default:
      return InvalidArgument("Object of type " + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace

Result<std::string> to_str(const Value& v, size_t max_bytes) {
  Writer w(max_bytes);
  if (v.is_array() || v.is_object()) write_repr(w, v);
  else write_scalar(w, v, false);
  return w.finish();
}

Result<std::string> to_repr(const Value& v, size_t max_bytes) {
  Writer w(max_bytes);
  write_repr(w, v);
  return w.finish();
}

Result<std::string> to_json_text(const Value& v, const JsonOptions& options, size_t max_bytes) {
  Writer w(max_bytes);
  KZ_RETURN_IF_ERROR(write_json(w, v, options, 0));
  return w.finish();
}

// ---- JSON bridge ----------------------------------------------------------

Result<Value> from_json(const nlohmann::ordered_json& j, uint32_t max_depth) {
  using T = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case T::null: return Value::none();
    case T::boolean: return Value::boolean(j.get<bool>());
    case T::number_integer: return Value::integer(j.get<int64_t>());
    case T::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::integer(static_cast<int64_t>(u));
      return Value::number(static_cast<double>(u));
    }
    case T::number_float: return Value::number(j.get<double>());
    case T::string: return Value::string(j.get<std::string>());
    case T::array: {
      if (max_depth == 0) return OutOfRange("JSON value nested too deeply");
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) {
        KZ_ASSIGN_OR_RETURN(Value item, from_json(e, max_depth - 1));
        items.push_back(std::move(item));
      }
      return Value::array(std::move(items));
    }
    case T::object: {
      if (max_depth == 0) return OutOfRange("JSON value nested too deeply");
      std::vector<std::pair<std::string, Value>> entries;
      entries.reserve(j.size());
      for (const auto& [key, e] : j.items()) {
        KZ_ASSIGN_OR_RETURN(Value item, from_json(e, max_depth - 1));
        entries.emplace_back(key, std::move(item));
      }
      return Value::object(std::move(entries));
    }
    default: return InvalidArgument("unsupported JSON value (binary or discarded)");
  }
}

Result<nlohmann::ordered_json> to_json(const Value& v) {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::kNone: return nlohmann::ordered_json(nullptr);
    case K::kBool: return nlohmann::ordered_json(v.as_bool());
    case K::kInt: return nlohmann::ordered_json(v.as_int());
    case K::kFloat: return nlohmann::ordered_json(v.as_float());
    case K::kString: return nlohmann::ordered_json(v.str());
    case K::kArray: {
      auto out = nlohmann::ordered_json::array();
      for (const auto& item : v.items()) {
        KZ_ASSIGN_OR_RETURN(auto j, to_json(item));
        out.push_back(std::move(j));
      }
      return out;
    }
    case K::kObject: {
      if (v.is_namespace()) return InvalidArgument("a namespace is not JSON");
      auto out = nlohmann::ordered_json::object();
      for (const auto& [key, value] : v.obj().entries) {
        KZ_ASSIGN_OR_RETURN(auto j, to_json(value));
        out[key] = std::move(j);
      }
      return out;
    }
    default: return InvalidArgument("a " + type_name(v) + " value is not JSON");
  }
}

}  // namespace kazeia::jinja
