// NonMaxSuppression: a data-dependent output [num_selected, 3] of (batch, class, box) int64
// triples.
#include "kernels/ref/nms.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

// Optional scalar inputs 2..4 must hold one element of the given dtype.
Status check_scalar_input(const InferContext& ctx, size_t i, DType want, std::string_view what) {
  if (!ctx.has_input(i)) return Status::ok();
  const ir::TensorDesc& d = ctx.input(i);
  const bool one = !d.has_rank() || d.rank() == 0 ||
                   (d.rank() == 1 && !(d.dim(0).is_known() && d.dim(0).value != 1));
  if (d.dtype != want || !one) {
    return ctx.error("{} must be a {} scalar or 1-element tensor, got {}", what, dtype_name(want),
                     d.to_string());
  }
  return Status::ok();
}

bool conflict(const ir::Dim& a, const ir::Dim& b) {
  return a.is_known() && b.is_known() && a.value != b.value;
}

Status infer_nms(InferContext& ctx) {
  const ir::TensorDesc& boxes = ctx.input(0);
  const ir::TensorDesc& scores = ctx.input(1);
  if (boxes.dtype != DType::kF32 || scores.dtype != DType::kF32) {
    return ctx.unsupported("boxes and scores must be float32, got {} and {}",
                           dtype_name(boxes.dtype), dtype_name(scores.dtype));
  }
  if ((boxes.has_rank() && (boxes.rank() != 3 || conflict(boxes.dim(2), ir::Dim::known(4)))) ||
      (scores.has_rank() && scores.rank() != 3)) {
    return ctx.error(
        "boxes must be [num_batches, num_boxes, 4] and scores [num_batches, "
        "num_classes, num_boxes], got boxes {} and scores {}",
        shape_text(boxes), shape_text(scores));
  }
  if (boxes.has_rank() && scores.has_rank() &&
      (conflict(boxes.dim(0), scores.dim(0)) || conflict(boxes.dim(1), scores.dim(2)))) {
    return ctx.error("boxes {} and scores {} disagree on num_batches or num_boxes",
                     shape_text(boxes), shape_text(scores));
  }
  KILN_RETURN_IF_ERROR(check_scalar_input(ctx, 2, DType::kI64, "max_output_boxes_per_class"));
  KILN_RETURN_IF_ERROR(check_scalar_input(ctx, 3, DType::kF32, "iou_threshold"));
  KILN_RETURN_IF_ERROR(check_scalar_input(ctx, 4, DType::kF32, "score_threshold"));
  const int64_t cpb = ctx.attrs().get_int("center_point_box", 0);
  if (cpb != 0 && cpb != 1) return ctx.error("center_point_box must be 0 or 1, got {}", cpb);
  ctx.set_output(0, ir::TensorDesc::of(DType::kI64, {ir::Dim::unknown(), ir::Dim::known(3)}));
  return Status::ok();
}

Status run_nms(RunContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  ref::NmsParams p;
  p.num_batches = boxes.dim(0);
  p.num_boxes = boxes.dim(1);
  p.num_classes = scores.dim(1);
  p.center_point_box = ctx.attrs().get_int("center_point_box", 0) == 1;
  if (ctx.has_input(2)) p.max_output_boxes_per_class = ctx.input(2).data<int64_t>()[0];
  if (ctx.has_input(3)) p.iou_threshold = ctx.input(3).data<float>()[0];
  if (ctx.has_input(4)) {
    p.has_score_threshold = true;
    p.score_threshold = ctx.input(4).data<float>()[0];
  }
  if (p.iou_threshold < 0.0f || p.iou_threshold > 1.0f) {
    return ctx.error("iou_threshold must be in [0, 1], got {}", p.iou_threshold);
  }
  const auto selected = ref::non_max_suppression(p, boxes.data<float>(), scores.data<float>());
  Tensor& y = ctx.allocate_output(0, DType::kI64, {static_cast<int64_t>(selected.size()), 3});
  int64_t* out = y.data<int64_t>();
  for (const auto& triple : selected) out = std::copy(triple.begin(), triple.end(), out);
  return Status::ok();
}

}  // namespace

void register_nms_ops(OpRegistry& r) {
  r.add({.op_type = "NonMaxSuppression",
         .since_versions = {10, 11},
         .min_inputs = 2,
         .max_inputs = 5,
         .attrs = {{"center_point_box", ir::AttrType::kInt}},
         .infer = infer_nms,
         .run = run_nms});
}

}  // namespace kiln::ops
