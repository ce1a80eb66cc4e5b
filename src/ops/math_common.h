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
void register_det_ops(OpRegistry& r);      // math_det.cc: Det

// "[batch,seq,768]" (without the dtype) or "[?]" ... for messages.
std::string shape_text(const ir::TensorDesc& d);

// The rank-0/1 integer tensor `t` as int64s; error naming `what` when it is not an integer tensor.
Result<std::vector<int64_t>> int_values(const NodeContext& ctx, const Tensor& t,
                                        std::string_view what);

}  // namespace kiln::ops
