#pragma once
// Softmax along contiguous rows behind kernels.h, over a float traits type T: per row the max, then
// exp(x - max) stored and summed, then the row scaled by 1 / sum. Three passes over a row that
// stays in L1 (an attention row is a few hundred floats); exp_v is the vector exp of the fused
// activations. Included by each ISA's translation unit, like kernels_impl.h.

#include <cmath>
#include <limits>

#include "kernels/x86/kernels_math.h"

namespace kiln::kernels::x86 {
namespace {

template <class T>
void softmax_row(int64_t n, const float* x, float* y) {
  using V = typename T::V;
  constexpr int64_t kL = T::kLanes;
  const int64_t full = n / kL * kL;
  const int tail = static_cast<int>(n - full);
  V vmax = T::set1(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < full; i += kL) vmax = T::max(vmax, T::loadu(x + i));
  float m = T::reduce_max(vmax);
  for (int64_t i = full; i < n; ++i) m = std::fmax(m, x[i]);
  const V vm = T::set1(m);
  V vsum = T::zero();
  for (int64_t i = 0; i < full; i += kL) {
    const V e = exp_v<T>(T::sub(T::loadu(x + i), vm));
    T::storeu(y + i, e);
    vsum = T::add(vsum, e);
  }
  float sum = T::reduce_add(vsum);
  if (tail > 0) {
    T::store_n(y + full, exp_v<T>(T::sub(T::load_n(x + full, tail), vm)), tail);
    for (int64_t i = full; i < n; ++i) sum += y[i];
  }
  const V inv = T::set1(1.0f / sum);
  for (int64_t i = 0; i < full; i += kL) T::storeu(y + i, T::mul(T::loadu(y + i), inv));
  if (tail > 0) T::store_n(y + full, T::mul(T::load_n(y + full, tail), inv), tail);
}

template <class T>
void softmax_rows_impl(int64_t rows, int64_t n, const float* x, float* y) {
  const FlushDenormals ftz;
  for (int64_t r = 0; r < rows; ++r) softmax_row<T>(n, x + r * n, y + r * n);
}

}  // namespace
}  // namespace kiln::kernels::x86
