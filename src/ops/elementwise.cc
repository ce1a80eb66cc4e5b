// Element-wise ops: registration entry point and the helpers their files share.
#include <algorithm>

#include "ops/elementwise_common.h"
#include "ops/families.h"

namespace kiln::ops {

void register_elementwise_ops(OpRegistry& r) {
  register_elementwise_unary_ops(r);
  register_elementwise_binary_ops(r);
  register_elementwise_misc_ops(r);
}

namespace elementwise {

Status check_input_dtype(const InferContext& ctx, size_t i, std::span<const DType> allowed,
                         std::string_view what) {
  if (!ctx.has_input(i)) return ctx.error("input {} ({}) is required", i, what);
  const DType t = ctx.input(i).dtype;
  if (std::find(allowed.begin(), allowed.end(), t) == allowed.end()) {
    return ctx.unsupported("input {} ({}) has dtype {}, which this op does not support", i, what,
                           dtype_name(t));
  }
  return Status::ok();
}

Status check_same_dtype(const InferContext& ctx, size_t first) {
  for (size_t i = first + 1; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).dtype != ctx.input(first).dtype) {
      return ctx.error("input {} has dtype {} but input {} has {}; they must match", i,
                       dtype_name(ctx.input(i).dtype), first, dtype_name(ctx.input(first).dtype));
    }
  }
  return Status::ok();
}

Status infer_broadcast(InferContext& ctx, DType dtype) {
  std::vector<ir::Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (!ctx.input(i).has_rank()) {
      ctx.set_output(0, ir::TensorDesc::unknown_shape(dtype));
      return Status::ok();
    }
    shapes.push_back(*ctx.input(i).shape);
  }
  KILN_ASSIGN_OR_RETURN(ir::Shape out, broadcast_shapes(ctx, shapes));
  ctx.set_output(0, ir::TensorDesc::of(dtype, std::move(out)));
  return Status::ok();
}

Result<Tensor> widen(const Tensor& t) {
  if (t.dtype() == DType::kF16) return cast_tensor(t, DType::kF32);
  return t;
}

Status set_result(RunContext& ctx, size_t i, const Tensor& y) {
  const DType want = ctx.output_desc(i).dtype;
  if (y.dtype() == want) {
    ctx.set_output(i, y);
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(Tensor narrowed, cast_tensor(y, want));
  ctx.set_output(i, std::move(narrowed));
  return Status::ok();
}

Dims output_dims(const RunContext& ctx, size_t i) { return ctx.output_desc(i).static_dims(); }

Status no_kernel(const RunContext& ctx, DType t) {
  return ctx.unsupported("no reference kernel for dtype {}", dtype_name(t));
}

}  // namespace elementwise
}  // namespace kiln::ops
