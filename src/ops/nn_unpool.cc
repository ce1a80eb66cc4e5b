// MaxUnpool and MeanVarianceNormalization: shape functions and reference bindings.
#include <fmt/format.h>

#include "kernels/ref/unpool_mvn.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

// --- MaxUnpool
// ------------------------------------------------------------------------------------

// The spatial output extent along d without output_shape: the input extent of the MaxPool that
// produced X, (in - 1) * stride + kernel - pads.
int64_t unpool_dim(const WindowAttrs& w, size_t d, int64_t in) {
  return (in - 1) * w.strides[d] + w.kernel[d] - w.pads[d] - w.pads[d + w.rank()];
}

// The spatial extents without output_shape: the input of the MaxPool that produced X, whose flat
// positions the indices are. Unknown (-1) where X's extent is unknown.
Result<std::vector<int64_t>> unpooled_extents(const NodeContext& ctx, const ir::TensorDesc& x,
                                              const WindowAttrs& w) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < w.rank(); ++d) {
    const ir::Dim& in = x.dim(static_cast<int>(d + 2));
    if (!in.is_known()) {
      out.push_back(-1);
      continue;
    }
    const int64_t o = unpool_dim(w, d, in.value);
    if (o < 1) {
      return ctx.error(
          "output spatial dim {} would be {} for X {}: kernel, strides and pads do not fit", d, o,
          x.to_string());
    }
    out.push_back(o);
  }
  return out;
}

// An explicit output_shape (values known): X's rank, batch and channels, and spatial extents no
// smaller than the unpooled ones (the unpooled result is placed at its origin).
Status check_explicit_shape(const NodeContext& ctx, const ir::TensorDesc& x,
                            const std::vector<int64_t>& unpooled,
                            const std::vector<int64_t>& shape) {
  const std::string text = shape_detail::ints_text(shape);
  if (shape.size() != static_cast<size_t>(x.rank())) {
    return ctx.error("output_shape {} has {} values but X {} has rank {}", text, shape.size(),
                     x.to_string(), x.rank());
  }
  for (int i = 0; i < 2; ++i) {
    const ir::Dim& d = x.dim(i);
    if (d.is_known() && d.value != shape[static_cast<size_t>(i)]) {
      return ctx.error("output_shape {} must keep X {}'s batch and channel dims", text,
                       x.to_string());
    }
  }
  for (size_t d = 0; d < unpooled.size(); ++d) {
    if (shape[d + 2] < unpooled[d]) {
      return ctx.error(
          "output_shape {} is smaller than the unpooled extents [{}] along spatial dim {}", text,
          fmt::join(unpooled, ","), d);
    }
  }
  return Status::ok();
}

Result<ir::Shape> unpool_output_shape(const InferContext& ctx, const ir::TensorDesc& x,
                                      const WindowAttrs& w) {
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> unpooled, unpooled_extents(ctx, x, w));
  ir::Shape out{x.dim(0), x.dim(1)};
  if (ctx.has_input(2)) {
    KILN_ASSIGN_OR_RETURN(auto values, shape_detail::known_ints(ctx, 2, "output_shape"));
    if (values) {
      KILN_RETURN_IF_ERROR(check_explicit_shape(ctx, x, unpooled, *values));
      return shape_detail::to_shape(*values);
    }
    for (size_t d = 0; d < w.rank(); ++d) out.push_back(ir::Dim::unknown());
    return out;
  }
  for (int64_t o : unpooled) out.push_back(o < 0 ? ir::Dim::unknown() : ir::Dim::known(o));
  return out;
}

Status infer_max_unpool(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& indices = ctx.input(1);
  if (indices.dtype != DType::kI64) {
    return ctx.error("indices I have dtype {}, expected int64", dtype_name(indices.dtype));
  }
  if (ctx.has_input(2))
    KILN_RETURN_IF_ERROR(shape_detail::check_index_dtype(ctx, 2, "output_shape"));
  if (x.has_rank() && indices.has_rank()) {
    bool same = x.rank() == indices.rank();
    for (int i = 0; same && i < x.rank(); ++i) same = !dims_conflict(x.dim(i), indices.dim(i));
    if (!same) {
      return ctx.error("indices I {} must have the shape of X {}", indices.to_string(),
                       x.to_string());
    }
  }
  if (!x.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  if (x.rank() < 3) {
    return ctx.error("input X {} must have rank >= 3 (N, C, spatial dims)", x.to_string());
  }
  WindowAttrs w;
  KILN_RETURN_IF_ERROR(read_kernel_shape(ctx, static_cast<size_t>(x.rank() - 2), true, w));
  KILN_RETURN_IF_ERROR(read_window_attrs(ctx, w, /*with_ceil_mode=*/false));
  KILN_ASSIGN_OR_RETURN(ir::Shape out, unpool_output_shape(ctx, x, w));
  KILN_RETURN_IF_ERROR(check_output_shape(ctx, x.dtype, out));
  ctx.set_output(0, ir::TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_max_unpool(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  WindowAttrs w;
  KILN_RETURN_IF_ERROR(read_kernel_shape(ctx, static_cast<size_t>(x.rank() - 2), true, w));
  KILN_RETURN_IF_ERROR(read_window_attrs(ctx, w, /*with_ceil_mode=*/false));
  Dims unpooled{x.dim(0), x.dim(1)};
  for (size_t d = 0; d < w.rank(); ++d)
    unpooled.push_back(unpool_dim(w, d, x.dim(static_cast<int>(d + 2))));
  const int64_t limit = dims_numel(unpooled);
  const int64_t* idx = indices.data<int64_t>();
  for (int64_t i = 0; i < indices.numel(); ++i) {
    if (idx[i] < 0 || idx[i] >= limit) {
      return ctx.error("indices I[{}] = {} is outside the unpooled tensor [{}] ({} elements)", i,
                       idx[i], fmt::join(unpooled, "x"), limit);
    }
  }
  Tensor& y = ctx.allocate_output(0);
  ref::max_unpool(unpooled, y.dims(), x.numel(), dtype_size(x.dtype()), x.raw_data(), idx,
                  y.raw_data());
  return Status::ok();
}

// --- MeanVarianceNormalization
// --------------------------------------------------------------------

Result<std::vector<int64_t>> mvn_axes(const NodeContext& ctx, int64_t rank) {
  const std::vector<int64_t> axes = ctx.attrs().get_ints("axes", {0, 2, 3});
  if (axes.empty()) return ctx.error("attribute 'axes' must not be empty");
  return shape_detail::normalize_axes(ctx, axes, rank);
}

Status infer_mvn(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  const ir::TensorDesc& x = ctx.input(0);
  if (x.has_rank()) KILN_RETURN_IF_ERROR(mvn_axes(ctx, x.rank()).status());
  ctx.set_output(0, x);
  return Status::ok();
}

Status run_mvn(RunContext& ctx) {
  const DType compute = compute_dtype_for(ctx.input(0).dtype());
  KILN_ASSIGN_OR_RETURN(const Tensor x, as_dtype(ctx.input(0), compute));
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, mvn_axes(ctx, x.rank()));
  std::vector<bool> reduce(static_cast<size_t>(x.rank()), false);
  for (int64_t a : axes) reduce[static_cast<size_t>(a)] = true;
  Tensor y(compute, x.dims());
  if (compute == DType::kF64) {
    ref::mean_variance_normalization<double>(x.dims(), reduce, x.data<double>(), y.data<double>());
  } else {
    ref::mean_variance_normalization<float>(x.dims(), reduce, x.data<float>(), y.data<float>());
  }
  return set_output_as_inferred(ctx, 0, y);
}

}  // namespace

void register_unpool_mvn_ops(OpRegistry& r) {
  r.add({.op_type = "MaxUnpool",
         .since_versions = {9, 11},
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = {{"kernel_shape", ir::AttrType::kInts},
                   {"pads", ir::AttrType::kInts},
                   {"strides", ir::AttrType::kInts}},
         .infer = infer_max_unpool,
         .run = run_max_unpool});
  r.add({.op_type = "MeanVarianceNormalization",
         .since_versions = {9, 13},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"axes", ir::AttrType::kInts}},
         .infer = infer_mvn,
         .run = run_mvn});
}

}  // namespace kiln::ops
