#pragma once
// Reference kernels for element-wise ops with two or more inputs, all with numpy broadcasting:
// inputs broadcast to `y_dims` (shape inference guarantees they do). Float16 is not handled here:
// callers widen it to float32 and narrow the result.
//
// Integer semantics (documented because C++ leaves these undefined and ONNX leaves them open):
//   Add/Sub/Mul wrap around (two's complement).
//   Div truncates toward zero; x / 0 = 0; INT_MIN / -1 = INT_MIN (wraps).
//   Mod (fmod=0) takes the sign of the divisor, as Python's %; Mod (fmod=1) the sign of the
//   dividend, as C's %; x mod 0 = 0 in both; INT_MIN mod -1 = 0. Pow with an integer exponent is
//   exact repeated multiplication that wraps; a negative exponent gives the truncated reciprocal (1
//   for base 1, +-1 for base -1, 0 otherwise, including base 0). Pow with a float exponent computes
//   in double and converts back truncating and saturating. BitShift by >= the bit width gives 0.
// Float Min/Max propagate NaN, like numpy's minimum/maximum.

#include <cstdint>
#include <span>

#include "base/tensor.h"

namespace kiln::kernels::ref {

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,   // sign of the divisor (integers only)
  kFmod,  // sign of the dividend
  kMin,
  kMax,
  kPRelu,  // a < 0 ? a * b : a  (b is the slope)
  kBitShiftLeft,
  kBitShiftRight,
};

// Instantiated for float, double and the eight integer types (BitShift: unsigned types only).
template <typename T>
void binary(BinaryOp op, const T* a, const Dims& a_dims, const T* b, const Dims& b_dims, T* y,
            const Dims& y_dims);

// Variadic Min/Max/Sum/Mean: y = op(inputs[0], inputs[1], ...), left to right. Mean divides the sum
// by the input count (float types only). Sum and Mean of integers wrap.
enum class VariadicOp { kMin, kMax, kSum, kMean };
template <typename T>
void variadic(VariadicOp op, std::span<const T* const> inputs, std::span<const Dims> dims, T* y,
              const Dims& y_dims);

// y = a ^ b. T: float, double and the eight integer types.
template <typename T>
void pow_float_exponent(const T* a, const Dims& a_dims, const double* b, const Dims& b_dims, T* y,
                        const Dims& y_dims);
template <typename T>
void pow_int_exponent(const T* a, const Dims& a_dims, const int64_t* b, const Dims& b_dims, T* y,
                      const Dims& y_dims);

enum class CompareOp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };
// T: float, double, the eight integer types and bool.
template <typename T>
void compare(CompareOp op, const T* a, const Dims& a_dims, const T* b, const Dims& b_dims, bool* y,
             const Dims& y_dims);

enum class LogicOp { kAnd, kOr, kXor };
void logic(LogicOp op, const bool* a, const Dims& a_dims, const bool* b, const Dims& b_dims,
           bool* y, const Dims& y_dims);

// y = cond ? x : other. T: uint8_t, uint16_t, uint32_t, uint64_t (elements are copied as bits, so
// any dtype of that size works).
template <typename T>
void where(const bool* cond, const Dims& cond_dims, const T* x, const Dims& x_dims, const T* other,
           const Dims& other_dims, T* y, const Dims& y_dims);

}  // namespace kiln::kernels::ref
