#pragma once
// Conv's attribute validation and shape arithmetic, shared by the float Conv (nn_conv.cc) and the
// integer convolutions ConvInteger and QLinearConv (nn_qconv.cc). Internal to ops/nn_*.cc.

#include "base/status.h"
#include "base/tensor.h"
#include "ir/tensor_desc.h"
#include "kernels/ref/conv.h"
#include "ops/op_def.h"

namespace kiln::ops {

// The output desc (of `dtype`) of a Conv over input x [N, C, D1..Dk] and weight w
// [M, C/group, K1..Kk] with the node's window attributes (auto_pad, dilations, group, kernel_shape,
// pads, strides), validating them, the channel counts and, when given, the bias b [M]. Unknown
// ranks give an unknown shape; unknown dims stay unknown or keep their symbol.
Result<ir::TensorDesc> conv_output_desc(const NodeContext& ctx, const ir::TensorDesc& x,
                                        const ir::TensorDesc& w, const ir::TensorDesc* b,
                                        DType dtype);

// The reference kernel's parameters for concrete x and w (dtypes are not looked at).
Result<kernels::ref::ConvParams> conv_kernel_params(const NodeContext& ctx, const Tensor& x,
                                                    const Tensor& w);

}  // namespace kiln::ops
