// The sampling family: GridSample (16: 4-D input, modes bilinear | nearest | bicubic; 20: any
// number of spatial dims, modes renamed linear | nearest | cubic). The kernel is
// kernels/ref/grid_sample.{h,cc}.
#include <algorithm>
#include <iterator>

#include "kernels/ref/grid_sample.h"
#include "ops/families.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;
using ir::AttrType;

Result<ref::GridSampleMode> mode_attr(const NodeContext& ctx) {
  const bool v20 = ctx.since_version() >= 20;
  const std::string mode = ctx.attrs().get_string("mode", v20 ? "linear" : "bilinear");
  // Opset 20 renamed the modes; kiln also accepts the opset-16 names there.
  if (mode == "bilinear" || (v20 && mode == "linear")) return ref::GridSampleMode::kLinear;
  if (mode == "nearest") return ref::GridSampleMode::kNearest;
  if (mode == "bicubic" || (v20 && mode == "cubic")) return ref::GridSampleMode::kCubic;
  return ctx.error("attribute mode is '{}'; expected {}", mode,
                   v20 ? "linear, nearest or cubic" : "bilinear, nearest or bicubic");
}

Result<ref::GridSamplePadding> padding_attr(const NodeContext& ctx) {
  const std::string padding = ctx.attrs().get_string("padding_mode", "zeros");
  if (padding == "zeros") return ref::GridSamplePadding::kZeros;
  if (padding == "border") return ref::GridSamplePadding::kBorder;
  if (padding == "reflection") return ref::GridSamplePadding::kReflection;
  return ctx.error("attribute padding_mode is '{}'; expected zeros, border or reflection", padding);
}

Status check_ranks(const InferContext& ctx, const ir::TensorDesc& x, const ir::TensorDesc& grid) {
  if (x.has_rank()) {
    if (ctx.since_version() < 20 && x.rank() != 4) {
      return ctx.error("input 0 (X) must be 4-D [N, C, H, W] at opset 16, got {}", x.to_string());
    }
    if (x.rank() < 3) {
      return ctx.error("input 0 (X) must have rank >= 3 [N, C, D1, ...], got {}", x.to_string());
    }
  }
  if (grid.has_rank() && ctx.since_version() < 20 && grid.rank() != 4) {
    return ctx.error("input 1 (grid) must be 4-D [N, H_out, W_out, 2] at opset 16, got {}",
                     grid.to_string());
  }
  if (grid.has_rank() && grid.rank() < 3) {
    return ctx.error("input 1 (grid) must have rank >= 3, got {}", grid.to_string());
  }
  if (!x.has_rank() || !grid.has_rank()) return Status::ok();
  const ir::Dim& last = grid.dim(grid.rank() - 1);
  if (grid.rank() != x.rank() || (last.is_known() && last.value != x.rank() - 2)) {
    return ctx.error("input 1 (grid) {} must be [N, out dims..., {}] for input 0 (X) {}",
                     grid.to_string(), x.rank() - 2, x.to_string());
  }
  const ir::Dim& xn = x.dim(0);
  const ir::Dim& gn = grid.dim(0);
  if (xn.is_known() && gn.is_known() && xn.value != gn.value) {
    return ctx.error("input 1 (grid) {} and input 0 (X) {} have different batch sizes",
                     grid.to_string(), x.to_string());
  }
  return Status::ok();
}

// X must have pixels to sample from when any output is asked for.
Status check_not_empty(const InferContext& ctx, const ir::TensorDesc& x, const ir::Shape& out) {
  const auto is_zero = [](const ir::Dim& d) { return d.is_known() && d.value == 0; };
  if (std::any_of(out.begin(), out.end(), is_zero)) return Status::ok();
  for (int i = 2; i < x.rank(); ++i) {
    if (is_zero(x.dim(i))) {
      return ctx.error("input 0 (X) {} has an empty spatial dim: there is nothing to sample",
                       x.to_string());
    }
  }
  return Status::ok();
}

Status infer_grid_sample(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(require_input(ctx, 1, "grid"));
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  const DType grid_type = ctx.input(1).dtype;
  if (std::find(std::begin(kFloatTypes), std::end(kFloatTypes), grid_type) ==
      std::end(kFloatTypes)) {
    return ctx.error("input 1 (grid) must be a float tensor, got {}", dtype_name(grid_type));
  }
  KILN_RETURN_IF_ERROR(mode_attr(ctx).status());
  KILN_RETURN_IF_ERROR(padding_attr(ctx).status());
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& grid = ctx.input(1);
  KILN_RETURN_IF_ERROR(check_ranks(ctx, x, grid));
  if (!x.has_rank() && !grid.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  const int rank = x.has_rank() ? x.rank() : grid.rank();
  ir::Shape out(static_cast<size_t>(rank));
  if (x.has_rank()) {
    out[0] = x.dim(0);
    out[1] = x.dim(1);
  }
  if (grid.has_rank()) {
    if (out[0] == ir::Dim::unknown()) out[0] = grid.dim(0);  // X's batch dim says nothing
    for (int i = 1; i + 1 < rank; ++i) out[static_cast<size_t>(i) + 1] = grid.dim(i);
  }
  if (x.has_rank()) KILN_RETURN_IF_ERROR(check_not_empty(ctx, x, out));
  ctx.set_output(0, ir::TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_grid_sample(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  ref::GridSampleParams p;
  KILN_ASSIGN_OR_RETURN(p.mode, mode_attr(ctx));
  KILN_ASSIGN_OR_RETURN(p.padding, padding_attr(ctx));
  p.align_corners = ctx.attrs().get_int("align_corners", 0) != 0;
  p.x_dims = x.dims();
  Tensor& y = ctx.allocate_output(0);
  p.out_dims.assign(y.dims().begin() + 2, y.dims().end());
  KILN_ASSIGN_OR_RETURN(const Tensor grid, cast_tensor(ctx.input(1), DType::kF64));
  const bool ok = dispatch_float(x.dtype(), [&]<typename T>() {
    ref::grid_sample<T>(p, x.data<T>(), grid.data<double>(), y.data<T>());
  });
  if (!ok) return ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  return Status::ok();
}

}  // namespace

void register_sampling_ops(OpRegistry& r) {
  r.add({.op_type = "GridSample",
         .since_versions = {16, 20},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"align_corners", AttrType::kInt},
                   {"mode", AttrType::kString},
                   {"padding_mode", AttrType::kString}},
         .infer = infer_grid_sample,
         .run = run_grid_sample});
}

}  // namespace kiln::ops
