// static_for<N>(f): f(std::integral_constant<int, i>) for i = 0 .. N-1,
// unrolled at compile time. SIMD kernels index their register arrays only
// through it: GCC splits an array into registers only when every index is a
// constant from the start (a loop unrolled later is too late), and arrays
// left in memory cost a load and a store per use.
#pragma once

#include <utility>

namespace kazeia::kernels::x86 {
namespace {

template <int N, class F, int... Is>
[[gnu::always_inline]] inline void static_for_impl(F&& f, std::integer_sequence<int, Is...>) {
  (f(std::integral_constant<int, Is>{}), ...);
}
template <int N, class F>
[[gnu::always_inline]] inline void static_for(F&& f) {
  static_for_impl<N>(f, std::make_integer_sequence<int, N>{});
}

}  // namespace
}  // namespace kazeia::kernels::x86
