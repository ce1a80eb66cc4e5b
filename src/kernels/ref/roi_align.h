#pragma once
// Reference RoiAlign (Mask R-CNN): average or max of bilinearly interpolated samples over each bin
// of each region of interest.
//
//   X              [batch, channels, height, width]
//   rois           [num_rois, 4] as (x1, y1, x2, y2) in input coordinates before spatial_scale
//   batch_indices  [num_rois], each in [0, batch) (the caller checks)
//   Y              [num_rois, channels, out_h, out_w]
//
// The arithmetic follows ONNX's reference (and onnxruntime): the roi is scaled and, for half_pixel,
// shifted by -0.5; output_half_pixel (opset 10's only behaviour) instead clamps its width and
// height to >= 1. Each bin holds grid_h x grid_w samples (sampling_ratio, or ceil(roi extent / out
// extent) when 0) at the centres of a regular sub-grid. A sample outside [-1, extent] contributes
// 0; one inside is clamped to the image and interpolated from its four neighbours. avg: the mean
// over the samples; max: the largest weighted neighbour value over all samples (onnxruntime's
// definition, which ONNX's reference copies). Coordinates and sums in double. T is float or double.

#include <cstdint>

namespace kiln::kernels::ref {

struct RoiAlignParams {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t num_rois = 0;
  int64_t out_h = 1;
  int64_t out_w = 1;
  int64_t sampling_ratio = 0;  // 0: adaptive
  double spatial_scale = 1.0;
  bool half_pixel = true;  // coordinate_transformation_mode half_pixel vs output_half_pixel
  bool max_mode = false;   // mode max vs avg
};

template <typename T>
void roi_align(const RoiAlignParams& p, const T* x, const T* rois, const int64_t* batch_indices,
               T* y);

}  // namespace kiln::kernels::ref
