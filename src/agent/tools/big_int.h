// A small signed arbitrary-precision integer for the calculator tool.
//
// The calculator promises exact integer arithmetic (2^100, 30!, 10^20 + 1),
// which int64 cannot hold and double cannot represent exactly. Sizes here are
// small (the calculator caps results at a few thousand bits), so the
// algorithms are the plain schoolbook ones: O(n^2) multiply, and
// shift-subtract long division, chosen for being obviously correct rather
// than fast.
//
// Magnitude: little-endian base-2^32 limbs without leading zero limbs; zero
// is the empty vector and is never negative.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kazeia::agent {

class BigInt {
 public:
  BigInt() = default;
  BigInt(int64_t value);  // NOLINT: implicit, integers convert naturally

  // Decimal digits only (no sign, no separators); nullopt if empty or not digits.
  static std::optional<BigInt> from_decimal(std::string_view digits);

  bool is_zero() const { return limbs_.empty(); }
  bool is_negative() const { return negative_; }
  int sign() const { return is_zero() ? 0 : (negative_ ? -1 : 1); }
  // Bits in the magnitude (0 for zero).
  uint64_t bit_length() const;
  // The value if it fits in int64.
  std::optional<int64_t> to_int64() const;
  // Correctly rounded (via the decimal string); +-inf when too large.
  double to_double() const;
  std::string to_string() const;

  BigInt operator-() const;
  friend BigInt operator+(const BigInt& a, const BigInt& b);
  friend BigInt operator-(const BigInt& a, const BigInt& b);
  friend BigInt operator*(const BigInt& a, const BigInt& b);
  friend bool operator==(const BigInt& a, const BigInt& b) = default;
  friend int compare(const BigInt& a, const BigInt& b);

  // Truncating division (quotient rounded toward zero, remainder has the
  // dividend's sign), like C++ on int. `divisor` must not be zero.
  static void divide(const BigInt& dividend, const BigInt& divisor, BigInt& quotient,
                     BigInt& remainder);

 private:
  using Limbs = std::vector<uint32_t>;
  static int compare_magnitude(const Limbs& a, const Limbs& b);
  static Limbs add_magnitude(const Limbs& a, const Limbs& b);
  static Limbs subtract_magnitude(const Limbs& a, const Limbs& b);  // requires |a| >= |b|
  static Limbs multiply_magnitude(const Limbs& a, const Limbs& b);
  // Divides in place by a small divisor, returns the remainder.
  static uint32_t divide_small(Limbs& a, uint32_t divisor);
  static void trim(Limbs& limbs);
  void normalise();

  bool negative_ = false;
  Limbs limbs_;
};

}  // namespace kazeia::agent
