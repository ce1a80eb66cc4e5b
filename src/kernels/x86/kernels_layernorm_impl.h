#pragma once
// LayerNormalization along contiguous rows behind kernels.h, over a float traits type T: per row
// the mean, then the variance around it (two passes, as the reference, so that a large mean does
// not cancel the variance's digits), then y = (x - mean) * inv_std * scale + bias in one pass.
// Rows of a transformer (a few hundred floats) stay in L1 across the three passes. Included by
// each ISA's translation unit, like kernels_impl.h.

#include <cmath>

#include "kernels/x86/kernels_math.h"

namespace kiln::kernels::x86 {
namespace {

template <class T>
float row_sum(int64_t n, const float* x) {
  using V = typename T::V;
  constexpr int64_t kL = T::kLanes;
  V s0 = T::zero(), s1 = T::zero();
  int64_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    s0 = T::add(s0, T::loadu(x + i));
    s1 = T::add(s1, T::loadu(x + i + kL));
  }
  for (; i + kL <= n; i += kL) s0 = T::add(s0, T::loadu(x + i));
  if (i < n) s1 = T::add(s1, T::load_n(x + i, static_cast<int>(n - i)));
  return T::reduce_add(T::add(s0, s1));
}

// The sum of (x - mean)^2; the last n % lanes elements one by one (a masked load would read 0s).
template <class T>
float row_sum_sq_diff(int64_t n, const float* x, float mean) {
  using V = typename T::V;
  constexpr int64_t kL = T::kLanes;
  const V m = T::set1(mean);
  V s0 = T::zero(), s1 = T::zero();
  int64_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    const V d0 = T::sub(T::loadu(x + i), m);
    const V d1 = T::sub(T::loadu(x + i + kL), m);
    s0 = T::fmadd(d0, d0, s0);
    s1 = T::fmadd(d1, d1, s1);
  }
  for (; i + kL <= n; i += kL) {
    const V d = T::sub(T::loadu(x + i), m);
    s0 = T::fmadd(d, d, s0);
  }
  float sum = T::reduce_add(T::add(s0, s1));
  for (; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
  return sum;
}

template <class T>
void layer_norm_rows_impl(int64_t rows, int64_t n, const float* x, const float* scale,
                          const float* bias, float epsilon, float* y, float* mean_out,
                          float* inv_std_out) {
  using V = typename T::V;
  constexpr int64_t kL = T::kLanes;
  const FlushDenormals ftz;
  const float inv_n = n > 0 ? 1.0f / static_cast<float>(n) : 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float mean = row_sum<T>(n, xr) * inv_n;
    const float inv = 1.0f / std::sqrt(row_sum_sq_diff<T>(n, xr, mean) * inv_n + epsilon);
    const V m = T::set1(mean);
    const V s = T::set1(inv);
    int64_t i = 0;
    for (; i + kL <= n; i += kL) {
      const V v = T::mul(T::sub(T::loadu(xr + i), m), s);
      const V b = bias != nullptr ? T::loadu(bias + i) : T::zero();
      T::storeu(yr + i, T::fmadd(v, T::loadu(scale + i), b));
    }
    if (i < n) {
      const int t = static_cast<int>(n - i);
      const V v = T::mul(T::sub(T::load_n(xr + i, t), m), s);
      const V b = bias != nullptr ? T::load_n(bias + i, t) : T::zero();
      T::store_n(yr + i, T::fmadd(v, T::load_n(scale + i, t), b), t);
    }
    if (mean_out != nullptr) mean_out[r] = mean;
    if (inv_std_out != nullptr) inv_std_out[r] = inv;
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
