#pragma once
// Shared by the element-wise op files (elementwise_unary.cc, elementwise_binary.cc,
// elementwise_misc.cc): broadcast shape inference, dtype checks, float16 widening, dispatch.

#include <span>
#include <string_view>
#include <type_traits>

#include "base/tensor.h"
#include "ops/op_def.h"
#include "ops/shape_util.h"

namespace kiln::ops {

void register_elementwise_unary_ops(OpRegistry& r);
void register_elementwise_binary_ops(OpRegistry& r);
void register_elementwise_misc_ops(OpRegistry& r);

namespace elementwise {

inline constexpr DType kSignedNumericTypes[] = {DType::kF32, DType::kF16, DType::kF64, DType::kI8,
                                                DType::kI16, DType::kI32, DType::kI64};
inline constexpr DType kUnsignedTypes[] = {DType::kU8, DType::kU16, DType::kU32, DType::kU64};
inline constexpr DType kBoolType[] = {DType::kBool};

// Float types, or every numeric type when `numeric`.
inline std::span<const DType> float_or_numeric(bool numeric) {
  return numeric ? std::span<const DType>(kNumericTypes) : std::span<const DType>(kFloatTypes);
}

// Input i must be present and have one of the `allowed` dtypes; `what` names the input in errors.
Status check_input_dtype(const InferContext& ctx, size_t i, std::span<const DType> allowed,
                         std::string_view what);
// Every present input in [first, num_inputs) must have input `first`'s dtype.
Status check_same_dtype(const InferContext& ctx, size_t first = 0);

// Sets output 0 to the numpy broadcast of every present input's shape (unknown rank if any input's
// rank is unknown), with dtype `dtype`.
Status infer_broadcast(InferContext& ctx, DType dtype);

// Broadcasting before opset 7 (ops/elementwise_legacy.cc): B broadcasts to A when attribute
// broadcast=1, its dims lined up with A's from attribute `axis`; PRelu 6 takes a per-channel slope.
bool uses_legacy_broadcast(const NodeContext& ctx);
// Output 0 = A's shape with `dtype`, after checking that B fits A.
Status infer_legacy_broadcast(InferContext& ctx, DType dtype);
// B reshaped to A's rank (1s around its dims) so that numpy broadcasting reads it as the legacy
// rules say.
Result<Tensor> legacy_operand_b(const NodeContext& ctx, const Tensor& a, const Tensor& b);

// Float16 tensors are computed in float32 by the reference kernels: returns a float32 copy of a
// float16 tensor and the tensor itself otherwise.
Result<Tensor> widen(const Tensor& t);
// Stores a kernel result as output i, converting it to the inferred dtype when the kernel computed
// in a wider one (float32 for float16).
Status set_result(RunContext& ctx, size_t i, const Tensor& y);
// The inferred (static) dims of output i.
Dims output_dims(const RunContext& ctx, size_t i);

// Calls fn.template operator()<T>() when `t` is one of the kernel element types (float32, float64
// and the eight integer types). Returns false for other dtypes.
template <typename Fn>
bool dispatch_kernel_type(DType t, Fn&& fn) {
  bool called = false;
  dispatch_dtype(t, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, Half> && !std::is_same_v<T, bool>) {
      fn.template operator()<T>();
      called = true;
    }
  });
  return called;
}

// Error for a dtype that reached a kernel without one (shape inference should have refused it).
Status no_kernel(const RunContext& ctx, DType t);

}  // namespace elementwise
}  // namespace kiln::ops
