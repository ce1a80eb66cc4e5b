#include "kernels/ref/elementwise_unary.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/ref/elementwise_util.h"

namespace kiln::kernels::ref {
namespace {

// The type a float op computes in: the element type for float/double, double for integers.
template <typename T>
using Compute = std::conditional_t<std::is_floating_point_v<T>, T, double>;

// Applies f (Compute<T> -> Compute<T>) to every element.
template <typename T, typename F>
void map(const T* x, T* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = from_double<T>(f(static_cast<Compute<T>>(x[i])));
}

// Round half to even, independent of the floating-point environment's rounding mode.
template <typename A>
A round_half_even(A v) {
  const A r = std::round(v);  // half away from zero
  if (std::fabs(v - std::trunc(v)) == A(0.5)) return A(2) * std::round(v / A(2));
  return r;
}

template <typename A>
A softplus(A v) {  // log(1 + exp(v)) without overflow for large v
  return v > A(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}

template <typename A>
A sigmoid(A v) {  // 1 / (1 + exp(-v)), evaluated so that exp never overflows
  if (v >= A(0)) return A(1) / (A(1) + std::exp(-v));
  const A e = std::exp(v);
  return e / (A(1) + e);
}

// Abs, Neg, Sign and Relu on integers, exactly. Returns false for other ops.
template <typename T>
bool integer_exact(UnaryOp op, const T* x, T* y, int64_t n) {
  switch (op) {
    case UnaryOp::kAbs:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < T{0} ? wrap_neg(x[i]) : x[i];
      return true;
    case UnaryOp::kNeg:
      for (int64_t i = 0; i < n; ++i) y[i] = wrap_neg(x[i]);
      return true;
    case UnaryOp::kSign:
      for (int64_t i = 0; i < n; ++i)
        y[i] = static_cast<T>(x[i] > T{0} ? 1 : (x[i] < T{0} ? -1 : 0));
      return true;
    case UnaryOp::kRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < T{0} ? T{0} : x[i];
      return true;
    default:
      return false;
  }
}

template <typename T>
bool math_op(UnaryOp op, const T* x, T* y, int64_t n) {
  using A = Compute<T>;
  switch (op) {
    case UnaryOp::kAbs:
      map(x, y, n, [](A v) { return std::fabs(v); });
      return true;
    case UnaryOp::kNeg:
      map(x, y, n, [](A v) { return -v; });
      return true;
    case UnaryOp::kSign:
      map(x, y, n, [](A v) { return v > A(0) ? A(1) : (v < A(0) ? A(-1) : v); });
      return true;
    case UnaryOp::kRelu:
      map(x, y, n, [](A v) { return v < A(0) ? A(0) : v; });
      return true;
    case UnaryOp::kSigmoid:
      map(x, y, n, [](A v) { return sigmoid(v); });
      return true;
    case UnaryOp::kTanh:
      map(x, y, n, [](A v) { return std::tanh(v); });
      return true;
    case UnaryOp::kErf:
      map(x, y, n, [](A v) { return std::erf(v); });
      return true;
    case UnaryOp::kExp:
      map(x, y, n, [](A v) { return std::exp(v); });
      return true;
    case UnaryOp::kLog:
      map(x, y, n, [](A v) { return std::log(v); });
      return true;
    case UnaryOp::kReciprocal:
      map(x, y, n, [](A v) { return A(1) / v; });
      return true;
    case UnaryOp::kSqrt:
      map(x, y, n, [](A v) { return std::sqrt(v); });
      return true;
    case UnaryOp::kFloor:
      map(x, y, n, [](A v) { return std::floor(v); });
      return true;
    case UnaryOp::kCeil:
      map(x, y, n, [](A v) { return std::ceil(v); });
      return true;
    case UnaryOp::kRound:
      map(x, y, n, [](A v) { return round_half_even(v); });
      return true;
    case UnaryOp::kSin:
      map(x, y, n, [](A v) { return std::sin(v); });
      return true;
    case UnaryOp::kCos:
      map(x, y, n, [](A v) { return std::cos(v); });
      return true;
    case UnaryOp::kTan:
      map(x, y, n, [](A v) { return std::tan(v); });
      return true;
    case UnaryOp::kAsin:
      map(x, y, n, [](A v) { return std::asin(v); });
      return true;
    case UnaryOp::kAcos:
      map(x, y, n, [](A v) { return std::acos(v); });
      return true;
    case UnaryOp::kAtan:
      map(x, y, n, [](A v) { return std::atan(v); });
      return true;
    case UnaryOp::kSinh:
      map(x, y, n, [](A v) { return std::sinh(v); });
      return true;
    case UnaryOp::kCosh:
      map(x, y, n, [](A v) { return std::cosh(v); });
      return true;
    case UnaryOp::kAsinh:
      map(x, y, n, [](A v) { return std::asinh(v); });
      return true;
    case UnaryOp::kAcosh:
      map(x, y, n, [](A v) { return std::acosh(v); });
      return true;
    case UnaryOp::kAtanh:
      map(x, y, n, [](A v) { return std::atanh(v); });
      return true;
    default:
      return false;
  }
}

template <typename T>
void activation_op(const UnaryParams& p, const T* x, T* y, int64_t n) {
  using A = Compute<T>;
  const A alpha = static_cast<A>(p.alpha);
  const A beta = static_cast<A>(p.beta);
  const A gamma = static_cast<A>(p.gamma);
  switch (p.op) {
    case UnaryOp::kSoftplus:
      return map(x, y, n, [](A v) { return softplus(v); });
    case UnaryOp::kSoftsign:
      return map(x, y, n, [](A v) { return v / (A(1) + std::fabs(v)); });
    case UnaryOp::kElu:
      return map(x, y, n, [=](A v) { return v < A(0) ? alpha * std::expm1(v) : v; });
    case UnaryOp::kSelu:
      return map(x, y, n, [=](A v) {
        return v <= A(0) ? gamma * (alpha * std::exp(v) - alpha) : gamma * v;
      });
    case UnaryOp::kCelu:
      return map(x, y, n, [=](A v) {
        return std::max(A(0), v) + std::min(A(0), alpha * std::expm1(v / alpha));
      });
    case UnaryOp::kThresholdedRelu:
      return map(x, y, n, [=](A v) { return v > alpha ? v : A(0); });
    case UnaryOp::kMish:
      return map(x, y, n, [](A v) { return v * std::tanh(softplus(v)); });
    case UnaryOp::kHardSigmoid:
      return map(x, y, n, [=](A v) { return std::clamp(alpha * v + beta, A(0), A(1)); });
    case UnaryOp::kHardSwish:
      return map(x, y, n,
                 [](A v) { return v * std::max(A(0), std::min(A(1), v / A(6) + A(0.5))); });
    case UnaryOp::kLeakyRelu:
      return map(x, y, n, [=](A v) { return v < A(0) ? alpha * v : v; });
    case UnaryOp::kGelu:
      return map(x, y, n,
                 [](A v) { return A(0.5) * v * (A(1) + std::erf(v / std::numbers::sqrt2_v<A>)); });
    case UnaryOp::kGeluTanh:
      return map(x, y, n, [](A v) {
        const A k = std::sqrt(A(2) / std::numbers::pi_v<A>);
        return A(0.5) * v * (A(1) + std::tanh(k * (v + A(0.044715) * v * v * v)));
      });
    case UnaryOp::kShrink:
      return map(x, y, n,
                 [=](A v) { return v < -alpha ? v + beta : (v > alpha ? v - beta : A(0)); });
    default:
      return;  // math ops are handled by math_op
  }
}

}  // namespace

template <typename T>
void unary(const UnaryParams& p, const T* x, T* y, int64_t n) {
  if constexpr (kIsInt<T>) {
    if (integer_exact(p.op, x, y, n)) return;
  }
  if (math_op(p.op, x, y, n)) return;
  activation_op(p, x, y, n);
}

template <typename T>
void clip(const T* x, T* y, int64_t n, T lo, T hi) {
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i] < lo ? lo : x[i];  // NaN compares false and stays
    y[i] = hi < v ? hi : v;
  }
}

template <typename T>
void is_nan(const T* x, bool* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::isnan(x[i]);
}

template <typename T>
void is_inf(const T* x, bool* y, int64_t n, bool detect_positive, bool detect_negative) {
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::isinf(x[i]) && (x[i] > T(0) ? detect_positive : detect_negative);
  }
}

void logical_not(const bool* x, bool* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = !x[i];
}

#define KILN_INSTANTIATE_UNARY(T)                                    \
  template void unary<T>(const UnaryParams&, const T*, T*, int64_t); \
  template void clip<T>(const T*, T*, int64_t, T, T);
KILN_INSTANTIATE_UNARY(float)
KILN_INSTANTIATE_UNARY(double)
KILN_INSTANTIATE_UNARY(int8_t)
KILN_INSTANTIATE_UNARY(int16_t)
KILN_INSTANTIATE_UNARY(int32_t)
KILN_INSTANTIATE_UNARY(int64_t)
KILN_INSTANTIATE_UNARY(uint8_t)
KILN_INSTANTIATE_UNARY(uint16_t)
KILN_INSTANTIATE_UNARY(uint32_t)
KILN_INSTANTIATE_UNARY(uint64_t)
#undef KILN_INSTANTIATE_UNARY

template void is_nan<float>(const float*, bool*, int64_t);
template void is_nan<double>(const double*, bool*, int64_t);
template void is_inf<float>(const float*, bool*, int64_t, bool, bool);
template void is_inf<double>(const double*, bool*, int64_t, bool, bool);

}  // namespace kiln::kernels::ref
