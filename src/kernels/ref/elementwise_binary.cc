#include "kernels/ref/elementwise_binary.h"

#include <cmath>
#include <limits>

#include "kernels/ref/elementwise_broadcast.h"
#include "kernels/ref/elementwise_util.h"

namespace kiln::kernels::ref {
namespace {

template <typename T>
T divide(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (b == T{0}) return T{0};
    if constexpr (std::is_signed_v<T>) {
      if (b == T{-1}) return wrap_neg(a);  // INT_MIN / -1 overflows
    }
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}

template <typename T>
T fmod_op(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (b == T{0}) return T{0};
    if constexpr (std::is_signed_v<T>) {
      if (b == T{-1}) return T{0};  // INT_MIN % -1 overflows
    }
    return static_cast<T>(a % b);
  } else {
    return std::fmod(a, b);
  }
}

template <typename T>
T add_op(T a, T b) {
  if constexpr (kIsInt<T>) {
    return wrap_add(a, b);
  } else {
    return a + b;
  }
}

// Python's %: the result has the sign of the divisor.
template <typename T>
T mod_op(T a, T b) {
  const T r = fmod_op(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != T{0} && ((r < T{0}) != (b < T{0}))) return add_op(r, b);
  }
  return r;
}

template <typename T>
T min_op(T a, T b) {
  if constexpr (!kIsInt<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return b < a ? b : a;
}

template <typename T>
T max_op(T a, T b) {
  if constexpr (!kIsInt<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? b : a;
}

template <typename T>
T shift(T a, T b, bool left) {
  if constexpr (std::is_unsigned_v<T>) {
    if (b >= std::numeric_limits<T>::digits) return T{0};
    return static_cast<T>(left ? a << b : a >> b);
  } else {
    return T{0};  // BitShift is defined for unsigned types only; ops/ rejects the rest
  }
}

// Integer power by squaring, wrapping on overflow. See the header for negative exponents.
template <typename T>
T int_pow(T base, int64_t e) {
  if (e < 0) {
    if (base == T{1}) return T{1};
    if constexpr (std::is_signed_v<T>) {
      if (base == T{-1}) return (e & 1) != 0 ? T{-1} : T{1};
    }
    return T{0};
  }
  T result{1};
  auto ue = static_cast<uint64_t>(e);
  while (ue != 0) {
    if ((ue & 1u) != 0) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    ue >>= 1;
  }
  return result;
}

template <typename T, typename Fn>
void run(const T* a, const Dims& ad, const T* b, const Dims& bd, T* y, const Dims& yd, Fn fn) {
  binary_broadcast(a, ad, b, bd, y, yd, fn);
}

}  // namespace

template <typename T>
void binary(BinaryOp op, const T* a, const Dims& ad, const T* b, const Dims& bd, T* y,
            const Dims& yd) {
  switch (op) {
    case BinaryOp::kAdd:
      return run(a, ad, b, bd, y, yd, add_op<T>);
    case BinaryOp::kSub:
      if constexpr (kIsInt<T>) return run(a, ad, b, bd, y, yd, wrap_sub<T>);
      return run(a, ad, b, bd, y, yd, [](T u, T v) { return static_cast<T>(u - v); });
    case BinaryOp::kMul:
      if constexpr (kIsInt<T>) return run(a, ad, b, bd, y, yd, wrap_mul<T>);
      return run(a, ad, b, bd, y, yd, [](T u, T v) { return static_cast<T>(u * v); });
    case BinaryOp::kDiv:
      return run(a, ad, b, bd, y, yd, divide<T>);
    case BinaryOp::kMod:
      return run(a, ad, b, bd, y, yd, mod_op<T>);
    case BinaryOp::kFmod:
      return run(a, ad, b, bd, y, yd, fmod_op<T>);
    case BinaryOp::kMin:
      return run(a, ad, b, bd, y, yd, min_op<T>);
    case BinaryOp::kMax:
      return run(a, ad, b, bd, y, yd, max_op<T>);
    case BinaryOp::kPRelu:
      return run(a, ad, b, bd, y, yd, [](T x, T slope) {
        if constexpr (kIsInt<T>) return x < T{0} ? wrap_mul(x, slope) : x;
        return x < T{0} ? static_cast<T>(x * slope) : x;
      });
    case BinaryOp::kBitShiftLeft:
      return run(a, ad, b, bd, y, yd, [](T u, T v) { return shift(u, v, true); });
    case BinaryOp::kBitShiftRight:
      return run(a, ad, b, bd, y, yd, [](T u, T v) { return shift(u, v, false); });
  }
}

template <typename T>
void variadic(VariadicOp op, std::span<const T* const> inputs, std::span<const Dims> dims, T* y,
              const Dims& yd) {
  if (inputs.empty()) return;
  for_each_broadcast<1>(
      yd, {&dims[0]}, [&](int64_t o, const std::array<int64_t, 1>& i) { y[o] = inputs[0][i[0]]; });
  for (size_t k = 1; k < inputs.size(); ++k) {
    const BinaryOp bop = op == VariadicOp::kMin   ? BinaryOp::kMin
                         : op == VariadicOp::kMax ? BinaryOp::kMax
                                                  : BinaryOp::kAdd;
    binary(bop, y, yd, inputs[k], dims[k], y, yd);  // y[o] depends only on y[o]: in place is safe
  }
  if constexpr (!kIsInt<T>) {
    if (op == VariadicOp::kMean) {
      const int64_t n = dims_numel(yd);
      const auto count = static_cast<T>(inputs.size());
      for (int64_t i = 0; i < n; ++i) y[i] /= count;
    }
  }
}

template <typename T>
void pow_float_exponent(const T* a, const Dims& ad, const double* b, const Dims& bd, T* y,
                        const Dims& yd) {
  binary_broadcast(a, ad, b, bd, y, yd, [](T base, double e) {
    return from_double<T>(std::pow(static_cast<double>(base), e));
  });
}

template <typename T>
void pow_int_exponent(const T* a, const Dims& ad, const int64_t* b, const Dims& bd, T* y,
                      const Dims& yd) {
  binary_broadcast(a, ad, b, bd, y, yd, [](T base, int64_t e) {
    if constexpr (kIsInt<T>) {
      return int_pow(base, e);
    } else {
      return static_cast<T>(std::pow(static_cast<double>(base), static_cast<double>(e)));
    }
  });
}

template <typename T>
void compare(CompareOp op, const T* a, const Dims& ad, const T* b, const Dims& bd, bool* y,
             const Dims& yd) {
  switch (op) {
    case CompareOp::kEqual:
      return binary_broadcast(a, ad, b, bd, y, yd, [](T u, T v) { return u == v; });
    case CompareOp::kLess:
      return binary_broadcast(a, ad, b, bd, y, yd, [](T u, T v) { return u < v; });
    case CompareOp::kGreater:
      return binary_broadcast(a, ad, b, bd, y, yd, [](T u, T v) { return u > v; });
    case CompareOp::kLessOrEqual:
      return binary_broadcast(a, ad, b, bd, y, yd, [](T u, T v) { return u <= v; });
    case CompareOp::kGreaterOrEqual:
      return binary_broadcast(a, ad, b, bd, y, yd, [](T u, T v) { return u >= v; });
  }
}

void logic(LogicOp op, const bool* a, const Dims& ad, const bool* b, const Dims& bd, bool* y,
           const Dims& yd) {
  switch (op) {
    case LogicOp::kAnd:
      return binary_broadcast(a, ad, b, bd, y, yd, [](bool u, bool v) { return u && v; });
    case LogicOp::kOr:
      return binary_broadcast(a, ad, b, bd, y, yd, [](bool u, bool v) { return u || v; });
    case LogicOp::kXor:
      return binary_broadcast(a, ad, b, bd, y, yd, [](bool u, bool v) { return u != v; });
  }
}

template <typename T>
void where(const bool* cond, const Dims& cd, const T* x, const Dims& xd, const T* other,
           const Dims& od, T* y, const Dims& yd) {
  for_each_broadcast<3>(yd, {&cd, &xd, &od}, [&](int64_t o, const std::array<int64_t, 3>& i) {
    y[o] = cond[i[0]] ? x[i[1]] : other[i[2]];
  });
}

#define KILN_INSTANTIATE_NUMERIC(T)                                                           \
  template void binary<T>(BinaryOp, const T*, const Dims&, const T*, const Dims&, T*,         \
                          const Dims&);                                                       \
  template void variadic<T>(VariadicOp, std::span<const T* const>, std::span<const Dims>, T*, \
                            const Dims&);                                                     \
  template void pow_float_exponent<T>(const T*, const Dims&, const double*, const Dims&, T*,  \
                                      const Dims&);                                           \
  template void pow_int_exponent<T>(const T*, const Dims&, const int64_t*, const Dims&, T*,   \
                                    const Dims&);                                             \
  template void compare<T>(CompareOp, const T*, const Dims&, const T*, const Dims&, bool*,    \
                           const Dims&);
KILN_INSTANTIATE_NUMERIC(float)
KILN_INSTANTIATE_NUMERIC(double)
KILN_INSTANTIATE_NUMERIC(int8_t)
KILN_INSTANTIATE_NUMERIC(int16_t)
KILN_INSTANTIATE_NUMERIC(int32_t)
KILN_INSTANTIATE_NUMERIC(int64_t)
KILN_INSTANTIATE_NUMERIC(uint8_t)
KILN_INSTANTIATE_NUMERIC(uint16_t)
KILN_INSTANTIATE_NUMERIC(uint32_t)
KILN_INSTANTIATE_NUMERIC(uint64_t)
#undef KILN_INSTANTIATE_NUMERIC

template void compare<bool>(CompareOp, const bool*, const Dims&, const bool*, const Dims&, bool*,
                            const Dims&);

#define KILN_INSTANTIATE_WHERE(T)                                                                \
  template void where<T>(const bool*, const Dims&, const T*, const Dims&, const T*, const Dims&, \
                         T*, const Dims&);
KILN_INSTANTIATE_WHERE(uint8_t)
KILN_INSTANTIATE_WHERE(uint16_t)
KILN_INSTANTIATE_WHERE(uint32_t)
KILN_INSTANTIATE_WHERE(uint64_t)
#undef KILN_INSTANTIATE_WHERE

}  // namespace kiln::kernels::ref
