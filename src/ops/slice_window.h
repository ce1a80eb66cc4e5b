#pragma once
// Slice's arithmetic for concrete dims, for kernels outside ops/ that run Slice (tactics): the same
// validation and clamping as the op's shape function and reference kernel (ops/shape_slice.cc).

#include <span>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "ops/op_def.h"

namespace kiln::ops {

// Per input axis: the first element, the step and the element count.
struct SliceWindow {
  std::vector<int64_t> starts;
  std::vector<int64_t> steps;
  Dims counts;
};

// Slice over input dims `x`. From opset 10 `values` holds inputs 1-4 (starts, ends, axes, steps),
// nullptr where absent (index 0 unused; shorter spans mean absent); before opset 10 the attributes
// are read. Errors (naming the node) for invalid or unknown values.
Result<SliceWindow> slice_window(const NodeContext& ctx, const Dims& x,
                                 std::span<const Tensor* const> values);

}  // namespace kiln::ops
