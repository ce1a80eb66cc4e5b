#include "kernels/ref/resize.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace kiln::kernels::ref {
namespace {

double original_coord(const ResizeParams& p, size_t d, int64_t x_int) {
  const double x = static_cast<double>(x_int);
  const double in = static_cast<double>(p.in_dims[d]);
  const double s = p.scales[d];
  const double out_f = s * in;  // ONNX's reference uses the unrounded output extent
  const bool single = p.out_dims[d] == 1;
  switch (p.coord_mode) {
    case ResizeCoordMode::kHalfPixel:
      return (x + 0.5) / s - 0.5;
    case ResizeCoordMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(p.out_dims[d]) / out_f;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / s - 0.5;
    }
    case ResizeCoordMode::kPytorchHalfPixel:
      return single ? 0.0 : (x + 0.5) / s - 0.5;
    case ResizeCoordMode::kAlignCorners:
      return single ? 0.0 : x * (in - 1) / (out_f - 1);
    case ResizeCoordMode::kAsymmetric:
      return x / s;
    case ResizeCoordMode::kTfHalfPixelForNn:
      return (x + 0.5) / s;
    case ResizeCoordMode::kTfCropAndResize: {
      const double span = (p.roi_end[d] - p.roi_start[d]) * (in - 1);
      const double start = p.roi_start[d] * (in - 1);
      return single ? start + span / 2 : start + x * span / (out_f - 1);
    }
  }
  return x;
}

int64_t nearest_index(const ResizeParams& p, size_t d, double x_ori) {
  const double fl = std::floor(x_ori);
  const double frac = x_ori - fl;
  double idx = x_ori;
  switch (p.nearest_mode) {
    case NearestMode::kRoundPreferFloor:
      idx = frac <= 0.5 ? fl : fl + 1;
      break;
    case NearestMode::kRoundPreferCeil:
      idx = frac < 0.5 ? fl : fl + 1;
      break;
    case NearestMode::kFloor:
      idx = fl;
      break;
    case NearestMode::kCeil:
      idx = std::ceil(x_ori);
      break;
    case NearestMode::kSimple:
      idx = p.scales[d] < 1 ? std::ceil(x_ori) : fl;
      break;
  }
  return std::clamp<int64_t>(static_cast<int64_t>(idx), 0, p.in_dims[d] - 1);
}

double cubic_weight(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Linear or cubic taps around x_ori: left = ceil(x_ori) - 1 and ratio = x_ori - left in (0, 1]
// (ONNX's convention), taps left + i for the filter's support.
std::vector<ResizeTap> filter_taps(const ResizeParams& p, size_t d, double x_ori) {
  const double filter_scale = p.antialias && p.scales[d] < 1 ? p.scales[d] : 1.0;
  const auto left = static_cast<int64_t>(std::ceil(x_ori)) - 1;
  const double ratio = x_ori - static_cast<double>(left);
  const double support = p.mode == ResizeMode::kLinear ? 1.0 : 2.0;
  const auto start = static_cast<int64_t>(std::floor(-support / filter_scale)) + 1;
  const int64_t end = 2 - start;  // exclusive; the support is symmetric around the ratio
  const int64_t in = p.in_dims[d];
  std::vector<ResizeTap> taps;
  double sum = 0;
  for (int64_t i = start; i < end; ++i) {
    const double t = (static_cast<double>(i) - ratio) * filter_scale;
    double w = p.mode == ResizeMode::kLinear ? std::max(0.0, 1 - std::abs(t))
                                             : cubic_weight(t, p.cubic_coeff_a);
    const int64_t index = left + i;
    if (p.exclude_outside && (index < 0 || index >= in)) w = 0;
    sum += w;
    if (w == 0) continue;
    // Taps clamped to the same edge index are one tap: an axis of extent 1 costs one tap, not four.
    const int64_t clamped = std::clamp<int64_t>(index, 0, in - 1);
    if (!taps.empty() && taps.back().index == clamped) {
      taps.back().weight += w;
    } else {
      taps.push_back({clamped, w});
    }
  }
  if (sum != 0) {
    for (ResizeTap& t : taps) t.weight /= sum;
  }
  return taps;
}

// Each output coordinate reads exactly the input coordinate with the same index.
bool is_identity(const std::vector<ResizeCoord>& taps, int64_t in) {
  if (static_cast<int64_t>(taps.size()) != in) return false;
  for (size_t x = 0; x < taps.size(); ++x) {
    const ResizeCoord& ct = taps[x];
    if (ct.outside || ct.taps.size() != 1 || ct.taps[0].index != static_cast<int64_t>(x) ||
        ct.taps[0].weight != 1.0) {
      return false;
    }
  }
  return true;
}

// Interpolates `src` (dims `dims`) along dim d into `dst`, whose dim d has taps.size() entries.
// Coordinates outside the input (or without taps) are left 0 here; resize() masks them at the end.
void resize_axis(const double* src, const std::vector<int64_t>& dims, size_t d,
                 const std::vector<ResizeCoord>& taps, std::vector<double>& dst) {
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) outer *= dims[k];
  for (size_t k = d + 1; k < dims.size(); ++k) inner *= dims[k];
  const int64_t n_in = dims[d];
  const auto n_out = static_cast<int64_t>(taps.size());
  dst.assign(static_cast<size_t>(outer * n_out * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    const double* s = src + o * n_in * inner;
    double* t = dst.data() + o * n_out * inner;
    for (int64_t x = 0; x < n_out; ++x) {
      const ResizeCoord& ct = taps[static_cast<size_t>(x)];
      if (ct.outside) continue;
      double* row = t + x * inner;
      for (const ResizeTap& tap : ct.taps) {
        const double* in_row = s + tap.index * inner;
        for (int64_t i = 0; i < inner; ++i) row[i] += tap.weight * in_row[i];
      }
    }
  }
}

// Sets extrapolation_value wherever any dim's coordinate lies outside the input
// (tf_crop_and_resize) or has no taps.
void mask_outside(const ResizeParams& p, const std::vector<std::vector<ResizeCoord>>& taps,
                  int64_t out_size, double* y) {
  bool any = false;
  for (const auto& axis : taps) {
    for (const ResizeCoord& ct : axis) any = any || ct.outside || ct.taps.empty();
  }
  if (!any) return;
  const size_t rank = taps.size();
  for (int64_t o = 0; o < out_size; ++o) {
    int64_t rest = o;
    bool outside = false;
    for (size_t d = rank; d-- > 0;) {
      const ResizeCoord& ct = taps[d][static_cast<size_t>(rest % p.out_dims[d])];
      rest /= p.out_dims[d];
      outside = outside || ct.outside || ct.taps.empty();
    }
    if (outside) y[o] = p.extrapolation_value;
  }
}

}  // namespace

// Separable: one 1-D pass per dim that changes, shrinking dims first so that every intermediate
// is no larger than the input or the output; the work is (output size) x (taps per dim).
void resize(const ResizeParams& p, const double* x, double* y) {
  const size_t rank = p.in_dims.size();
  int64_t out_size = 1;
  for (int64_t d : p.out_dims) out_size *= d;
  if (out_size == 0) return;
  std::vector<std::vector<ResizeCoord>> taps(rank);
  std::vector<size_t> order;
  for (size_t d = 0; d < rank; ++d) {
    taps[d] = resize_axis_taps(p, d);
    if (!is_identity(taps[d], p.in_dims[d])) order.push_back(d);
  }
  auto ratio = [&p](size_t d) {
    return static_cast<double>(p.out_dims[d]) / static_cast<double>(p.in_dims[d]);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ratio(a) < ratio(b); });
  std::vector<int64_t> dims = p.in_dims;
  const double* cur = x;
  std::vector<double> buf[2];
  for (size_t i = 0; i < order.size(); ++i) {
    std::vector<double>& next = buf[i % 2];
    resize_axis(cur, dims, order[i], taps[order[i]], next);
    dims[order[i]] = p.out_dims[order[i]];
    cur = next.data();
  }
  std::copy(cur, cur + out_size, y);
  mask_outside(p, taps, out_size, y);
}

std::vector<ResizeCoord> resize_axis_taps(const ResizeParams& p, size_t d) {
  std::vector<ResizeCoord> result(static_cast<size_t>(p.out_dims[d]));
  for (int64_t x = 0; x < p.out_dims[d]; ++x) {
    ResizeCoord& ct = result[static_cast<size_t>(x)];
    const double x_ori = original_coord(p, d, x);
    if (p.coord_mode == ResizeCoordMode::kTfCropAndResize &&
        (x_ori < 0 || x_ori > static_cast<double>(p.in_dims[d] - 1))) {
      ct.outside = true;
    } else if (p.mode == ResizeMode::kNearest) {
      ct.taps.push_back({nearest_index(p, d, x_ori), 1.0});
    } else {
      ct.taps = filter_taps(p, d, x_ori);
    }
  }
  return result;
}

}  // namespace kiln::kernels::ref
