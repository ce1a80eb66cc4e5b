// Softmax, LogSoftmax and Hardmax. Before opset 13 they flatten the input to 2-D at `axis` (default
// 1) and normalise each row; from 13 they normalise along the single dim `axis` (default -1).
#include "kernels/ref/softmax.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

bool flattens(const NodeContext& ctx) { return ctx.since_version() < 13; }

int64_t axis_attr(const NodeContext& ctx) {
  return ctx.attrs().get_int("axis", flattens(ctx) ? 1 : -1);
}

// Normalised axis. The flattening versions also accept axis == rank (every row has one element).
Result<int64_t> softmax_axis(const NodeContext& ctx, int64_t rank) {
  const int64_t axis = axis_attr(ctx);
  if (flattens(ctx) && (axis == rank || axis == -rank - 1)) return axis < 0 ? 0 : rank;
  return normalize_axis(ctx, axis, rank);
}

Status infer_softmax(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  const ir::TensorDesc& x = ctx.input(0);
  if (x.has_rank()) KILN_RETURN_IF_ERROR(softmax_axis(ctx, x.rank()).status());
  ctx.set_output(0, x);
  return Status::ok();
}

template <ref::SoftmaxKind kKind>
Status run_softmax(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.allocate_output(0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis, softmax_axis(ctx, x.rank()));
  ref::SoftmaxShape s;
  for (int64_t d = 0; d < x.rank(); ++d) {
    const int64_t size = x.dim(static_cast<int>(d));
    if (d < axis) {
      s.outer *= size;
    } else if (d == axis || flattens(ctx)) {
      s.n *= size;
    } else {
      s.inner *= size;
    }
  }
  if (!dispatch_float(x.dtype(),
                      [&]<typename T>() { ref::softmax<T>(kKind, s, x.data<T>(), y.data<T>()); })) {
    return ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  }
  return Status::ok();
}

}  // namespace

void register_softmax_ops(OpRegistry& r) {
  const std::vector<AttrSpec> attrs = {{"axis", ir::AttrType::kInt}};
  r.add({.op_type = "Softmax",
         .since_versions = {1, 11, 13},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = attrs,
         .infer = infer_softmax,
         .run = run_softmax<ref::SoftmaxKind::kSoftmax>});
  r.add({.op_type = "LogSoftmax",
         .since_versions = {1, 11, 13},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = attrs,
         .infer = infer_softmax,
         .run = run_softmax<ref::SoftmaxKind::kLogSoftmax>});
  r.add({.op_type = "Hardmax",
         .since_versions = {1, 11, 13},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = attrs,
         .infer = infer_softmax,
         .run = run_softmax<ref::SoftmaxKind::kHardmax>});
}

}  // namespace kiln::ops
