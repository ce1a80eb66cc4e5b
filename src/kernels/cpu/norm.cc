#include "kernels/cpu/norm.h"

#include <cmath>

#include "kernels/cpu/vec_util.h"

namespace kiln::kernels::cpu {

void layer_norm(int64_t outer, int64_t inner, const float* x, const float* scale, const float* bias,
                float epsilon, float* y, float* mean, float* inv_std) {
  const float inv_n = inner > 0 ? 1.0f / static_cast<float>(inner) : 0.0f;
  for (int64_t r = 0; r < outer; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    const float mu = sum_f32(xr, inner) * inv_n;
    const float var = sum_sq_diff_f32(xr, inner, mu) * inv_n;
    const float inv = 1.0f / std::sqrt(var + epsilon);
    if (bias != nullptr) {
      for (int64_t i = 0; i < inner; ++i) yr[i] = (xr[i] - mu) * inv * scale[i] + bias[i];
    } else {
      for (int64_t i = 0; i < inner; ++i) yr[i] = (xr[i] - mu) * inv * scale[i];
    }
    if (mean != nullptr) mean[r] = mu;
    if (inv_std != nullptr) inv_std[r] = inv;
  }
}

}  // namespace kiln::kernels::cpu
