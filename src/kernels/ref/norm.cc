#include "kernels/ref/norm.h"

#include <algorithm>
#include <cmath>

namespace kiln::kernels::ref {
namespace {

struct Moments {
  double mean;
  double var;  // population variance
};

template <typename T>
Moments moments(const T* x, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
  const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    sq += d * d;
  }
  return {mean, n > 0 ? sq / static_cast<double>(n) : 0.0};
}

}  // namespace

template <typename T>
void batch_norm(int64_t batch, int64_t params, int64_t inner, const T* x, const double* scale,
                const double* bias, const double* mean, const double* var, double epsilon, T* y) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < params; ++c) {
      const double a = scale[c] / std::sqrt(var[c] + epsilon);
      const int64_t base = (n * params + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        y[base + i] = static_cast<T>((static_cast<double>(x[base + i]) - mean[c]) * a + bias[c]);
      }
    }
  }
}

template <typename T>
void instance_norm(int64_t batch, int64_t channels, int64_t inner, const T* x, const double* scale,
                   const double* bias, double epsilon, T* y) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (n * channels + c) * inner;
      const Moments m = moments(x + base, inner);
      const double a = scale[c] / std::sqrt(m.var + epsilon);
      for (int64_t i = 0; i < inner; ++i) {
        y[base + i] = static_cast<T>((static_cast<double>(x[base + i]) - m.mean) * a + bias[c]);
      }
    }
  }
}

template <typename T>
void layer_norm(int64_t outer, int64_t inner, const T* x, const double* scale, const double* bias,
                double epsilon, T* y, double* mean, double* inv_std_dev) {
  for (int64_t r = 0; r < outer; ++r) {
    const T* xr = x + r * inner;
    T* yr = y + r * inner;
    const Moments m = moments(xr, inner);
    const double inv = 1.0 / std::sqrt(m.var + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      const double b = bias != nullptr ? bias[i] : 0.0;
      yr[i] = static_cast<T>((static_cast<double>(xr[i]) - m.mean) * inv * scale[i] + b);
    }
    if (mean != nullptr) mean[r] = m.mean;
    if (inv_std_dev != nullptr) inv_std_dev[r] = inv;
  }
}

template <typename T>
void lrn(int64_t batch, int64_t channels, int64_t inner, int64_t size, double alpha, double beta,
         double bias, const T* x, T* y) {
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;  // ceil((size - 1) / 2)
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t lo = std::max<int64_t>(0, c - before);
      const int64_t hi = std::min<int64_t>(channels - 1, c + after);
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = lo; k <= hi; ++k) {
          const double v = static_cast<double>(x[(n * channels + k) * inner + i]);
          sq += v * v;
        }
        const int64_t at = (n * channels + c) * inner + i;
        const double denom = std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
        y[at] = static_cast<T>(static_cast<double>(x[at]) / denom);
      }
    }
  }
}

#define KILN_INSTANTIATE_NORM(T)                                                                 \
  template void batch_norm<T>(int64_t, int64_t, int64_t, const T*, const double*, const double*, \
                              const double*, const double*, double, T*);                         \
  template void instance_norm<T>(int64_t, int64_t, int64_t, const T*, const double*,             \
                                 const double*, double, T*);                                     \
  template void layer_norm<T>(int64_t, int64_t, const T*, const double*, const double*, double,  \
                              T*, double*, double*);                                             \
  template void lrn<T>(int64_t, int64_t, int64_t, int64_t, double, double, double, const T*, T*);
KILN_INSTANTIATE_NORM(float)
KILN_INSTANTIATE_NORM(double)
#undef KILN_INSTANTIATE_NORM

}  // namespace kiln::kernels::ref
