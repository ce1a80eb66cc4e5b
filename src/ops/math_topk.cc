// TopK (k an attribute at opset 1, an input from 10; largest/sorted from 11) and CumSum.
#include "kernels/ref/topk.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

// k when known: the attribute before opset 10, else the value of input 1 (nullopt when unknown).
Result<std::optional<int64_t>> topk_k(const NodeContext& ctx, const Tensor* k_value) {
  if (ctx.since_version() < 10) {
    if (!ctx.attrs().has("k")) return ctx.error("attribute k is required");
    return std::optional<int64_t>(ctx.attrs().get_int("k", 0));
  }
  if (k_value == nullptr) return std::optional<int64_t>();
  if (k_value->dtype() != DType::kI64 || k_value->numel() != 1 || k_value->rank() > 1) {
    return ctx.error("k must be an int64 tensor with one element, got {}", k_value->desc());
  }
  return std::optional<int64_t>(k_value->data<int64_t>()[0]);
}

Status infer_topk(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kNumericTypes));
  const ir::TensorDesc& x = ctx.input(0);
  if (ctx.since_version() >= 10) {
    KILN_RETURN_IF_ERROR(require_input(ctx, 1, "K"));
    const ir::TensorDesc& k = ctx.input(1);
    if (k.dtype != DType::kI64 || (k.has_rank() && k.rank() > 1)) {
      return ctx.error("K must be an int64 scalar or 1-D tensor, got {}", k.to_string());
    }
  }
  KILN_ASSIGN_OR_RETURN(const std::optional<int64_t> k, topk_k(ctx, ctx.input_value(1)));
  if (k && *k < 0) return ctx.error("k must be >= 0, got {}", *k);
  if (!x.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(x.dtype));
    ctx.set_output(1, ir::TensorDesc::unknown_shape(DType::kI64));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(const int64_t axis,
                        normalize_axis(ctx, ctx.attrs().get_int("axis", -1), x.rank()));
  const ir::Dim& dim = x.dim(static_cast<int>(axis));
  if (k && dim.is_known() && *k > dim.value) {
    return ctx.error("k = {} is larger than dim {} = {} of input {}", *k, axis, dim.value,
                     shape_text(x));
  }
  ir::Shape out = *x.shape;
  out[static_cast<size_t>(axis)] = k ? ir::Dim::known(*k) : ir::Dim::unknown();
  ctx.set_output(0, ir::TensorDesc::of(x.dtype, out));
  ctx.set_output(1, ir::TensorDesc::of(DType::kI64, out));
  return Status::ok();
}

Status run_topk(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const std::optional<int64_t> k,
                        topk_k(ctx, ctx.has_input(1) ? &ctx.input(1) : nullptr));
  KILN_ASSIGN_OR_RETURN(const int64_t axis,
                        normalize_axis(ctx, ctx.attrs().get_int("axis", -1), x.rank()));
  ref::TopKParams p;
  for (int d = 0; d < x.rank(); ++d) (d < axis ? p.outer : d == axis ? p.n : p.inner) *= x.dim(d);
  p.k = *k;
  p.largest = ctx.since_version() < 11 || ctx.attrs().get_int("largest", 1) != 0;
  Dims out_dims = x.dims();
  out_dims[static_cast<size_t>(axis)] = p.k;
  Tensor& values = ctx.allocate_output(0, x.dtype(), out_dims);
  Tensor& indices = ctx.allocate_output(1, DType::kI64, out_dims);
  if (!dispatch_numeric(x.dtype(), [&]<typename T>() {
        ref::topk<T>(p, x.data<T>(), values.data<T>(), indices.data<int64_t>());
      })) {
    return ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  }
  return Status::ok();
}

// --- CumSum
// ---------------------------------------------------------------------------------------

Result<int64_t> cumsum_axis(const NodeContext& ctx, const Tensor& axis, int64_t rank) {
  if (!(axis.dtype() == DType::kI64 || axis.dtype() == DType::kI32) || axis.numel() != 1 ||
      axis.rank() > 1) {
    return ctx.error("axis must be an int32/int64 scalar, got {}", axis.desc());
  }
  return normalize_axis(ctx, axis.value_as_int(0), rank);
}

Status infer_cumsum(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kNumericTypes));
  const ir::TensorDesc& x = ctx.input(0);
  if (x.has_rank() && ctx.input_value(1) != nullptr) {
    KILN_RETURN_IF_ERROR(cumsum_axis(ctx, *ctx.input_value(1), x.rank()).status());
  }
  ctx.set_output(0, x);
  return Status::ok();
}

Status run_cumsum(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis, cumsum_axis(ctx, ctx.input(1), x.rank()));
  ref::CumSumParams p;
  for (int d = 0; d < x.rank(); ++d) (d < axis ? p.outer : d == axis ? p.n : p.inner) *= x.dim(d);
  p.exclusive = ctx.attrs().get_int("exclusive", 0) != 0;
  p.reverse = ctx.attrs().get_int("reverse", 0) != 0;
  Tensor& y = ctx.allocate_output(0);
  if (!dispatch_numeric(x.dtype(),
                        [&]<typename T>() { ref::cumsum<T>(p, x.data<T>(), y.data<T>()); })) {
    return ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  }
  return Status::ok();
}

}  // namespace

void register_topk_ops(OpRegistry& r) {
  r.add({.op_type = "TopK",
         .since_versions = {1, 10, 11},
         .min_inputs = 1,
         .max_inputs = 2,
         .min_outputs = 2,
         .max_outputs = 2,
         .attrs = {{"axis", ir::AttrType::kInt},
                   {"k", ir::AttrType::kInt},
                   {"largest", ir::AttrType::kInt},
                   {"sorted", ir::AttrType::kInt}},
         .infer = infer_topk,
         .run = run_topk});
  r.add({.op_type = "CumSum",
         .since_versions = {11, 14},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"exclusive", ir::AttrType::kInt}, {"reverse", ir::AttrType::kInt}},
         .infer = infer_cumsum,
         .run = run_cumsum});
}

}  // namespace kiln::ops
