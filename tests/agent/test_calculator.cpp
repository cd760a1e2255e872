// Calculator: a table of hand-computed results, exactness, and errors.
#include <gtest/gtest.h>

#include "agent/tools/big_int.h"
#include "agent/tools/calculator.h"

namespace kazeia::agent {
namespace {

struct Case {
  const char* expression;
  const char* expected;
};

// Every value below was worked out by hand (or is a well-known constant),
// not produced by this code.
const Case kCases[] = {
    {"234*567", "132678"},
    {"2^100", "1267650600228229401496703205376"},
    {"7/2", "3.5"},
    {"6/3", "2"},
    {"1/3", "0.333333333333333"},
    {"1+2*3", "7"},
    {"(1+2)*3", "9"},
    {"10 - 4 - 3", "3"},
    {"100 / 10 / 5", "2"},
    {"2^3^2", "512"},
    {"-2^2", "-4"},
    {"(-2)^2", "4"},
    {"2^-1", "0.5"},
    {"-(-(3))", "3"},
    {"+5", "5"},
    {"2 * (3 + (4 - 1)) ^ 2", "72"},
    {"7 % 3", "1"},
    {"-7 % 3", "2"},
    {"7 % -3", "-2"},
    {"5.5 % 2", "1.5"},
    {"0.1 + 0.2", "0.3"},
    {"3 × 4", "12"},
    {"12 ÷ 4", "3"},
    {"10 − 3", "7"},
    {"2 ** 10", "1024"},
    {"sqrt(16)", "4"},
    {"sqrt(2)", "1.4142135623731"},
    {"sin(pi/2)", "1"},
    {"cos(0)", "1"},
    {"sin(pi)", "0"},
    {"tan(pi/4)", "1"},
    {"log(e)", "1"},
    {"ln(1)", "0"},
    {"log10(1000)", "3"},
    {"log2(1024)", "10"},
    {"exp(0)", "1"},
    {"abs(-42)", "42"},
    {"abs(-2.5)", "2.5"},
    {"round(2.5)", "3"},
    {"round(-2.5)", "-3"},
    {"floor(-2.5)", "-3"},
    {"ceil(2.1)", "3"},
    {"5!", "120"},
    {"-3!", "-6"},
    {"20!", "2432902008176640000"},
    {"25!", "15511210043330985984000000"},
    {"2^64", "18446744073709551616"},
    {"9223372036854775807 + 1", "9223372036854775808"},
    {"-9223372036854775808 - 1", "-9223372036854775809"},
    {"99999999999 * 99999999999", "9999999999800000000001"},
    {"3^40", "12157665459056928801"},
    {"2^100 / 2^98", "4"},
    {"2^100 - 2^100", "0"},
    {"(2^100 + 1) % 7", "3"},
    {"12345678901234567890 / 10", "1234567890123456789"},
    {"1e3 + 1", "1001"},
    {"1.5e-3 * 2", "0.003"},
    {".5 + .25", "0.75"},
    {"0^0", "1"},
    {"(-1)^1001", "-1"},
    {"1/4 + 1/4", "0.5"},
    {"10/4*2", "5"},
    {"2^0.5 * 2^0.5", "2"},
    {"PI * 2 - tau", "0"},
    {"  (  1 +\t2 ) ", "3"},
};

TEST(Calculator, HandComputedTable) {
  static_assert(std::size(kCases) >= 40);
  for (const Case& c : kCases) {
    Result<CalculatorResult> r = evaluate_expression(c.expression);
    ASSERT_TRUE(r.ok()) << c.expression << ": " << r.status().message();
    EXPECT_EQ(r->value, c.expected) << c.expression;
  }
}

TEST(Calculator, ExactnessFlag) {
  EXPECT_TRUE(evaluate_expression("2^100")->exact);
  EXPECT_TRUE(evaluate_expression("6/3")->exact);
  EXPECT_TRUE(evaluate_expression("floor(2.7)")->exact);
  EXPECT_FALSE(evaluate_expression("7/2")->exact);
  EXPECT_FALSE(evaluate_expression("sqrt(16)")->exact);
}

TEST(Calculator, Errors) {
  const Case errors[] = {
      {"", "empty expression"},
      {"1/0", "division by zero at position 2"},
      {"1.5/0.0", "division by zero at position 4"},
      {"5 % 0", "modulo by zero at position 3"},
      {"0^-1", "division by zero: 0 raised to a negative power at position 2"},
      {"2 +", "unexpected end of expression; expected a number, a name or '('"},
      {"(1+2", "missing ')' to close '(' at position 1"},
      {"(1 2)", "expected ')' at position 4 to close '(' at position 1, found '2'"},
      {"1+2)", "unexpected ')' at position 4 (no matching '(')"},
      {"2 $ 3", "unexpected '$' at position 3; expected an operator"},
      {"2pi", "unexpected 'pi' at position 2; expected an operator"},
      {"× 3", "unexpected '×' at position 1; expected a number, a name or '('"},
      {"x + 1", "unknown name 'x' at position 1; constants: pi, e, tau"},
      {"sqrt 4", "function 'sqrt' at position 1 needs parentheses, e.g. sqrt(2)"},
      {"pi(2)", "'pi' at position 1 is a constant, not a function"},
      {"log(2, 8)", "function 'log' takes one argument (',' at position 6)"},
      {"sqrt(-4)", "sqrt at position 1 is not defined for negative numbers (argument -4)"},
      {"log(0)", "log at position 1 is only defined for positive numbers (argument 0)"},
      {"asin(2)", "asin at position 1 is only defined on [-1, 1] (argument 2)"},
      {"(-8)^(1/3)", "a negative number raised to a fractional power is not a real number (position 5)"},
      {"2.5!", "factorial at position 4 needs a non-negative integer"},
      {"(-1)!", "factorial at position 5 needs a non-negative integer"},
      {"2^10000", "result is too large (more than 4096 bits)"},
      {"1000!", "result is too large (more than 4096 bits)"},
      {"10.0^400", "result is too large"},
      {"1e999", "number at position 1 is out of range"},
  };
  for (const Case& c : errors) {
    Result<CalculatorResult> r = evaluate_expression(c.expression);
    ASSERT_FALSE(r.ok()) << c.expression << " gave " << r->value;
    EXPECT_EQ(r.status().message(), c.expected) << c.expression;
  }
  Status unknown = evaluate_expression("foo(2)").status();
  EXPECT_TRUE(unknown.message().starts_with("unknown function 'foo' at position 1; available: sqrt, ")) << unknown.message();
  // Code-looking input is just a syntax error.
  EXPECT_FALSE(evaluate_expression("__import__('os').system('ls')").ok());
  EXPECT_FALSE(evaluate_expression("1; rm -rf /").ok());
}

TEST(Calculator, PositionsCountCharactersNotBytes) {
  // "×" is two bytes; the division is the 5th character.
  EXPECT_EQ(evaluate_expression("2×3/0").status().message(), "division by zero at position 4");
  EXPECT_EQ(evaluate_expression("π÷0").status().message(), "division by zero at position 2");
}

TEST(Calculator, LimitsOnLengthAndDepth) {
  std::string long_input(1001, '1');
  EXPECT_EQ(evaluate_expression(long_input).status().message(), "expression too long: 1001 bytes (limit 1000)");
  std::string deep = std::string(100, '(') + "1" + std::string(100, ')');
  EXPECT_EQ(evaluate_expression(deep).status().message(), "expression is nested too deeply (limit 64)");
  std::string minus = std::string(100, '-') + "1";
  EXPECT_FALSE(evaluate_expression(minus).ok());
  std::string ok_depth = std::string(30, '(') + "1" + std::string(30, ')');
  EXPECT_EQ(evaluate_expression(ok_depth)->value, "1");
  std::string powers = "2";
  for (int i = 0; i < 100; ++i) powers += "^1";
  EXPECT_FALSE(evaluate_expression(powers).ok()) << "right-recursive power chain is depth-limited too";
  CalculatorLimits small;
  small.max_exact_bits = 64;
  EXPECT_EQ(evaluate_expression("2^63", small)->value, "9223372036854775808");
  EXPECT_FALSE(evaluate_expression("2^64", small).ok());
}

TEST(Calculator, ToolReturnsStructuredResult) {
  ToolRegistry registry;
  ASSERT_TRUE(registry.register_tool(make_calculator_tool()).ok());
  ToolResult r = registry.dispatch({"c1", "calculator", json{{"expression", "234*567"}}});
  ASSERT_TRUE(r.ok) << r.content;
  EXPECT_EQ(r.content, R"({"expression":"234*567","result":"132678","exact":true})");
  r = registry.dispatch({"c2", "calculator", json{{"expression", "1/0"}}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.content, "error: division by zero at position 2");
  r = registry.dispatch({"c3", "calculator", json{{"expr", "1"}}});
  EXPECT_EQ(r.content, "error: missing required argument 'expression'");
}

TEST(BigInt, ArithmeticAgainstInt64) {
  // Cross-check small values against native arithmetic, signs included.
  const int64_t values[] = {0, 1, -1, 7, -7, 1000000007, -99999, 4294967295LL, 4294967296LL, -4294967297LL};
  for (int64_t a : values) {
    for (int64_t b : values) {
      EXPECT_EQ((BigInt(a) + BigInt(b)).to_string(), std::to_string(a + b));
      EXPECT_EQ((BigInt(a) - BigInt(b)).to_string(), std::to_string(a - b));
      if (b != 0) {
        BigInt q, r;
        BigInt::divide(BigInt(a), BigInt(b), q, r);
        EXPECT_EQ(q.to_string(), std::to_string(a / b)) << a << "/" << b;
        EXPECT_EQ(r.to_string(), std::to_string(a % b)) << a << "%" << b;
      }
      if (std::llabs(a) < 3000000000LL && std::llabs(b) < 3000000000LL) {  // no int64 overflow
        EXPECT_EQ((BigInt(a) * BigInt(b)).to_string(), std::to_string(a * b));
      }
    }
  }
  EXPECT_EQ(BigInt(INT64_MIN).to_string(), "-9223372036854775808");
  EXPECT_EQ(BigInt(INT64_MIN).to_int64(), INT64_MIN);
}

TEST(BigInt, MultiLimbDivision) {
  auto big = [](const char* digits) { return *BigInt::from_decimal(digits); };
  BigInt q, r;
  // (2^100 + 12345) / (2^40 + 3): checked as q * d + r == n with 0 <= r < d.
  BigInt n = big("1267650600228229401496703217721");
  BigInt d = big("1099511627779");
  BigInt::divide(n, d, q, r);
  EXPECT_EQ((q * d + r).to_string(), n.to_string());
  EXPECT_EQ(compare(r, d), -1);
  EXPECT_GE(r.sign(), 0);
  // 10^30 / 10^15 = 10^15 exactly.
  BigInt::divide(big("1000000000000000000000000000000"), big("1000000000000000"), q, r);
  EXPECT_EQ(q.to_string(), "1000000000000000");
  EXPECT_TRUE(r.is_zero());
  EXPECT_FALSE(BigInt::from_decimal("12a").has_value());
  EXPECT_DOUBLE_EQ(big("1267650600228229401496703205376").to_double(), 1267650600228229401496703205376.0);
}

}  // namespace
}  // namespace kazeia::agent
