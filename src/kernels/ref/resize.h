#pragma once
// Reference N-dimensional Resize (nearest, N-linear, N-cubic) following ONNX's reference
// implementation: separable 1-D interpolation along every dim, with each output coordinate mapped
// back to an input coordinate by the coordinate transformation mode.
//
// For output coordinate x along a dim with input extent `in`, scale s and float output extent
// out_f = s * in, the input coordinate x_ori is:
//   half_pixel            (x + 0.5) / s - 0.5
//   half_pixel_symmetric  half_pixel shifted so that the centres align when out != out_f
//   pytorch_half_pixel    out > 1 ? (x + 0.5) / s - 0.5 : 0
//   align_corners         out > 1 ? x * (in - 1) / (out_f - 1) : 0
//   asymmetric            x / s
//   tf_half_pixel_for_nn  (x + 0.5) / s                       (opsets 11, 12)
//   tf_crop_and_resize    roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (out_f -
//   1);
//                         outside [0, in - 1] the output is extrapolation_value
// Linear and cubic use the taps around x_ori (indices clamped to the edge, or dropped and the
// weights renormalised with exclude_outside); with antialias and s < 1 the filter is stretched by
// 1 / s. Data is double; callers convert other dtypes.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class ResizeCoordMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};
// kSimple is Resize-10 / Upsample: floor when upsampling, ceil when downsampling.
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoordMode coord_mode = ResizeCoordMode::kHalfPixel;
  NearestMode nearest_mode = NearestMode::kRoundPreferFloor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0.0;
  std::vector<int64_t> in_dims;
  std::vector<int64_t> out_dims;
  std::vector<double> scales;     // per dim, > 0
  std::vector<double> roi_start;  // per dim, tf_crop_and_resize only (normalised coordinates)
  std::vector<double> roi_end;
};

void resize(const ResizeParams& p, const double* x, double* y);

// What resize() reads for one output coordinate along one dim: the sum of weight * input[index]
// over `taps`, or extrapolation_value when `outside` (tf_crop_and_resize beyond the input) or
// when there are no taps. Shared with optimized kernels so that both interpolate alike.
struct ResizeTap {
  int64_t index;
  double weight;
};
struct ResizeCoord {
  std::vector<ResizeTap> taps;
  bool outside = false;
};
std::vector<ResizeCoord> resize_axis_taps(const ResizeParams& p, size_t d);

}  // namespace kiln::kernels::ref
