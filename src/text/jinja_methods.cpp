// Python methods of str, dict and list values (`s.strip()`, `d.items()`),
// as bound callables; see find_method() in jinja_builtins.h. Mutating
// methods (list.append, dict.update, ...) are absent on purpose: HF's
// sandboxed environment refuses them too, and values stay immutable.
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "text/jinja_builtins.h"
#include "text/jinja_eval.h"
#include "text/jinja_pystr.h"

namespace kazeia::jinja {
namespace {

using MethodFn = Result<Value> (*)(Interpreter&, const Value& self, CallArgs&);

Result<std::optional<std::string>> opt_string(const Value& v, const char* what) {
  if (v.is_undefined() || v.is_none()) return std::optional<std::string>();
  if (!v.is_string()) return InvalidArgument(std::string(what) + " must be str or None, not " + type_name(v));
  return std::optional<std::string>(v.str());
}

Result<int64_t> opt_int(const Value& v, const char* what, int64_t fallback) {
  if (v.is_undefined() || v.is_none()) return fallback;
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return static_cast<int64_t>(v.as_bool());
  return InvalidArgument(std::string(what) + " must be an integer, not " + type_name(v));
}

Result<Value> string_list(Interpreter& in, std::vector<std::string> parts) {
  std::vector<Value> out;
  out.reserve(parts.size());
  for (auto& p : parts) out.push_back(Value::string(std::move(p)));
  return in.make_list(std::move(out));
}

// Byte offset of code point `index` (Python-style clamping of negatives).
size_t byte_offset(const std::string& s, int64_t index) {
  const auto offsets = py::code_point_offsets(s);
  const auto n = static_cast<int64_t>(offsets.size()) - 1;
  if (index < 0) index = std::max<int64_t>(0, index + n);
  return offsets[static_cast<size_t>(std::min(index, n))];
}

// ---- str ------------------------------------------------------------------------

Result<Value> affix_match(const Value& self, CallArgs& args, bool at_start) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args(at_start ? "startswith" : "endswith", args, {"prefix", "start", "end"}));
  std::string s = self.str();
  if (!a[1].is_undefined() || !a[2].is_undefined()) {
    KZ_ASSIGN_OR_RETURN(int64_t start, opt_int(a[1], "start", 0));
    KZ_ASSIGN_OR_RETURN(int64_t end, opt_int(a[2], "end", INT64_MAX));
    const size_t b = byte_offset(s, start);
    const size_t e = byte_offset(s, end);
    s = e > b ? s.substr(b, e - b) : std::string();
  }
  std::vector<Value> candidates;
  if (a[0].is_string()) candidates.push_back(a[0]);
  else if (a[0].is_array()) candidates = a[0].items();
  else return InvalidArgument("startswith/endswith first arg must be str or a tuple of str, not " + type_name(a[0]));
  for (const auto& c : candidates) {
    if (!c.is_string()) return InvalidArgument("startswith/endswith: tuple items must be str");
    const std::string& x = c.str();
    if (x.size() > s.size()) continue;
    if (at_start ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0) {
      return Value::boolean(true);
    }
  }
  return Value::boolean(false);
}

Result<Value> m_startswith(Interpreter&, const Value& self, CallArgs& args) { return affix_match(self, args, true); }
Result<Value> m_endswith(Interpreter&, const Value& self, CallArgs& args) { return affix_match(self, args, false); }

Result<Value> strip_impl(const Value& self, CallArgs& args, bool left, bool right) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("strip", args, {"chars"}));
  KZ_ASSIGN_OR_RETURN(auto chars, opt_string(a[0], "strip arg"));
  return Value::string(py::strip(self.str(), chars, left, right));
}
Result<Value> m_strip(Interpreter&, const Value& s, CallArgs& a) { return strip_impl(s, a, true, true); }
Result<Value> m_lstrip(Interpreter&, const Value& s, CallArgs& a) { return strip_impl(s, a, true, false); }
Result<Value> m_rstrip(Interpreter&, const Value& s, CallArgs& a) { return strip_impl(s, a, false, true); }

Result<Value> split_impl(Interpreter& in, const Value& self, CallArgs& args, bool from_right) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args(from_right ? "rsplit" : "split", args, {"sep", "maxsplit"}));
  KZ_ASSIGN_OR_RETURN(auto sep, opt_string(a[0], "separator"));
  KZ_ASSIGN_OR_RETURN(int64_t maxsplit, opt_int(a[1], "maxsplit", -1));
  KZ_RETURN_IF_ERROR(in.step(1 + self.str().size() / 16));
  auto parts = from_right ? py::rsplit(self.str(), sep, maxsplit) : py::split(self.str(), sep, maxsplit);
  if (!parts) return InvalidArgument("empty separator");
  return string_list(in, std::move(*parts));
}
Result<Value> m_split(Interpreter& in, const Value& s, CallArgs& a) { return split_impl(in, s, a, false); }
Result<Value> m_rsplit(Interpreter& in, const Value& s, CallArgs& a) { return split_impl(in, s, a, true); }

Result<Value> m_splitlines(Interpreter& in, const Value& self, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("splitlines", args, {"keepends"}));
  KZ_RETURN_IF_ERROR(in.step(1 + self.str().size() / 16));
  return string_list(in, py::splitlines(self.str(), truthy(a[0])));
}

Result<Value> m_replace(Interpreter& in, const Value& self, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("replace", args, {"old", "new", "count"}));
  if (!a[0].is_string() || !a[1].is_string()) return InvalidArgument("replace() arguments must be str");
  KZ_ASSIGN_OR_RETURN(int64_t count, opt_int(a[2], "count", -1));
  auto out = py::replace(self.str(), a[0].str(), a[1].str(), count, in.limits().max_output_bytes);
  if (!out) return OutOfRange("replace() result exceeds the size limit");
  KZ_RETURN_IF_ERROR(in.charge_bytes(out->size()));
  return Value::string(std::move(*out));
}

Result<Value> m_upper(Interpreter&, const Value& self, CallArgs&) { return Value::string(py::upper(self.str())); }
Result<Value> m_lower(Interpreter&, const Value& self, CallArgs&) { return Value::string(py::lower(self.str())); }
Result<Value> m_title(Interpreter&, const Value& self, CallArgs&) { return Value::string(py::title(self.str())); }
Result<Value> m_capitalize(Interpreter&, const Value& self, CallArgs&) {
  return Value::string(py::capitalize(self.str()));
}

// find / rfind / index / rindex: code point index of sub, or -1.
Result<Value> find_impl(const Value& self, CallArgs& args, bool reverse, bool raise) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("find", args, {"sub", "start", "end"}));
  if (!a[0].is_string()) return InvalidArgument("find() argument must be str, not " + type_name(a[0]));
  const std::string& s = self.str();
  KZ_ASSIGN_OR_RETURN(int64_t start, opt_int(a[1], "start", 0));
  KZ_ASSIGN_OR_RETURN(int64_t end, opt_int(a[2], "end", INT64_MAX));
  const size_t b = byte_offset(s, start);
  const size_t e = byte_offset(s, end);
  size_t hit = std::string::npos;
  if (e >= b) {
    const std::string_view window(s.data() + b, e - b);
    const size_t local = reverse ? window.rfind(a[0].str()) : window.find(a[0].str());
    if (local != std::string_view::npos) hit = b + local;
  }
  if (hit == std::string::npos) {
    if (raise) return InvalidArgument("substring not found");
    return Value::integer(-1);
  }
  return Value::integer(static_cast<int64_t>(py::code_point_count(std::string_view(s).substr(0, hit))));
}
Result<Value> m_find(Interpreter&, const Value& s, CallArgs& a) { return find_impl(s, a, false, false); }
Result<Value> m_rfind(Interpreter&, const Value& s, CallArgs& a) { return find_impl(s, a, true, false); }
Result<Value> m_index(Interpreter&, const Value& s, CallArgs& a) { return find_impl(s, a, false, true); }
Result<Value> m_rindex(Interpreter&, const Value& s, CallArgs& a) { return find_impl(s, a, true, true); }

Result<Value> m_count(Interpreter&, const Value& self, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("count", args, {"x"}));
  if (self.is_array()) {
    return Value::integer(std::count_if(self.items().begin(), self.items().end(),
                                        [&](const Value& v) { return equals(v, a[0]); }));
  }
  if (!a[0].is_string()) return InvalidArgument("count() argument must be str, not " + type_name(a[0]));
  const std::string& s = self.str();
  const std::string& sub = a[0].str();
  if (sub.empty()) return Value::integer(static_cast<int64_t>(py::code_point_count(s) + 1));
  int64_t n = 0;
  for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
  return Value::integer(n);
}

Result<Value> m_join(Interpreter& in, const Value& self, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("join", args, {"iterable"}));
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(a[0]));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      return InvalidArgument("sequence item " + std::to_string(i) + ": expected str instance, " +
                             type_name(items[i]) + " found");
    }
    if (i) out += self.str();
    out += items[i].str();
    if (out.size() > in.limits().max_output_bytes) return OutOfRange("joined string exceeds the size limit");
  }
  KZ_RETURN_IF_ERROR(in.charge_bytes(out.size()));
  return Value::string(std::move(out));
}

template <bool (*Pred)(uint32_t)>
Result<Value> char_class(Interpreter&, const Value& self, CallArgs&) {
  const std::string& s = self.str();
  if (s.empty()) return Value::boolean(false);
  size_t i = 0;
  while (i < s.size()) {
    if (!Pred(py::next_code_point(s, i))) return Value::boolean(false);
  }
  return Value::boolean(true);
}
bool is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
bool is_alpha(uint32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xC0; }
bool is_alnum(uint32_t c) { return is_digit(c) || is_alpha(c); }

Result<Value> m_removeprefix(Interpreter&, const Value& self, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("removeprefix", args, {"prefix"}));
  if (!a[0].is_string()) return InvalidArgument("removeprefix() argument must be str");
  const std::string& s = self.str();
  if (s.compare(0, a[0].str().size(), a[0].str()) == 0) return Value::string(s.substr(a[0].str().size()));
  return self;
}

Result<Value> m_removesuffix(Interpreter&, const Value& self, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("removesuffix", args, {"suffix"}));
  if (!a[0].is_string()) return InvalidArgument("removesuffix() argument must be str");
  const std::string& s = self.str();
  const std::string& x = a[0].str();
  if (!x.empty() && x.size() <= s.size() && s.compare(s.size() - x.size(), x.size(), x) == 0) {
    return Value::string(s.substr(0, s.size() - x.size()));
  }
  return self;
}

// str.format with plain fields only: {}, {0}, {name}, {{ and }}.
Result<Value> m_format(Interpreter& in, const Value& self, CallArgs& args) {
  const std::string& f = self.str();
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if (c == '}' && i + 1 < f.size() && f[i + 1] == '}') {
      out += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const size_t close = f.find('}', i);
    if (close == std::string::npos) return InvalidArgument("format(): single '{' encountered");
    const std::string field = f.substr(i + 1, close - i - 1);
    Value v;
    if (field.empty()) {
      if (auto_index >= args.positional.size()) return InvalidArgument("format(): not enough arguments");
      v = args.positional[auto_index++];
    } else if (std::all_of(field.begin(), field.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      const size_t k = field.size() < 6 ? static_cast<size_t>(std::stoul(field)) : SIZE_MAX;
      if (k >= args.positional.size()) return InvalidArgument("format(): index out of range");
      v = args.positional[k];
    } else {
      auto it = std::find_if(args.named.begin(), args.named.end(), [&](const auto& kv) { return kv.first == field; });
      if (it == args.named.end()) return InvalidArgument("format(): unsupported or missing field '" + field + "'");
      v = it->second;
    }
    KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
    out += s;
    if (out.size() > in.limits().max_output_bytes) return OutOfRange("formatted string exceeds the size limit");
    i = close;
  }
  KZ_RETURN_IF_ERROR(in.charge_bytes(out.size()));
  return Value::string(std::move(out));
}

// ---- dict -------------------------------------------------------------------------

Result<Value> m_get(Interpreter&, const Value& self, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("get", args, {"key", "default"}));
  if (a[0].is_string()) {
    if (const Value* v = self.obj().find(a[0].str())) return *v;
  }
  return a[1].is_undefined() ? Value::none() : a[1];
}

Result<Value> m_items(Interpreter& in, const Value& self, CallArgs& args) {
  KZ_RETURN_IF_ERROR(bind_args("items", args, {}).status());
  std::vector<Value> out;
  for (const auto& [k, v] : self.obj().entries) {
    KZ_ASSIGN_OR_RETURN(Value pair, in.make_list({Value::string(k), v}, true));
    out.push_back(std::move(pair));
  }
  return in.make_list(std::move(out));
}

Result<Value> m_keys(Interpreter& in, const Value& self, CallArgs& args) {
  KZ_RETURN_IF_ERROR(bind_args("keys", args, {}).status());
  std::vector<Value> out;
  for (const auto& [k, v] : self.obj().entries) out.push_back(Value::string(k));
  return in.make_list(std::move(out));
}

Result<Value> m_values(Interpreter& in, const Value& self, CallArgs& args) {
  KZ_RETURN_IF_ERROR(bind_args("values", args, {}).status());
  std::vector<Value> out;
  for (const auto& [k, v] : self.obj().entries) out.push_back(v);
  return in.make_list(std::move(out));
}

// ---- list -------------------------------------------------------------------------

Result<Value> m_list_index(Interpreter&, const Value& self, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("index", args, {"x"}));
  const auto& items = self.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (equals(items[i], a[0])) return Value::integer(static_cast<int64_t>(i));
  }
  return InvalidArgument("list.index(x): x not in list");
}

using MethodTable = std::unordered_map<std::string_view, MethodFn>;

const MethodTable& string_methods() {
  static const MethodTable table = {
      {"startswith", m_startswith}, {"endswith", m_endswith},     {"strip", m_strip},
      {"lstrip", m_lstrip},         {"rstrip", m_rstrip},         {"split", m_split},
      {"rsplit", m_rsplit},         {"splitlines", m_splitlines}, {"replace", m_replace},
      {"upper", m_upper},           {"lower", m_lower},           {"title", m_title},
      {"capitalize", m_capitalize}, {"find", m_find},             {"rfind", m_rfind},
      {"index", m_index},           {"rindex", m_rindex},         {"count", m_count},
      {"join", m_join},             {"isdigit", char_class<is_digit>}, {"isalpha", char_class<is_alpha>},
      {"isalnum", char_class<is_alnum>}, {"isspace", char_class<py::is_space>},
      {"removeprefix", m_removeprefix}, {"removesuffix", m_removesuffix}, {"format", m_format},
  };
  return table;
}

const MethodTable& dict_methods() {
  static const MethodTable table = {
      {"get", m_get}, {"items", m_items}, {"keys", m_keys}, {"values", m_values},
  };
  return table;
}

const MethodTable& list_methods() {
  static const MethodTable table = {{"index", m_list_index}, {"count", m_count}};
  return table;
}

}  // namespace

Value find_method(const Value& self, const std::string& name) {
  const MethodTable* table = nullptr;
  if (self.is_string()) table = &string_methods();
  else if (self.is_dict()) table = &dict_methods();
  else if (self.is_array()) table = &list_methods();
  if (table == nullptr) return Value::undefined(name);
  auto it = table->find(name);
  if (it == table->end()) return Value::undefined(name);
  const MethodFn fn = it->second;
  return Value::callable(name, [self, fn](Interpreter& in, CallArgs& args) { return fn(in, self, args); });
}

}  // namespace kazeia::jinja
