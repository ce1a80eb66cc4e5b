#include "kernels/cpu/reduce.h"

#include <algorithm>

#include "kernels/cpu/vec_util.h"

namespace kiln::kernels::cpu {

void reduce_sum(const ReduceShape& s, bool mean, const float* x, float* y) {
  const float scale = mean ? 1.0f / static_cast<float>(s.n) : 1.0f;
  if (s.inner == 1) {
    for (int64_t o = 0; o < s.outer; ++o) y[o] = sum_f32(x + o * s.n, s.n) * scale;
    return;
  }
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* xo = x + o * s.n * s.inner;
    float* yo = y + o * s.inner;
    std::fill(yo, yo + s.inner, 0.0f);
    for (int64_t r = 0; r < s.n; ++r) {
      const float* xr = xo + r * s.inner;
      for (int64_t i = 0; i < s.inner; ++i) yo[i] += xr[i];
    }
    for (int64_t i = 0; i < s.inner; ++i) yo[i] *= scale;
  }
}

}  // namespace kiln::kernels::cpu
