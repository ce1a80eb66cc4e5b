// ScatterND and ScatterElements, with reductions none/add/mul (opset 16) and max/min (opset 18).
#include <cstring>

#include "kernels/ref/scatter.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops::shape_detail {
namespace {

using ir::Dim;
using ir::TensorDesc;
namespace ref = kernels::ref;

Result<ref::ScatterReduction> reduction(const NodeContext& ctx) {
  if (ctx.since_version() < 16 || ctx.node().op_type == "Scatter")
    return ref::ScatterReduction::kNone;
  const std::string r = ctx.attrs().get_string("reduction", "none");
  if (r == "none") return ref::ScatterReduction::kNone;
  if (r == "add") return ref::ScatterReduction::kAdd;
  if (r == "mul") return ref::ScatterReduction::kMul;
  if (r == "max" || r == "min") {
    if (ctx.since_version() < 18) return ctx.error("reduction '{}' needs opset 18 or later", r);
    return r == "max" ? ref::ScatterReduction::kMax : ref::ScatterReduction::kMin;
  }
  return ctx.error("unknown reduction '{}' (expected none, add, mul, max or min)", r);
}

// Common checks; output = data.
Status infer_scatter_common(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "indices"));
  if (!ctx.has_input(2)) return ctx.error("input 2 (updates) is required");
  if (ctx.input(2).dtype != ctx.input(0).dtype) {
    return ctx.error("updates {} must have the dtype of data {}", ctx.input(2).to_string(),
                     ctx.input(0).to_string());
  }
  KILN_RETURN_IF_ERROR(reduction(ctx).status());
  ctx.set_output(0, ctx.input(0));
  return Status::ok();
}

// Known dims of a and b must agree.
bool shapes_agree(std::span<const Dim> a, std::span<const Dim> b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].is_known() && b[k].is_known() && a[k].value != b[k].value) return false;
  }
  return true;
}

Status infer_scatter_nd(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(infer_scatter_common(ctx));
  const TensorDesc &x = ctx.input(0), &idx = ctx.input(1), &upd = ctx.input(2);
  if (!x.has_rank() || !idx.has_rank() || !upd.has_rank()) return Status::ok();
  if (idx.rank() < 1) return ctx.error("indices {} must have rank >= 1", idx.to_string());
  const Dim& last = idx.dim(idx.rank() - 1);
  if (!last.is_known()) return Status::ok();
  const int64_t m = last.value;
  if (m < 1 || m > x.rank()) {
    return ctx.error("the last dim of indices {} must be in [1, {}] for data {}", idx.to_string(),
                     x.rank(), x.to_string());
  }
  ir::Shape expected(idx.shape->begin(), idx.shape->end() - 1);
  expected.insert(expected.end(), x.shape->begin() + m, x.shape->end());
  if (!shapes_agree(expected, *upd.shape)) {
    return ctx.error("updates {} must have shape {} for data {} and indices {}", upd.to_string(),
                     shape_text(expected), x.to_string(), idx.to_string());
  }
  return Status::ok();
}

Status run_scatter_nd(RunContext& ctx) {
  const Tensor &x = ctx.input(0), &idx_t = ctx.input(1), &upd = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(ref::ScatterReduction red, reduction(ctx));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, normalized_nd_indices(ctx, idx_t, x.dims(), 0));
  Tensor& y = ctx.allocate_output(0);
  if (x.nbytes() > 0) std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
  ref::scatter_nd(x.dtype(), y.raw_data(), y.dims(), idx, idx_t.dims(), upd.raw_data(), red);
  return Status::ok();
}

Status infer_scatter_elements(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(infer_scatter_common(ctx));
  const TensorDesc &x = ctx.input(0), &idx = ctx.input(1), &upd = ctx.input(2);
  if (idx.has_rank() && upd.has_rank() && !shapes_agree(*idx.shape, *upd.shape)) {
    return ctx.error("updates {} must have the shape of indices {}", upd.to_string(),
                     idx.to_string());
  }
  if (!x.has_rank()) return Status::ok();
  if (x.rank() == 0) return ctx.error("data {} must have rank >= 1", x.to_string());
  if (idx.has_rank() && idx.rank() != x.rank()) {
    return ctx.error("indices {} must have the rank of data {}", idx.to_string(), x.to_string());
  }
  return normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()).status();
}

Status run_scatter_elements(RunContext& ctx) {
  const Tensor &x = ctx.input(0), &idx_t = ctx.input(1), &upd = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(ref::ScatterReduction red, reduction(ctx));
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (axis < 0) axis += x.rank();
  for (int k = 0; k < x.rank(); ++k) {
    if (k != axis && idx_t.dim(k) > x.dim(k)) {
      return ctx.error("indices {} exceed data {} on axis {}", idx_t.desc(), x.desc(), k);
    }
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_ints(ctx, idx_t, "indices"));
  const int64_t bound = x.dim(static_cast<int>(axis));
  for (int64_t& i : idx) {
    if (i < -bound || i >= bound) {
      return ctx.error("index {} is out of range for axis {} of data {} (valid: [{}, {}])", i, axis,
                       x.desc(), -bound, bound - 1);
    }
    if (i < 0) i += bound;
  }
  Tensor& y = ctx.allocate_output(0);
  if (x.nbytes() > 0) std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
  ref::scatter_elements(x.dtype(), y.raw_data(), y.dims(), idx, idx_t.dims(), upd.raw_data(), axis,
                        red);
  return Status::ok();
}

}  // namespace

void register_scatter_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "ScatterND",
         .since_versions = {11, 13, 16, 18},
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"reduction", AttrType::kString}},
         .infer = infer_scatter_nd,
         .run = run_scatter_nd});
  r.add({.op_type = "ScatterElements",
         .since_versions = {11, 13, 16, 18},
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"axis", AttrType::kInt}, {"reduction", AttrType::kString}},
         .infer = infer_scatter_elements,
         .run = run_scatter_elements});
  // The deprecated predecessor of ScatterElements (opsets 9-10): the same without reductions.
  r.add({.op_type = "Scatter",
         .since_versions = {9, 11},
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"axis", AttrType::kInt}},
         .infer = infer_scatter_elements,
         .run = run_scatter_elements});
}

}  // namespace kiln::ops::shape_detail
