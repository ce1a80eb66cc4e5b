// Pad, DepthToSpace, SpaceToDepth and Trilu.
#include <algorithm>
#include <cstring>

#include "kernels/ref/movement.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops::shape_detail {
namespace {

using ir::Dim;
using ir::TensorDesc;
namespace ref = kernels::ref;

// --- Pad
// -------------------------------------------------------------------------------------------

Result<ref::PadMode> pad_mode(const NodeContext& ctx) {
  const std::string mode = ctx.attrs().get_string("mode", "constant");
  if (mode == "constant") return ref::PadMode::kConstant;
  if (mode == "reflect") return ref::PadMode::kReflect;
  if (mode == "edge") return ref::PadMode::kEdge;
  if (mode == "wrap") {
    if (ctx.since_version() < 19) return ctx.error("mode 'wrap' needs opset 19 or later");
    return ref::PadMode::kWrap;
  }
  return ctx.error("unknown mode '{}' (expected constant, reflect, edge or wrap)", mode);
}

// Per-axis begin/end pads over the full rank. `pads` and `axes` are the values of inputs 1 and 3
// (opset 11+; nullptr when unknown or absent) — the attribute before.
struct PadAmounts {
  Dims begin, end;
};

Result<std::optional<PadAmounts>> pad_amounts(const NodeContext& ctx, const Tensor* pads_t,
                                              const Tensor* axes_t, int64_t rank) {
  std::vector<int64_t> pads;
  if (ctx.since_version() < 11) {
    if (!ctx.attrs().has("pads")) return ctx.error("attribute 'pads' is required");
    pads = ctx.attrs().get_ints("pads");
  } else {
    if (pads_t == nullptr) return std::optional<PadAmounts>();
    KILN_ASSIGN_OR_RETURN(pads, read_ints(ctx, *pads_t, "pads"));
  }
  std::vector<int64_t> axes;
  if (ctx.since_version() >= 18 && ctx.has_input(3)) {
    if (axes_t == nullptr) return std::optional<PadAmounts>();
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> given, read_ints(ctx, *axes_t, "axes"));
    KILN_ASSIGN_OR_RETURN(axes, normalize_axes(ctx, given, rank));
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) {
    return ctx.error("pads {} must have 2 x {} entries (begin and end for each padded axis)",
                     ints_text(pads), axes.size());
  }
  PadAmounts p{Dims(static_cast<size_t>(rank), 0), Dims(static_cast<size_t>(rank), 0)};
  for (size_t i = 0; i < axes.size(); ++i) {
    p.begin[static_cast<size_t>(axes[i])] = pads[i];
    p.end[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
  }
  return std::optional<PadAmounts>(std::move(p));
}

Result<Dim> padded_dim(const NodeContext& ctx, const Dim& d, int64_t begin, int64_t end,
                       ref::PadMode mode, int axis) {
  if (!d.is_known()) return begin == 0 && end == 0 ? d : Dim::unknown();
  int64_t n = 0;
  if (__builtin_add_overflow(d.value, begin, &n) || __builtin_add_overflow(n, end, &n) || n < 0) {
    return ctx.error("pads {} and {} on axis {} of size {} give a negative or overflowing size",
                     begin, end, axis, d.value);
  }
  const int64_t cropped = d.value - std::max<int64_t>(-begin, 0) - std::max<int64_t>(-end, 0);
  if (cropped < 0) {
    return ctx.error("pads {} and {} crop more than the {} elements of axis {}", begin, end,
                     d.value, axis);
  }
  if (mode != ref::PadMode::kConstant && cropped == 0 && (begin > 0 || end > 0)) {
    return ctx.error("cannot pad axis {} in this mode: it has no elements to repeat", axis);
  }
  return Dim::known(n);
}

Status infer_pad(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(ref::PadMode mode, pad_mode(ctx));
  if (ctx.since_version() >= 11) {
    KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "pads"));
    if (ctx.has_input(2) && ctx.input(2).dtype != x.dtype) {
      return ctx.error("constant_value is {} but the data is {}", ctx.input(2).to_string(),
                       x.to_string());
    }
    if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 3, "axes"));
  }
  if (!x.has_rank()) {
    ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(auto amounts,
                        pad_amounts(ctx, ctx.input_value(1), ctx.input_value(3), x.rank()));
  if (!amounts) {
    ctx.set_output(0, TensorDesc::of(x.dtype, unknown_dims(x.rank())));
    return Status::ok();
  }
  ir::Shape out;
  for (int k = 0; k < x.rank(); ++k) {
    const auto kk = static_cast<size_t>(k);
    KILN_ASSIGN_OR_RETURN(Dim d,
                          padded_dim(ctx, x.dim(k), amounts->begin[kk], amounts->end[kk], mode, k));
    out.push_back(d);
  }
  TensorDesc desc = TensorDesc::of(x.dtype, std::move(out));
  if (desc.is_static())
    KILN_RETURN_IF_ERROR(check_out_dims(ctx, desc.static_dims(), x.dtype, "output"));
  ctx.set_output(0, std::move(desc));
  return Status::ok();
}

// The fill value of constant mode as one element of the data's dtype.
Result<Tensor> pad_constant(const RunContext& ctx, DType dtype) {
  if (ctx.since_version() < 11) {
    return cast_tensor(Tensor::scalar<float>(ctx.attrs().get_float("value", 0.0f)), dtype);
  }
  if (!ctx.has_input(2)) return Tensor(dtype, {});
  const Tensor& v = ctx.input(2);
  if (v.numel() != 1) {
    return ctx.error("constant_value must have one element, got {}", v.desc());
  }
  return v;
}

Status run_pad(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(ref::PadMode mode, pad_mode(ctx));
  const Tensor* pads = ctx.since_version() >= 11 ? &ctx.input(1) : nullptr;
  const Tensor* axes = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  KILN_ASSIGN_OR_RETURN(auto amounts, pad_amounts(ctx, pads, axes, x.rank()));
  KILN_ASSIGN_OR_RETURN(Tensor constant, pad_constant(ctx, x.dtype()));
  Tensor& y = ctx.allocate_output(0);
  const ref::PadParams params{mode, amounts->begin, amounts->end, constant.raw_data()};
  ref::pad(x.raw_data(), elem_size(x), x.dims(), params, y.dims(), y.raw_data());
  return Status::ok();
}

// --- DepthToSpace / SpaceToDepth
// -------------------------------------------------------------------

Result<int64_t> blocksize(const NodeContext& ctx) {
  if (!ctx.attrs().has("blocksize")) return ctx.error("attribute 'blocksize' is required");
  const int64_t b = ctx.attrs().get_int("blocksize", 0);
  if (b <= 0) return ctx.error("blocksize must be positive, got {}", b);
  // Keeps blocksize^2 and dim * blocksize far from int64 overflow; real models use 2..8.
  constexpr int64_t kMaxBlocksize = 1 << 16;
  if (b > kMaxBlocksize) {
    return ctx.unsupported("blocksize {} is larger than the supported maximum {}", b,
                           kMaxBlocksize);
  }
  return b;
}

Result<Dim> scaled(const NodeContext& ctx, const Dim& d, int64_t mul, int64_t div) {
  if (!d.is_known()) return mul == 1 && div == 1 ? d : Dim::unknown();
  KILN_ASSIGN_OR_RETURN(const int64_t n, checked_mul(ctx, d.value, mul, "dim x blocksize"));
  return Dim::known(n / div);
}

Status infer_depth_space(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(int64_t b, blocksize(ctx));
  const bool to_space = ctx.node().op_type == "DepthToSpace";
  if (to_space) {
    const std::string mode = ctx.attrs().get_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") return ctx.error("mode must be DCR or CRD, got '{}'", mode);
  }
  if (!x.has_rank()) {
    ctx.set_output(0, TensorDesc::of(x.dtype, unknown_dims(4)));
    return Status::ok();
  }
  if (x.rank() != 4) return ctx.error("input must be 4-D (NCHW), got {}", x.to_string());
  const Dim &n = x.dim(0), &c = x.dim(1), &h = x.dim(2), &w = x.dim(3);
  if (to_space) {
    if (c.is_known() && c.value % (b * b) != 0) {
      return ctx.error("channels {} of {} are not divisible by blocksize^2 = {}", c.value,
                       x.to_string(), b * b);
    }
    KILN_ASSIGN_OR_RETURN(Dim oc, scaled(ctx, c, 1, b * b));
    KILN_ASSIGN_OR_RETURN(Dim oh, scaled(ctx, h, b, 1));
    KILN_ASSIGN_OR_RETURN(Dim ow, scaled(ctx, w, b, 1));
    ctx.set_output(0, TensorDesc::of(x.dtype, {n, oc, oh, ow}));
  } else {
    if ((h.is_known() && h.value % b != 0) || (w.is_known() && w.value % b != 0)) {
      return ctx.error("height and width of {} must be divisible by blocksize {}", x.to_string(),
                       b);
    }
    KILN_ASSIGN_OR_RETURN(Dim oc, scaled(ctx, c, b * b, 1));
    KILN_ASSIGN_OR_RETURN(Dim oh, scaled(ctx, h, 1, b));
    KILN_ASSIGN_OR_RETURN(Dim ow, scaled(ctx, w, 1, b));
    ctx.set_output(0, TensorDesc::of(x.dtype, {n, oc, oh, ow}));
  }
  TensorDesc& out = ctx.outputs()[0];
  if (out.is_static())
    KILN_RETURN_IF_ERROR(check_out_dims(ctx, out.static_dims(), x.dtype, "output"));
  return Status::ok();
}

// Both ops are a reshape to 6-D, a transpose and a reshape back.
Status run_depth_space(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.attrs().get_int("blocksize", 1);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  Dims dims6;
  std::vector<int64_t> perm;
  if (ctx.node().op_type == "SpaceToDepth") {
    dims6 = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  } else if (ctx.attrs().get_string("mode", "DCR") == "DCR") {
    dims6 = {n, b, b, c / (b * b), h, w};
    perm = {0, 3, 4, 1, 5, 2};
  } else {
    dims6 = {n, c / (b * b), b, b, h, w};
    perm = {0, 1, 4, 2, 5, 3};
  }
  Tensor& y = ctx.allocate_output(0);
  ref::transpose(x.raw_data(), elem_size(x), dims6, perm, y.raw_data());
  return Status::ok();
}

// --- Trilu
// -----------------------------------------------------------------------------------------

Status infer_trilu(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  if (x.has_rank() && x.rank() < 2)
    return ctx.error("input must have rank >= 2, got {}", x.to_string());
  if (ctx.has_input(1)) {
    if (ctx.input(1).dtype != DType::kI64)
      return ctx.error("k must be int64, got {}", ctx.input(1).to_string());
    if (const Tensor* k = ctx.input_value(1))
      KILN_RETURN_IF_ERROR(read_scalar_int(ctx, *k, "k").status());
  }
  ctx.set_output(0, x);
  return Status::ok();
}

Status run_trilu(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t k = 0;
  if (ctx.has_input(1)) {
    KILN_ASSIGN_OR_RETURN(k, read_scalar_int(ctx, ctx.input(1), "k"));
  }
  const bool upper = ctx.attrs().get_int("upper", 1) != 0;
  Tensor& y = ctx.allocate_output(0);
  ref::trilu(x.raw_data(), elem_size(x), x.dims(), k, upper, y.raw_data());
  return Status::ok();
}

}  // namespace

void register_pad_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "Pad",
         .since_versions = {2, 11, 13, 18, 19, 21},
         .min_inputs = 1,
         .max_inputs = 4,
         .attrs = {{"mode", AttrType::kString},
                   {"pads", AttrType::kInts},
                   {"value", AttrType::kFloat}},
         .infer = infer_pad,
         .run = run_pad});
  r.add({.op_type = "DepthToSpace",
         .since_versions = {1, 11, 13},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"blocksize", AttrType::kInt}, {"mode", AttrType::kString}},
         .infer = infer_depth_space,
         .run = run_depth_space});
  r.add({.op_type = "SpaceToDepth",
         .since_versions = {1, 13},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"blocksize", AttrType::kInt}},
         .infer = infer_depth_space,
         .run = run_depth_space});
  r.add({.op_type = "Trilu",
         .since_versions = {14},
         .min_inputs = 1,
         .max_inputs = 2,
         .attrs = {{"upper", AttrType::kInt}},
         .infer = infer_trilu,
         .run = run_trilu});
}

}  // namespace kiln::ops::shape_detail
