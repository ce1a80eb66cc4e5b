// MaxPool, AveragePool, LpPool and their global forms: shape functions and reference bindings.
#include <fmt/format.h>

#include "kernels/ref/pool.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

constexpr DType kMaxPoolTypes[] = {DType::kF32, DType::kF16, DType::kF64, DType::kI8, DType::kU8};

bool has_ceil_mode(const NodeContext& ctx, PoolKind kind) {
  switch (kind) {
    case PoolKind::kMax:
    case PoolKind::kAverage:
      return ctx.since_version() >= 10;
    case PoolKind::kLp:
      return ctx.since_version() >= 18;
  }
  return false;
}

Status check_pool_dtype(const InferContext& ctx, PoolKind kind) {
  if (kind == PoolKind::kMax && ctx.since_version() >= 12) return check_dtypes(ctx, kMaxPoolTypes);
  return check_dtypes(ctx, kFloatTypes);
}

// Validated window attributes for input shape x (rank known, >= 3).
Result<WindowAttrs> pool_window(const NodeContext& ctx, const ir::TensorDesc& x, PoolKind kind) {
  if (x.rank() < 3) {
    return ctx.error("input X {} must have rank >= 3 (N, C, spatial dims)", x.to_string());
  }
  WindowAttrs w;
  KILN_RETURN_IF_ERROR(read_kernel_shape(ctx, static_cast<size_t>(x.rank() - 2), true, w));
  KILN_RETURN_IF_ERROR(read_window_attrs(ctx, w, has_ceil_mode(ctx, kind)));
  // A pad as wide as the window gives windows with no input in them (ONNX Runtime refuses them
  // too); it also bounds the work a hostile kernel_shape can ask for.
  for (size_t d = 0; d < w.rank(); ++d) {
    const int64_t extent = w.dilated_kernel(d);
    if (w.pads[d] >= extent || w.pads[d + w.rank()] >= extent) {
      return ctx.error("attribute 'pads' = [{}] must be smaller than the window ({} on axis {})",
                       fmt::join(w.pads, ", "), extent, d);
    }
  }
  if (kind == PoolKind::kMax) {
    const int64_t order = ctx.attrs().get_int("storage_order", 0);
    if (order != 0 && order != 1) {
      return ctx.error("attribute 'storage_order' must be 0 or 1, got {}", order);
    }
  }
  if (kind == PoolKind::kLp && ctx.attrs().get_int("p", 2) < 1) {
    return ctx.error("attribute 'p' must be >= 1, got {}", ctx.attrs().get_int("p", 2));
  }
  return w;
}

Status infer_pool(InferContext& ctx, PoolKind kind) {
  KILN_RETURN_IF_ERROR(check_pool_dtype(ctx, kind));
  const ir::TensorDesc& x = ctx.input(0);
  if (kind == PoolKind::kMax && ctx.has_output(1) && ctx.since_version() < 8) {
    return ctx.error("output Indices exists only from opset 8");
  }
  ir::TensorDesc y = ir::TensorDesc::unknown_shape(x.dtype);
  if (x.has_rank()) {
    KILN_ASSIGN_OR_RETURN(WindowAttrs w, pool_window(ctx, x, kind));
    KILN_ASSIGN_OR_RETURN(ir::Shape shape, window_output_shape(ctx, *x.shape, x.dim(1), w));
    KILN_RETURN_IF_ERROR(check_output_shape(ctx, x.dtype, shape));
    y = ir::TensorDesc::of(x.dtype, std::move(shape));
  }
  if (ctx.has_output(1)) ctx.set_output(1, ir::TensorDesc{DType::kI64, y.shape});
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status infer_max_pool(InferContext& ctx) { return infer_pool(ctx, PoolKind::kMax); }
Status infer_average_pool(InferContext& ctx) { return infer_pool(ctx, PoolKind::kAverage); }
Status infer_lp_pool(InferContext& ctx) { return infer_pool(ctx, PoolKind::kLp); }

// Runs the kernel for `kind` on x (float or double, or int8/uint8 for max) into y.
void run_pool_kernel(const NodeContext& ctx, PoolKind kind, const kernels::ref::PoolParams& p,
                     const Tensor& x, Tensor& y, Tensor* indices) {
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    constexpr bool kFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
    constexpr bool kByte = std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>;
    if constexpr (kFloat || kByte) {
      if (kind == PoolKind::kMax) {
        const bool column_major = ctx.attrs().get_int("storage_order", 0) == 1;
        kernels::ref::max_pool<T>(p, x.data<T>(), y.data<T>(),
                                  indices ? indices->data<int64_t>() : nullptr, column_major);
      }
    }
    if constexpr (kFloat) {
      if (kind == PoolKind::kAverage) {
        const bool include_pad = ctx.attrs().get_int("count_include_pad", 0) != 0;
        kernels::ref::average_pool<T>(p, include_pad, x.data<T>(), y.data<T>());
      } else if (kind == PoolKind::kLp) {
        const auto norm_p = static_cast<double>(ctx.attrs().get_int("p", 2));
        kernels::ref::lp_pool<T>(p, norm_p, x.data<T>(), y.data<T>());
      }
    }
  });
}

// Runs pooling with window `w`; a null `w` is global pooling (the window is the whole input).
Status run_pool_with(RunContext& ctx, PoolKind kind, const WindowAttrs* w) {
  const Tensor& input = ctx.input(0);
  const DType in_dtype = input.dtype();
  const bool native = in_dtype == DType::kF32 || in_dtype == DType::kF64 ||
                      in_dtype == DType::kI8 || in_dtype == DType::kU8;
  const DType compute = native ? in_dtype : DType::kF32;
  KILN_ASSIGN_OR_RETURN(Tensor x, as_dtype(input, compute));
  const Dims y_dims = ctx.output_desc(0).static_dims();
  WindowAttrs global;
  if (w == nullptr) {
    global.kernel = spatial_dims(x.dims());
    global.strides.assign(global.kernel.size(), 1);
    global.dilations.assign(global.kernel.size(), 1);
    global.pads.assign(2 * global.kernel.size(), 0);
    w = &global;
  }
  const kernels::ref::PoolParams p = pool_params(x.dims(), y_dims, *w);
  Tensor y(compute, y_dims);
  Tensor* indices = ctx.has_output(1) ? &ctx.allocate_output(1) : nullptr;
  run_pool_kernel(ctx, kind, p, x, y, indices);
  return set_output_as_inferred(ctx, 0, y);
}

Status run_pool(RunContext& ctx, PoolKind kind) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(WindowAttrs w,
                        pool_window(ctx, ir::TensorDesc::of_dims(x.dtype(), x.dims()), kind));
  return run_pool_with(ctx, kind, &w);
}

Status run_max_pool(RunContext& ctx) { return run_pool(ctx, PoolKind::kMax); }
Status run_average_pool(RunContext& ctx) { return run_pool(ctx, PoolKind::kAverage); }
Status run_lp_pool(RunContext& ctx) { return run_pool(ctx, PoolKind::kLp); }

// --- global pooling
// -------------------------------------------------------------------------------

Status infer_global_pool(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  const ir::TensorDesc& x = ctx.input(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  if (x.rank() < 3) {
    return ctx.error("input X {} must have rank >= 3 (N, C, spatial dims)", x.to_string());
  }
  if (ctx.node().op_type == "GlobalLpPool" && ctx.attrs().get_int("p", 2) < 1) {
    return ctx.error("attribute 'p' must be >= 1, got {}", ctx.attrs().get_int("p", 2));
  }
  ir::Shape out{x.dim(0), x.dim(1)};
  out.resize(static_cast<size_t>(x.rank()), ir::Dim::known(1));
  ctx.set_output(0, ir::TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_global_average_pool(RunContext& ctx) {
  return run_pool_with(ctx, PoolKind::kAverage, nullptr);
}
Status run_global_max_pool(RunContext& ctx) { return run_pool_with(ctx, PoolKind::kMax, nullptr); }
Status run_global_lp_pool(RunContext& ctx) { return run_pool_with(ctx, PoolKind::kLp, nullptr); }

}  // namespace

void register_pool_ops(OpRegistry& r) {
  using ir::AttrType;
  const std::vector<AttrSpec> window_attrs = {
      {"auto_pad", AttrType::kString}, {"ceil_mode", AttrType::kInt},
      {"dilations", AttrType::kInts},  {"kernel_shape", AttrType::kInts},
      {"pads", AttrType::kInts},       {"strides", AttrType::kInts}};
  auto with = [&](std::vector<AttrSpec> extra) {
    extra.insert(extra.begin(), window_attrs.begin(), window_attrs.end());
    return extra;
  };
  r.add({.op_type = "MaxPool",
         .since_versions = {1, 8, 10, 11, 12},
         .min_inputs = 1,
         .max_inputs = 1,
         .max_outputs = 2,
         .attrs = with({{"storage_order", AttrType::kInt}}),
         .infer = infer_max_pool,
         .run = run_max_pool});
  r.add({.op_type = "AveragePool",
         .since_versions = {1, 7, 10, 11, 19},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = with({{"count_include_pad", AttrType::kInt}}),
         .infer = infer_average_pool,
         .run = run_average_pool});
  r.add({.op_type = "LpPool",
         .since_versions = {2, 11, 18},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = with({{"p", AttrType::kInt}}),
         .infer = infer_lp_pool,
         .run = run_lp_pool});
  r.add({.op_type = "GlobalAveragePool",
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {},
         .infer = infer_global_pool,
         .run = run_global_average_pool});
  r.add({.op_type = "GlobalMaxPool",
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {},
         .infer = infer_global_pool,
         .run = run_global_max_pool});
  r.add({.op_type = "GlobalLpPool",
         .since_versions = {2},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"p", AttrType::kInt}},
         .infer = infer_global_pool,
         .run = run_global_lp_pool});
}

}  // namespace kiln::ops
