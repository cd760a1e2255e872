// Overflow-checked size arithmetic for parsing hostile input.
//
// Every size or offset derived from a file goes through these: a model file
// that claims 2^62 elements must give an error, not a wrapped-around
// allocation.
#pragma once

#include <cstdint>
#include <optional>

namespace kazeia {

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Rounds x up to a multiple of align (align > 0); nullopt on overflow.
inline std::optional<uint64_t> checked_align_up(uint64_t x, uint64_t align) {
  uint64_t rem = x % align;
  if (rem == 0) return x;
  return checked_add(x, align - rem);
}

}  // namespace kazeia
