#include "kernels/ref/grid_sample.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

// The range a coordinate along a dim of `size` pixels may take before padding applies.
struct Border {
  double lo, hi;
};

Border border_of(int64_t size, bool align_corners) {
  if (align_corners) return {0.0, static_cast<double>(size - 1)};
  return {-0.5, static_cast<double>(size) - 0.5};
}

double denormalize(double n, int64_t size, bool align_corners) {
  const double s = static_cast<double>(size);
  return align_corners ? (n + 1.0) / 2.0 * (s - 1.0) : ((n + 1.0) * s - 1.0) / 2.0;
}

// Reflects v at the borders until it lies in [b.lo, b.hi] (NaN for an infinite v).
double reflect(double v, Border b) {
  const double range = b.hi - b.lo;
  if (range <= 0.0) return b.lo;
  if (v >= b.lo && v <= b.hi) return v;
  const bool below = v < b.lo;
  const double m = std::fmod(below ? b.lo - v : v - b.hi, 2.0 * range);
  if (m <= range) return below ? b.lo + m : b.hi - m;
  return below ? b.hi - (m - range) : b.lo + (m - range);
}

// Keys' cubic convolution weights for the taps at -1, 0, 1, 2 around a point at fraction t.
void cubic_weights(double t, double w[4]) {
  constexpr double a = -0.75;
  const auto near = [](double d) { return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0; };
  const auto far = [](double d) { return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a; };
  w[0] = far(t + 1.0);
  w[1] = near(t);
  w[2] = near(1.0 - t);
  w[3] = far(2.0 - t);
}

// One (n, c) image of k spatial dims.
template <typename T>
class Image {
 public:
  Image(const GridSampleParams& p, const T* data) : p_(p), data_(data) {}

  // The pixel at integer coordinates `idx` (one per spatial dim), after padding.
  double pixel(const std::vector<int64_t>& idx) const {
    int64_t offset = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
      const int64_t size = p_.x_dims[k + 2];
      int64_t i = idx[k];
      if (i < 0 || i >= size) {
        if (p_.padding == GridSamplePadding::kZeros) return 0.0;
        if (p_.padding == GridSamplePadding::kReflection) {
          i = static_cast<int64_t>(
              reflect(static_cast<double>(i), border_of(size, p_.align_corners)));
        }
        i = std::clamp<int64_t>(i, 0, size - 1);
      }
      offset = offset * size + i;
    }
    return to_double(data_[offset]);
  }

 private:
  const GridSampleParams& p_;
  const T* data_;
};

// The source coordinate along spatial dim k for normalised coordinate g: denormalised, rounded for
// kNearest, brought inside the borders for kBorder and kReflection, and kept within a few pixels of
// the image for kZeros (further taps all read 0 anyway) so that integer conversion is safe.
double source_coordinate(const GridSampleParams& p, size_t k, double g) {
  const int64_t size = p.x_dims[k + 2];
  const Border b = border_of(size, p.align_corners);
  double v = denormalize(g, size, p.align_corners);
  if (p.mode == GridSampleMode::kNearest) v = std::nearbyint(v);
  if (v < b.lo || v > b.hi) {
    if (p.padding == GridSamplePadding::kBorder) {
      v = std::clamp(v, 0.0, static_cast<double>(size - 1));
    } else if (p.padding == GridSamplePadding::kReflection) {
      v = reflect(v, b);
    } else {
      v = std::clamp(v, b.lo - 4.0, b.hi + 4.0);
    }
  }
  return v;
}

// Interpolates at source coordinates v (one per spatial dim, all finite).
template <typename T>
double sample(const GridSampleParams& p, const Image<T>& image, const std::vector<double>& v) {
  const size_t rank = v.size();
  std::vector<int64_t> idx(rank);
  if (p.mode == GridSampleMode::kNearest) {
    for (size_t k = 0; k < rank; ++k) idx[k] = static_cast<int64_t>(v[k]);
    return image.pixel(idx);
  }
  // Linear: 2 taps per dim; cubic: 4. Each tap's weight is the product of its per-dim weights.
  const int taps = p.mode == GridSampleMode::kLinear ? 2 : 4;
  const int first = p.mode == GridSampleMode::kLinear ? 0 : -1;
  std::vector<std::array<double, 4>> weights(rank);
  std::vector<int64_t> base(rank);
  for (size_t k = 0; k < rank; ++k) {
    const double f = std::floor(v[k]);
    const double t = v[k] - f;
    base[k] = static_cast<int64_t>(f) + first;
    if (taps == 2) {
      weights[k] = {1.0 - t, t, 0.0, 0.0};
    } else {
      cubic_weights(t, weights[k].data());
    }
  }
  int64_t count = 1;
  for (size_t k = 0; k < rank; ++k) count *= taps;
  double sum = 0.0;
  for (int64_t tap = 0; tap < count; ++tap) {
    double w = 1.0;
    int64_t rest = tap;
    for (size_t k = rank; k-- > 0;) {
      const int64_t j = rest % taps;
      rest /= taps;
      idx[k] = base[k] + j;
      w *= weights[k][static_cast<size_t>(j)];
    }
    if (w != 0.0) sum += w * image.pixel(idx);
  }
  return sum;
}

}  // namespace

template <typename T>
void grid_sample(const GridSampleParams& p, const T* x, const double* grid, T* y) {
  const size_t rank = p.out_dims.size();
  const int64_t n_count = p.x_dims[0];
  const int64_t channels = p.x_dims[1];
  int64_t image_size = 1;
  for (size_t k = 0; k < rank; ++k) image_size *= p.x_dims[k + 2];
  int64_t out_size = 1;
  for (int64_t d : p.out_dims) out_size *= d;
  std::vector<double> v(rank);
  for (int64_t n = 0; n < n_count; ++n) {
    for (int64_t o = 0; o < out_size; ++o) {
      const double* g = grid + (n * out_size + o) * static_cast<int64_t>(rank);
      bool nan = false;
      for (size_t k = 0; k < rank; ++k) {
        v[k] = source_coordinate(p, k, g[rank - 1 - k]);  // grid is (x, y, ...): innermost first
        nan = nan || std::isnan(v[k]);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const Image<T> image(p, x + (n * channels + c) * image_size);
        const double value = nan ? std::numeric_limits<double>::quiet_NaN() : sample(p, image, v);
        y[(n * channels + c) * out_size + o] = from_acc<T>(value);
      }
    }
  }
}

#define KILN_INSTANTIATE_GRID_SAMPLE(T) \
  template void grid_sample<T>(const GridSampleParams&, const T*, const double*, T*);
KILN_REF_FOR_FLOAT_TYPES(KILN_INSTANTIATE_GRID_SAMPLE)
#undef KILN_INSTANTIATE_GRID_SAMPLE

}  // namespace kiln::kernels::ref
