// Python operators; see jinja_ops.h.
#include "text/jinja_ops.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "text/jinja_eval.h"
#include "text/jinja_pystr.h"

namespace kazeia::jinja {
namespace {

bool int_like(const Value& v) { return v.is_int() || v.is_bool(); }
int64_t int_of(const Value& v) { return v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int(); }

Status type_error(const std::string& op, const Value& a, const Value& b) {
  return InvalidArgument("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" +
                         type_name(b) + "'");
}

Status overflow() { return OutOfRange("integer overflow (values are limited to 64 bits)"); }

Result<Value> repeat_string(Interpreter& in, const std::string& s, int64_t n) {
  if (n <= 0 || s.empty()) return Value::string("");
  const size_t limit = in.limits().max_output_bytes;
  if (static_cast<uint64_t>(n) > limit / s.size()) return OutOfRange("repeated string exceeds the size limit");
  KZ_RETURN_IF_ERROR(in.charge_bytes(s.size() * static_cast<size_t>(n)));
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out += s;
  return Value::string(std::move(out));
}

Result<Value> repeat_list(Interpreter& in, const Value& list, int64_t n) {
  std::vector<Value> out;
  const auto& items = list.items();
  if (n > 0 && !items.empty()) {
    if (static_cast<uint64_t>(n) > in.limits().max_items / items.size()) {
      return OutOfRange("repeated list exceeds " + std::to_string(in.limits().max_items) + " items");
    }
    KZ_RETURN_IF_ERROR(in.step(items.size() * static_cast<size_t>(n)));
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  }
  return in.make_list(std::move(out), list.is_tuple());
}

Result<Value> int_power(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) {
      if (__builtin_mul_overflow(result, base, &result)) return overflow();
    }
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) return overflow();
  }
  return Value::integer(result);
}

Result<Value> arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (int_like(a) && int_like(b)) {
    const int64_t x = int_of(a);
    const int64_t y = int_of(b);
    int64_t r = 0;
    if (op == "+") {
      if (__builtin_add_overflow(x, y, &r)) return overflow();
      return Value::integer(r);
    }
    if (op == "-") {
      if (__builtin_sub_overflow(x, y, &r)) return overflow();
      return Value::integer(r);
    }
    if (op == "*") {
      if (__builtin_mul_overflow(x, y, &r)) return overflow();
      return Value::integer(r);
    }
    if (op == "/") {
      if (y == 0) return InvalidArgument("division by zero");
      return Value::number(static_cast<double>(x) / static_cast<double>(y));
    }
    if (op == "//" || op == "%") {
      if (y == 0) return InvalidArgument("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) {
        if (op == "%") return Value::integer(0);
        return overflow();
      }
      int64_t q = x / y;
      int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value::integer(op == "//" ? q : m);
    }
    if (op == "**") {
      if (y >= 0) return int_power(x, y);
      return Value::number(std::pow(static_cast<double>(x), static_cast<double>(y)));
    }
  }
  const double x = a.to_double();
  const double y = b.to_double();
  if (op == "+") return Value::number(x + y);
  if (op == "-") return Value::number(x - y);
  if (op == "*") return Value::number(x * y);
  if (op == "/") {
    if (y == 0.0) return InvalidArgument("float division by zero");
    return Value::number(x / y);
  }
  if (op == "//" || op == "%") {
    if (y == 0.0) return InvalidArgument("float floor division or modulo by zero");
    // CPython's float divmod: exact modulo first, then a floor that stays
    // consistent with it (1 // 0.1 is 9.0, not 10.0).
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0.0) {
      if ((y < 0) != (mod < 0)) {
        mod += y;
        div -= 1.0;
      }
    } else {
      mod = std::copysign(0.0, y);
    }
    double floordiv = 0.0;
    if (div != 0.0) {
      floordiv = std::floor(div);
      if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
      floordiv = std::copysign(0.0, x / y);
    }
    return Value::number(op == "//" ? floordiv : mod);
  }
  if (op == "**") {
    if (x == 0.0 && y < 0) return InvalidArgument("zero cannot be raised to a negative power");
    return Value::number(std::pow(x, y));
  }
  return Internal("unknown operator " + op);
}

}  // namespace

Result<Value> binary_op(Interpreter& in, const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined()) {
    const Value& u = a.is_undefined() ? a : b;
    const std::string name = u.undefined_hint().empty() ? "value" : "'" + u.undefined_hint() + "'";
    return InvalidArgument("undefined " + name + " used with operator " + op);
  }
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      KZ_RETURN_IF_ERROR(in.charge_bytes(a.str().size() + b.str().size()));
      return Value::string(a.str() + b.str());
    }
    if (a.is_array() && b.is_array() && a.is_tuple() == b.is_tuple()) {
      if (a.items().size() + b.items().size() > in.limits().max_items) {
        return OutOfRange("list exceeds " + std::to_string(in.limits().max_items) + " items");
      }
      KZ_RETURN_IF_ERROR(in.step(a.items().size() + b.items().size()));
      std::vector<Value> items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      return in.make_list(std::move(items), a.is_tuple());
    }
    if (a.is_string() || b.is_string()) {
      return InvalidArgument("can only concatenate str (not \"" + type_name(a.is_string() ? b : a) + "\") to str");
    }
  }
  if (op == "*") {
    if (a.is_string() && int_like(b)) return repeat_string(in, a.str(), int_of(b));
    if (int_like(a) && b.is_string()) return repeat_string(in, b.str(), int_of(a));
    if (a.is_array() && int_like(b)) return repeat_list(in, a, int_of(b));
    if (int_like(a) && b.is_array()) return repeat_list(in, b, int_of(a));
  }
  if (op == "%" && a.is_string()) {
    KZ_ASSIGN_OR_RETURN(std::string s, percent_format(in, a.str(), b));
    return Value::string(std::move(s));
  }
  return type_error(op, a, b);
}

Result<bool> contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) {
      return InvalidArgument("'in <string>' requires string as left operand, not " + type_name(item));
    }
    return container.str().find(item.str()) != std::string::npos;
  }
  if (container.is_array()) {
    for (const auto& v : container.items()) {
      if (equals(v, item)) return true;
    }
    return false;
  }
  if (container.is_object()) {
    return item.is_string() && container.obj().find(item.str()) != nullptr;
  }
  if (container.is_undefined()) return false;
  return InvalidArgument("argument of type '" + type_name(container) + "' is not iterable");
}

Result<Value> slice_value(Interpreter& in, const Value& obj, const Value& start_v, const Value& stop_v,
                          const Value& step_v) {
  auto as_index = [](const Value& v, const char* what) -> Result<std::optional<int64_t>> {
    if (v.is_none() || v.is_undefined()) return std::optional<int64_t>();
    if (v.is_int()) return std::optional<int64_t>(v.as_int());
    if (v.is_bool()) return std::optional<int64_t>(v.as_bool() ? 1 : 0);
    return InvalidArgument(std::string("slice ") + what + " must be an integer or None, not " + type_name(v));
  };
  KZ_ASSIGN_OR_RETURN(auto start_o, as_index(start_v, "start"));
  KZ_ASSIGN_OR_RETURN(auto stop_o, as_index(stop_v, "stop"));
  KZ_ASSIGN_OR_RETURN(auto step_o, as_index(step_v, "step"));
  const int64_t step = step_o.value_or(1);
  if (step == 0) return InvalidArgument("slice step cannot be zero");
  if (obj.is_undefined()) return obj;
  std::vector<size_t> offsets;
  int64_t len = 0;
  if (obj.is_string()) {
    KZ_RETURN_IF_ERROR(in.step(1 + obj.str().size() / 16));
    offsets = py::code_point_offsets(obj.str());
    len = static_cast<int64_t>(offsets.size()) - 1;
  } else if (obj.is_array()) {
    len = static_cast<int64_t>(obj.items().size());
  } else {
    return Value::undefined();  // Jinja: a failed getitem is undefined
  }
  // Python's slice.indices().
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += len;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= len) {
      x = step < 0 ? len - 1 : len;
    }
    return x;
  };
  const int64_t start = clamp(start_o, step > 0 ? 0 : len - 1);
  const int64_t stop = clamp(stop_o, step > 0 ? len : -1);
  std::vector<int64_t> picks;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    picks.push_back(i);
    if (step > 0 ? i > INT64_MAX - step : i < INT64_MIN - step) break;
  }
  KZ_RETURN_IF_ERROR(in.step(1 + picks.size()));
  if (obj.is_string()) {
    std::string out;
    const std::string& s = obj.str();
    for (int64_t i : picks) {
      const auto k = static_cast<size_t>(i);
      out.append(s, offsets[k], offsets[k + 1] - offsets[k]);
    }
    return Value::string(std::move(out));
  }
  std::vector<Value> out;
  out.reserve(picks.size());
  for (int64_t i : picks) out.push_back(obj.items()[static_cast<size_t>(i)]);
  return in.make_list(std::move(out), obj.is_tuple());
}

Result<std::string> percent_format(Interpreter& in, const std::string& fmt, const Value& args) {
  std::vector<Value> positional;
  const Value* mapping = nullptr;
  if (args.is_tuple()) positional = args.items();
  else if (args.is_dict()) mapping = &args;
  else positional.push_back(args);
  const size_t limit = in.limits().max_output_bytes;
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (out.size() > limit) return OutOfRange("formatted string exceeds the size limit");
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) return InvalidArgument("incomplete format");
    Value arg;
    bool have_arg = false;
    if (fmt[i] == '(') {
      const size_t close = fmt.find(')', i);
      if (close == std::string::npos) return InvalidArgument("incomplete format key");
      if (mapping == nullptr) return InvalidArgument("format requires a mapping");
      const std::string key = fmt.substr(i + 1, close - i - 1);
      const Value* found = mapping->obj().find(key);
      if (found == nullptr) return InvalidArgument("format key '" + key + "' not found");
      arg = *found;
      have_arg = true;
      i = close + 1;
    }
    // Flags, width and precision, bounded so the C format below stays small.
    std::string flags;
    while (i < fmt.size() && std::string("-+ #0").find(fmt[i]) != std::string::npos) flags += fmt[i++];
    int width = -1;
    int precision = -1;
    auto read_number = [&](int& target) {
      while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
        target = std::min(999, (target < 0 ? 0 : target) * 10 + (fmt[i++] - '0'));
      }
    };
    read_number(width);
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      precision = 0;
      read_number(precision);
    }
    if (i >= fmt.size()) return InvalidArgument("incomplete format");
    const char conv = fmt[i];
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (!have_arg) {
      if (next >= positional.size()) return InvalidArgument("not enough arguments for format string");
      arg = positional[next++];
    }
    std::string spec = "%";
    spec += flags;
    if (width >= 0) spec += std::to_string(width);
    if (precision >= 0) {
      spec += '.';
      spec += std::to_string(precision);
    }
    char buf[2048];
    switch (conv) {
      case 's':
      case 'r': {
        KZ_ASSIGN_OR_RETURN(std::string s, conv == 's' ? in.str(arg) : to_repr(arg, limit));
        if (precision >= 0) {
          const auto offsets = py::code_point_offsets(s);
          if (offsets.size() - 1 > static_cast<size_t>(precision)) s.resize(offsets[static_cast<size_t>(precision)]);
        }
        const size_t n = py::code_point_count(s);
        const size_t pad = width > 0 && static_cast<size_t>(width) > n ? static_cast<size_t>(width) - n : 0;
        if (flags.find('-') != std::string::npos) out += s + std::string(pad, ' ');
        else out += std::string(pad, ' ') + s;
        break;
      }
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o':
      case 'c': {
        if (!arg.is_number()) {
          return InvalidArgument(std::string("%") + conv + " format: a number is required, not " + type_name(arg));
        }
        const double d = arg.to_double();
        if (arg.is_float() && !(d > -9.2e18 && d < 9.2e18)) return InvalidArgument("cannot convert float to integer");
        const long long v = arg.is_float() ? static_cast<long long>(d) : int_of(arg);
        if (conv == 'c') {
          if (v < 0 || v > 0x10FFFF) return InvalidArgument("%c arg not in range(0x110000)");
          py::append_utf8(out, static_cast<uint32_t>(v));
        } else {
          const char c = conv == 'i' || conv == 'u' ? 'd' : conv;
          std::snprintf(buf, sizeof buf, (spec + "ll" + c).c_str(), v);
          out += buf;
        }
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G': {
        if (!arg.is_number()) {
          return InvalidArgument(std::string("%") + conv + " format: a real number is required, not " + type_name(arg));
        }
        const double d = arg.to_double();
        if (std::fabs(d) > 1e300 && (conv == 'f' || conv == 'F') && std::isfinite(d)) {
          std::snprintf(buf, sizeof buf, "%e", d);  // keeps the buffer bounded
        } else {
          std::snprintf(buf, sizeof buf, (spec + conv).c_str(), d);
        }
        out += buf;
        break;
      }
      default: return InvalidArgument(std::string("unsupported format character '") + conv + "'");
    }
  }
  if (mapping == nullptr && next < positional.size()) {
    return InvalidArgument("not all arguments converted during string formatting");
  }
  if (out.size() > limit) return OutOfRange("formatted string exceeds the size limit");
  KZ_RETURN_IF_ERROR(in.charge_bytes(out.size()));
  return out;
}

}  // namespace kazeia::jinja
