#pragma once
// Spatial window attributes shared by Conv, ConvTranspose and the pooling ops (kernel_shape,
// strides, dilations, pads, auto_pad, ceil_mode), their validation, and the output-extent
// arithmetic of the ONNX spec. Internal to ops/nn_*.cc.

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/tensor_desc.h"
#include "kernels/ref/pool.h"
#include "ops/op_def.h"

namespace kiln::ops {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

struct WindowAttrs {
  std::vector<int64_t> kernel;     // K1..Kk
  std::vector<int64_t> strides;    // default 1
  std::vector<int64_t> dilations;  // default 1
  std::vector<int64_t> pads;       // 2k: begins then ends; meaningful for kNotSet only
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;

  size_t rank() const { return kernel.size(); }
  int64_t dilated_kernel(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
};

// Reads strides, dilations, pads, auto_pad and ceil_mode (when `with_ceil_mode`) for the spatial
// rank of `w.kernel`, which the caller has set, and validates them (lengths, positivity, values).
Status read_window_attrs(const NodeContext& ctx, WindowAttrs& w, bool with_ceil_mode);

// Reads the kernel_shape attribute into w.kernel, validating its length against `spatial` and each
// entry >= 1. Absent attribute: error when `required`, otherwise leaves w.kernel empty.
Status read_kernel_shape(const NodeContext& ctx, size_t spatial, bool required, WindowAttrs& w);

// Output extent along spatial dim d of Conv or a pooling op for input extent `in` (may be < 1: the
// caller reports it).
int64_t window_out_dim(const WindowAttrs& w, size_t d, int64_t in);
// The (begin, end) padding applied along spatial dim d for input extent `in` (resolves SAME_*).
std::pair<int64_t, int64_t> window_pads(const WindowAttrs& w, size_t d, int64_t in);

// [N, channels, O1..Ok] for input shape x = [N, C, D1..Dk]. Unknown input extents give unknown
// outputs, except that an extent that provably equals its input (SAME with stride 1, or a 1-wide
// unpadded window with stride 1) keeps the input's symbol. Error naming the dims when an output
// extent is < 1.
Result<ir::Shape> window_output_shape(const NodeContext& ctx, const ir::Shape& x,
                                      const ir::Dim& channels, const WindowAttrs& w);

// check_dims over the known dims of an inferred output shape (huge attribute or scale values must
// fail cleanly rather than exhaust memory), with an error naming the node.
Status check_output_shape(const NodeContext& ctx, DType dtype, const ir::Shape& shape);

// Concrete spatial dims of a static shape [N, C, D1..Dk].
std::vector<int64_t> spatial_dims(const Dims& dims);

// The pooling reference's parameters for X [N, C, D1..Dk], Y's dims and the window.
kernels::ref::PoolParams pool_params(const Dims& x, const Dims& y, const WindowAttrs& w);

// Reference kernels compute in float32 or float64: the compute dtype for a float tensor of dtype t
// (float16 -> float32).
DType compute_dtype_for(DType t);
// `t` converted to `dtype` (no copy when it already is).
Result<Tensor> as_dtype(const Tensor& t, DType dtype);
// Sets output i to `t` converted to the inferred dtype of that output.
Status set_output_as_inferred(RunContext& ctx, size_t i, const Tensor& t);

}  // namespace kiln::ops
