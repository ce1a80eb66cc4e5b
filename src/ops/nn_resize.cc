// Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample (7, 9), both on the reference
// resize kernel.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/ref/resize.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/resize_params.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

using kernels::ref::NearestMode;
using kernels::ref::ResizeCoordMode;
using kernels::ref::ResizeMode;
using kernels::ref::ResizeParams;

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

struct ResizeAttrs {
  ResizeParams params;        // modes and options; dims, scales and roi are filled per run
  std::vector<int64_t> axes;  // the dims scales/sizes/roi refer to (all dims unless `axes`)
  AspectPolicy policy = AspectPolicy::kStretch;
};

// Where the inputs of the node are (-1: the op version has no such input).
struct ResizeSlots {
  int roi = -1;
  int scales = -1;
  int sizes = -1;
};

ResizeSlots resize_slots(const NodeContext& ctx) {
  if (ctx.node().op_type == "Upsample") return {-1, ctx.since_version() >= 9 ? 1 : -1, -1};
  if (ctx.since_version() < 11) return {-1, 1, -1};
  return {1, 2, 3};
}

Result<ResizeMode> read_mode(const NodeContext& ctx) {
  const std::string m = ctx.attrs().get_string("mode", "nearest");
  if (m == "nearest") return ResizeMode::kNearest;
  if (m == "linear" || (m == "bilinear" && ctx.node().op_type == "Upsample")) {
    return ResizeMode::kLinear;
  }
  if (m == "cubic" && ctx.node().op_type == "Resize" && ctx.since_version() >= 11) {
    return ResizeMode::kCubic;
  }
  return ctx.error("attribute 'mode' has unsupported value '{}'", m);
}

Result<ResizeCoordMode> read_coord_mode(const NodeContext& ctx) {
  const std::string m = ctx.attrs().get_string("coordinate_transformation_mode", "half_pixel");
  const int v = ctx.since_version();
  if (m == "half_pixel") return ResizeCoordMode::kHalfPixel;
  if (m == "half_pixel_symmetric" && v >= 19) return ResizeCoordMode::kHalfPixelSymmetric;
  if (m == "pytorch_half_pixel") return ResizeCoordMode::kPytorchHalfPixel;
  if (m == "align_corners") return ResizeCoordMode::kAlignCorners;
  if (m == "asymmetric") return ResizeCoordMode::kAsymmetric;
  if (m == "tf_half_pixel_for_nn" && v < 13) return ResizeCoordMode::kTfHalfPixelForNn;
  if (m == "tf_crop_and_resize") return ResizeCoordMode::kTfCropAndResize;
  return ctx.error("attribute 'coordinate_transformation_mode' has unknown value '{}' (opset {})",
                   m, v);
}

Result<NearestMode> read_nearest_mode(const NodeContext& ctx) {
  const std::string m = ctx.attrs().get_string("nearest_mode", "round_prefer_floor");
  if (m == "round_prefer_floor") return NearestMode::kRoundPreferFloor;
  if (m == "round_prefer_ceil") return NearestMode::kRoundPreferCeil;
  if (m == "floor") return NearestMode::kFloor;
  if (m == "ceil") return NearestMode::kCeil;
  return ctx.error("attribute 'nearest_mode' has unknown value '{}'", m);
}

Result<bool> read_flag(const NodeContext& ctx, std::string_view name) {
  const int64_t v = ctx.attrs().get_int(name, 0);
  if (v != 0 && v != 1) return ctx.error("attribute '{}' must be 0 or 1, got {}", name, v);
  return v == 1;
}

// Resize-18's axes and keep_aspect_ratio_policy.
Status read_axes_and_policy(const NodeContext& ctx, int64_t rank, ResizeAttrs& a) {
  const std::string policy = ctx.attrs().get_string("keep_aspect_ratio_policy", "stretch");
  if (policy == "not_larger") {
    a.policy = AspectPolicy::kNotLarger;
  } else if (policy == "not_smaller") {
    a.policy = AspectPolicy::kNotSmaller;
  } else if (policy != "stretch") {
    return ctx.error("attribute 'keep_aspect_ratio_policy' has unknown value '{}'", policy);
  }
  if (!ctx.attrs().has("axes")) return Status::ok();
  a.axes.clear();
  for (int64_t axis : ctx.attrs().get_ints("axes")) {
    KILN_ASSIGN_OR_RETURN(int64_t n, normalize_axis(ctx, axis, rank, "axes entry"));
    if (std::find(a.axes.begin(), a.axes.end(), n) != a.axes.end()) {
      return ctx.error("attribute 'axes' repeats axis {}", axis);
    }
    a.axes.push_back(n);
  }
  return Status::ok();
}

Result<ResizeAttrs> read_resize_attrs(const NodeContext& ctx, int64_t rank) {
  ResizeAttrs a;
  for (int64_t d = 0; d < rank; ++d) a.axes.push_back(d);
  ResizeParams& p = a.params;
  KILN_ASSIGN_OR_RETURN(p.mode, read_mode(ctx));
  const bool legacy = ctx.node().op_type == "Upsample" || ctx.since_version() < 11;
  if (legacy) {  // Upsample and Resize-10: asymmetric coordinates, floor/ceil nearest
    p.coord_mode = ResizeCoordMode::kAsymmetric;
    p.nearest_mode = NearestMode::kSimple;
    return a;
  }
  KILN_ASSIGN_OR_RETURN(p.coord_mode, read_coord_mode(ctx));
  KILN_ASSIGN_OR_RETURN(p.nearest_mode, read_nearest_mode(ctx));
  KILN_ASSIGN_OR_RETURN(p.exclude_outside, read_flag(ctx, "exclude_outside"));
  p.cubic_coeff_a = ctx.attrs().get_float("cubic_coeff_a", -0.75f);
  p.extrapolation_value = ctx.attrs().get_float("extrapolation_value", 0.0f);
  if (ctx.since_version() >= 18) {
    KILN_ASSIGN_OR_RETURN(p.antialias, read_flag(ctx, "antialias"));
    KILN_RETURN_IF_ERROR(read_axes_and_policy(ctx, rank, a));
  }
  return a;
}

// --- scales / sizes / roi
// --------------------------------------------------------------------------

// What the node provides, with values when known.
struct ResizeInputs {
  bool scales_given = false;
  bool sizes_given = false;
  bool unclear =
      false;  // an input of unknown length: whether it is the empty placeholder is unknown
  std::optional<std::vector<double>> scales;  // per entry of axes
  std::optional<std::vector<int64_t>> sizes;
  std::optional<std::vector<double>> roi;
};

// Whether slot i holds a non-empty tensor: 1 yes, 0 no (absent or empty), -1 unknown.
int given(const NodeContext& ctx, int slot, const std::vector<const ir::TensorDesc*>& descs) {
  if (slot < 0 || !ctx.has_input(static_cast<size_t>(slot))) return 0;
  const ir::TensorDesc& d = *descs[static_cast<size_t>(slot)];
  if (!d.has_rank()) return -1;
  for (const ir::Dim& dim : *d.shape) {
    if (dim.is_known() && dim.value == 0) return 0;
  }
  return d.is_static() ? 1 : -1;
}

std::vector<double> doubles_of(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.value_as_double(static_cast<int64_t>(i));
  return v;
}

Status check_length(const NodeContext& ctx, std::string_view what, size_t got, size_t want) {
  if (got != want) return ctx.error("input {} has {} values, expected {}", what, got, want);
  return Status::ok();
}

Status read_values(const NodeContext& ctx, const ResizeSlots& s, const ResizeAttrs& a,
                   const std::vector<const Tensor*>& values, ResizeInputs& in) {
  const size_t n = a.axes.size();
  if (s.scales < 0 && ctx.node().op_type == "Upsample") {  // Upsample-7: scales attribute
    const auto f = ctx.attrs().get_floats("scales");
    in.scales = std::vector<double>(f.begin(), f.end());
  } else if (in.scales_given && values[static_cast<size_t>(s.scales)] != nullptr) {
    const Tensor& t = *values[static_cast<size_t>(s.scales)];
    if (!dtype_is_float(t.dtype())) {
      return ctx.error("input scales has dtype {}, expected float", dtype_name(t.dtype()));
    }
    in.scales = doubles_of(t);
  }
  if (in.sizes_given && values[static_cast<size_t>(s.sizes)] != nullptr) {
    const Tensor& t = *values[static_cast<size_t>(s.sizes)];
    if (t.dtype() != DType::kI64) {
      return ctx.error("input sizes has dtype {}, expected int64", dtype_name(t.dtype()));
    }
    in.sizes = t.to_int64_vector();
  }
  if (in.scales) KILN_RETURN_IF_ERROR(check_length(ctx, "scales", in.scales->size(), n));
  if (in.sizes) KILN_RETURN_IF_ERROR(check_length(ctx, "sizes", in.sizes->size(), n));
  for (double v : in.scales.value_or(std::vector<double>{})) {
    const bool upsample = ctx.node().op_type == "Upsample";
    if (!(v > 0) || (upsample && v < 1)) {
      return ctx.error("scales [{}] must be {}", fmt::join(*in.scales, ", "),
                       upsample ? ">= 1" : "> 0");
    }
  }
  for (int64_t v : in.sizes.value_or(std::vector<int64_t>{})) {
    if (v < 1) return ctx.error("sizes [{}] must be >= 1", fmt::join(*in.sizes, ", "));
  }
  return Status::ok();
}

Result<ResizeInputs> read_inputs(const NodeContext& ctx, const ResizeAttrs& a,
                                 const std::vector<const ir::TensorDesc*>& descs,
                                 const std::vector<const Tensor*>& values) {
  const ResizeSlots s = resize_slots(ctx);
  ResizeInputs in;
  const int scales =
      s.scales < 0 && ctx.node().op_type == "Upsample" ? 1 : given(ctx, s.scales, descs);
  const int sizes = given(ctx, s.sizes, descs);
  in.scales_given = scales == 1;
  in.sizes_given = sizes == 1;
  in.unclear = scales < 0 || sizes < 0;
  if (!in.unclear && in.scales_given == in.sizes_given) {
    return ctx.error("exactly one of the inputs scales and sizes must be given ({})",
                     in.scales_given ? "both are" : "neither is");
  }
  KILN_RETURN_IF_ERROR(read_values(ctx, s, a, values, in));
  if (a.params.coord_mode == ResizeCoordMode::kTfCropAndResize && ctx.has_input(1) &&
      values[1] != nullptr && values[1]->numel() > 0) {
    in.roi = doubles_of(*values[1]);
    KILN_RETURN_IF_ERROR(check_length(ctx, "roi", in.roi->size(), 2 * a.axes.size()));
  }
  return in;
}

// --- shapes
// ----------------------------------------------------------------------------------------

// The common scale of keep_aspect_ratio_policy not_larger / not_smaller.
double aspect_scale(const ResizeAttrs& a, const std::vector<int64_t>& sizes, const Dims& in) {
  double scale = a.policy == AspectPolicy::kNotLarger ? 1e300 : 0.0;
  for (size_t i = 0; i < a.axes.size(); ++i) {
    const double s =
        static_cast<double>(sizes[i]) / static_cast<double>(in[static_cast<size_t>(a.axes[i])]);
    scale = a.policy == AspectPolicy::kNotLarger ? std::min(scale, s) : std::max(scale, s);
  }
  return scale;
}

// Output dims and per-dim scales for concrete input dims (values known).
void plan_resize(const ResizeAttrs& a, const ResizeInputs& in, const Dims& x, Dims& out,
                 std::vector<double>& scales) {
  out = x;
  scales.assign(x.size(), 1.0);
  const double common =
      in.sizes && a.policy != AspectPolicy::kStretch ? aspect_scale(a, *in.sizes, x) : 0;
  for (size_t i = 0; i < a.axes.size(); ++i) {
    const auto d = static_cast<size_t>(a.axes[i]);
    if (in.scales) {
      const auto s = static_cast<float>((*in.scales)[i]);
      out[d] = static_cast<int64_t>(std::floor(static_cast<float>(x[d]) * s));
      scales[d] = s;
    } else if (a.policy != AspectPolicy::kStretch) {
      out[d] = static_cast<int64_t>(std::round(common * static_cast<double>(x[d])));
      scales[d] = common;
    } else {
      out[d] = (*in.sizes)[i];
      scales[d] = static_cast<double>(out[d]) / static_cast<double>(x[d]);
    }
  }
}

// Symbolic version of plan_resize: unknown where the values or input dims are unknown.
ir::Shape resize_shape(const ResizeAttrs& a, const ResizeInputs& in, const ir::Shape& x) {
  ir::Shape out = x;
  for (size_t i = 0; i < a.axes.size(); ++i) {
    ir::Dim& o = out[static_cast<size_t>(a.axes[i])];
    if (in.scales && (*in.scales)[i] == 1.0) continue;
    if (in.sizes && a.policy == AspectPolicy::kStretch) {
      o = ir::Dim::known((*in.sizes)[i]);
    } else if (!in.scales || !o.is_known()) {
      o = ir::Dim::unknown();
    } else {
      const auto s = static_cast<float>((*in.scales)[i]);
      o = ir::Dim::known(static_cast<int64_t>(std::floor(static_cast<float>(o.value) * s)));
    }
  }
  return out;
}

// --- infer / run
// ----------------------------------------------------------------------------------

Status check_arity(const NodeContext& ctx) {
  const bool upsample = ctx.node().op_type == "Upsample";
  const int v = ctx.since_version();
  const size_t required = upsample ? (v >= 9 ? 2 : 1) : (v < 11 ? 2 : (v < 13 ? 3 : 1));
  const size_t max = upsample ? required : (v < 11 ? 2 : 4);
  for (size_t i = 0; i < required; ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is required at opset {}", i, v);
  }
  if (ctx.num_inputs() > max) {
    return ctx.error("has {} inputs but opset {} allows {}", ctx.num_inputs(), v, max);
  }
  if (upsample && v < 9 && !ctx.attrs().has("scales")) {
    return ctx.error("attribute 'scales' is required at opset {}", v);
  }
  return Status::ok();
}

Status infer_resize(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kAllTypes));
  KILN_RETURN_IF_ERROR(check_arity(ctx));
  const ir::TensorDesc& x = ctx.input(0);
  if (!x.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(ResizeAttrs a, read_resize_attrs(ctx, x.rank()));
  std::vector<const ir::TensorDesc*> descs;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    descs.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
    values.push_back(ctx.has_input(i) ? ctx.input_value(i) : nullptr);
  }
  KILN_ASSIGN_OR_RETURN(ResizeInputs in, read_inputs(ctx, a, descs, values));
  for (int64_t axis : a.axes) {
    const ir::Dim& d = x.dim(static_cast<int>(axis));
    if (d.is_known() && d.value == 0 && in.sizes_given) {
      return ctx.error(
          "input X {} is empty along axis {}, which cannot be resized to a non-empty size",
          x.to_string(), axis);
    }
  }
  ir::TensorDesc y = ir::TensorDesc::of(x.dtype, resize_shape(a, in, *x.shape));
  if (x.is_static() && (in.scales || in.sizes)) {
    Dims out;
    std::vector<double> scales;
    plan_resize(a, in, x.static_dims(), out, scales);
    y = ir::TensorDesc::of_dims(x.dtype, out);
  }
  KILN_RETURN_IF_ERROR(check_output_shape(ctx, x.dtype, *y.shape));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status run_resize(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    values.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
  }
  KILN_ASSIGN_OR_RETURN(const ResizeParams p, resize_params(ctx, x.dims(), values));
  KILN_ASSIGN_OR_RETURN(Tensor xd, as_dtype(x, DType::kF64));
  Tensor y(DType::kF64, p.out_dims);
  kernels::ref::resize(p, xd.data<double>(), y.data<double>());
  return set_output_as_inferred(ctx, 0, y);
}

}  // namespace

Result<ResizeParams> resize_params(const NodeContext& ctx, const Dims& x,
                                   std::span<const Tensor* const> values) {
  KILN_ASSIGN_OR_RETURN(ResizeAttrs a, read_resize_attrs(ctx, static_cast<int64_t>(x.size())));
  std::vector<ir::TensorDesc> desc_storage(ctx.num_inputs());
  std::vector<const ir::TensorDesc*> descs;
  std::vector<const Tensor*> vals;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = i == 0 || i >= values.size() ? nullptr : values[i];
    const bool has = ctx.has_input(i);
    if (has && i == 0) desc_storage[i] = ir::TensorDesc::of_dims(DType::kF32, x);
    if (has && i > 0) {
      if (t == nullptr) return ctx.error("input {} must be known to resize", i);
      desc_storage[i] = ir::TensorDesc::of_dims(t->dtype(), t->dims());
    }
    descs.push_back(has ? &desc_storage[i] : nullptr);
    vals.push_back(has ? t : nullptr);
  }
  KILN_ASSIGN_OR_RETURN(ResizeInputs in, read_inputs(ctx, a, descs, vals));
  if (!in.scales && !in.sizes) return ctx.error("neither scales nor sizes is known");
  ResizeParams p = a.params;
  p.in_dims = x;
  plan_resize(a, in, x, p.out_dims, p.scales);
  p.roi_start.assign(p.in_dims.size(), 0.0);
  p.roi_end.assign(p.in_dims.size(), 1.0);
  for (size_t i = 0; in.roi && i < a.axes.size(); ++i) {
    p.roi_start[static_cast<size_t>(a.axes[i])] = (*in.roi)[i];
    p.roi_end[static_cast<size_t>(a.axes[i])] = (*in.roi)[i + a.axes.size()];
  }
  return p;
}

std::vector<AttrSpec> resize_attrs() {
  using ir::AttrType;
  return {{"antialias", AttrType::kInt},
          {"axes", AttrType::kInts},
          {"coordinate_transformation_mode", AttrType::kString},
          {"cubic_coeff_a", AttrType::kFloat},
          {"exclude_outside", AttrType::kInt},
          {"extrapolation_value", AttrType::kFloat},
          {"keep_aspect_ratio_policy", AttrType::kString},
          {"mode", AttrType::kString},
          {"nearest_mode", AttrType::kString}};
}

void register_resize_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "Resize",
         .since_versions = {10, 11, 13, 18, 19},
         .min_inputs = 1,
         .max_inputs = 4,
         .attrs = resize_attrs(),
         .infer = infer_resize,
         .run = run_resize});
  r.add({.op_type = "Upsample",
         .since_versions = {7, 9, 10},
         .min_inputs = 1,
         .max_inputs = 2,
         .attrs = {{"mode", AttrType::kString}, {"scales", AttrType::kFloats}},
         .infer = infer_resize,
         .run = run_resize});
}

}  // namespace kiln::ops
