// Indexing ops: Gather, GatherElements, GatherND, NonZero, Compress. Every index is checked against
// its bound at run time (an error naming the index and the bound), never used to read out of
// bounds.
#include <algorithm>

#include "kernels/ref/movement.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops::shape_detail {
namespace {

using ir::Dim;
using ir::TensorDesc;
namespace ref = kernels::ref;

int64_t product(const Dims& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t k = from; k < to; ++k) n *= dims[k];
  return n;
}

// The indices' values with negatives counted from the end; error naming the first out of [-bound,
// bound).
Result<std::vector<int64_t>> normalized_indices(const NodeContext& ctx, const Tensor& t,
                                                int64_t bound, std::string_view where) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_ints(ctx, t, "indices"));
  for (int64_t& i : idx) {
    if (i < -bound || i >= bound) {
      return ctx.error("index {} is out of range for {} of size {} (valid: [{}, {}])", i, where,
                       bound, -bound, bound - 1);
    }
    if (i < 0) i += bound;
  }
  return idx;
}

// --- Gather
// ----------------------------------------------------------------------------------------

Status infer_gather(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "indices"));
  const TensorDesc& x = ctx.input(0);
  const TensorDesc& idx = ctx.input(1);
  if (!x.has_rank() || !idx.has_rank()) {
    ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  if (x.rank() == 0) return ctx.error("cannot gather from a scalar {}", x.to_string());
  KILN_ASSIGN_OR_RETURN(int64_t axis,
                        normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()));
  const Dim& ad = x.dim(static_cast<int>(axis));
  if (const Tensor* v = ctx.input_value(1); v != nullptr && ad.is_known()) {
    KILN_RETURN_IF_ERROR(
        normalized_indices(ctx, *v, ad.value, fmt::format("axis {} of {}", axis, x.to_string()))
            .status());
  }
  ir::Shape out(x.shape->begin(), x.shape->begin() + axis);
  out.insert(out.end(), idx.shape->begin(), idx.shape->end());
  out.insert(out.end(), x.shape->begin() + axis + 1, x.shape->end());
  ctx.set_output(0, TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_gather(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (axis < 0) axis += x.rank();
  const auto ax = static_cast<size_t>(axis);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx,
                        normalized_indices(ctx, ctx.input(1), x.dims()[ax],
                                           fmt::format("axis {} of data {}", axis, x.desc())));
  Tensor& y = ctx.allocate_output(0);
  ref::gather(x.raw_data(), elem_size(x), product(x.dims(), 0, ax), x.dims()[ax],
              product(x.dims(), ax + 1, x.dims().size()), idx, y.raw_data());
  return Status::ok();
}

// --- GatherElements
// --------------------------------------------------------------------------------

// data and indices (or updates) have the same rank; off the axis, indices dims fit in the data.
Status check_elements_shapes(const NodeContext& ctx, const Dims& data, const Dims& idx,
                             int64_t axis) {
  if (data.size() != idx.size()) {
    return ctx.error("indices {} must have the rank of data {}", dims_to_string(idx),
                     dims_to_string(data));
  }
  for (size_t k = 0; k < data.size(); ++k) {
    if (static_cast<int64_t>(k) != axis && idx[k] > data[k]) {
      return ctx.error("indices dims {} exceed data dims {} on axis {}", dims_to_string(idx),
                       dims_to_string(data), k);
    }
  }
  return Status::ok();
}

Status infer_gather_elements(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "indices"));
  const TensorDesc& x = ctx.input(0);
  const TensorDesc& idx = ctx.input(1);
  if (x.has_rank() && idx.has_rank()) {
    if (x.rank() != idx.rank() || x.rank() == 0) {
      return ctx.error("data {} and indices {} must have the same rank >= 1", x.to_string(),
                       idx.to_string());
    }
    KILN_RETURN_IF_ERROR(normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()).status());
  }
  ctx.set_output(0, TensorDesc{x.dtype, idx.shape});
  return Status::ok();
}

Status run_gather_elements(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx_t = ctx.input(1);
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (axis < 0) axis += x.rank();
  KILN_RETURN_IF_ERROR(check_elements_shapes(ctx, x.dims(), idx_t.dims(), axis));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx,
                        normalized_indices(ctx, idx_t, x.dim(static_cast<int>(axis)),
                                           fmt::format("axis {} of data {}", axis, x.desc())));
  Tensor& y = ctx.allocate_output(0);
  ref::gather_elements(x.raw_data(), elem_size(x), x.dims(), idx, idx_t.dims(), axis, y.raw_data());
  return Status::ok();
}

// --- GatherND
// --------------------------------------------------------------------------------------

Status infer_gather_nd(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  if (ctx.input(1).dtype != DType::kI64) {
    return ctx.error("indices must be int64, got {}", ctx.input(1).to_string());
  }
  const TensorDesc& x = ctx.input(0);
  const TensorDesc& idx = ctx.input(1);
  const int64_t b = ctx.since_version() >= 12 ? ctx.attrs().get_int("batch_dims", 0) : 0;
  if (!x.has_rank() || !idx.has_rank() || !idx.dim(idx.rank() - 1).is_known()) {
    ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  const int64_t r = x.rank(), q = idx.rank();
  if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q)) {
    return ctx.error(
        "batch_dims {} must be in [0, min(rank(data), rank(indices))) for data {} and "
        "indices {}",
        b, x.to_string(), idx.to_string());
  }
  const int64_t m = idx.dim(static_cast<int>(q - 1)).value;
  if (m < 1 || m > r - b) {
    return ctx.error("the last dim of indices {} must be in [1, {}] for data {} with batch_dims {}",
                     idx.to_string(), r - b, x.to_string(), b);
  }
  for (int k = 0; k < b; ++k) {
    if (x.dim(k).is_known() && idx.dim(k).is_known() && x.dim(k).value != idx.dim(k).value) {
      return ctx.error("batch dim {} differs between data {} and indices {}", k, x.to_string(),
                       idx.to_string());
    }
  }
  ir::Shape out(idx.shape->begin(), idx.shape->end() - 1);
  out.insert(out.end(), x.shape->begin() + b + m, x.shape->end());
  ctx.set_output(0, TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

}  // namespace

Result<std::vector<int64_t>> normalized_nd_indices(const NodeContext& ctx, const Tensor& idx_t,
                                                   const Dims& data, int64_t b) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_ints(ctx, idx_t, "indices"));
  const int64_t m = idx_t.dims().back();
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t bound = data[static_cast<size_t>(b) + i % static_cast<size_t>(m)];
    if (idx[i] < -bound || idx[i] >= bound) {
      return ctx.error("index {} is out of range for axis {} of data {} (valid: [{}, {}])", idx[i],
                       b + static_cast<int64_t>(i) % m, dims_to_string(data), -bound, bound - 1);
    }
    if (idx[i] < 0) idx[i] += bound;
  }
  return idx;
}

namespace {

Status run_gather_nd(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx_t = ctx.input(1);
  const int64_t b = ctx.since_version() >= 12 ? ctx.attrs().get_int("batch_dims", 0) : 0;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, normalized_nd_indices(ctx, idx_t, x.dims(), b));
  Tensor& y = ctx.allocate_output(0);
  ref::gather_nd(x.raw_data(), elem_size(x), x.dims(), idx, idx_t.dims(), b, y.raw_data());
  return Status::ok();
}

// --- NonZero / Compress
// ----------------------------------------------------------------------------

// Flat positions of the elements that are not zero (NaN counts as non-zero).
std::vector<int64_t> nonzero_positions(const Tensor& t) {
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.value_as_double(i) != 0.0) pos.push_back(i);
  }
  return pos;
}

Status infer_nonzero(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  ctx.set_output(
      0, TensorDesc::of(DType::kI64,
                        {x.has_rank() ? Dim::known(x.rank()) : Dim::unknown(), Dim::unknown()}));
  return Status::ok();
}

Status run_nonzero(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> pos = nonzero_positions(x);
  const auto n = static_cast<int64_t>(pos.size());
  Tensor& y = ctx.allocate_output(0, DType::kI64, {x.rank(), n});
  int64_t* out = y.data<int64_t>();
  for (int64_t j = 0; j < n; ++j) {
    int64_t flat = pos[static_cast<size_t>(j)];
    for (int k = x.rank(); k-- > 0;) {
      out[k * n + j] = flat % x.dim(k);
      flat /= x.dim(k);
    }
  }
  return Status::ok();
}

Status infer_compress(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  const TensorDesc& cond = ctx.input(1);
  if (cond.dtype != DType::kBool || (cond.has_rank() && cond.rank() != 1)) {
    return ctx.error("condition must be a 1-D bool tensor, got {}", cond.to_string());
  }
  if (!ctx.attrs().has("axis")) {
    ctx.set_output(0, TensorDesc::of(x.dtype, {Dim::unknown()}));
    return Status::ok();
  }
  if (!x.has_rank()) {
    ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis,
                        normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()));
  ir::Shape out = *x.shape;
  out[static_cast<size_t>(axis)] = Dim::unknown();
  ctx.set_output(0, TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_compress(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  const bool has_axis = ctx.attrs().has("axis");
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (axis < 0) axis += x.rank();
  const auto ax = static_cast<size_t>(axis);
  // Without an axis the data is flattened: view it as [1, numel, 1].
  const int64_t outer = has_axis ? product(x.dims(), 0, ax) : 1;
  const int64_t len = has_axis ? x.dims()[ax] : x.numel();
  const int64_t inner = has_axis ? product(x.dims(), ax + 1, x.dims().size()) : 1;
  if (cond.numel() > len) {
    return ctx.error("condition {} is longer than the {} selectable entries of {}", cond.desc(),
                     len, x.desc());
  }
  const std::vector<int64_t> keep = nonzero_positions(cond);
  Dims out_dims = {static_cast<int64_t>(keep.size())};
  if (has_axis) {
    out_dims = x.dims();
    out_dims[ax] = static_cast<int64_t>(keep.size());
  }
  Tensor& y = ctx.allocate_output(0, x.dtype(), out_dims);
  ref::gather(x.raw_data(), elem_size(x), outer, len, inner, keep, y.raw_data());
  return Status::ok();
}

}  // namespace

void register_index_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "Gather",
         .since_versions = {1, 11, 13},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"axis", AttrType::kInt}},
         .infer = infer_gather,
         .run = run_gather});
  r.add({.op_type = "GatherElements",
         .since_versions = {11, 13},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"axis", AttrType::kInt}},
         .infer = infer_gather_elements,
         .run = run_gather_elements});
  r.add({.op_type = "GatherND",
         .since_versions = {11, 12, 13},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"batch_dims", AttrType::kInt}},
         .infer = infer_gather_nd,
         .run = run_gather_nd});
  r.add({.op_type = "NonZero",
         .since_versions = {9, 13},
         .min_inputs = 1,
         .max_inputs = 1,
         .infer = infer_nonzero,
         .run = run_nonzero});
  r.add({.op_type = "Compress",
         .since_versions = {9, 11},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"axis", AttrType::kInt}},
         .infer = infer_compress,
         .run = run_compress});
}

}  // namespace kiln::ops::shape_detail
