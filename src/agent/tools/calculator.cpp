#include "agent/tools/calculator.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>
#include <optional>

#include "agent/text_util.h"
#include "agent/tools/big_int.h"

namespace kazeia::agent {
namespace {

// An exact integer or a double.
struct Number {
  bool exact = true;
  BigInt integer;
  double real = 0.0;

  static Number of(BigInt value) { return Number{true, std::move(value), 0.0}; }
  static Number of(double value) { return Number{false, BigInt(), value}; }
  double as_double() const { return exact ? integer.to_double() : real; }
};

std::string format_double(double value) {
  if (value == 0.0) return "0";  // also turns -0 into 0
  std::array<char, 64> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%.15g", value);
  return buffer.data();
}

// A finite, integral double as an exact integer (for floor/ceil/round).
BigInt integral_double_to_bigint(double value) {
  if (std::fabs(value) < 9.0e18) return BigInt(static_cast<int64_t>(value));
  std::array<char, 400> buffer{};  // |double| < 1.8e308: at most 309 digits
  std::snprintf(buffer.data(), buffer.size(), "%.0f", std::fabs(value));
  BigInt magnitude = BigInt::from_decimal(buffer.data()).value_or(BigInt());
  return value < 0 ? -magnitude : magnitude;
}

struct Function {
  const char* name;
  double (*apply)(double);
  // Domain check: a message if x is outside the domain, else nullptr.
  const char* (*domain)(double);
  bool trig;  // snap |result| < 1e-15 to 0
};

const char* any_value(double) { return nullptr; }
const char* non_negative(double x) { return x < 0 ? "is not defined for negative numbers" : nullptr; }
const char* positive(double x) { return x <= 0 ? "is only defined for positive numbers" : nullptr; }
const char* unit_interval(double x) {
  return (x < -1 || x > 1) ? "is only defined on [-1, 1]" : nullptr;
}

const std::array<Function, 17> kFunctions = {{
    {"sqrt", [](double x) { return std::sqrt(x); }, non_negative, false},
    {"cbrt", [](double x) { return std::cbrt(x); }, any_value, false},
    {"sin", [](double x) { return std::sin(x); }, any_value, true},
    {"cos", [](double x) { return std::cos(x); }, any_value, true},
    {"tan", [](double x) { return std::tan(x); }, any_value, true},
    {"asin", [](double x) { return std::asin(x); }, unit_interval, false},
    {"acos", [](double x) { return std::acos(x); }, unit_interval, false},
    {"atan", [](double x) { return std::atan(x); }, any_value, false},
    {"sinh", [](double x) { return std::sinh(x); }, any_value, false},
    {"cosh", [](double x) { return std::cosh(x); }, any_value, false},
    {"tanh", [](double x) { return std::tanh(x); }, any_value, false},
    {"exp", [](double x) { return std::exp(x); }, any_value, false},
    {"ln", [](double x) { return std::log(x); }, positive, false},
    {"log", [](double x) { return std::log(x); }, positive, false},
    {"log10", [](double x) { return std::log10(x); }, positive, false},
    {"log2", [](double x) { return std::log2(x); }, positive, false},
    {"abs", nullptr, any_value, false},  // exact on integers: handled separately
}};
// Rounding functions keep integers exact and turn doubles into integers.
const std::array<const char*, 3> kRounding = {"round", "floor", "ceil"};

std::string function_list() {
  std::string out;
  for (const Function& f : kFunctions) out += std::string(out.empty() ? "" : ", ") + f.name;
  for (const char* name : kRounding) out += std::string(", ") + name;
  return out;
}

std::optional<double> constant_value(const std::string& name) {
  if (name == "pi" || name == "\xCF\x80") return std::numbers::pi;
  if (name == "e") return std::numbers::e;
  if (name == "tau") return 2 * std::numbers::pi;
  return std::nullopt;
}

class Parser {
 public:
  Parser(std::string_view input, const CalculatorLimits& limits) : input_(input), limits_(limits) {}

  Result<Number> parse() {
    skip_space();
    if (pos_ == input_.size()) return InvalidArgument("empty expression");
    KZ_ASSIGN_OR_RETURN(Number value, parse_expression());
    skip_space();
    if (pos_ != input_.size()) {
      std::string what = input_[pos_] == ')' ? "unexpected ')' at position " + position(pos_) +
                                                   " (no matching '(')"
                                             : "unexpected '" + token_at(pos_) + "' at position " +
                                                   position(pos_) + "; expected an operator";
      return InvalidArgument(what);
    }
    return value;
  }

 private:
  // --- scanning -------------------------------------------------------------

  void skip_space() {
    while (pos_ < input_.size() && (input_[pos_] == ' ' || input_[pos_] == '\t' ||
                                    input_[pos_] == '\n' || input_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool starts_with(std::string_view token) const { return input_.substr(pos_).starts_with(token); }

  // Consumes one of `tokens` (after whitespace); returns its index or -1.
  int match(std::initializer_list<std::string_view> tokens) {
    skip_space();
    int i = 0;
    for (std::string_view token : tokens) {
      if (starts_with(token)) {
        pos_ += token.size();
        return i;
      }
      ++i;
    }
    return -1;
  }

  // 1-based position in characters (code points), for messages.
  std::string position(size_t byte_offset) const {
    return std::to_string(utf8_length(input_.substr(0, byte_offset)) + 1);
  }

  static bool is_name_start(unsigned char c) { return std::isalpha(c) || c == '_'; }

  // The token starting at `at`, for messages: a whole name or one character.
  std::string token_at(size_t at) const {
    auto c = static_cast<unsigned char>(input_[at]);
    size_t end = at + 1;
    if (is_name_start(c)) {
      while (end < input_.size() && (std::isalnum(static_cast<unsigned char>(input_[end])) || input_[end] == '_')) ++end;
    } else {
      while (end < input_.size() && (static_cast<unsigned char>(input_[end]) & 0xC0) == 0x80) ++end;
    }
    return std::string(input_.substr(at, end - at));
  }

  Status unexpected_here(const char* expected) const {
    if (pos_ >= input_.size()) return InvalidArgument(std::string("unexpected end of expression; expected ") + expected);
    return InvalidArgument("unexpected '" + token_at(pos_) + "' at position " + position(pos_) +
                           "; expected " + expected);
  }

  // --- exactness and limits ---------------------------------------------------

  Status too_large() const {
    return OutOfRange("result is too large (more than " + std::to_string(limits_.max_exact_bits) +
                      " bits)");
  }

  Result<Number> checked(BigInt value) const {
    if (value.bit_length() > limits_.max_exact_bits) return too_large();
    return Number::of(std::move(value));
  }

  static Result<Number> checked(double value) {
    if (std::isnan(value)) return InvalidArgument("result is undefined (not a number)");
    if (std::isinf(value)) return OutOfRange("result is too large");
    return Number::of(value);
  }

  // --- grammar ------------------------------------------------------------------

  Result<Number> parse_expression() {
    KZ_ASSIGN_OR_RETURN(Number left, parse_term());
    for (;;) {
      int op = match({"+", "-", "\xE2\x88\x92"});  // U+2212 minus sign
      if (op < 0) return left;
      KZ_ASSIGN_OR_RETURN(Number right, parse_term());
      KZ_ASSIGN_OR_RETURN(left, op == 0 ? add(left, right) : subtract(left, right));
    }
  }

  Result<Number> parse_term() {
    KZ_ASSIGN_OR_RETURN(Number left, parse_unary());
    for (;;) {
      skip_space();
      const size_t op_pos = pos_;
      if (starts_with("**")) return left;  // only reachable on malformed input; power owns it
      int op = match({"*", "\xC3\x97", "/", "\xC3\xB7", "%"});  // × ÷
      if (op < 0) return left;
      KZ_ASSIGN_OR_RETURN(Number right, parse_unary());
      if (op <= 1) {
        KZ_ASSIGN_OR_RETURN(left, multiply(left, right));
      } else if (op <= 3) {
        KZ_ASSIGN_OR_RETURN(left, divide(left, right, op_pos));
      } else {
        KZ_ASSIGN_OR_RETURN(left, modulo(left, right, op_pos));
      }
    }
  }

  Result<Number> parse_unary() {
    if (++depth_ > limits_.max_depth) {
      return InvalidArgument("expression is nested too deeply (limit " + std::to_string(limits_.max_depth) + ")");
    }
    struct DepthGuard {
      int& depth;
      ~DepthGuard() { --depth; }
    } guard{depth_};
    int op = match({"-", "\xE2\x88\x92", "+"});
    if (op < 0) return parse_power();
    KZ_ASSIGN_OR_RETURN(Number operand, parse_unary());
    if (op == 2) return operand;
    if (operand.exact) return Number::of(-operand.integer);
    return Number::of(-operand.real);
  }

  Result<Number> parse_power() {
    KZ_ASSIGN_OR_RETURN(Number base, parse_postfix());
    skip_space();
    const size_t op_pos = pos_;
    if (match({"^", "**"}) < 0) return base;
    KZ_ASSIGN_OR_RETURN(Number exponent, parse_unary());  // right-associative, allows 2^-1
    return power(base, exponent, op_pos);
  }

  Result<Number> parse_postfix() {
    KZ_ASSIGN_OR_RETURN(Number value, parse_primary());
    for (;;) {
      skip_space();
      const size_t op_pos = pos_;
      if (!starts_with("!")) return value;
      ++pos_;
      KZ_ASSIGN_OR_RETURN(value, factorial(value, op_pos));
    }
  }

  Result<Number> parse_primary() {
    skip_space();
    if (pos_ >= input_.size()) return unexpected_here("a number, a name or '('");
    const auto c = static_cast<unsigned char>(input_[pos_]);
    if (std::isdigit(c) || (c == '.' && pos_ + 1 < input_.size() && std::isdigit(static_cast<unsigned char>(input_[pos_ + 1])))) {
      return parse_number();
    }
    if (c == '(') {
      const size_t open = pos_++;
      KZ_ASSIGN_OR_RETURN(Number inner, parse_expression());
      KZ_RETURN_IF_ERROR(expect_close(open));
      return inner;
    }
    if (is_name_start(c) || starts_with("\xCF\x80")) return parse_name();
    return unexpected_here("a number, a name or '('");
  }

  Status expect_close(size_t open) {
    skip_space();
    if (pos_ < input_.size() && input_[pos_] == ')') {
      ++pos_;
      return OkStatus();
    }
    if (pos_ >= input_.size()) {
      return InvalidArgument("missing ')' to close '(' at position " + position(open));
    }
    return InvalidArgument("expected ')' at position " + position(pos_) + " to close '(' at position " +
                           position(open) + ", found '" + token_at(pos_) + "'");
  }

  Result<Number> parse_number() {
    const size_t start = pos_;
    auto digit_at = [&](size_t i) { return i < input_.size() && std::isdigit(static_cast<unsigned char>(input_[i])); };
    while (digit_at(pos_)) ++pos_;
    bool is_decimal = false;
    if (pos_ < input_.size() && input_[pos_] == '.') {
      is_decimal = true;
      ++pos_;
      while (digit_at(pos_)) ++pos_;
    }
    // An exponent only if digits follow: "2e" is 2 followed by the name e.
    if (pos_ < input_.size() && (input_[pos_] == 'e' || input_[pos_] == 'E')) {
      size_t after = pos_ + 1;
      if (after < input_.size() && (input_[after] == '+' || input_[after] == '-')) ++after;
      if (digit_at(after)) {
        is_decimal = true;
        pos_ = after;
        while (digit_at(pos_)) ++pos_;
      }
    }
    std::string_view literal = input_.substr(start, pos_ - start);
    if (!is_decimal) {
      std::optional<BigInt> value = BigInt::from_decimal(literal);
      if (!value) return Internal("bad integer literal");
      return checked(std::move(*value));
    }
    double value = 0.0;
    auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), value);
    if (ec == std::errc::result_out_of_range) {
      return OutOfRange("number at position " + position(start) + " is out of range");
    }
    if (ec != std::errc() || end != literal.data() + literal.size()) {
      return InvalidArgument("malformed number '" + std::string(literal) + "' at position " + position(start));
    }
    return checked(value);
  }

  Result<Number> parse_name() {
    const size_t start = pos_;
    std::string name;
    if (starts_with("\xCF\x80")) {
      pos_ += 2;
      name = "\xCF\x80";
    } else {
      while (pos_ < input_.size() && (std::isalnum(static_cast<unsigned char>(input_[pos_])) || input_[pos_] == '_')) ++pos_;
      name = ascii_lower(input_.substr(start, pos_ - start));
    }
    const std::string_view spelled = input_.substr(start, pos_ - start);
    skip_space();
    const bool called = pos_ < input_.size() && input_[pos_] == '(';
    if (!called) {
      if (std::optional<double> constant = constant_value(name)) return Number::of(*constant);
      if (is_function(name)) {
        return InvalidArgument("function '" + name + "' at position " + position(start) +
                               " needs parentheses, e.g. " + name + "(2)");
      }
      return InvalidArgument("unknown name '" + std::string(spelled) +
                             "' at position " + position(start) + "; constants: pi, e, tau");
    }
    if (!is_function(name)) {
      if (constant_value(name)) {
        return InvalidArgument("'" + name + "' at position " + position(start) + " is a constant, not a function");
      }
      return InvalidArgument("unknown function '" + name + "' at position " + position(start) +
                             "; available: " + function_list());
    }
    const size_t open = pos_++;
    KZ_ASSIGN_OR_RETURN(Number argument, parse_expression());
    skip_space();
    if (pos_ < input_.size() && input_[pos_] == ',') {
      return InvalidArgument("function '" + name + "' takes one argument (',' at position " + position(pos_) + ")");
    }
    KZ_RETURN_IF_ERROR(expect_close(open));
    return apply_function(name, argument, start);
  }

  static bool is_function(const std::string& name) {
    for (const Function& f : kFunctions) {
      if (name == f.name) return true;
    }
    for (const char* r : kRounding) {
      if (name == r) return true;
    }
    return false;
  }

  // --- operations ---------------------------------------------------------------

  Result<Number> add(const Number& a, const Number& b) const {
    if (a.exact && b.exact) return checked(a.integer + b.integer);
    return checked(a.as_double() + b.as_double());
  }

  Result<Number> subtract(const Number& a, const Number& b) const {
    if (a.exact && b.exact) return checked(a.integer - b.integer);
    return checked(a.as_double() - b.as_double());
  }

  Result<Number> multiply(const Number& a, const Number& b) const {
    if (a.exact && b.exact) {
      // The product has at least bits(a) + bits(b) - 1 bits: refuse before computing.
      if (a.integer.bit_length() + b.integer.bit_length() > limits_.max_exact_bits + 1) return too_large();
      return checked(a.integer * b.integer);
    }
    return checked(a.as_double() * b.as_double());
  }


  Result<Number> divide(const Number& a, const Number& b, size_t op_pos) const {
    const bool zero = b.exact ? b.integer.is_zero() : b.real == 0.0;
    if (zero) return InvalidArgument("division by zero at position " + position(op_pos));
    if (a.exact && b.exact) {
      BigInt quotient, remainder;
      BigInt::divide(a.integer, b.integer, quotient, remainder);
      if (remainder.is_zero()) return Number::of(std::move(quotient));
    }
    return checked(a.as_double() / b.as_double());
  }

  Result<Number> modulo(const Number& a, const Number& b, size_t op_pos) const {
    const bool zero = b.exact ? b.integer.is_zero() : b.real == 0.0;
    if (zero) return InvalidArgument("modulo by zero at position " + position(op_pos));
    if (a.exact && b.exact) {
      BigInt quotient, remainder;
      BigInt::divide(a.integer, b.integer, quotient, remainder);
      // Floored: a nonzero remainder takes the divisor's sign.
      if (!remainder.is_zero() && remainder.sign() != b.integer.sign()) remainder = remainder + b.integer;
      return Number::of(std::move(remainder));
    }
    const double x = a.as_double(), y = b.as_double();
    double r = std::fmod(x, y);
    if (r != 0.0 && ((r < 0) != (y < 0))) r += y;
    return checked(r);
  }

  Result<Number> power(const Number& base, const Number& exponent, size_t op_pos) const {
    if (base.exact && exponent.exact) {
      const BigInt& b = base.integer;
      const BigInt& e = exponent.integer;
      if (e.is_negative()) {
        if (b.is_zero()) {
          return InvalidArgument("division by zero: 0 raised to a negative power at position " + position(op_pos));
        }
        return checked(std::pow(b.to_double(), e.to_double()));
      }
      if (e.is_zero()) return Number::of(BigInt(int64_t{1}));
      if (b.is_zero() || b == BigInt(int64_t{1})) return Number::of(b);
      std::optional<int64_t> n = e.to_int64();
      if (b == BigInt(int64_t{-1})) {
        // Parity from the lowest digit works for any exponent size.
        const std::string digits = e.to_string();
        return Number::of(BigInt(int64_t{((digits.back() - '0') % 2 == 0) ? 1 : -1}));
      }
      // |b| >= 2: the result has more than (bits(b) - 1) * n bits.
      if (!n || static_cast<double>(b.bit_length() - 1) * static_cast<double>(*n) >
                    static_cast<double>(limits_.max_exact_bits)) {
        return too_large();
      }
      BigInt result(int64_t{1});
      BigInt square = b;
      for (int64_t k = *n; k > 0; k >>= 1) {  // square and multiply
        if (k & 1) result = result * square;
        if (k > 1) square = square * square;
      }
      return checked(std::move(result));
    }
    const double x = base.as_double(), y = exponent.as_double();
    if (x == 0.0 && y < 0) {
      return InvalidArgument("division by zero: 0 raised to a negative power at position " + position(op_pos));
    }
    if (x < 0 && std::floor(y) != y) {
      return InvalidArgument("a negative number raised to a fractional power is not a real number (position " +
                             position(op_pos) + ")");
    }
    return checked(std::pow(x, y));
  }

  Result<Number> factorial(const Number& value, size_t op_pos) const {
    std::optional<int64_t> n;
    if (value.exact) {
      n = value.integer.to_int64();
    } else if (std::floor(value.real) == value.real && std::fabs(value.real) < 1e6) {
      n = static_cast<int64_t>(value.real);
    }
    if (!n || *n < 0) {
      return InvalidArgument("factorial at position " + position(op_pos) + " needs a non-negative integer");
    }
    BigInt result(int64_t{1});
    for (int64_t k = 2; k <= *n; ++k) {
      result = result * BigInt(k);
      if (result.bit_length() > limits_.max_exact_bits) {
        return too_large();
      }
    }
    return Number::of(std::move(result));
  }

  Result<Number> apply_function(const std::string& name, const Number& arg, size_t at) const {
    if (name == "abs") {
      if (arg.exact) return Number::of(arg.integer.is_negative() ? -arg.integer : arg.integer);
      return Number::of(std::fabs(arg.real));
    }
    if (name == "round" || name == "floor" || name == "ceil") {
      if (arg.exact) return arg;
      double r = name == "round" ? std::round(arg.real) : name == "floor" ? std::floor(arg.real) : std::ceil(arg.real);
      return Number::of(integral_double_to_bigint(r));
    }
    for (const Function& f : kFunctions) {
      if (name != f.name) continue;
      const double x = arg.as_double();
      if (const char* problem = f.domain(x)) {
        return InvalidArgument(name + " at position " + position(at) + " " + problem + " (argument " +
                               format_double(x) + ")");
      }
      double y = f.apply(x);
      if (f.trig && std::fabs(y) < 1e-15) y = 0.0;
      return checked(y);
    }
    return Internal("function table out of sync: " + name);
  }

  std::string_view input_;
  const CalculatorLimits& limits_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<CalculatorResult> evaluate_expression(std::string_view expression, const CalculatorLimits& limits) {
  if (expression.size() > limits.max_input_bytes) {
    return InvalidArgument("expression too long: " + std::to_string(expression.size()) + " bytes (limit " +
                           std::to_string(limits.max_input_bytes) + ")");
  }
  Parser parser(expression, limits);
  KZ_ASSIGN_OR_RETURN(Number value, parser.parse());
  if (value.exact) return CalculatorResult{value.integer.to_string(), true};
  return CalculatorResult{format_double(value.real), false};
}

Tool make_calculator_tool(const CalculatorLimits& limits) {
  Tool tool;
  tool.name = "calculator";
  tool.description =
      "Evaluate an arithmetic expression exactly. Supports + - * / ^ % ! and parentheses, "
      "functions sqrt, sin, cos, tan, log (natural), log10, exp, abs, round, floor, ceil, "
      "and constants pi and e. Integers are exact at any size (2^100); 7/2 gives 3.5.";
  tool.parameters = json::parse(R"({
    "type": "object",
    "properties": {
      "expression": {"type": "string", "minLength": 1, "maxLength": 1000,
                     "description": "The expression, e.g. \"234*567\" or \"sqrt(2)/2\""}
    },
    "required": ["expression"],
    "additionalProperties": false
  })");
  tool.timeout = std::chrono::milliseconds(2000);
  tool.handler = [limits](const json& args, const ToolContext&) -> Result<json> {
    const std::string expression = args.at("expression").get<std::string>();
    KZ_ASSIGN_OR_RETURN(CalculatorResult result, evaluate_expression(expression, limits));
    return json{{"expression", expression}, {"result", result.value}, {"exact", result.exact}};
  };
  return tool;
}

}  // namespace kazeia::agent
