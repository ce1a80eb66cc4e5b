#include "kernels/ref/roi_align.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::kernels::ref {
namespace {

// The four neighbours of one sample point and their bilinear weights (all 0 when the point lies
// outside the image's [-1, extent] margin).
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// Clamps coordinate v into [0, extent - 1] and returns (low, high, fraction from low).
void neighbours(double v, int64_t extent, int64_t* low, int64_t* high, double* frac) {
  if (v <= 0) v = 0;
  *low = static_cast<int64_t>(v);
  if (*low >= extent - 1) {
    *low = *high = extent - 1;
    v = static_cast<double>(*low);
  } else {
    *high = *low + 1;
  }
  *frac = v - static_cast<double>(*low);
}

Sample bilinear_sample(const RoiAlignParams& p, double y, double x) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(p.height) || x < -1.0 ||
      x > static_cast<double>(p.width)) {
    return s;
  }
  int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  double ly = 0, lx = 0;
  neighbours(y, p.height, &y0, &y1, &ly);
  neighbours(x, p.width, &x0, &x1, &lx);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.pos[0] = y0 * p.width + x0;
  s.pos[1] = y0 * p.width + x1;
  s.pos[2] = y1 * p.width + x0;
  s.pos[3] = y1 * p.width + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

// One roi's geometry: its scaled start, its bin extents and the samples per bin.
struct RoiGeometry {
  double y_start = 0, x_start = 0, bin_h = 0, bin_w = 0;
  int64_t grid_h = 0, grid_w = 0, count = 1;
};

RoiGeometry roi_geometry(const RoiAlignParams& p, const double* roi) {
  RoiGeometry g;
  const double offset = p.half_pixel ? 0.5 : 0.0;
  g.x_start = roi[0] * p.spatial_scale - offset;
  g.y_start = roi[1] * p.spatial_scale - offset;
  double roi_w = roi[2] * p.spatial_scale - offset - g.x_start;
  double roi_h = roi[3] * p.spatial_scale - offset - g.y_start;
  if (!p.half_pixel) {
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  g.bin_h = roi_h / static_cast<double>(p.out_h);
  g.bin_w = roi_w / static_cast<double>(p.out_w);
  g.grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(g.bin_h));
  g.grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(g.bin_w));
  g.count = std::max<int64_t>(g.grid_h * g.grid_w, 1);
  return g;
}

// Accumulates bin (ph, pw) of every channel into acc[c] (avg: sum of interpolated values; max:
// largest weighted neighbour value).
template <typename T>
void accumulate_bin(const RoiAlignParams& p, const RoiGeometry& g, int64_t ph, int64_t pw,
                    const T* x, std::vector<double>& acc) {
  const int64_t plane = p.height * p.width;
  bool first = true;
  for (int64_t iy = 0; iy < g.grid_h; ++iy) {
    const double y = g.y_start + static_cast<double>(ph) * g.bin_h +
                     (static_cast<double>(iy) + 0.5) * g.bin_h / static_cast<double>(g.grid_h);
    for (int64_t ix = 0; ix < g.grid_w; ++ix) {
      const double xx = g.x_start + static_cast<double>(pw) * g.bin_w +
                        (static_cast<double>(ix) + 0.5) * g.bin_w / static_cast<double>(g.grid_w);
      const Sample s = bilinear_sample(p, y, xx);
      for (int64_t c = 0; c < p.channels; ++c) {
        const T* xc = x + c * plane;
        double& a = acc[static_cast<size_t>(c)];
        double sum = 0.0;
        double largest = s.w[0] * static_cast<double>(xc[s.pos[0]]);
        for (int i = 0; i < 4; ++i) {
          const double v = s.w[i] * static_cast<double>(xc[s.pos[i]]);
          sum += v;
          largest = std::max(largest, v);
        }
        if (!p.max_mode) {
          a += sum;
        } else {
          a = first ? largest : std::max(a, largest);
        }
      }
      first = false;
    }
  }
}

}  // namespace

template <typename T>
void roi_align(const RoiAlignParams& p, const T* x, const T* rois, const int64_t* batch_indices,
               T* y) {
  const int64_t bins = p.out_h * p.out_w;
  std::vector<double> acc(static_cast<size_t>(p.channels));
  for (int64_t r = 0; r < p.num_rois; ++r) {
    double roi[4];
    for (int i = 0; i < 4; ++i) roi[i] = static_cast<double>(rois[r * 4 + i]);
    const RoiGeometry g = roi_geometry(p, roi);
    const T* xb = x + batch_indices[r] * p.channels * p.height * p.width;
    for (int64_t ph = 0; ph < p.out_h; ++ph) {
      for (int64_t pw = 0; pw < p.out_w; ++pw) {
        acc.assign(acc.size(), 0.0);
        accumulate_bin(p, g, ph, pw, xb, acc);
        for (int64_t c = 0; c < p.channels; ++c) {
          const double v = acc[static_cast<size_t>(c)];
          y[(r * p.channels + c) * bins + ph * p.out_w + pw] =
              static_cast<T>(p.max_mode ? v : v / static_cast<double>(g.count));
        }
      }
    }
  }
}

template void roi_align<float>(const RoiAlignParams&, const float*, const float*, const int64_t*,
                               float*);
template void roi_align<double>(const RoiAlignParams&, const double*, const double*, const int64_t*,
                                double*);

}  // namespace kiln::kernels::ref
