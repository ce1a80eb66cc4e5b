#pragma once
// Small numeric helpers shared by the math-family reference kernels (matmul, reduce, softmax, ...):
// the accumulator type of an element type and exact conversions to and from it.

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/dtype.h"
#include "base/half.h"

namespace kiln::kernels::ref {

// Floating types accumulate in double, signed integers in int64_t, unsigned ones in uint64_t
// (wrapping like the element type would), bool in int64_t.
template <typename T>
struct AccumulatorOf {
  using type = std::conditional_t<
      std::is_same_v<T, Half> || std::is_floating_point_v<T>, double,
      std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>, uint64_t, int64_t>>;
};
template <typename T>
using Acc = typename AccumulatorOf<T>::type;

template <typename T>
inline constexpr bool kIsFloat = std::is_same_v<T, Half> || std::is_floating_point_v<T>;

template <typename T>
Acc<T> to_acc(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<Acc<T>>(v);
  }
}

template <typename T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// Converts an accumulator (or any arithmetic value) back to T. Integers wrap like a C++ cast.
template <typename T, typename A>
T from_acc(A v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != A{0};
  } else {
    return static_cast<T>(v);
  }
}

// The largest / smallest value of T (infinities for floating types).
template <typename T>
T highest_value() {
  if constexpr (kIsFloat<T>) {
    return from_acc<T>(std::numeric_limits<double>::infinity());
  } else {
    return std::numeric_limits<T>::max();
  }
}
template <typename T>
T lowest_value() {
  if constexpr (kIsFloat<T>) {
    return from_acc<T>(-std::numeric_limits<double>::infinity());
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

// Rounds half to even (the default floating-point environment) and clamps to T's range: the
// quantization rule of QuantizeLinear and friends. NaN becomes 0.
template <typename T>
T round_saturate(double v) {
  if (std::isnan(v)) return T{0};
  const double r = std::nearbyint(v);
  if (r <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

// For each flat index into `out` dims, the flat index into `in` dims broadcast to them (numpy
// rules, right-aligned; `in` may have fewer dims). Meant for small index spaces such as matmul
// batch dims.
std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& out);

}  // namespace kiln::kernels::ref

// Explicitly instantiates a kernel template for every element type it supports, e.g.
//   KILN_REF_FOR_NUMERIC_TYPES(KILN_INSTANTIATE_MATMUL)
#define KILN_REF_FOR_FLOAT_TYPES(M) M(float) M(double) M(::kiln::Half)
#define KILN_REF_FOR_NUMERIC_TYPES(M) \
  KILN_REF_FOR_FLOAT_TYPES(M)         \
  M(int8_t) M(int16_t) M(int32_t) M(int64_t) M(uint8_t) M(uint16_t) M(uint32_t) M(uint64_t)
