#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <limits>

#include "kernels/cpu/vec_util.h"

namespace kiln::kernels::cpu {
namespace {

void softmax_rows(const SoftmaxShape& s, const float* x, float* y) {
  for (int64_t r = 0; r < s.outer; ++r) {
    const float* xr = x + r * s.n;
    float* yr = y + r * s.n;
    const float m = max_f32(xr, s.n);
    for (int64_t i = 0; i < s.n; ++i) yr[i] = exp_f32(xr[i] - m);
    const float inv = 1.0f / sum_f32(yr, s.n);
    for (int64_t i = 0; i < s.n; ++i) yr[i] *= inv;
  }
}

// Along a non-innermost axis: the n rows of `inner` values are combined element-wise, so every
// loop runs over contiguous inner positions.
void softmax_columns(const SoftmaxShape& s, const float* x, float* y, float* scratch) {
  float* mx = scratch;
  float* sum = scratch + s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* xo = x + o * s.n * s.inner;
    float* yo = y + o * s.n * s.inner;
    std::fill(mx, mx + s.inner, std::numeric_limits<float>::lowest());
    for (int64_t r = 0; r < s.n; ++r) {
      const float* xr = xo + r * s.inner;
      for (int64_t i = 0; i < s.inner; ++i) mx[i] = mx[i] < xr[i] ? xr[i] : mx[i];
    }
    std::fill(sum, sum + s.inner, 0.0f);
    for (int64_t r = 0; r < s.n; ++r) {
      const float* xr = xo + r * s.inner;
      float* yr = yo + r * s.inner;
      for (int64_t i = 0; i < s.inner; ++i) {
        yr[i] = exp_f32(xr[i] - mx[i]);
        sum[i] += yr[i];
      }
    }
    for (int64_t i = 0; i < s.inner; ++i) sum[i] = 1.0f / sum[i];
    for (int64_t r = 0; r < s.n; ++r) {
      float* yr = yo + r * s.inner;
      for (int64_t i = 0; i < s.inner; ++i) yr[i] *= sum[i];
    }
  }
}

}  // namespace

size_t softmax_scratch_floats(const SoftmaxShape& s) {
  return s.inner > 1 ? static_cast<size_t>(2 * s.inner) : 0;
}

void softmax(const SoftmaxShape& s, const float* x, float* y, float* scratch) {
  if (s.inner == 1) {
    softmax_rows(s, x, y);
  } else {
    softmax_columns(s, x, y, scratch);
  }
}

}  // namespace kiln::kernels::cpu
