#pragma once
// Layer normalization of the rows of an [outer, inner] view:
//   y = (x - mean(row)) * inv_std(row) * scale + bias,  inv_std = 1 / sqrt(var(row) + epsilon)
// with the variance taken around the mean (two passes, no cancellation). scale and bias are
// [inner] (already broadcast); bias, mean and inv_std may be null.

#include <cstdint>

namespace kiln::kernels::cpu {

void layer_norm(int64_t outer, int64_t inner, const float* x, const float* scale, const float* bias,
                float epsilon, float* y, float* mean, float* inv_std);

}  // namespace kiln::kernels::cpu
