// RoiAlign (10, 16): shape function, validation and the reference binding.
#include <fmt/format.h>

#include <cmath>

#include "kernels/ref/roi_align.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

// Samples per bin side beyond which a roi is taken to be garbage rather than a region of the image.
constexpr double kMaxGrid = 1 << 16;

struct RoiAttrs {
  int64_t out_h = 1;
  int64_t out_w = 1;
  int64_t sampling_ratio = 0;
  double spatial_scale = 1.0;
  bool half_pixel = false;
  bool max_mode = false;
};

Result<RoiAttrs> read_roi_attrs(const NodeContext& ctx) {
  RoiAttrs a;
  a.out_h = ctx.attrs().get_int("output_height", 1);
  a.out_w = ctx.attrs().get_int("output_width", 1);
  if (a.out_h < 1 || a.out_w < 1) {
    return ctx.error("attributes 'output_height' ({}) and 'output_width' ({}) must be >= 1",
                     a.out_h, a.out_w);
  }
  a.sampling_ratio = ctx.attrs().get_int("sampling_ratio", 0);
  if (a.sampling_ratio < 0) {
    return ctx.error("attribute 'sampling_ratio' must be >= 0, got {}", a.sampling_ratio);
  }
  if (static_cast<double>(a.sampling_ratio) > kMaxGrid) {
    return ctx.unsupported("attribute 'sampling_ratio' {} is above the supported maximum {}",
                           a.sampling_ratio, kMaxGrid);
  }
  a.spatial_scale = ctx.attrs().get_float("spatial_scale", 1.0f);
  if (!std::isfinite(a.spatial_scale) || a.spatial_scale <= 0) {
    return ctx.error("attribute 'spatial_scale' must be finite and > 0, got {}", a.spatial_scale);
  }
  const std::string mode = ctx.attrs().get_string("mode", "avg");
  if (mode != "avg" && mode != "max") {
    return ctx.error("attribute 'mode' must be 'avg' or 'max', got '{}'", mode);
  }
  a.max_mode = mode == "max";
  // Opset 10 had no attribute and behaved as output_half_pixel; 16 defaults to half_pixel.
  if (ctx.since_version() < 16 && ctx.attrs().has("coordinate_transformation_mode")) {
    return ctx.error("attribute 'coordinate_transformation_mode' exists only from opset 16");
  }
  const std::string ctm = ctx.attrs().get_string("coordinate_transformation_mode",
                                                 ctx.since_version() >= 16 ? "half_pixel" : "");
  if (ctx.since_version() >= 16 && ctm != "half_pixel" && ctm != "output_half_pixel") {
    return ctx.error(
        "attribute 'coordinate_transformation_mode' must be 'half_pixel' or "
        "'output_half_pixel', got '{}'",
        ctm);
  }
  a.half_pixel = ctm == "half_pixel";
  return a;
}

bool conflict(const ir::Dim& a, const ir::Dim& b) {
  return a.is_known() && b.is_known() && a.value != b.value;
}

// X [N, C, H, W], rois [R, 4] (X's dtype), batch_indices [R] int64.
Status check_roi_inputs(const InferContext& ctx) {
  static constexpr size_t kSame[] = {1};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes, kSame));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& rois = ctx.input(1);
  const ir::TensorDesc& idx = ctx.input(2);
  if (idx.dtype != DType::kI64) {
    return ctx.error("batch_indices has dtype {}, expected int64", dtype_name(idx.dtype));
  }
  if (x.has_rank() && x.rank() != 4) {
    return ctx.error("input X {} must be 4-D [N, C, H, W]", x.to_string());
  }
  if (rois.has_rank() && (rois.rank() != 2 || conflict(rois.dim(1), ir::Dim::known(4)))) {
    return ctx.error("rois {} must be 2-D [num_rois, 4]", rois.to_string());
  }
  if (idx.has_rank() && idx.rank() != 1) {
    return ctx.error("batch_indices {} must be 1-D [num_rois]", idx.to_string());
  }
  if (rois.has_rank() && idx.has_rank() && conflict(rois.dim(0), idx.dim(0))) {
    return ctx.error("rois {} and batch_indices {} disagree on the number of rois",
                     rois.to_string(), idx.to_string());
  }
  return Status::ok();
}

Status infer_roi_align(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_roi_inputs(ctx));
  KILN_ASSIGN_OR_RETURN(const RoiAttrs a, read_roi_attrs(ctx));
  const ir::TensorDesc& x = ctx.input(0);
  ir::Dim num_rois = ir::Dim::unknown();
  if (ctx.input(1).has_rank()) num_rois = ctx.input(1).dim(0);
  if (!num_rois.is_known() && ctx.input(2).has_rank()) num_rois = ctx.input(2).dim(0);
  const ir::Dim channels = x.has_rank() ? x.dim(1) : ir::Dim::unknown();
  ir::Shape out{num_rois, channels, ir::Dim::known(a.out_h), ir::Dim::known(a.out_w)};
  KILN_RETURN_IF_ERROR(check_output_shape(ctx, x.dtype, out));
  ctx.set_output(0, ir::TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

// Run-time checks of the values: batch indices in range, finite rois of a sane extent.
template <typename T>
Status check_roi_values(const RunContext& ctx, const RoiAttrs& a, const T* rois, const int64_t* idx,
                        int64_t num_rois, int64_t batch) {
  for (int64_t r = 0; r < num_rois; ++r) {
    if (idx[r] < 0 || idx[r] >= batch) {
      return ctx.error("batch_indices[{}] = {} is outside [0, {})", r, idx[r], batch);
    }
    const T* roi = rois + r * 4;
    for (int i = 0; i < 4; ++i) {
      if (!std::isfinite(static_cast<double>(roi[i]))) {
        return ctx.error("rois[{}] has a non-finite coordinate", r);
      }
    }
    const double h = std::abs(static_cast<double>(roi[3] - roi[1])) * a.spatial_scale;
    const double w = std::abs(static_cast<double>(roi[2] - roi[0])) * a.spatial_scale;
    if (h / static_cast<double>(a.out_h) > kMaxGrid ||
        w / static_cast<double>(a.out_w) > kMaxGrid) {
      return ctx.error("rois[{}] spans {} x {} input pixels per bin, more than {}", r,
                       h / static_cast<double>(a.out_h), w / static_cast<double>(a.out_w),
                       kMaxGrid);
    }
  }
  return Status::ok();
}

Status run_roi_align(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const RoiAttrs a, read_roi_attrs(ctx));
  const DType compute = compute_dtype_for(ctx.input(0).dtype());
  KILN_ASSIGN_OR_RETURN(const Tensor x, as_dtype(ctx.input(0), compute));
  KILN_ASSIGN_OR_RETURN(const Tensor rois, as_dtype(ctx.input(1), compute));
  const Tensor& idx = ctx.input(2);
  ref::RoiAlignParams p;
  p.batch = x.dim(0);
  p.channels = x.dim(1);
  p.height = x.dim(2);
  p.width = x.dim(3);
  p.num_rois = rois.dim(0);
  p.out_h = a.out_h;
  p.out_w = a.out_w;
  p.sampling_ratio = a.sampling_ratio;
  p.spatial_scale = a.spatial_scale;
  p.half_pixel = a.half_pixel;
  p.max_mode = a.max_mode;
  Tensor y(compute, ctx.output_desc(0).static_dims());
  Status status = Status::ok();
  dispatch_dtype(compute, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      status =
          check_roi_values<T>(ctx, a, rois.data<T>(), idx.data<int64_t>(), p.num_rois, p.batch);
      if (status.is_ok()) {
        ref::roi_align<T>(p, x.data<T>(), rois.data<T>(), idx.data<int64_t>(), y.data<T>());
      }
    }
  });
  KILN_RETURN_IF_ERROR(status);
  return set_output_as_inferred(ctx, 0, y);
}

}  // namespace

void register_roi_align_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "RoiAlign",
         .since_versions = {10, 16},
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"coordinate_transformation_mode", AttrType::kString},
                   {"mode", AttrType::kString},
                   {"output_height", AttrType::kInt},
                   {"output_width", AttrType::kInt},
                   {"sampling_ratio", AttrType::kInt},
                   {"spatial_scale", AttrType::kFloat}},
         .infer = infer_roi_align,
         .run = run_roi_align});
}

}  // namespace kiln::ops
