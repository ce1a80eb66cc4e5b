// Broadcasting as it was before opset 7: only B broadcasts, to A's shape, and only when attribute
// broadcast=1; B's dims then line up with A's starting at attribute `axis` (default:
// right-aligned). PRelu 6 applies a 1-D slope per channel (axis 1). Kernels implement numpy
// broadcasting, so the legacy rules are expressed by reshaping B to A's rank with 1s around its
// dims.
#include "ops/elementwise_common.h"

namespace kiln::ops::elementwise {
namespace {

// Where B's first dim lines up in A.
Result<int64_t> legacy_axis(const NodeContext& ctx, int64_t rank_a, int64_t rank_b) {
  if (rank_b > rank_a) {
    return ctx.error("input B has rank {}, higher than input A's rank {}", rank_b, rank_a);
  }
  if (ctx.node().op_type == "PRelu") return rank_b == 1 && rank_a >= 2 ? 1 : rank_a - rank_b;
  if (ctx.attrs().get_int("broadcast", 0) == 0 || !ctx.attrs().has("axis")) return rank_a - rank_b;
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (axis < 0) axis += rank_a;
  if (axis < 0 || axis + rank_b > rank_a) {
    return ctx.error("attribute axis {} does not fit B's rank {} into A's rank {}",
                     ctx.attrs().get_int("axis", 0), rank_b, rank_a);
  }
  return axis;
}

bool broadcast_allowed(const NodeContext& ctx) {
  return ctx.node().op_type == "PRelu" || ctx.attrs().get_int("broadcast", 0) != 0;
}

}  // namespace

bool uses_legacy_broadcast(const NodeContext& ctx) { return ctx.since_version() < 7; }

Status infer_legacy_broadcast(InferContext& ctx, DType dtype) {
  const ir::TensorDesc& a = ctx.input(0);
  const ir::TensorDesc& b = ctx.input(1);
  ctx.set_output(0, ir::TensorDesc{dtype, a.shape});
  if (!a.has_rank() || !b.has_rank()) return Status::ok();
  const bool broadcast = broadcast_allowed(ctx);
  if (!broadcast && a.rank() != b.rank()) {
    return ctx.error("inputs {} and {} differ in shape and attribute broadcast is 0", a.to_string(),
                     b.to_string());
  }
  KILN_ASSIGN_OR_RETURN(const int64_t axis, legacy_axis(ctx, a.rank(), b.rank()));
  for (int j = 0; j < b.rank(); ++j) {
    const ir::Dim& bd = b.dim(j);
    const ir::Dim& ad = a.dim(static_cast<int>(axis) + j);
    if (!bd.is_known() || !ad.is_known() || bd.value == ad.value) continue;
    if (!broadcast || bd.value != 1) {
      return ctx.error("input B {} does not broadcast to input A {} (axis {})", b.to_string(),
                       a.to_string(), axis);
    }
  }
  return Status::ok();
}

Result<Tensor> legacy_operand_b(const NodeContext& ctx, const Tensor& a, const Tensor& b) {
  KILN_ASSIGN_OR_RETURN(const int64_t axis, legacy_axis(ctx, a.rank(), b.rank()));
  Dims dims(static_cast<size_t>(a.rank()), 1);
  for (int j = 0; j < b.rank(); ++j) dims[static_cast<size_t>(axis + j)] = b.dim(j);
  return b.reshaped(std::move(dims));
}

}  // namespace kiln::ops::elementwise
