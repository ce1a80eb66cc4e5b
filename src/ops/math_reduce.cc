// Reduce* (axes an attribute before opset 13 for ReduceSum / 18 for the others, an optional input
// after) and ArgMax / ArgMin.
#include <algorithm>
#include <optional>

#include "kernels/ref/reduce.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

struct ReduceOp {
  std::string_view name;
  ref::ReduceKind kind;
  int axes_input_since;  // opset at which `axes` moved from attribute to input
};

constexpr ReduceOp kReduceOps[] = {
    {"ReduceSum", ref::ReduceKind::kSum, 13},
    {"ReduceMean", ref::ReduceKind::kMean, 18},
    {"ReduceMax", ref::ReduceKind::kMax, 18},
    {"ReduceMin", ref::ReduceKind::kMin, 18},
    {"ReduceProd", ref::ReduceKind::kProd, 18},
    {"ReduceL1", ref::ReduceKind::kL1, 18},
    {"ReduceL2", ref::ReduceKind::kL2, 18},
    {"ReduceLogSum", ref::ReduceKind::kLogSum, 18},
    {"ReduceLogSumExp", ref::ReduceKind::kLogSumExp, 18},
    {"ReduceSumSquare", ref::ReduceKind::kSumSquare, 18},
};

const ReduceOp& reduce_op(const NodeContext& ctx) {
  for (const ReduceOp& op : kReduceOps) {
    if (op.name == ctx.node().op_type) return op;
  }
  assert(false && "reduce_op: not a Reduce op");
  return kReduceOps[0];
}

bool axes_from_input(const NodeContext& ctx) {
  return ctx.since_version() >= reduce_op(ctx).axes_input_since;
}

// What the node reduces: nullopt axes when they come from an input whose value is not known yet.
struct ReducePlan {
  std::optional<std::vector<uint8_t>> reduced;  // per input dim
  bool noop = false;                            // empty axes with noop_with_empty_axes: identity
};

Result<ReducePlan> reduce_plan(const NodeContext& ctx, int64_t rank, const Tensor* axes_value,
                               bool axes_present) {
  std::vector<int64_t> axes;
  if (axes_from_input(ctx)) {
    if (axes_present && axes_value == nullptr) return ReducePlan{};
    if (axes_present) {
      KILN_ASSIGN_OR_RETURN(axes, int_values(ctx, *axes_value, "axes"));
    }
  } else {
    axes = ctx.attrs().get_ints("axes");
  }
  ReducePlan plan;
  if (axes.empty() && ctx.attrs().get_int("noop_with_empty_axes", 0) != 0) {
    plan.noop = true;
    plan.reduced = std::vector<uint8_t>(static_cast<size_t>(rank), 0);
    return plan;
  }
  std::vector<uint8_t> reduced(static_cast<size_t>(rank), axes.empty() ? 1 : 0);
  for (int64_t a : axes) {
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, a, rank, "axes entry"));
    if (reduced[static_cast<size_t>(axis)]) return ctx.error("axis {} appears twice in axes", a);
    reduced[static_cast<size_t>(axis)] = 1;
  }
  plan.reduced = std::move(reduced);
  return plan;
}

Status infer_reduce(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kNumericTypes));
  const ir::TensorDesc& x = ctx.input(0);
  const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  if (!axes_from_input(ctx) && ctx.num_inputs() > 1) {
    return ctx.error("takes one input at opset {} (axes is an attribute before opset {})",
                     ctx.since_version(), reduce_op(ctx).axes_input_since);
  }
  if (axes_from_input(ctx) && ctx.attrs().has("axes")) {
    return ctx.error("axes is an input from opset {}, not an attribute",
                     reduce_op(ctx).axes_input_since);
  }
  if (axes_from_input(ctx) && ctx.has_input(1) && ctx.input(1).dtype != DType::kI64) {
    return ctx.error("axes must be int64, got {}", dtype_name(ctx.input(1).dtype));
  }
  if (!x.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  const bool axes_present = axes_from_input(ctx) && ctx.has_input(1);
  KILN_ASSIGN_OR_RETURN(ReducePlan plan,
                        reduce_plan(ctx, x.rank(), ctx.input_value(1), axes_present));
  if (!plan.reduced) {
    ctx.set_output(0, keepdims ? ir::TensorDesc::of(x.dtype, ir::Shape(x.shape->size()))
                               : ir::TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  ir::Shape out;
  for (int d = 0; d < x.rank(); ++d) {
    if (!(*plan.reduced)[static_cast<size_t>(d)]) {
      out.push_back(x.dim(d));
    } else if (keepdims) {
      out.push_back(ir::Dim::known(1));
    }
  }
  ctx.set_output(0, ir::TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_reduce(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool axes_present = axes_from_input(ctx) && ctx.has_input(1);
  KILN_ASSIGN_OR_RETURN(
      ReducePlan plan,
      reduce_plan(ctx, x.rank(), axes_present ? &ctx.input(1) : nullptr, axes_present));
  if (plan.noop) {
    ctx.set_output(0, x);
    return Status::ok();
  }
  Tensor& y = ctx.allocate_output(0);
  const ref::ReduceShape shape{x.dims(), *plan.reduced};
  const ref::ReduceKind kind = reduce_op(ctx).kind;
  if (!dispatch_numeric(x.dtype(), [&]<typename T>() {
        ref::reduce<T>(kind, shape, x.data<T>(), y.data<T>());
      })) {
    return ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  }
  return Status::ok();
}

// --- ArgMax / ArgMin
// ------------------------------------------------------------------------------

Status infer_arg_reduce(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kNumericTypes));
  const ir::TensorDesc& x = ctx.input(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(DType::kI64));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(const int64_t axis,
                        normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()));
  const ir::Dim& reduced = x.dim(static_cast<int>(axis));
  if (reduced.is_known() && reduced.value == 0) {
    return ctx.error("cannot take the arg-extremum over axis {} of input {}, which has size 0",
                     axis, shape_text(x));
  }
  ir::Shape out = *x.shape;
  if (ctx.attrs().get_int("keepdims", 1) != 0) {
    out[static_cast<size_t>(axis)] = ir::Dim::known(1);
  } else {
    out.erase(out.begin() + axis);
  }
  ctx.set_output(0, ir::TensorDesc::of(DType::kI64, std::move(out)));
  return Status::ok();
}

Status run_arg_reduce(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.allocate_output(0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis,
                        normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()));
  ref::ArgReduceParams p;
  for (int d = 0; d < x.rank(); ++d) {
    (d < axis ? p.outer : d == axis ? p.n : p.inner) *= x.dim(d);
  }
  p.is_max = ctx.node().op_type == "ArgMax";
  p.select_last = ctx.attrs().get_int("select_last_index", 0) != 0;
  if (!dispatch_numeric(x.dtype(), [&]<typename T>() {
        ref::arg_reduce<T>(p, x.data<T>(), y.data<int64_t>());
      })) {
    return ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  }
  return Status::ok();
}

std::vector<int> reduce_versions(std::string_view name) {
  if (name == "ReduceSum") return {1, 11, 13};
  if (name == "ReduceMax" || name == "ReduceMin") return {1, 11, 12, 13, 18, 20};
  return {1, 11, 13, 18};
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  for (const ReduceOp& op : kReduceOps) {
    r.add({.op_type = op.name,
           .since_versions = reduce_versions(op.name),
           .min_inputs = 1,
           .max_inputs = 2,
           .attrs = {{"axes", ir::AttrType::kInts},
                     {"keepdims", ir::AttrType::kInt},
                     {"noop_with_empty_axes", ir::AttrType::kInt}},
           .infer = infer_reduce,
           .run = run_reduce});
  }
  for (std::string_view name : {"ArgMax", "ArgMin"}) {
    r.add({.op_type = name,
           .since_versions = {1, 11, 12, 13},
           .min_inputs = 1,
           .max_inputs = 1,
           .attrs = {{"axis", ir::AttrType::kInt},
                     {"keepdims", ir::AttrType::kInt},
                     {"select_last_index", ir::AttrType::kInt}},
           .infer = infer_arg_reduce,
           .run = run_arg_reduce});
  }
}

}  // namespace kiln::ops
