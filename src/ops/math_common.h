#pragma once
// Shared by the math op family files (math_*.cc): the per-file registration functions and small
// helpers for dtype dispatch and shape text.

#include <string>

#include "base/dtype.h"
#include "ops/op_def.h"
#include "ops/shape_util.h"

namespace kiln::ops {

void register_matmul_ops(
    OpRegistry& r);  // math_matmul.cc: MatMul, Gemm, MatMulInteger, QLinearMatMul
void register_einsum_ops(OpRegistry& r);   // math_einsum.cc: Einsum
void register_softmax_ops(OpRegistry& r);  // math_softmax.cc: Softmax, LogSoftmax, Hardmax
void register_reduce_ops(OpRegistry& r);   // math_reduce.cc: Reduce*, ArgMax, ArgMin
void register_topk_ops(OpRegistry& r);     // math_topk.cc: TopK, CumSum
void register_quant_ops(OpRegistry& r);    // math_quant.cc: QuantizeLinear, DequantizeLinear, ...
void register_nms_ops(OpRegistry& r);      // math_nms.cc: NonMaxSuppression

// Floating types only (float32, float16, float64). Returns false for any other dtype.
template <typename Fn>
bool dispatch_float(DType t, Fn&& fn) {
  switch (t) {
    case DType::kF32:
      fn.template operator()<float>();
      return true;
    case DType::kF16:
      fn.template operator()<Half>();
      return true;
    case DType::kF64:
      fn.template operator()<double>();
      return true;
    default:
      return false;
  }
}

// Like dispatch_dtype, restricted to the types the numeric reference kernels are instantiated for
// (every integer and floating type, not bool). Returns false for any other dtype.
template <typename Fn>
bool dispatch_numeric(DType t, Fn&& fn) {
  switch (t) {
    case DType::kI8:
      fn.template operator()<int8_t>();
      return true;
    case DType::kI16:
      fn.template operator()<int16_t>();
      return true;
    case DType::kI32:
      fn.template operator()<int32_t>();
      return true;
    case DType::kI64:
      fn.template operator()<int64_t>();
      return true;
    case DType::kU8:
      fn.template operator()<uint8_t>();
      return true;
    case DType::kU16:
      fn.template operator()<uint16_t>();
      return true;
    case DType::kU32:
      fn.template operator()<uint32_t>();
      return true;
    case DType::kU64:
      fn.template operator()<uint64_t>();
      return true;
    default:
      return dispatch_float(t, std::forward<Fn>(fn));
  }
}

// "[batch,seq,768]" (without the dtype) or "[?]" ... for messages.
std::string shape_text(const ir::TensorDesc& d);

// The rank-0/1 integer tensor `t` as int64s; error naming `what` when it is not an integer tensor.
Result<std::vector<int64_t>> int_values(const NodeContext& ctx, const Tensor& t,
                                        std::string_view what);

}  // namespace kiln::ops
