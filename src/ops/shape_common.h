#pragma once
// Helpers shared by the shape family's files (ops/shape_*.cc): reading shape-like integer inputs,
// symbolic dim arithmetic and validation that names the node.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/tensor_desc.h"
#include "ops/op_def.h"

namespace kiln::ops::shape_detail {

// The values of an int32/int64 tensor (a shape, axes, pads, indices); error for other dtypes.
Result<std::vector<int64_t>> read_ints(const NodeContext& ctx, const Tensor& t,
                                       std::string_view what);
// Input i's integer values when known (always at run time); nullopt when absent or unknown.
Result<std::optional<std::vector<int64_t>>> known_ints(const InferContext& ctx, size_t i,
                                                       std::string_view what);
// Like read_ints for an input that must be a scalar or a 1-element tensor.
Result<int64_t> read_scalar_int(const NodeContext& ctx, const Tensor& t, std::string_view what);

// One axis of a Slice: the first index taken, the step, and how many indices.
struct AxisRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};
// The ONNX Slice rules: negative start/end count from the end; then clamp to [0, dim] for positive
// steps and [-1, dim-1] (start: [0, dim-1]) for negative steps.
AxisRange clamp_range(int64_t start, int64_t end, int64_t step, int64_t dim);

// The [start, end) range of dims Shape reports for an input of `rank` (attributes from opset 15),
// clamped per the spec.
std::pair<int64_t, int64_t> shape_range(const NodeContext& ctx, int64_t rank);

ir::Shape to_shape(std::span<const int64_t> dims);
// A shape of `rank` unknown dims.
ir::Shape unknown_dims(int rank);
// "[batch,3,224]"
std::string shape_text(const ir::Shape& s);
std::string ints_text(std::span<const int64_t> v);
// "[batch,192,-1]"
std::string sym_ints_text(const ir::SymInts& v);
// A traced shape input (Expand's, ConstantOfShape's) as output dims; a negative number is an error
// naming the shape.
Result<ir::Shape> traced_dims(const NodeContext& ctx, const ir::SymInts& shape);

// The product of dims: a number when all are known, the symbol when exactly one symbolic dim is
// multiplied by 1s, unknown otherwise.
ir::Dim product_dim(std::span<const ir::Dim> dims);

// Output dims computed from values must be non-negative and allocatable.
Status check_out_dims(const NodeContext& ctx, std::span<const int64_t> dims, DType dtype,
                      std::string_view what);

// Input i exists and has a dtype that movement kernels handle (any with a C++ type).
Status check_movable(const InferContext& ctx, size_t i);
// Input i must be an integer tensor of one of these dtypes (int32/int64 for shapes, indices).
Status check_index_dtype(const InferContext& ctx, size_t i, std::string_view what);

// Normalises axes into [0, rank); errors on out-of-range or repeated axes.
Result<std::vector<int64_t>> normalize_axes(const NodeContext& ctx, std::span<const int64_t> axes,
                                            int64_t rank, std::string_view what = "axes");

// Byte size of the elements of t (kernels in kernels/ref/movement.h copy raw elements).
inline size_t elem_size(const Tensor& t) { return dtype_size(t.dtype()); }

// Validates and normalises the index tuples of GatherND/ScatterND (indices [..., m]) against data
// dims [b, b + m) (shape_index.cc).
Result<std::vector<int64_t>> normalized_nd_indices(const NodeContext& ctx, const Tensor& indices,
                                                   const Dims& data, int64_t b);

// The product of known dims, or nullopt when it overflows int64.
std::optional<int64_t> checked_product(std::span<const int64_t> dims);

// Registration of the family's parts; ops/shape.cc calls them all.
void register_reshape_ops(OpRegistry& r);   // shape_reshape.cc
void register_layout_ops(OpRegistry& r);    // shape_layout.cc
void register_slice_ops(OpRegistry& r);     // shape_slice.cc
void register_pad_ops(OpRegistry& r);       // shape_pad.cc
void register_index_ops(OpRegistry& r);     // shape_index.cc
void register_scatter_ops(OpRegistry& r);   // shape_scatter.cc
void register_constant_ops(OpRegistry& r);  // shape_constant.cc
void register_sequence_ops(OpRegistry& r);  // shape_sequence.cc: ReverseSequence, Unique

}  // namespace kiln::ops::shape_detail
