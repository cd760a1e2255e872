#include "agent/tools/big_int.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

namespace kazeia::agent {

BigInt::BigInt(int64_t value) {
  negative_ = value < 0;
  // Magnitude via unsigned arithmetic: -INT64_MIN does not fit in int64.
  uint64_t magnitude = negative_ ? ~static_cast<uint64_t>(value) + 1 : static_cast<uint64_t>(value);
  while (magnitude != 0) {
    limbs_.push_back(static_cast<uint32_t>(magnitude));
    magnitude >>= 32;
  }
}

std::optional<BigInt> BigInt::from_decimal(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  BigInt out;
  // Nine digits at a time: multiply by 10^9 and add, which fits in 64 bits.
  size_t i = 0;
  while (i < digits.size()) {
    size_t chunk = std::min<size_t>(9, digits.size() - i);
    uint32_t value = 0;
    uint32_t scale = 1;
    for (size_t k = 0; k < chunk; ++k) {
      char c = digits[i + k];
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + static_cast<uint32_t>(c - '0');
      scale *= 10;
    }
    uint64_t carry = value;
    for (uint32_t& limb : out.limbs_) {
      uint64_t t = static_cast<uint64_t>(limb) * scale + carry;
      limb = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    if (carry != 0) out.limbs_.push_back(static_cast<uint32_t>(carry));
    i += chunk;
  }
  out.normalise();
  return out;
}

uint64_t BigInt::bit_length() const {
  if (limbs_.empty()) return 0;
  return 32 * (limbs_.size() - 1) + (32 - static_cast<uint64_t>(std::countl_zero(limbs_.back())));
}

std::optional<int64_t> BigInt::to_int64() const {
  if (limbs_.size() > 2) return std::nullopt;
  uint64_t magnitude = 0;
  for (size_t i = limbs_.size(); i-- > 0;) magnitude = (magnitude << 32) | limbs_[i];
  if (!negative_) {
    if (magnitude > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(magnitude);
  }
  if (magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
  return static_cast<int64_t>(~magnitude + 1);
}

double BigInt::to_double() const {
  // strtod rounds correctly and overflows to HUGE_VAL; simpler than doing
  // the rounding on limbs, and the numbers are small.
  return std::strtod(to_string().c_str(), nullptr);
}

std::string BigInt::to_string() const {
  if (limbs_.empty()) return "0";
  Limbs work = limbs_;
  std::vector<uint32_t> chunks;  // base 10^9, least significant first
  while (!work.empty()) chunks.push_back(divide_small(work, 1000000000u));
  std::string out = negative_ ? "-" : "";
  out += std::to_string(chunks.back());
  for (size_t i = chunks.size() - 1; i-- > 0;) {
    std::string part = std::to_string(chunks[i]);
    out.append(9 - part.size(), '0');
    out += part;
  }
  return out;
}

BigInt BigInt::operator-() const {
  BigInt out = *this;
  if (!out.is_zero()) out.negative_ = !out.negative_;
  return out;
}

BigInt operator+(const BigInt& a, const BigInt& b) {
  BigInt out;
  if (a.negative_ == b.negative_) {
    out.limbs_ = BigInt::add_magnitude(a.limbs_, b.limbs_);
    out.negative_ = a.negative_;
  } else if (BigInt::compare_magnitude(a.limbs_, b.limbs_) >= 0) {
    out.limbs_ = BigInt::subtract_magnitude(a.limbs_, b.limbs_);
    out.negative_ = a.negative_;
  } else {
    out.limbs_ = BigInt::subtract_magnitude(b.limbs_, a.limbs_);
    out.negative_ = b.negative_;
  }
  out.normalise();
  return out;
}

BigInt operator-(const BigInt& a, const BigInt& b) { return a + (-b); }

BigInt operator*(const BigInt& a, const BigInt& b) {
  BigInt out;
  out.limbs_ = BigInt::multiply_magnitude(a.limbs_, b.limbs_);
  out.negative_ = a.negative_ != b.negative_;
  out.normalise();
  return out;
}

int compare(const BigInt& a, const BigInt& b) {
  if (a.sign() != b.sign()) return a.sign() < b.sign() ? -1 : 1;
  int c = BigInt::compare_magnitude(a.limbs_, b.limbs_);
  return a.negative_ ? -c : c;
}

void BigInt::divide(const BigInt& dividend, const BigInt& divisor, BigInt& quotient,
                    BigInt& remainder) {
  Limbs q;
  Limbs r;
  if (divisor.limbs_.size() == 1) {
    q = dividend.limbs_;
    uint32_t rem = divide_small(q, divisor.limbs_[0]);
    if (rem != 0) r.push_back(rem);
  } else if (compare_magnitude(dividend.limbs_, divisor.limbs_) >= 0) {
    // Shift-subtract long division, one bit of the dividend at a time.
    const uint64_t bits = dividend.bit_length();
    q.assign(dividend.limbs_.size(), 0);
    for (uint64_t i = bits; i-- > 0;) {
      // r = r * 2 + bit i of the dividend
      uint32_t carry = (dividend.limbs_[i / 32] >> (i % 32)) & 1u;
      for (uint32_t& limb : r) {
        uint32_t next = limb >> 31;
        limb = (limb << 1) | carry;
        carry = next;
      }
      if (carry != 0) r.push_back(carry);
      if (compare_magnitude(r, divisor.limbs_) >= 0) {
        r = subtract_magnitude(r, divisor.limbs_);
        q[i / 32] |= 1u << (i % 32);
      }
    }
  } else {
    r = dividend.limbs_;
  }
  quotient.limbs_ = std::move(q);
  quotient.negative_ = dividend.negative_ != divisor.negative_;
  quotient.normalise();
  remainder.limbs_ = std::move(r);
  remainder.negative_ = dividend.negative_;
  remainder.normalise();
}

int BigInt::compare_magnitude(const Limbs& a, const Limbs& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

BigInt::Limbs BigInt::add_magnitude(const Limbs& a, const Limbs& b) {
  const Limbs& longer = a.size() >= b.size() ? a : b;
  const Limbs& shorter = a.size() >= b.size() ? b : a;
  Limbs out(longer.size() + 1, 0);
  uint64_t carry = 0;
  for (size_t i = 0; i < longer.size(); ++i) {
    uint64_t t = static_cast<uint64_t>(longer[i]) + (i < shorter.size() ? shorter[i] : 0) + carry;
    out[i] = static_cast<uint32_t>(t);
    carry = t >> 32;
  }
  out[longer.size()] = static_cast<uint32_t>(carry);
  trim(out);
  return out;
}

BigInt::Limbs BigInt::subtract_magnitude(const Limbs& a, const Limbs& b) {
  Limbs out(a.size(), 0);
  int64_t borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t t = static_cast<int64_t>(a[i]) - (i < b.size() ? b[i] : 0) - borrow;
    borrow = t < 0 ? 1 : 0;
    out[i] = static_cast<uint32_t>(t + (borrow << 32));
  }
  trim(out);
  return out;
}

BigInt::Limbs BigInt::multiply_magnitude(const Limbs& a, const Limbs& b) {
  if (a.empty() || b.empty()) return {};
  Limbs out(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t carry = 0;
    for (size_t j = 0; j < b.size(); ++j) {
      // a*b + out + carry <= (2^32-1)^2 + 2*(2^32-1) = 2^64-1: no overflow.
      uint64_t t = static_cast<uint64_t>(a[i]) * b[j] + out[i + j] + carry;
      out[i + j] = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    out[i + b.size()] = static_cast<uint32_t>(carry);
  }
  trim(out);
  return out;
}

uint32_t BigInt::divide_small(Limbs& a, uint32_t divisor) {
  uint64_t rem = 0;
  for (size_t i = a.size(); i-- > 0;) {
    uint64_t cur = (rem << 32) | a[i];
    a[i] = static_cast<uint32_t>(cur / divisor);
    rem = cur % divisor;
  }
  trim(a);
  return static_cast<uint32_t>(rem);
}

void BigInt::trim(Limbs& limbs) {
  while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
}

void BigInt::normalise() {
  trim(limbs_);
  if (limbs_.empty()) negative_ = false;
}

}  // namespace kazeia::agent
