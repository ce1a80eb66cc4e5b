// Slice and Tile.
#include <algorithm>
#include <limits>

#include "kernels/ref/movement.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"
#include "ops/slice_window.h"

namespace kiln::ops::shape_detail {
namespace {

using ir::Dim;
using ir::TensorDesc;
namespace ref = kernels::ref;

// --- Slice
// -----------------------------------------------------------------------------------------

// Slice's per-axis parameters, as given (before clamping).
struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
  bool axes_known = true;    // axes (normalised) are valid
  bool values_known = true;  // starts/ends/steps are valid too
};

// Reads starts/ends/axes/steps from attributes (opset 1) or inputs (opset 10+). `values[i]` is
// input i's value or nullptr when unknown; `n_starts` the length of starts when known (-1 if not).
Result<SliceArgs> slice_args(const NodeContext& ctx, std::span<const Tensor* const> values,
                             int64_t rank, int64_t n_starts) {
  SliceArgs a;
  if (ctx.since_version() < 10) {
    if (!ctx.attrs().has("starts") || !ctx.attrs().has("ends")) {
      return ctx.error("attributes 'starts' and 'ends' are required");
    }
    a.starts = ctx.attrs().get_ints("starts");
    a.ends = ctx.attrs().get_ints("ends");
    a.axes = ctx.attrs().get_ints("axes");
    n_starts = ctx.attrs().has("axes") ? -2 : static_cast<int64_t>(a.starts.size());
  } else {
    const char* names[] = {"starts", "ends", "axes", "steps"};
    std::vector<int64_t>* fields[] = {&a.starts, &a.ends, &a.axes, &a.steps};
    for (size_t i = 1; i <= 4; ++i) {
      if (!ctx.has_input(i)) continue;
      if (values[i] == nullptr) {
        a.values_known = false;
        a.axes_known &= i != 3;
        continue;
      }
      if (values[i]->rank() != 1) {
        return ctx.error("{} must be 1-D, got {}", names[i - 1], values[i]->desc());
      }
      KILN_ASSIGN_OR_RETURN(*fields[i - 1], read_ints(ctx, *values[i], names[i - 1]));
    }
    if (values[1] != nullptr) n_starts = static_cast<int64_t>(a.starts.size());
    if (ctx.has_input(3)) n_starts = -2;  // axes given
  }
  if (n_starts == -1) a.axes_known = false;
  if (n_starts >= 0) {
    a.axes.clear();
    for (int64_t i = 0; i < n_starts; ++i) a.axes.push_back(i);
  }
  if (a.axes_known) {
    KILN_ASSIGN_OR_RETURN(a.axes, normalize_axes(ctx, a.axes, rank));
  }
  if (!a.values_known) return a;
  if (a.steps.empty()) a.steps.assign(a.axes.size(), 1);
  if (a.starts.size() != a.axes.size() || a.ends.size() != a.axes.size() ||
      a.steps.size() != a.axes.size()) {
    return ctx.error("starts {}, ends {}, axes {} and steps {} must have the same length",
                     ints_text(a.starts), ints_text(a.ends), ints_text(a.axes), ints_text(a.steps));
  }
  for (int64_t s : a.steps) {
    if (s == 0) return ctx.error("steps {} contains 0", ints_text(a.steps));
  }
  return a;
}

// Whether slicing a dim of unknown size keeps all of it: start 0, step 1, end at "infinity".
bool keeps_whole_dim(int64_t start, int64_t end, int64_t step) {
  return step == 1 && start == 0 && end >= std::numeric_limits<int32_t>::max();
}

Status infer_slice(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  if (ctx.since_version() >= 10) {
    KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "starts"));
    KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 2, "ends"));
    if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 3, "axes"));
    if (ctx.has_input(4)) KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 4, "steps"));
  }
  if (!x.has_rank()) {
    ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) values.push_back(ctx.input_value(i));
  values.resize(5, nullptr);
  int64_t n_starts = -1;
  if (ctx.since_version() >= 10) {
    const TensorDesc& s = ctx.input(1);
    if (s.has_rank() && s.rank() == 1 && s.dim(0).is_known()) n_starts = s.dim(0).value;
  }
  KILN_ASSIGN_OR_RETURN(SliceArgs args, slice_args(ctx, values, x.rank(), n_starts));
  if (!args.axes_known) {
    ctx.set_output(0, TensorDesc::of(x.dtype, unknown_dims(x.rank())));
    return Status::ok();
  }
  ir::Shape out = *x.shape;
  for (size_t i = 0; i < args.axes.size(); ++i) {
    Dim& d = out[static_cast<size_t>(args.axes[i])];
    if (!args.values_known) {
      d = Dim::unknown();
    } else if (d.is_known()) {
      d = Dim::known(clamp_range(args.starts[i], args.ends[i], args.steps[i], d.value).count);
    } else if (!keeps_whole_dim(args.starts[i], args.ends[i], args.steps[i])) {
      d = Dim::unknown();
    }
  }
  ctx.set_output(0, TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_slice(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<const Tensor*> values(5, nullptr);
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i)) values[i] = &ctx.input(i);
  }
  KILN_ASSIGN_OR_RETURN(const SliceWindow w, slice_window(ctx, x.dims(), values));
  Tensor& y = ctx.allocate_output(0);
  ref::slice(x.raw_data(), elem_size(x), x.dims(), w.starts, w.steps, y.dims(), y.raw_data());
  return Status::ok();
}

// --- Tile
// ------------------------------------------------------------------------------------------

Status infer_tile(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "repeats"));
  const TensorDesc& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(auto repeats, known_ints(ctx, 1, "repeats"));
  if (!x.has_rank()) {
    ctx.set_output(0, repeats ? TensorDesc::of(x.dtype, unknown_dims(int(repeats->size())))
                              : TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  if (!repeats) {
    ctx.set_output(0, TensorDesc::of(x.dtype, unknown_dims(x.rank())));
    return Status::ok();
  }
  if (static_cast<int>(repeats->size()) != x.rank()) {
    return ctx.error("repeats {} has {} entries but the input {} has rank {}", ints_text(*repeats),
                     repeats->size(), x.to_string(), x.rank());
  }
  ir::Shape out;
  for (int k = 0; k < x.rank(); ++k) {
    const int64_t r = (*repeats)[static_cast<size_t>(k)];
    if (r < 0) return ctx.error("repeats {} has a negative entry", ints_text(*repeats));
    const Dim& d = x.dim(k);
    if (d.is_known()) {
      int64_t n = 0;
      if (__builtin_mul_overflow(d.value, r, &n)) {
        return ctx.error("tiling {} by {} overflows", x.to_string(), ints_text(*repeats));
      }
      out.push_back(Dim::known(n));
    } else {
      out.push_back(r == 1 ? d : r == 0 ? Dim::known(0) : Dim::unknown());
    }
  }
  TensorDesc desc = TensorDesc::of(x.dtype, std::move(out));
  if (desc.is_static())
    KILN_RETURN_IF_ERROR(check_out_dims(ctx, desc.static_dims(), x.dtype, "output"));
  ctx.set_output(0, std::move(desc));
  return Status::ok();
}

Status run_tile(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, read_ints(ctx, ctx.input(1), "repeats"));
  Tensor& y = ctx.allocate_output(0);
  ref::tile(x.raw_data(), elem_size(x), x.dims(), repeats, y.raw_data());
  return Status::ok();
}

}  // namespace
}  // namespace kiln::ops::shape_detail

namespace kiln::ops {

Result<SliceWindow> slice_window(const NodeContext& ctx, const Dims& x,
                                 std::span<const Tensor* const> values) {
  std::vector<const Tensor*> padded(values.begin(), values.end());
  padded.resize(std::max<size_t>(padded.size(), 5), nullptr);
  KILN_ASSIGN_OR_RETURN(shape_detail::SliceArgs args,
                        shape_detail::slice_args(ctx, padded, static_cast<int64_t>(x.size()), -1));
  if (!args.values_known) return ctx.error("starts, ends, axes and steps must all be known");
  SliceWindow w;
  w.starts.assign(x.size(), 0);
  w.steps.assign(x.size(), 1);
  w.counts = x;
  for (size_t i = 0; i < args.axes.size(); ++i) {
    const auto a = static_cast<size_t>(args.axes[i]);
    const shape_detail::AxisRange r =
        shape_detail::clamp_range(args.starts[i], args.ends[i], args.steps[i], x[a]);
    w.starts[a] = r.start;
    w.steps[a] =
        r.count > 1 ? r.step : 1;  // a huge step that selects one element must not overflow
    w.counts[a] = r.count;
  }
  return w;
}

}  // namespace kiln::ops

namespace kiln::ops::shape_detail {

void register_slice_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add(
      {.op_type = "Slice",
       .since_versions = {1, 10, 11, 13},
       .min_inputs = 1,
       .max_inputs = 5,
       .attrs = {{"starts", AttrType::kInts}, {"ends", AttrType::kInts}, {"axes", AttrType::kInts}},
       .infer = infer_slice,
       .run = run_slice});
  r.add({.op_type = "Tile",
         .since_versions = {6, 13},
         .min_inputs = 2,
         .max_inputs = 2,
         .infer = infer_tile,
         .run = run_tile});
}

}  // namespace kiln::ops::shape_detail
