// Det (11): determinants of a batch of square matrices.
#include "kernels/ref/linalg.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

// X [*, M, M] -> Y [*].
Status infer_det(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  const ir::TensorDesc& x = ctx.input(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  if (x.rank() < 2) {
    return ctx.error("input X {} must have rank >= 2 ([*, M, M])", shape_text(x));
  }
  const ir::Dim& rows = x.dim(x.rank() - 2);
  const ir::Dim& cols = x.dim(x.rank() - 1);
  if (rows.is_known() && cols.is_known() && rows.value != cols.value) {
    return ctx.error("input X {} must hold square matrices, got {} x {}", shape_text(x), rows.value,
                     cols.value);
  }
  ir::Shape out(x.shape->begin(), x.shape->end() - 2);
  ctx.set_output(0, ir::TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_det(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Tensor x, cast_tensor(ctx.input(0), DType::kF64));
  const int64_t n = x.dim(x.rank() - 1);
  const Dims batch_dims(x.dims().begin(), x.dims().end() - 2);
  Tensor y(DType::kF64, batch_dims);
  kernels::ref::det<double>(dims_numel(batch_dims), n, x.data<double>(), y.data<double>());
  if (ctx.output_desc(0).dtype == DType::kF64) {
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, cast_tensor(y, ctx.output_desc(0).dtype));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_det_ops(OpRegistry& r) {
  r.add({.op_type = "Det",
         .since_versions = {11},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {},
         .infer = infer_det,
         .run = run_det});
}

}  // namespace kiln::ops
