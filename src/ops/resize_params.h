#pragma once
// Resize and Upsample resolved for concrete dims, for kernels outside ops/ that run them (tactics):
// the same attribute reading, validation and output-extent arithmetic as the op's shape function
// and reference kernel (ops/nn_resize.cc).

#include <span>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "kernels/ref/resize.h"
#include "ops/op_def.h"

namespace kiln::ops {

// The reference kernel's parameters (modes, dims, scales, roi) for input dims `x`. `values` holds
// the node's input tensors by index, nullptr where absent (index 0, the data, is not read); the
// scales/sizes/roi among them must be given. Errors name the node.
Result<kernels::ref::ResizeParams> resize_params(const NodeContext& ctx, const Dims& x,
                                                 std::span<const Tensor* const> values);

// Resize's attributes (kiln.ResizeNchw16c declares them too).
std::vector<AttrSpec> resize_attrs();

}  // namespace kiln::ops
