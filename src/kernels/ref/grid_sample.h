#pragma once
// Reference GridSample over any number of spatial dims (ONNX 16 defines 2-D, 20 N-D).
//
// X is [N, C, D1, ..., Dk]; grid is [N, O1, ..., Ok, k] with normalised coordinates in [-1, 1],
// the last axis ordered (x, y, z, ...): x indexes Dk, the innermost dim. Y is [N, C, O1, ..., Ok].
// Follows ONNX's reference (and onnxruntime): a coordinate is denormalised, rounded to the nearest
// integer (half to even) for kNearest, moved inside the image for kBorder (clamped to
// [0, D - 1]) and kReflection (reflected at the borders), and then interpolated; taps that fall
// outside the image read 0 (kZeros), the nearest edge pixel (kBorder) or the reflected pixel
// (kReflection). Borders are [-0.5, D - 0.5], or [0, D - 1] with align_corners. Cubic uses Keys'
// kernel with a = -0.75. Computed in double; a NaN coordinate gives NaN.

#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

enum class GridSampleMode { kLinear, kNearest, kCubic };
enum class GridSamplePadding { kZeros, kBorder, kReflection };

struct GridSampleParams {
  GridSampleMode mode = GridSampleMode::kLinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
  std::vector<int64_t> x_dims;    // [N, C, D1, ..., Dk]
  std::vector<int64_t> out_dims;  // [O1, ..., Ok]
};

// T is float, double or Half; the grid is given in double.
template <typename T>
void grid_sample(const GridSampleParams& p, const T* x, const double* grid, T* y);

}  // namespace kiln::kernels::ref
