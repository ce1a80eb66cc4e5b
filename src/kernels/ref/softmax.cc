#include "kernels/ref/softmax.h"

#include <cmath>

#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

// One row of n elements with stride `step`.
template <typename T>
void softmax_row(SoftmaxKind kind, int64_t n, int64_t step, const T* x, T* y) {
  int64_t arg = 0;
  double max = to_double(x[0]);
  for (int64_t i = 1; i < n; ++i) {
    const double v = to_double(x[i * step]);
    if (v > max) {
      max = v;
      arg = i;
    }
  }
  if (kind == SoftmaxKind::kHardmax) {
    for (int64_t i = 0; i < n; ++i) y[i * step] = from_acc<T>(i == arg ? 1.0 : 0.0);
    return;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(to_double(x[i * step]) - max);
  const double log_sum = std::log(sum);
  for (int64_t i = 0; i < n; ++i) {
    const double shifted = to_double(x[i * step]) - max;
    y[i * step] =
        from_acc<T>(kind == SoftmaxKind::kSoftmax ? std::exp(shifted) / sum : shifted - log_sum);
  }
}

}  // namespace

template <typename T>
void softmax(SoftmaxKind kind, const SoftmaxShape& s, const T* x, T* y) {
  if (s.n == 0) return;
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t base = o * s.n * s.inner + i;
      softmax_row(kind, s.n, s.inner, x + base, y + base);
    }
  }
}

#define KILN_INSTANTIATE(T) \
  template void softmax<T>(SoftmaxKind, const SoftmaxShape&, const T*, T*);
KILN_REF_FOR_FLOAT_TYPES(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

}  // namespace kiln::kernels::ref
