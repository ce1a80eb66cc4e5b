#pragma once
// Well-defined integer arithmetic and conversions for the element-wise reference kernels. Models
// can feed any values, so nothing here may invoke C++ undefined behaviour: signed overflow wraps
// (two's complement, as the hardware does), out-of-range float -> int conversions saturate.

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln::kernels::ref {

template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// a + b, a - b, a * b modulo 2^bits. Computed in uint64_t (no promotion to int can overflow there);
// converting back to T is modular since C++20.
template <typename T>
T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T>
T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
template <typename T>
T wrap_neg(T a) {
  return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(a));
}

// double -> integer T: truncates toward zero, saturates at T's range, NaN -> 0.
template <typename T>
T saturate_cast(double v) {
  if (std::isnan(v)) return T{0};
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Converts a computed double back to T: float types round, integer types use saturate_cast.
template <typename T>
T from_double(double v) {
  if constexpr (kIsInt<T>) {
    return saturate_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace kiln::kernels::ref
