// GGUF metadata values (type mapping, conversions, rendering) and the
// TensorInfo helpers. The parser and writer live in gguf.cpp / gguf_writer.cpp.
#include <charconv>
#include <limits>
#include <type_traits>

#include "format/gguf.h"

namespace kazeia::gguf {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kUint8: return "uint8";
    case ValueType::kInt8: return "int8";
    case ValueType::kUint16: return "uint16";
    case ValueType::kInt16: return "int16";
    case ValueType::kUint32: return "uint32";
    case ValueType::kInt32: return "int32";
    case ValueType::kFloat32: return "float32";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "string";
    case ValueType::kArray: return "array";
    case ValueType::kUint64: return "uint64";
    case ValueType::kInt64: return "int64";
    case ValueType::kFloat64: return "float64";
  }
  return "unknown";
}

namespace {

// The GGUF type of a C++ alternative of Value::Storage.
template <typename T>
constexpr ValueType type_of() {
  if constexpr (std::is_same_v<T, uint8_t>) return ValueType::kUint8;
  else if constexpr (std::is_same_v<T, int8_t>) return ValueType::kInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return ValueType::kUint16;
  else if constexpr (std::is_same_v<T, int16_t>) return ValueType::kInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return ValueType::kUint32;
  else if constexpr (std::is_same_v<T, int32_t>) return ValueType::kInt32;
  else if constexpr (std::is_same_v<T, float>) return ValueType::kFloat32;
  else if constexpr (std::is_same_v<T, bool>) return ValueType::kBool;
  else if constexpr (std::is_same_v<T, std::string>) return ValueType::kString;
  else if constexpr (std::is_same_v<T, Array>) return ValueType::kArray;
  else if constexpr (std::is_same_v<T, uint64_t>) return ValueType::kUint64;
  else if constexpr (std::is_same_v<T, int64_t>) return ValueType::kInt64;
  else {
    static_assert(std::is_same_v<T, double>, "a Value alternative without a GGUF type");
    return ValueType::kFloat64;
  }
}

template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
std::string number_to_string(T x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), x);  // shortest round-trip form for floats
  return std::string(buf, r.ptr);
}

// Appends s quoted, with control and quote characters escaped, cut (at a UTF-8
// boundary) after max_bytes so that a hostile 1 GB string stays readable.
void append_quoted(std::string& out, std::string_view s, size_t max_bytes) {
  size_t n = s.size();
  bool cut = n > max_bytes;
  if (cut) {
    n = max_bytes;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  }
  out += '"';
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (cut) out += "...";
}

constexpr size_t kMaxStringBytes = 64;   // of one string in a summary
constexpr size_t kMaxSummaryBytes = 512;  // of a whole summary

void append_summary(std::string& out, const Value& value, size_t max_items);

void append_array_summary(std::string& out, const Array& a, size_t max_items) {
  if (a.items.size() > max_items) {
    out += '[';
    out += std::to_string(a.items.size());
    out += ' ';
    out += value_type_name(a.element_type);
    out += a.items.size() == 1 ? "]" : "s]";
    return;
  }
  out += '[';
  for (size_t i = 0; i < a.items.size(); ++i) {
    if (i > 0) out += ", ";
    // Nested arrays of up to max_items each can multiply; stop at a size cap.
    if (out.size() > kMaxSummaryBytes) {
      out += "...";
      break;
    }
    append_summary(out, a.items[i], max_items);
  }
  out += ']';
}

void append_summary(std::string& out, const Value& value, size_t max_items) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) out += x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) append_quoted(out, x, kMaxStringBytes);
        else if constexpr (std::is_same_v<T, Array>) append_array_summary(out, x, max_items);
        else out += number_to_string(x);
      },
      value.v);
}

}  // namespace

ValueType Value::type() const {
  return std::visit([](const auto& x) { return type_of<std::decay_t<decltype(x)>>(); }, v);
}

bool Value::is_integer() const {
  return std::visit([](const auto& x) { return kIsInteger<std::decay_t<decltype(x)>>; }, v);
}

std::optional<int64_t> Value::as_int() const {
  return std::visit(
      [](const auto& x) -> std::optional<int64_t> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (!kIsInteger<T>) {
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
          return static_cast<int64_t>(x);
        } else {
          return static_cast<int64_t>(x);
        }
      },
      v);
}

std::optional<uint64_t> Value::as_uint() const {
  return std::visit(
      [](const auto& x) -> std::optional<uint64_t> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (!kIsInteger<T>) {
          return std::nullopt;
        } else if constexpr (std::is_signed_v<T>) {
          if (x < 0) return std::nullopt;
          return static_cast<uint64_t>(x);
        } else {
          return static_cast<uint64_t>(x);
        }
      },
      v);
}

std::optional<double> Value::as_float() const {
  return std::visit(
      [](const auto& x) -> std::optional<double> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_floating_point_v<T> || kIsInteger<T>) return static_cast<double>(x);
        else return std::nullopt;
      },
      v);
}

const std::string* Value::as_string() const { return std::get_if<std::string>(&v); }

const Array* Value::as_array() const { return std::get_if<Array>(&v); }

std::string Value::summary(size_t max_items) const {
  std::string out;
  append_summary(out, *this, max_items);
  return out;
}

uint64_t TensorInfo::n_rows() const {
  uint64_t rows = 1;
  for (size_t i = 1; i < dims.size(); ++i) rows *= dims[i];  // bounded by n_elements (checked on parse)
  return rows;
}

uint64_t TensorInfo::row_bytes() const {
  if (dims.empty()) return 0;
  const TensorTypeTraits& t = tensor_type_traits(type);
  return dims[0] / t.block_size * t.block_bytes;
}

}  // namespace kazeia::gguf
