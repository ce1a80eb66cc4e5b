#pragma once
// Reference kernels for one-input element-wise ops (math functions, activations, Clip, IsNaN,
// IsInf, Not). Float16 is not handled here: callers widen it to float32 and narrow the result.
//
// Every function is instantiated for float, double and the eight integer types. Float ops compute
// in the element type. On integer types, Abs/Neg/Sign/Relu are exact (Abs and Neg wrap around for
// the most negative value, as two's complement does); every other op computes in double and
// converts back, truncating toward zero and saturating at the type's range (NaN becomes 0).

#include <cstdint>

namespace kiln::kernels::ref {

enum class UnaryOp {
  // math
  kAbs,
  kNeg,
  kSign,
  kRelu,
  kSigmoid,
  kTanh,
  kErf,
  kExp,
  kLog,
  kReciprocal,
  kSqrt,
  kFloor,
  kCeil,
  kRound,  // half to even
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  // activations (parameters in UnaryParams)
  kSoftplus,
  kSoftsign,
  kElu,              // x < 0 ? alpha * (exp(x) - 1) : x
  kSelu,             // x <= 0 ? gamma * (alpha * exp(x) - alpha) : gamma * x
  kCelu,             // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  kThresholdedRelu,  // x > alpha ? x : 0
  kMish,             // x * tanh(softplus(x))
  kHardSigmoid,      // max(0, min(1, alpha * x + beta)); NaN stays NaN
  kHardSwish,        // x * max(0, min(1, x / 6 + 0.5))
  kLeakyRelu,        // x < 0 ? alpha * x : x
  kGelu,             // 0.5 * x * (1 + erf(x / sqrt(2)))
  kGeluTanh,         // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
  kShrink,  // x < -alpha ? x + beta : (x > alpha ? x - beta : 0); alpha = lambd, beta = bias
};

struct UnaryParams {
  UnaryOp op = UnaryOp::kRelu;
  float alpha = 0.0f;
  float beta = 0.0f;
  float gamma = 0.0f;
};

// y[i] = op(x[i]) for i < n.
template <typename T>
void unary(const UnaryParams& p, const T* x, T* y, int64_t n);

// y[i] = min(max(x[i], lo), hi); NaN stays NaN. When lo > hi every element becomes hi (numpy's
// clip).
template <typename T>
void clip(const T* x, T* y, int64_t n, T lo, T hi);

// Float types only (float, double).
template <typename T>
void is_nan(const T* x, bool* y, int64_t n);
template <typename T>
void is_inf(const T* x, bool* y, int64_t n, bool detect_positive, bool detect_negative);

void logical_not(const bool* x, bool* y, int64_t n);

}  // namespace kiln::kernels::ref
