// ReverseSequence and Unique: data movement driven by the values of an input.
#include <fmt/format.h>

#include "kernels/ref/sequence.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops::shape_detail {
namespace {

namespace ref = kernels::ref;

bool conflict(const ir::Dim& a, const ir::Dim& b) {
  return a.is_known() && b.is_known() && a.value != b.value;
}

// --- ReverseSequence
// ------------------------------------------------------------------------------

struct SequenceAxes {
  int64_t batch = 1;
  int64_t time = 0;
};

Result<SequenceAxes> sequence_axes(const NodeContext& ctx) {
  SequenceAxes a{ctx.attrs().get_int("batch_axis", 1), ctx.attrs().get_int("time_axis", 0)};
  const bool valid = (a.batch == 0 || a.batch == 1) && (a.time == 0 || a.time == 1);
  if (!valid || a.batch == a.time) {
    return ctx.error(
        "attributes 'batch_axis' ({}) and 'time_axis' ({}) must be 0 and 1 in some "
        "order",
        a.batch, a.time);
  }
  return a;
}

Status infer_reverse_sequence(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  KILN_ASSIGN_OR_RETURN(const SequenceAxes axes, sequence_axes(ctx));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& lens = ctx.input(1);
  if (lens.dtype != DType::kI64) {
    return ctx.error("sequence_lens has dtype {}, expected int64", dtype_name(lens.dtype));
  }
  if (x.has_rank() && x.rank() < 2) {
    return ctx.error("input {} must have rank >= 2", x.to_string());
  }
  if (lens.has_rank() && lens.rank() != 1) {
    return ctx.error("sequence_lens {} must be 1-D [batch_size]", lens.to_string());
  }
  if (x.has_rank() && lens.has_rank() &&
      conflict(lens.dim(0), x.dim(static_cast<int>(axes.batch)))) {
    return ctx.error("sequence_lens {} must have one entry per batch of input {} (batch_axis {})",
                     lens.to_string(), x.to_string(), axes.batch);
  }
  if (x.has_rank() && ctx.input_value(1) != nullptr) {
    const ir::Dim& t = x.dim(static_cast<int>(axes.time));
    const Tensor& v = *ctx.input_value(1);
    for (int64_t i = 0; i < v.numel(); ++i) {
      const int64_t len = v.data<int64_t>()[i];
      if (len < 0 || (t.is_known() && len > t.value)) {
        return ctx.error("sequence_lens[{}] = {} is outside [0, {}] (the time dim of input {})", i,
                         len, t.to_string(), x.to_string());
      }
    }
  }
  ctx.set_output(0, x);
  return Status::ok();
}

Status run_reverse_sequence(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const SequenceAxes axes, sequence_axes(ctx));
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.allocate_output(0);
  ref::ReverseSequenceParams p{x.dims(), axes.batch, axes.time};
  ref::reverse_sequence(p, elem_size(x), x.raw_data(), ctx.input(1).data<int64_t>(), y.raw_data());
  return Status::ok();
}

// --- Unique
// ---------------------------------------------------------------------------------------

Status infer_unique(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::Dim n = ir::Dim::unknown();  // the number of unique items depends on the values
  ir::TensorDesc y = ir::TensorDesc::of(x.dtype, {n});
  ir::Dim items = ir::Dim::unknown();
  if (ctx.attrs().has("axis")) {
    if (x.has_rank()) {
      KILN_ASSIGN_OR_RETURN(const int64_t axis,
                            normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()));
      items = x.dim(static_cast<int>(axis));
      ir::Shape s = *x.shape;
      s[static_cast<size_t>(axis)] = n;
      y = ir::TensorDesc::of(x.dtype, std::move(s));
    } else {
      y = ir::TensorDesc::unknown_shape(x.dtype);
    }
  } else if (x.has_rank()) {
    items = product_dim(*x.shape);
  }
  ctx.set_output(0, std::move(y));
  for (size_t i : {1, 3}) {
    if (ctx.has_output(i)) ctx.set_output(i, ir::TensorDesc::of(DType::kI64, {n}));
  }
  if (ctx.has_output(2)) ctx.set_output(2, ir::TensorDesc::of(DType::kI64, {items}));
  return Status::ok();
}

void write_ints(RunContext& ctx, size_t i, const std::vector<int64_t>& v) {
  if (!ctx.has_output(i)) return;
  Tensor& t = ctx.allocate_output(i, DType::kI64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
}

Status run_unique(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool with_axis = ctx.attrs().has("axis");
  int64_t axis = 0;
  if (with_axis) {
    KILN_ASSIGN_OR_RETURN(axis, normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()));
  }
  // x as [outer, items, inner]; without an axis every element is an item.
  int64_t outer = 1, items = x.numel(), inner = 1;
  if (with_axis) {
    items = x.dim(static_cast<int>(axis));
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = static_cast<int>(axis) + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  const bool sorted = ctx.attrs().get_int("sorted", 1) != 0;
  ref::UniqueResult r;
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    r = ref::unique<T>(x.data<T>(), outer, items, inner, sorted);
  });
  const auto n = static_cast<int64_t>(r.first.size());
  Dims y_dims{n};
  if (with_axis) {
    y_dims = x.dims();
    y_dims[static_cast<size_t>(axis)] = n;
  }
  Tensor& y = ctx.allocate_output(0, x.dtype(), y_dims);
  const size_t slice = static_cast<size_t>(inner) * elem_size(x);
  const auto* src = static_cast<const unsigned char*>(x.raw_data());
  auto* dst = static_cast<unsigned char*>(y.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t u = 0; u < n; ++u) {
      std::memcpy(dst + static_cast<size_t>(o * n + u) * slice,
                  src + static_cast<size_t>(o * items + r.first[static_cast<size_t>(u)]) * slice,
                  slice);
    }
  }
  write_ints(ctx, 1, r.first);
  write_ints(ctx, 2, r.inverse);
  write_ints(ctx, 3, r.counts);
  return Status::ok();
}

}  // namespace

void register_sequence_ops(OpRegistry& r) {
  r.add({.op_type = "ReverseSequence",
         .since_versions = {10},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"batch_axis", ir::AttrType::kInt}, {"time_axis", ir::AttrType::kInt}},
         .infer = infer_reverse_sequence,
         .run = run_reverse_sequence});
  r.add({.op_type = "Unique",
         .since_versions = {11},
         .min_inputs = 1,
         .max_inputs = 1,
         .min_outputs = 1,
         .max_outputs = 4,
         .attrs = {{"axis", ir::AttrType::kInt}, {"sorted", ir::AttrType::kInt}},
         .infer = infer_unique,
         .run = run_unique});
}

}  // namespace kiln::ops::shape_detail
