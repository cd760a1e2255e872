// Builtin filters, tests and global functions; see jinja_builtins.h.
// Methods of str/dict/list live in jinja_methods.cpp.
#include "text/jinja_builtins.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <unordered_map>

#include "text/jinja_eval.h"
#include "text/jinja_ops.h"
#include "text/jinja_pystr.h"

namespace kazeia::jinja {

Result<std::vector<Value>> bind_args(const char* function, CallArgs& args,
                                     std::initializer_list<const char*> params) {
  std::vector<Value> out(params.size());
  if (args.positional.size() > params.size()) {
    return InvalidArgument(std::string(function) + "() takes at most " + std::to_string(params.size()) +
                           " argument(s) (" + std::to_string(args.positional.size()) + " given)");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) out[i] = args.positional[i];
  for (auto& named : args.named) {
    const std::string& key = named.first;  // a plain reference: clang 14 cannot capture bindings
    auto it = std::find_if(params.begin(), params.end(), [&](const char* p) { return key == p; });
    if (it == params.end()) {
      return InvalidArgument(std::string(function) + "() got an unexpected keyword argument '" + key + "'");
    }
    const auto idx = static_cast<size_t>(it - params.begin());
    if (idx < args.positional.size()) {
      return InvalidArgument(std::string(function) + "() got multiple values for argument '" + key + "'");
    }
    out[idx] = named.second;
  }
  return out;
}

namespace {

// ---- argument helpers ----------------------------------------------------------

Result<int64_t> int_arg(const Value& v, const char* what, int64_t fallback) {
  if (v.is_undefined() || v.is_none()) return fallback;
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return static_cast<int64_t>(v.as_bool());
  return InvalidArgument(std::string(what) + " must be an integer, not " + type_name(v));
}

bool bool_arg(const Value& v, bool fallback) { return v.is_undefined() ? fallback : truthy(v); }

Result<std::optional<std::string>> optional_string_arg(const Value& v, const char* what) {
  if (v.is_undefined() || v.is_none()) return std::optional<std::string>();
  if (!v.is_string()) return InvalidArgument(std::string(what) + " must be a string, not " + type_name(v));
  return std::optional<std::string>(v.str());
}

// Jinja's make_attrgetter: "a.b.0" walks items, digits become indices.
Result<Value> get_path(Interpreter& in, const Value& obj, const Value& path) {
  if (path.is_int()) return in.get_item(obj, path);
  if (!path.is_string()) return InvalidArgument("attribute must be a string, not " + type_name(path));
  Value cur = obj;
  const std::string& p = path.str();
  size_t start = 0;
  while (true) {
    const size_t dot = p.find('.', start);
    const std::string part = p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    Value key = numeric && part.size() < 18 ? Value::integer(std::atoll(part.c_str())) : Value::string(part);
    KZ_ASSIGN_OR_RETURN(cur, in.get_item(cur, key));
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

// Sort key postprocessing: strings lowered unless case-sensitive.
Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(py::lower(v.str()));
  return v;
}

// Stable sort that reports the first comparison error.
Status sort_values(std::vector<std::pair<Value, Value>>& keyed, bool reverse) {
  Status err;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (!err.ok()) return false;
    auto c = reverse ? compare(b.first, a.first) : compare(a.first, b.first);
    if (!c.ok()) {
      err = c.status();
      return false;
    }
    return *c < 0;
  });
  return err;
}

// ---- filters --------------------------------------------------------------------

Result<Value> f_abs(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_int() || v.is_bool()) {
    const int64_t i = v.is_bool() ? v.as_bool() : v.as_int();
    if (i == INT64_MIN) return OutOfRange("integer overflow");
    return Value::integer(i < 0 ? -i : i);
  }
  if (v.is_float()) return Value::number(std::fabs(v.as_float()));
  return InvalidArgument("bad operand type for abs(): '" + type_name(v) + "'");
}

Result<Value> f_attr(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("attr", args, {"name"}));
  if (!a[0].is_string()) return InvalidArgument("attr() needs an attribute name");
  return in.get_attr(v, a[0].str());
}

Result<Value> f_capitalize(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  return Value::string(py::capitalize(s));
}

Result<Value> f_default(Interpreter&, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("default", args, {"default_value", "boolean"}));
  const bool use_default = v.is_undefined() || (bool_arg(a[1], false) && !truthy(v));
  if (!use_default) return v;
  return a[0].is_undefined() ? Value::string("") : a[0];
}

Result<Value> f_dictsort(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("dictsort", args, {"case_sensitive", "by", "reverse"}));
  if (!v.is_dict()) return InvalidArgument("dictsort needs a dict, not " + type_name(v));
  const bool by_value = a[1].is_string() && a[1].str() == "value";
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto& [k, val] : v.obj().entries) {
    KZ_ASSIGN_OR_RETURN(Value pair, in.make_list({Value::string(k), val}, true));
    keyed.emplace_back(sort_key(by_value ? val : Value::string(k), bool_arg(a[0], false)), pair);
  }
  KZ_RETURN_IF_ERROR(sort_values(keyed, bool_arg(a[2], false)));
  std::vector<Value> out;
  for (auto& [k, pair] : keyed) out.push_back(pair);
  return in.make_list(std::move(out));
}

Result<Value> f_escape(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  KZ_RETURN_IF_ERROR(in.charge_bytes(out.size()));
  return Value::string(std::move(out));
}

Result<Value> f_first(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  return items.empty() ? Value::undefined("first item") : items.front();
}

Result<Value> f_last(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  return items.empty() ? Value::undefined("last item") : items.back();
}

std::optional<double> parse_float(const std::string& text) {
  const std::string s = py::strip(text, std::nullopt, true, true);
  if (s.empty() || s.size() > 400) return std::nullopt;
  if (s.find_first_of("xXpP") != std::string::npos && s.find_first_of("nN") == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return d;
}

Result<Value> f_float(Interpreter&, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("float", args, {"default"}));
  const Value fallback = a[0].is_undefined() ? Value::number(0.0) : a[0];
  if (v.is_number()) return Value::number(v.to_double());
  if (v.is_string()) {
    if (auto d = parse_float(v.str())) return Value::number(*d);
  }
  return fallback;
}

std::optional<int64_t> parse_int(const std::string& text, int64_t base) {
  std::string s = py::strip(text, std::nullopt, true, true);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.erase(0, 1);
  }
  if (s.size() > 2 && s[0] == '0') {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    if ((p == 'x' && base == 16) || (p == 'o' && base == 8) || (p == 'b' && base == 2)) s.erase(0, 2);
  }
  if (s.empty() || s.front() == '_' || s.back() == '_' || base < 2 || base > 36) return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    if (c == '_' && s[i - 1] != '_') continue;
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'z') d = c - 'a' + 10;
    if (d < 0 || d >= base) return std::nullopt;
    if (value > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      return std::nullopt;
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  const auto i = static_cast<int64_t>(value);
  return negative ? -i : i;
}

Result<Value> f_int(Interpreter&, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("int", args, {"default", "base"}));
  const Value fallback = a[0].is_undefined() ? Value::integer(0) : a[0];
  KZ_ASSIGN_OR_RETURN(int64_t base, int_arg(a[1], "base", 10));
  auto from_double = [&](double d) {
    if (!std::isfinite(d) || d >= 9.2e18 || d <= -9.2e18) return fallback;
    return Value::integer(static_cast<int64_t>(d));
  };
  if (v.is_int()) return v;
  if (v.is_bool()) return Value::integer(v.as_bool());
  if (v.is_float()) return from_double(v.as_float());
  if (v.is_string()) {
    if (auto i = parse_int(v.str(), base)) return Value::integer(*i);
    if (auto d = parse_float(v.str())) return from_double(*d);
  }
  return fallback;
}

Result<Value> f_format(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(std::string fmt, in.str(v));
  if (!args.positional.empty() && !args.named.empty()) {
    return InvalidArgument("format() takes either positional or keyword arguments, not both");
  }
  Value params;
  if (!args.named.empty()) {
    KZ_ASSIGN_OR_RETURN(params, in.make_dict(args.named));
  } else {
    KZ_ASSIGN_OR_RETURN(params, in.make_list(args.positional, true));
  }
  KZ_ASSIGN_OR_RETURN(std::string out, percent_format(in, fmt, params));
  return Value::string(std::move(out));
}

Result<Value> f_indent(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("indent", args, {"width", "first", "blank"}));
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  std::string indention;
  if (a[0].is_string()) {
    indention = a[0].str();
  } else {
    KZ_ASSIGN_OR_RETURN(int64_t width, int_arg(a[0], "width", 4));
    if (width > 1000) return OutOfRange("indent width too large");
    indention.assign(width > 0 ? static_cast<size_t>(width) : 0, ' ');
  }
  s += "\n";  // Jinja's own quirk, so a trailing newline survives splitlines()
  const auto lines = py::splitlines(s, false);
  std::string out;
  if (bool_arg(a[2], false)) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) out += "\n" + indention;
      out += lines[i];
      if (out.size() > in.limits().max_output_bytes) return OutOfRange("indented text exceeds the size limit");
    }
  } else if (!lines.empty()) {
    out = lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      out += "\n";
      if (!lines[i].empty()) out += indention;
      out += lines[i];
      if (out.size() > in.limits().max_output_bytes) return OutOfRange("indented text exceeds the size limit");
    }
  }
  if (bool_arg(a[1], false)) out = indention + out;
  KZ_RETURN_IF_ERROR(in.charge_bytes(out.size()));
  return Value::string(std::move(out));
}

Result<Value> f_items(Interpreter& in, const Value& v, CallArgs&) {
  if (v.is_undefined()) return in.make_list({});
  if (!v.is_dict()) return InvalidArgument("items: can only get item pairs from a mapping, not " + type_name(v));
  std::vector<Value> out;
  out.reserve(v.obj().entries.size());
  for (const auto& [k, val] : v.obj().entries) {
    KZ_ASSIGN_OR_RETURN(Value pair, in.make_list({Value::string(k), val}, true));
    out.push_back(std::move(pair));
  }
  return in.make_list(std::move(out));
}

Result<Value> f_join(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("join", args, {"d", "attribute"}));
  std::string sep;
  if (!a[0].is_undefined()) {
    KZ_ASSIGN_OR_RETURN(sep, in.str(a[0]));
  }
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    Value item = items[i];
    if (!a[1].is_undefined() && !a[1].is_none()) {
      KZ_ASSIGN_OR_RETURN(item, get_path(in, item, a[1]));
    }
    KZ_ASSIGN_OR_RETURN(std::string s, in.str(item));
    if (i) out += sep;
    out += s;
    if (out.size() > in.limits().max_output_bytes) return OutOfRange("joined string exceeds the size limit");
  }
  KZ_RETURN_IF_ERROR(in.charge_bytes(out.size()));
  return Value::string(std::move(out));
}

Result<Value> f_length(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_string()) return Value::integer(static_cast<int64_t>(py::code_point_count(v.str())));
  if (v.is_array()) return Value::integer(static_cast<int64_t>(v.items().size()));
  if (v.is_dict()) return Value::integer(static_cast<int64_t>(v.obj().entries.size()));
  if (v.is_undefined()) return Value::integer(0);
  return InvalidArgument("object of type '" + type_name(v) + "' has no len()");
}

Result<Value> f_list(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  return in.make_list(std::move(items));
}

Result<Value> f_lower(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  return Value::string(py::lower(s));
}

Result<Value> f_upper(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  return Value::string(py::upper(s));
}

Result<Value> f_map(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  std::vector<Value> out;
  if (args.positional.empty()) {
    Value attribute;
    Value fallback;
    for (const auto& [k, val] : args.named) {
      if (k == "attribute") attribute = val;
      else if (k == "default") fallback = val;
      else return InvalidArgument("map() got an unexpected keyword argument '" + k + "'");
    }
    if (attribute.is_undefined()) return InvalidArgument("map requires a filter name or attribute=");
    for (const auto& item : items) {
      KZ_ASSIGN_OR_RETURN(Value r, get_path(in, item, attribute));
      out.push_back(r.is_undefined() && !fallback.is_undefined() ? fallback : r);
    }
    return in.make_list(std::move(out));
  }
  if (!args.positional[0].is_string()) return InvalidArgument("map: the filter name must be a string");
  const std::string name = args.positional[0].str();
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.named = args.named;
  for (const auto& item : items) {
    CallArgs copy = rest;
    KZ_ASSIGN_OR_RETURN(Value r, in.apply_filter(name, item, copy));
    out.push_back(std::move(r));
  }
  return in.make_list(std::move(out));
}

Result<Value> min_max(Interpreter& in, const Value& v, CallArgs& args, bool want_max) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args(want_max ? "max" : "min", args, {"case_sensitive", "attribute"}));
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  if (items.empty()) return Value::undefined(want_max ? "max of an empty sequence" : "min of an empty sequence");
  Value best = items[0];
  Value best_key;
  for (size_t i = 0; i < items.size(); ++i) {
    Value key = items[i];
    if (!a[1].is_undefined()) {
      KZ_ASSIGN_OR_RETURN(key, get_path(in, items[i], a[1]));
    }
    key = sort_key(key, bool_arg(a[0], false));
    if (i > 0) {
      KZ_ASSIGN_OR_RETURN(int c, compare(key, best_key));
      if (want_max ? c <= 0 : c >= 0) continue;
    }
    best = items[i];
    best_key = key;
  }
  return best;
}

Result<Value> f_max(Interpreter& in, const Value& v, CallArgs& args) { return min_max(in, v, args, true); }
Result<Value> f_min(Interpreter& in, const Value& v, CallArgs& args) { return min_max(in, v, args, false); }

Result<Value> f_pprint(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(std::string s, to_repr(v, in.limits().max_output_bytes));
  return Value::string(std::move(s));
}

// select / reject / selectattr / rejectattr.
Result<Value> select_items(Interpreter& in, const Value& v, CallArgs& args, bool by_attr, bool keep_when) {
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  size_t off = 0;
  Value attribute;
  if (by_attr) {
    if (args.positional.empty()) return InvalidArgument("missing parameter for attribute name");
    attribute = args.positional[0];
    off = 1;
  }
  std::optional<std::string> test;
  CallArgs test_args;
  if (args.positional.size() > off) {
    if (!args.positional[off].is_string()) return InvalidArgument("the test name must be a string");
    test = args.positional[off].str();
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(off + 1), args.positional.end());
    test_args.named = args.named;
  }
  std::vector<Value> out;
  for (const auto& item : items) {
    KZ_RETURN_IF_ERROR(in.step());
    Value subject = item;
    if (by_attr) {
      KZ_ASSIGN_OR_RETURN(subject, get_path(in, item, attribute));
    }
    bool pass = false;
    if (test) {
      CallArgs copy = test_args;
      KZ_ASSIGN_OR_RETURN(pass, in.apply_test(*test, subject, copy));
    } else {
      pass = truthy(subject);
    }
    if (pass == keep_when) out.push_back(item);
  }
  return in.make_list(std::move(out));
}

Result<Value> f_select(Interpreter& in, const Value& v, CallArgs& a) { return select_items(in, v, a, false, true); }
Result<Value> f_reject(Interpreter& in, const Value& v, CallArgs& a) { return select_items(in, v, a, false, false); }
Result<Value> f_selectattr(Interpreter& in, const Value& v, CallArgs& a) { return select_items(in, v, a, true, true); }
Result<Value> f_rejectattr(Interpreter& in, const Value& v, CallArgs& a) { return select_items(in, v, a, true, false); }

Result<Value> f_replace(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("replace", args, {"old", "new", "count"}));
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  KZ_ASSIGN_OR_RETURN(std::string old_s, in.str(a[0]));
  KZ_ASSIGN_OR_RETURN(std::string new_s, in.str(a[1]));
  KZ_ASSIGN_OR_RETURN(int64_t count, int_arg(a[2], "count", -1));
  auto out = py::replace(s, old_s, new_s, count, in.limits().max_output_bytes);
  if (!out) return OutOfRange("replace() result exceeds the size limit");
  KZ_RETURN_IF_ERROR(in.charge_bytes(out->size()));
  return Value::string(std::move(*out));
}

Result<Value> f_reverse(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  std::reverse(items.begin(), items.end());
  if (v.is_string()) {
    std::string out;
    for (const auto& c : items) out += c.str();
    return Value::string(std::move(out));
  }
  return in.make_list(std::move(items));
}

Result<Value> f_round(Interpreter&, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("round", args, {"precision", "method"}));
  KZ_ASSIGN_OR_RETURN(int64_t precision, int_arg(a[0], "precision", 0));
  const std::string method = a[1].is_string() ? a[1].str() : "common";
  if (method != "common" && method != "ceil" && method != "floor") {
    return InvalidArgument("round: method must be 'common', 'ceil' or 'floor'");
  }
  if (!v.is_number()) return InvalidArgument("round needs a number, not " + type_name(v));
  if (!v.is_float() && precision >= 0) return Value::integer(v.is_bool() ? v.as_bool() : v.as_int());
  const double scale = std::pow(10.0, static_cast<double>(std::clamp<int64_t>(precision, -300, 300)));
  const double x = v.to_double() * scale;
  const double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);
  return Value::number(r / scale);
}

Result<Value> f_safe(Interpreter& in, const Value& v, CallArgs&) {
  if (v.is_string()) return v;
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  return Value::string(std::move(s));
}

Result<Value> f_sort(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("sort", args, {"reverse", "case_sensitive", "attribute"}));
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  KZ_RETURN_IF_ERROR(in.step(items.size()));
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto& item : items) {
    Value key = item;
    if (!a[2].is_undefined() && !a[2].is_none()) {
      KZ_ASSIGN_OR_RETURN(key, get_path(in, item, a[2]));
    }
    keyed.emplace_back(sort_key(key, bool_arg(a[1], false)), item);
  }
  KZ_RETURN_IF_ERROR(sort_values(keyed, bool_arg(a[0], false)));
  std::vector<Value> out;
  for (auto& [k, item] : keyed) out.push_back(item);
  return in.make_list(std::move(out));
}

Result<Value> f_string(Interpreter& in, const Value& v, CallArgs&) {
  if (v.is_string()) return v;
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  return Value::string(std::move(s));
}

Result<Value> f_sum(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("sum", args, {"attribute", "start"}));
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  Value total = a[1].is_undefined() ? Value::integer(0) : a[1];
  for (const auto& item : items) {
    Value x = item;
    if (!a[0].is_undefined() && !a[0].is_none()) {
      KZ_ASSIGN_OR_RETURN(x, get_path(in, item, a[0]));
    }
    KZ_ASSIGN_OR_RETURN(total, binary_op(in, "+", total, x));
  }
  return total;
}

// Jinja's title filter: words start after '-', whitespace, '(', '{', '[', '<'.
Result<Value> f_title(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  std::string out;
  bool word_start = true;
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const uint32_t cp = py::next_code_point(s, i);
    const bool boundary = cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || py::is_space(cp);
    std::string piece = s.substr(start, i - start);
    if (boundary) {
      word_start = true;
      out += piece;
      continue;
    }
    out += word_start ? py::upper(piece) : py::lower(piece);
    word_start = false;
  }
  return Value::string(std::move(out));
}

Result<Value> f_tojson(Interpreter& in, const Value& v, CallArgs& args) {
  // HF transformers' signature: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"}));
  JsonOptions o;
  o.ensure_ascii = bool_arg(a[0], false);
  KZ_ASSIGN_OR_RETURN(int64_t indent, int_arg(a[1], "indent", -1));
  o.indent = static_cast<int>(std::clamp<int64_t>(indent, -1, 64));
  if (a[2].is_array() && a[2].items().size() == 2 && a[2].items()[0].is_string() && a[2].items()[1].is_string()) {
    o.item_separator = a[2].items()[0].str();
    o.key_separator = a[2].items()[1].str();
  } else if (!a[2].is_undefined() && !a[2].is_none()) {
    return InvalidArgument("tojson: separators must be a pair of strings");
  }
  o.sort_keys = bool_arg(a[3], false);
  KZ_ASSIGN_OR_RETURN(std::string s, to_json_text(v, o, in.limits().max_output_bytes));
  KZ_RETURN_IF_ERROR(in.charge_bytes(s.size()));
  return Value::string(std::move(s));
}

Result<Value> f_trim(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("trim", args, {"chars"}));
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  KZ_ASSIGN_OR_RETURN(auto chars, optional_string_arg(a[0], "trim chars"));
  return Value::string(py::strip(s, chars, true, true));
}

Result<Value> f_unique(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("unique", args, {"case_sensitive", "attribute"}));
  KZ_ASSIGN_OR_RETURN(auto items, in.iterate(v));
  std::vector<Value> out;
  std::vector<Value> seen;
  for (const auto& item : items) {
    Value key = item;
    if (!a[1].is_undefined() && !a[1].is_none()) {
      KZ_ASSIGN_OR_RETURN(key, get_path(in, item, a[1]));
    }
    key = sort_key(key, bool_arg(a[0], false));
    KZ_RETURN_IF_ERROR(in.step(1 + seen.size()));
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return in.make_list(std::move(out));
}

Result<Value> f_wordcount(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(std::string s, in.str(v));
  auto words = py::split(s, std::nullopt, -1);
  return Value::integer(static_cast<int64_t>(words ? words->size() : 0));
}

const std::unordered_map<std::string_view, FilterFn>& filter_table() {
  static const std::unordered_map<std::string_view, FilterFn> table = {
      {"abs", f_abs},         {"attr", f_attr},         {"capitalize", f_capitalize},
      {"count", f_length},    {"d", f_default},         {"default", f_default},
      {"dictsort", f_dictsort}, {"e", f_escape},        {"escape", f_escape},
      {"first", f_first},     {"float", f_float},       {"format", f_format},
      {"indent", f_indent},   {"int", f_int},           {"items", f_items},
      {"join", f_join},       {"last", f_last},         {"length", f_length},
      {"list", f_list},       {"lower", f_lower},       {"map", f_map},
      {"max", f_max},         {"min", f_min},           {"pprint", f_pprint},
      {"reject", f_reject},   {"rejectattr", f_rejectattr}, {"replace", f_replace},
      {"reverse", f_reverse}, {"round", f_round},       {"safe", f_safe},
      {"select", f_select},   {"selectattr", f_selectattr}, {"sort", f_sort},
      {"string", f_string},   {"sum", f_sum},           {"title", f_title},
      {"tojson", f_tojson},   {"trim", f_trim},         {"unique", f_unique},
      {"upper", f_upper},     {"wordcount", f_wordcount},
  };
  return table;
}

// ---- tests ----------------------------------------------------------------------

Result<Value> one_arg(const char* test, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args(test, args, {"other"}));
  return a[0];
}

Result<bool> t_defined(Interpreter&, const Value& v, CallArgs&) { return !v.is_undefined(); }
Result<bool> t_undefined(Interpreter&, const Value& v, CallArgs&) { return v.is_undefined(); }
Result<bool> t_none(Interpreter&, const Value& v, CallArgs&) { return v.is_none(); }
Result<bool> t_boolean(Interpreter&, const Value& v, CallArgs&) { return v.is_bool(); }
Result<bool> t_true(Interpreter&, const Value& v, CallArgs&) { return v.is_bool() && v.as_bool(); }
Result<bool> t_false(Interpreter&, const Value& v, CallArgs&) { return v.is_bool() && !v.as_bool(); }
Result<bool> t_integer(Interpreter&, const Value& v, CallArgs&) { return v.is_int(); }
Result<bool> t_float(Interpreter&, const Value& v, CallArgs&) { return v.is_float(); }
Result<bool> t_number(Interpreter&, const Value& v, CallArgs&) { return v.is_number(); }
Result<bool> t_string(Interpreter&, const Value& v, CallArgs&) { return v.is_string(); }
Result<bool> t_mapping(Interpreter&, const Value& v, CallArgs&) { return v.is_dict(); }
Result<bool> t_iterable(Interpreter&, const Value& v, CallArgs&) {
  return v.is_array() || v.is_dict() || v.is_string() || v.is_undefined();
}
Result<bool> t_sequence(Interpreter&, const Value& v, CallArgs&) {
  return v.is_array() || v.is_dict() || v.is_string() || v.is_undefined();
}
Result<bool> t_callable(Interpreter&, const Value& v, CallArgs&) { return v.is_callable(); }
Result<bool> t_escaped(Interpreter&, const Value&, CallArgs&) { return false; }

Result<bool> t_sameas(Interpreter&, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(Value other, one_arg("sameas", args));
  if (v.kind() != other.kind()) return false;
  if (v.identity() != nullptr) return v.identity() == other.identity();
  return equals(v, other);
}

Result<bool> t_lower(Interpreter&, const Value& v, CallArgs&) {
  if (!v.is_string()) return false;
  const std::string& s = v.str();
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; }) &&
         std::none_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

Result<bool> t_upper(Interpreter&, const Value& v, CallArgs&) {
  if (!v.is_string()) return false;
  const std::string& s = v.str();
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; }) &&
         std::none_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

Result<bool> t_odd(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(Value m, binary_op(in, "%", v, Value::integer(2)));
  return equals(m, Value::integer(1));
}

Result<bool> t_even(Interpreter& in, const Value& v, CallArgs&) {
  KZ_ASSIGN_OR_RETURN(Value m, binary_op(in, "%", v, Value::integer(2)));
  return equals(m, Value::integer(0));
}

Result<bool> t_divisibleby(Interpreter& in, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(Value n, one_arg("divisibleby", args));
  KZ_ASSIGN_OR_RETURN(Value m, binary_op(in, "%", v, n));
  return !truthy(m);
}

Result<bool> t_eq(Interpreter&, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(Value o, one_arg("eq", args));
  return equals(v, o);
}
Result<bool> t_ne(Interpreter&, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(Value o, one_arg("ne", args));
  return !equals(v, o);
}
Result<bool> ordered(const Value& v, CallArgs& args, bool (*pred)(int)) {
  KZ_ASSIGN_OR_RETURN(Value o, one_arg("comparison", args));
  KZ_ASSIGN_OR_RETURN(int c, compare(v, o));
  return pred(c);
}
Result<bool> t_lt(Interpreter&, const Value& v, CallArgs& a) { return ordered(v, a, [](int c) { return c < 0; }); }
Result<bool> t_le(Interpreter&, const Value& v, CallArgs& a) { return ordered(v, a, [](int c) { return c <= 0; }); }
Result<bool> t_gt(Interpreter&, const Value& v, CallArgs& a) { return ordered(v, a, [](int c) { return c > 0; }); }
Result<bool> t_ge(Interpreter&, const Value& v, CallArgs& a) { return ordered(v, a, [](int c) { return c >= 0; }); }

Result<bool> t_in(Interpreter&, const Value& v, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(Value seq, one_arg("in", args));
  return contains(seq, v);
}

Result<bool> t_filter(Interpreter&, const Value& v, CallArgs&) {
  return v.is_string() && find_filter(v.str()) != nullptr;
}
Result<bool> t_test(Interpreter&, const Value& v, CallArgs&) {
  return v.is_string() && find_test(v.str()) != nullptr;
}

const std::unordered_map<std::string_view, TestFn>& test_table() {
  static const std::unordered_map<std::string_view, TestFn> table = {
      {"defined", t_defined},   {"undefined", t_undefined}, {"none", t_none},
      {"boolean", t_boolean},   {"true", t_true},           {"false", t_false},
      {"integer", t_integer},   {"float", t_float},         {"number", t_number},
      {"string", t_string},     {"mapping", t_mapping},     {"iterable", t_iterable},
      {"sequence", t_sequence}, {"callable", t_callable},   {"sameas", t_sameas},
      {"escaped", t_escaped},   {"lower", t_lower},         {"upper", t_upper},
      {"odd", t_odd},           {"even", t_even},           {"divisibleby", t_divisibleby},
      {"eq", t_eq},             {"equalto", t_eq},          {"==", t_eq},
      {"ne", t_ne},             {"!=", t_ne},               {"lt", t_lt},
      {"lessthan", t_lt},       {"<", t_lt},                {"le", t_le},
      {"<=", t_le},             {"gt", t_gt},               {"greaterthan", t_gt},
      {">", t_gt},              {"ge", t_ge},               {">=", t_ge},
      {"in", t_in},             {"filter", t_filter},       {"test", t_test},
  };
  return table;
}

// ---- globals ----------------------------------------------------------------------

Result<Value> g_range(Interpreter& in, CallArgs& args) {
  if (!args.named.empty()) return InvalidArgument("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) return InvalidArgument("range expected 1 to 3 arguments");
  int64_t bounds[3] = {0, 0, 1};
  for (size_t i = 0; i < p.size(); ++i) {
    KZ_ASSIGN_OR_RETURN(int64_t v, int_arg(p[i], "range() argument", 0));
    if (p[i].is_undefined() || p[i].is_none()) return InvalidArgument("range() arguments must be integers");
    bounds[p.size() == 1 ? 1 : i] = v;
  }
  const int64_t start = bounds[0], stop = bounds[1], step = bounds[2];
  if (step == 0) return InvalidArgument("range() arg 3 must not be zero");
  // Count in 128 bits so extreme bounds cannot overflow.
  __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  __int128 count = span <= 0 ? 0 : (span + (step > 0 ? step : -static_cast<__int128>(step)) - 1) /
                                       (step > 0 ? step : -static_cast<__int128>(step));
  if (count > static_cast<__int128>(in.limits().max_items)) {
    return OutOfRange("range() of more than " + std::to_string(in.limits().max_items) + " items");
  }
  KZ_RETURN_IF_ERROR(in.step(static_cast<uint64_t>(count)));
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(count));
  for (__int128 k = 0; k < count; ++k) out.push_back(Value::integer(static_cast<int64_t>(start + k * step)));
  return in.make_list(std::move(out));
}

// namespace(**kwargs) or namespace(dict, **kwargs).
Result<Value> g_namespace(Interpreter& in, CallArgs& args) {
  std::vector<std::pair<std::string, Value>> entries;
  if (args.positional.size() > 1) return InvalidArgument("namespace() takes at most one positional argument");
  if (!args.positional.empty()) {
    if (!args.positional[0].is_dict()) return InvalidArgument("namespace() positional argument must be a dict");
    entries = args.positional[0].obj().entries;
  }
  for (auto& kv : args.named) entries.push_back(kv);
  return in.make_namespace(std::move(entries));
}

Result<Value> g_dict(Interpreter& in, CallArgs& args) {
  std::vector<std::pair<std::string, Value>> entries;
  if (args.positional.size() > 1) return InvalidArgument("dict() takes at most one positional argument");
  if (!args.positional.empty()) {
    const Value& src = args.positional[0];
    if (src.is_dict()) {
      entries = src.obj().entries;
    } else {
      KZ_ASSIGN_OR_RETURN(auto pairs, in.iterate(src));
      for (const auto& pair : pairs) {
        if (!pair.is_array() || pair.items().size() != 2 || !pair.items()[0].is_string()) {
          return InvalidArgument("dict() needs (string key, value) pairs");
        }
        entries.emplace_back(pair.items()[0].str(), pair.items()[1]);
      }
    }
  }
  for (auto& kv : args.named) entries.push_back(kv);
  return in.make_dict(std::move(entries));
}

Result<Value> g_raise_exception(Interpreter& in, CallArgs& args) {
  std::string message;
  if (!args.positional.empty()) {
    KZ_ASSIGN_OR_RETURN(message, in.str(args.positional[0]));
  }
  return InvalidArgument(kRaisedPrefix + message);
}

// strftime_now(format): the local time now (HF transformers and llama.cpp
// offer it to templates that print today's date).
Result<Value> g_strftime_now(Interpreter& in, CallArgs& args) {
  KZ_ASSIGN_OR_RETURN(auto a, bind_args("strftime_now", args, {"format"}));
  if (!a[0].is_string()) return InvalidArgument("strftime_now() needs a format string");
  if (a[0].str().size() > 256) return InvalidArgument("strftime_now() format too long");
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[2048];
  const size_t n = std::strftime(buf, sizeof buf, a[0].str().c_str(), &local);
  (void)in;
  return Value::string(std::string(buf, n));
}

}  // namespace

FilterFn find_filter(const std::string& name) {
  const auto& t = filter_table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

TestFn find_test(const std::string& name) {
  const auto& t = test_table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

Value find_global(const std::string& name) {
  using GlobalFn = Result<Value> (*)(Interpreter&, CallArgs&);
  static const std::unordered_map<std::string_view, GlobalFn> table = {
      {"range", g_range},
      {"namespace", g_namespace},
      {"dict", g_dict},
      {"raise_exception", g_raise_exception},
      {"strftime_now", g_strftime_now},
  };
  auto it = table.find(name);
  if (it == table.end()) return Value::undefined(name);
  const GlobalFn fn = it->second;
  return Value::callable(name, [fn](Interpreter& in, CallArgs& args) { return fn(in, args); });
}

}  // namespace kazeia::jinja
